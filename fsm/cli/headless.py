"""A headless run (``agentfsm -p``, ``agentfsm run``): each prompt driven to idle, each result written out.

:func:`run` takes the resolved :class:`~fsm.cli.options.RunOptions` and the agent, subscribes what the output
format needs (the console lines on stderr with ``-d/--debug``; Claude Code's stream-json messages, the model's
retries and fallbacks among them), runs the prompts one after another with :func:`run_headless`, and writes each
:class:`~fsm.cli.result.RunResult` where Claude Code writes it: text, the final text or the error on stdout
(``Error: …``); json and stream-json, the result object, its errors inside it. In json and stream-json nothing
of a run reaches stderr but with ``--debug`` (a usage or setup error before the run is one line there, as ever).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from fsm.cli.result import ABORTED, JOURNAL_ERROR, Ending, RunResult, result_text, summarize
from fsm.cli.signals import rearm, signal_name
from fsm.core.lines import visible
from fsm.core.records import Transition
from fsm.errors import ConfigError, JournalError

if TYPE_CHECKING:
    from fsm.cli.control import Channel
    from fsm.cli.options import Output, RunOptions
    from fsm.cli.run_session import Session
    from fsm.core.agent import Agent
    from fsm.view.stream import StreamWriter

__all__ = ["run", "run_headless"]


def run(options: RunOptions, agent: Agent, session: Session | None, channel: Channel | None = None) -> int:
    """Run the headless prompts *options* name on *agent* (journalled into *session*) and write each result.

    With *channel* (the Agent SDK's, :mod:`fsm.cli.control`) the prompts are its user messages, every line goes
    out through its writer, and a turn the SDK interrupts ends with terminal_reason ``aborted_streaming`` (in a
    model call) or ``aborted_tools`` (in a tool call), an ``error_during_execution`` result as Claude Code's, and
    the session goes on with the next message.

    Returns:
        0 when every run succeeded, else 1.

    Raises:
        ConfigError: no prompt to run and no run to finish; a bad stream-json line.
    """
    from fsm.view.stream import StreamWriter

    session_id = session.id if session else agent.agent_id
    writer = channel.writer if channel is not None else StreamWriter(sys.stdout)
    earlier = list(agent.history)  # what the resume did already (settling an in-flight call) is told too
    for listener in _listeners(options.output, agent, writer, session_id):
        for record in earlier:
            listener(record)
        agent.subscribe(listener)
    status = 0
    _prestart_bash(agent)
    prompts = channel.prompts() if channel is not None else _prompts(options, agent, session_id)
    for prompt in prompts:
        if options.output.replay_user and prompt is not None:
            writer.write(_replay(prompt, session_id))
        result = run_headless(agent, prompt, session_id=session_id, earlier=earlier, channel=channel)
        earlier = []
        data: dict[str, Any] = {"notes": list(options.output.notes)} if options.output.notes else {}
        if options.output.json_schema is not None:
            result, data["structured_output"] = _structured(result, options.output.json_schema)
        _write(result, agent, options.output.format, writer, extra=data)
        status = max(status, result.exit_code)  # an aborted turn too, as Claude Code exits 1 after one
        if result.outcome == JOURNAL_ERROR or result.signal is not None:  # a signal ends the session
            break
        if result.outcome in ABORTED:
            rearm()  # the SDK's interrupt used the one interruption signals_interrupt allows; allow the next
    return status


def _prestart_bash(agent: Agent) -> None:
    """Start the bash supervisor in the background when *agent* (or a subagent of it) may run bash outside the
    sandbox, so the first call does not wait for the helper's start-up (``tools.supervision.prestart``)."""
    if agent.workspace.sandbox is None and any(tool.name in ("bash", "task") for tool in agent.tools):
        from tools.supervision import prestart

        prestart()


def run_headless(
    agent: Agent,
    prompt: str | None,
    *,
    session_id: str | None = None,
    earlier: Sequence[Transition] = (),
    channel: Channel | None = None,
) -> RunResult:
    """Finish a resumed run that stopped midway, then send *prompt* (when given), step *agent* until idle
    (or Ctrl-C) and return the result; without *prompt* the result is the finished run's.

    The counts cover *earlier* (transitions this invocation made before, e.g. a resume settling its
    in-flight call) and both runs. When a resumed run was finished before *prompt*, ``resumed`` holds its
    outcome and final text.

    A KeyboardInterrupt (Ctrl-C, or SIGTERM/SIGHUP under :func:`fsm.cli.signals.signals_interrupt`) does not
    escape: the agent is left idle, the result's outcome is ``interrupted`` and its ``signal`` says which. Nor
    does a :class:`~fsm.errors.JournalError` (the journal cannot be written): the run stops at the transition
    that could not be journalled, outcome ``journal_error``, the result text its message.
    *session_id* names the run in the result (the root agent's id when None). With *channel* the SDK may
    interrupt the turn (:meth:`~fsm.cli.control.Channel.turn`): the result then says ``aborted_*``, no signal.
    """
    started = time.monotonic()
    records: list[Transition] = list(earlier)
    ending = _drive(agent, prompt, records, channel)
    duration_ms = round((time.monotonic() - started) * 1000)
    return summarize(agent, records, ending, session_id=session_id, duration_ms=duration_ms)


def _drive(agent: Agent, prompt: str | None, records: list[Transition], channel: Channel | None = None) -> Ending:
    """Step *agent* through the runs, appending each transition to *records*; how it stopped."""
    unsubscribe = agent.subscribe(records.append)
    first = len(agent.history)
    resumed = None
    try:
        with channel.turn() if channel is not None else contextlib.nullcontext():
            if agent.busy:  # a resumed run that stopped midway ends first
                agent.run()
                if prompt is not None:
                    resumed = {"outcome": agent.outcome or "end_turn", "result": result_text(agent)}
            if prompt is not None:
                agent.run(prompt)  # a reply's task calls run at once, up to the agent's max_parallel
    except KeyboardInterrupt as exc:  # inside a step the agent has settled already; between steps, settle it now
        agent.interrupt()
        if channel is not None and channel.interrupted:
            return Ending(aborted=True, resumed=resumed)
        return Ending(signal=signal_name(exc), resumed=resumed)
    except JournalError as exc:  # the journal cannot take the run's next transition: stop where it is
        seen = {r.seq for r in records}  # the journal's listener raised before ours got the transition: count it
        records += [r for r in agent.history[first:] if r.seq not in seen]
        return Ending(journal_error=exc, resumed=resumed)
    finally:
        unsubscribe()
    return Ending(resumed=resumed)


def _listeners(
    output: Output, agent: Agent, writer: StreamWriter, session_id: str
) -> list[Callable[[Transition], None]]:
    """What the output needs to hear of each transition: the console lines on stderr (``-d/--debug``, the model's
    text streamed among them), then Claude Code's stream-json messages (after writing system/init; the model's
    notices go into the stream as ``system`` messages) and its subagent task events. json and stream-json silence
    the model's retry lines."""
    listeners: list[Callable[[Transition], None]] = []
    if output.progress:
        listeners.append(_progress_lines(agent))
    model = agent.model
    if output.format != "text" and hasattr(model, "on_retry"):
        model.on_retry = None  # json and stream-json: stderr is for real errors; a retry is not one
    if output.format == "stream-json":
        from fsm.view.tasks import TaskEvents

        listeners.append(_stream_messages(output, agent, writer, session_id))
        listeners.append(TaskEvents(writer.write, session_id=session_id, agent=agent))
        if output.hook_events is not None:
            output.hook_events.attach(writer.write, session_id=session_id)
    return listeners


def _progress_lines(agent: Agent) -> Callable[[Transition], None]:
    from fsm.core.lines import describe
    from fsm.view.console import ConsolePrinter

    printer = ConsolePrinter(sys.stderr, text=True)
    agent.watch_progress(printer.progress)

    def progress(record: Transition) -> None:
        printer(record)
        print(describe(record), file=sys.stderr, flush=True)  # describe shows control characters escaped

    return progress


def _stream_messages(
    output: Output, agent: Agent, writer: StreamWriter, session_id: str
) -> Callable[[Transition], None]:
    """Write system/init and return the listener of Claude Code's stream-json messages (and our events)."""
    from fsm.cli.flags import version
    from fsm.model.anthropic import DEFAULT_MODEL
    from fsm.view.messages import ClaudeStream

    stream = ClaudeStream(
        writer.write,
        session_id=session_id,
        model=getattr(agent.model, "model", None) or DEFAULT_MODEL,
        transitions=output.transition_events,
    )
    if output.partial_messages:
        agent.watch_progress(stream.progress)  # watching makes the model stream
    if hasattr(agent.model, "on_notice"):
        agent.model.on_notice = stream.notice

    def init() -> None:
        mcp = sys.modules.get("fsm.mcp")  # imported only by a run that has MCP servers
        connections = mcp.running() if mcp is not None else None
        stream.init(
            agent,
            mcp_servers=[s.to_json() for s in connections.statuses] if connections is not None else [],
            permission_mode=agent.permissions.mode,
            agents=["general-purpose", *agent.agents],
            version=version(),
            api_key_source=getattr(agent.model, "key_source", "none"),
        )

    if not agent.servers_pending:
        init()
        return stream
    return _after_connecting(stream, init)


def _after_connecting(stream: Callable[[Transition], None], init: Callable[[], None]) -> Callable[[Transition], None]:
    """*stream*, whose ``system/init`` waits for the MCP servers, as Claude Code's does: it is written once the
    ``connecting`` step is done (or a step that does not connect is), before the first request, with each server's
    status and the tools; the records before it are held back until then, so init stays the first line."""
    held: list[Transition] = []
    written = False

    def listen(record: Transition) -> None:
        nonlocal written
        if written:
            stream(record)
            return
        held.append(record)
        if record.dest != "connecting":
            init()
            written = True
            for kept in held:
                stream(kept)
            held.clear()

    return listen


def _replay(prompt: str, session_id: str) -> dict[str, Any]:
    """``--replay-user-messages``: the user message *prompt* came in, written back as Claude Code does (its text
    as the content: a message of several text blocks comes back as their joined text)."""
    import datetime
    import uuid

    return {
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "session_id": session_id,
        "parent_tool_use_id": None,
        "uuid": str(uuid.uuid4()),
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "isReplay": True,
    }


def _prompts(options: RunOptions, agent: Agent, session_id: str) -> Iterator[str | None]:
    """The prompts to run: stream-json lines as they come, or the one prompt; None: finish the resumed run."""
    from fsm.cli.inputs import stream_prompts

    if options.output.stream_input:
        return stream_prompts()
    if options.prompt is not None:
        return iter([options.prompt])
    if not agent.busy:
        raise ConfigError(
            f"nothing to finish: session {session_id} is not in the middle of a run; give a "
            f"prompt to go on (agentfsm -p PROMPT --resume {session_id})"
        )
    return iter([None])


def _structured(result: RunResult, schema: Mapping[str, Any]) -> tuple[RunResult, Any]:
    """``--json-schema``: *result*, an error when a successful run's answer does not match *schema*
    (``error_max_structured_output_retries``, as Claude Code's), and the answer's JSON value (None without one)."""
    from fsm.cli.structured import structured

    value, problem = structured(result.result, schema)
    if problem is None or result.is_error:
        return result, value
    return attrs.evolve(result, subtype="error_max_structured_output_retries", errors=[*result.errors, problem]), None


def _write(
    result: RunResult, agent: Agent, output_format: str, writer: StreamWriter, *, extra: Mapping[str, Any]
) -> None:
    """Write *result* where ``claude -p`` writes it. json and stream-json: the result object, with *extra*'s keys
    (``notes``: what the run was given other than it asked; ``structured_output``), its errors inside it. Text:
    the final text on stdout, or each error as ``Error: …`` on stdout (an error's message is not printed twice).
    A journal that cannot be written is a real error of ours: its line goes to stderr in every format, and a
    signal's in text."""
    own = result.outcome in (JOURNAL_ERROR, "interrupted")
    if output_format != "text":
        writer.write({**result.to_json(), **extra})
        if result.outcome == JOURNAL_ERROR:
            for problem in result.errors:
                print(f"agentfsm: {visible(problem)}", file=sys.stderr, flush=True)
        return
    shown = visible if sys.stdout.isatty() else str  # a terminal gets escapes; a pipe, the text as it is
    if result.resumed is not None and result.resumed["result"]:
        print(shown(result.resumed["result"]), flush=True)
    message = result.is_error and (result.result == agent.data.error or result.outcome == JOURNAL_ERROR)
    if result.result and not message:
        print(shown(result.result), flush=True)
    for problem in result.errors:
        if own:
            print(f"agentfsm: {visible(problem)}", file=sys.stderr, flush=True)
        else:
            print(f"Error: {visible(problem)}", flush=True)  # it may quote a server: escapes shown
