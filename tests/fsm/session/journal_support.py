"""Helpers shared by the journal, resume and replay tests: a drawn model, live snapshots, scripted runs."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import define, field

from fsm import Agent, Hooks, Policy, Reply, Transition
from fsm.core.records import AgentState
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


class DrawnModel:
    """A Model whose replies hypothesis draws when asked; it remembers what it served, in order."""

    def __init__(self, draw: Callable[..., Any]) -> None:
        self.draw = draw
        self.served: list[Reply | BaseException] = []

    def create(self, *, system: str, messages: list[dict], tools: list[dict], max_tokens: int) -> Reply:
        from tests.strategies_fsm import replies  # here: the kill driver imports this module and not hypothesis

        child = "task" not in [t["name"] for t in tools]
        item = self.draw(replies(child=child, serial=len(self.served) + 1))
        served = item if isinstance(item, BaseException) else Reply.from_wire(item)
        self.served.append(served)
        if isinstance(served, BaseException):
            raise served
        return served


@define
class Moment:
    """What the live agents looked like right after one transition."""

    record: Transition
    agents: dict[str, AgentState]
    active: list[str]
    described: str


@define
class LiveRecorder:
    """A listener that snapshots the root and its running subagents after every transition."""

    root: Agent
    moments: dict[int, Moment] = field(factory=dict)

    def __call__(self, record: Transition) -> None:
        agents = {a.agent_id: copy.deepcopy(a.data) for a in [self.root, *self.root.children]}
        self.moments[record.seq] = Moment(record, agents, [c.agent_id for c in self.root.children], repr(self.root))

    @property
    def records(self) -> list[Transition]:
        return [m.record for m in self.moments.values()]


def stop_hooks(forced: int) -> Hooks:
    """Hooks whose Stop and SubagentStop callbacks push each agent on *forced* times ("keep going").

    The decision depends only on the agent's messages, so a restored agent decides as the live one did.
    """
    hooks = Hooks()

    def go_on(event: Any) -> str | None:
        pushes = sum(m["role"] == "user" and m["content"] == "keep going" for m in event.messages)
        return "keep going" if pushes < forced else None

    hooks.on("Stop", go_on)
    hooks.on("SubagentStop", go_on)
    return hooks


def run_prompts(agent: Agent, prompts: list[str]) -> None:
    """Send each prompt in turn and step to idle (one step at a time, so subagents take turns in a fixed
    order and a drawn model is asked from this thread); a Ctrl-C from the model ends that run only."""
    for prompt in prompts:
        agent.send(prompt)
        with contextlib.suppress(KeyboardInterrupt):
            while agent.busy:
                agent.step()


def without_timing(record: Transition) -> tuple[Any, ...]:
    """A record's content, leaving out when it happened and how long it took."""
    return (
        record.seq,
        record.agent,
        record.parent,
        record.depth,
        record.source,
        record.trigger,
        record.dest,
        record.turn,
        record.reply,
        record.tool_call,
        record.tool_result,
        record.error,
        record.outcome,
        record.child,
        record.appended,
        record.notes,
    )


def open_policy() -> Policy:
    """The permissions these tests run with: every call allowed but what the built-in deny rules refuse."""
    return Policy(mode="bypassPermissions")


def delegation_script() -> list[dict[str, Any]]:
    """A parent that runs bash, delegates (the child reads and writes), writes a file, then answers."""
    return [
        tool_reply(
            tool_use("bash", {"command": "echo one >> log.txt"}, id="p1"),
            tool_use("task", {"prompt": "write the notes"}, id="p2"),
        ),
        tool_reply(
            tool_use("write_file", {"path": "notes.txt", "content": "n" * 50}, id="c1"),
            tool_use("bash", {"command": "echo child >> log.txt"}, id="c2"),
        ),
        text_reply("notes written"),
        tool_reply(tool_use("bash", {"command": "echo two >> log.txt"}, id="p3")),
        text_reply("all done"),
    ]


def delegating_run(tmp_path: Path) -> list[Transition]:
    """The records of a small run in *tmp_path*: the parent delegates, the child globs and answers, the parent ends."""
    model = ScriptedModel(
        [
            tool_reply(tool_use("task", {"prompt": "look"})),
            tool_reply(tool_use("glob", {"pattern": "*"})),
            text_reply("child done"),
            text_reply("all done"),
        ]
    )
    agent = Agent(model, str(tmp_path))
    records: list[Transition] = []
    agent.subscribe(records.append)
    agent.run("go")
    return records
