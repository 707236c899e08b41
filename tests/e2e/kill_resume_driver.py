"""A CLI-like process for the kill-and-resume tests: a scripted delegation run, journalled, killable on cue.

    python -m tests.e2e.kill_resume_driver --cwd WS [--continue]

It parses the real session flags (``fsm.cli.flags.add_session_flags``, resolved by ``RunOptions``), builds the
agent with a deterministic ScriptedModel and tools that append to ``log.txt``, runs to idle, and prints the
root's final messages as JSON. On cue it kills itself with SIGKILL:

- ``KILL_AFTER_SEQ=k``: right after transition k is journalled;
- ``KILL_IN_TOOL=ID``: inside tool call ID, after it ran and before its transition (a PostToolUse hook).

A resumed run skips the replies its session already consumed, as a real model would not repeat them.

With ``SCRIPT=parallel`` the root delegates three tasks in one reply and ``Agent.run()`` runs the three
subagents at once (each runs one bash call that appends its name to ``log.txt``, then answers); the model
answers by conversation (``ScriptedByPrompt``, 20 ms per call), so a resumed run gets the same replies
however the subagents' calls interleave.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from typing import Any

from fsm import Agent, Hooks, Policy
from fsm.cli.flags import add_session_flags
from fsm.cli.options import RunOptions
from fsm.cli.run_session import open_session
from fsm.core.reducer import made_model_call
from fsm.session.journal import Journal, default_path
from fsm.testing import ScriptedByPrompt, ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.session.journal_support import delegation_script


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _hooks() -> Hooks:
    hooks = Hooks()
    target = os.environ.get("KILL_IN_TOOL")

    def kill_inside(event: Any) -> None:
        if event.tool_call["id"] == target:
            _die()

    hooks.on("PostToolUse", kill_inside)
    return hooks


def _consumed(workdir: str) -> int:
    """Model replies the session to continue has already had."""
    path = default_path(workdir)
    if not path.exists():
        return 0
    with Journal(path) as journal:
        latest = journal.latest()
        return 0 if latest is None else sum(made_model_call(r) for r in journal.records(latest.id))


PARALLEL = ("alpha", "beta", "gamma")


def parallel_model() -> ScriptedByPrompt:
    """Three subagents at once: each appends its name to log.txt with bash, then answers."""
    scripts: dict[str, list[Any]] = {
        "go": [
            tool_reply(*(tool_use("task", {"prompt": name}, id=f"t_{name}") for name in PARALLEL)),
            text_reply("all three done"),
        ]
    }
    for name in PARALLEL:
        scripts[name] = [
            tool_reply(tool_use("bash", {"command": f"echo {name} >> log.txt"}, id=f"{name}1")),
            text_reply(f"{name} done"),
        ]
    return ScriptedByPrompt(scripts, delay=0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    add_session_flags(parser)
    args = parser.parse_args()
    parallel = os.environ.get("SCRIPT") == "parallel"
    skip = _consumed(args.cwd) if args.continue_session and not parallel else 0
    model = parallel_model() if parallel else ScriptedModel(delegation_script()[skip:])
    choice = RunOptions.from_args(args).session
    agent, session = open_session(
        choice, Agent(model, args.cwd, hooks=_hooks(), permissions=Policy(mode="bypassPermissions")), limits={}
    )
    kill_after = int(os.environ.get("KILL_AFTER_SEQ", "0"))
    agent.subscribe(lambda record: _die() if record.seq == kill_after else None)
    if agent.state == "idle" and agent.data.inbox is None and not (session and session.resumed):
        agent.send("go")
    if parallel and agent.busy:
        agent.run()  # the subagents at once, in threads
    while agent.state != "idle" or agent.data.inbox is not None:
        agent.step()
    print(json.dumps({"session": session.id if session else None, "messages": agent.messages}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
