"""The ``agentfsm`` command: the only layer that prints and speaks in flags. ``fsm.cli:entry`` is the console script
(``main`` that ends the process without interpreter teardown; ``main`` returns the exit status).

One module, one job::

    app          parse, resolve the options, run the command, map the outcome to one line and an exit status
    parser       the parser: subcommands, plug-ins, usage errors in one line, flags given before a subcommand
    flags        every flag's declaration: name, help, argparse type
    options      RunOptions: flags, environment and files resolved once into one frozen record
    resolve      how each option is read from its flag, the environment or a file
    terminal     what a run asks and tells the person at the terminal (approvals, retries)
    run_session  the journal session a run writes to: new, resumed, continued or forked
    inputs       where a headless run's prompts come from (argument, stdin, stream-json)
    headless     a headless run: each prompt to idle, each result written in the output format
    result       RunResult: Claude Code's result object and the one error line
    repl         the interactive REPL
    demo         the offline demo
    debugger     the stepping debugger (``agentfsm debug``), its help made from its commands
    breakpoints  the debugger's breakpoint specs
    signals      SIGINT, SIGTERM and SIGHUP as KeyboardInterrupt
    sessions     ``agentfsm sessions``: list, show, export the journalled sessions
    replay       ``agentfsm replay``: re-run a session offline, report where it diverges
    diagram      ``agentfsm diagram``: draw the machine from its table
    check        ``agentfsm check``: prove the machine's limits from its table
    ui           ``agentfsm ui``: the sessions in a browser
    batch        ``agentfsm batch``: many tasks, each in its own workspace (fsm.batch)
"""

from fsm.cli.app import build_parser, entry, main

__all__ = ["build_parser", "entry", "main"]
