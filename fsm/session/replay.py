"""Re-run a journalled session offline, its model replies served from the journal, and find where it diverges.

:func:`replay` builds a fresh agent like the recorded one, serves it the recorded replies (and model errors)
in order with a :class:`~fsm.testing.ScriptedModel`, sends the recorded prompts, runs the tools for real in
*workdir* (but MCP tools, which answer with their recorded results), and compares each transition with the
recording: the first one that moved a different agent, along a different edge, with a different tool call or
outcome (or, with ``results=True``, a different tool result) is the divergence. No API key is needed, so any real
run becomes a regression test (``agentfsm replay SESSION_ID`` is the command, in :mod:`fsm.cli.replay`)::

    def test_bugfix_session_still_replays(tmp_path):
        with Journal("tests/sessions.db") as journal:
            report = replay(journal, "5d1c9e2a", workdir=str(tmp_path))
        assert report.divergence is None, report.describe()

A Ctrl-C during a model call is replayed (the recorded model raises it); one during a tool or a Stop hook
cannot be, so such a recording replays up to the interruption. A prompt a UserPromptSubmit hook blocked
(``prompt_blocked``) is blocked again with the recorded words, whatever hooks the replay has. A typed ``/NAME`` of a
forked skill (``skill_forked``) is typed again: it replays when the replay is given the skill (``skills=``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from attrs import frozen

from fsm.core.agent import Agent
from fsm.core.compacting import COMPACT_COMMAND
from fsm.core.lines import describe
from fsm.core.records import Transition
from fsm.core.reducer import PARENT_INTERRUPTED
from fsm.errors import MisuseError, ModelError
from fsm.model.reply import Reply
from fsm.policy.hooks import HookEvent, PromptBlock
from fsm.session.journal import Journal
from fsm.session.restore import RESUMED_NOTE
from fsm.testing import ScriptedModel
from tools import Tool, ToolOutput, Workspace

__all__ = ["Divergence", "ReplayReport", "recorded_connect", "recorded_mcp_tools", "recorded_model", "replay"]


@frozen
class Divergence:
    """The first transition the replay did differently."""

    seq: int
    kind: str
    """``state`` (another agent or edge), ``tool call``, ``outcome``, ``tool result``, or ``model`` (the
    replay asked for a reply the recording does not hold)."""
    recorded: str
    replayed: str


@frozen
class ReplayReport:
    """What a replay found."""

    session_id: str
    workdir: str
    recorded: int
    """Transitions in the recording."""
    matched: int
    """Transitions replayed the same before the divergence (all of them when there is none)."""
    divergence: Divergence | None
    interrupted_at: int | None = None
    """The seq where the recording was interrupted (Ctrl-C), where the replay stopped."""

    @property
    def ok(self) -> bool:
        """Whether the replay matched the recording."""
        return self.divergence is None

    def describe(self) -> str:
        """The report in words, as ``agentfsm replay`` prints it."""
        head = f"replayed session {self.session_id} in {self.workdir}: "
        if self.divergence is None:
            tail = (
                f"; the recording was interrupted at seq {self.interrupted_at}, where a replay stops"
                if self.interrupted_at is not None
                else ""
            )
            return head + f"{self.matched} of {self.recorded} transitions match{tail}"
        d = self.divergence
        return (
            head + f"diverged at seq {d.seq} ({d.kind}) after {self.matched} matching transitions\n"
            f"  recorded: {d.recorded}\n  replayed: {d.replayed}"
        )


def recorded_mcp_tools(records: list[Transition]) -> tuple[Tool, ...]:
    """The MCP tools the recording called, each answering with its recorded results in order: a replay calls no
    MCP server (it may be gone, and its answers may change), as it calls no model."""
    answers: dict[str, deque[ToolOutput]] = {}
    for record in records:
        call, result = record.tool_call, record.tool_result
        if call is not None and result is not None and call["name"].startswith("mcp__") and record.denial is None:
            answers.setdefault(call["name"], deque()).append(result)

    def recorded(queue: deque[ToolOutput]) -> Any:
        def answer(workspace: Workspace, **arguments: Any) -> ToolOutput:
            return queue.popleft() if queue else ToolOutput("Error: the recording holds no more results", True)

        return answer

    return tuple(
        Tool(name, "(recorded)", {"type": "object"}, recorded(queue), checked=False) for name, queue in answers.items()
    )


def recorded_connect(
    records: list[Transition], *, served: list[Transition] | None = None
) -> Callable[[], tuple[tuple[Tool, ...], tuple[str, ...]]]:
    """An ``mcp_connect`` that starts no server: the ``connecting`` step it serves gives the MCP tools the recording
    called (answering from *served*, the records whose results to give, all of them by default) and the notes of the
    recording's own ``connecting`` step (each server's status), as a replay uses the recorded replies."""
    notes = next((r.notes for r in records if r.source == "connecting" and r.trigger != "interrupted"), ())
    tools = recorded_mcp_tools(records if served is None else served)
    return lambda: (tools, tuple(notes))


def connects(records: list[Transition]) -> bool:
    """Whether the recording connected MCP servers in a ``connecting`` step (a journal from before that state
    had its servers' tools from the start)."""
    return any(r.dest == "connecting" for r in records)


def recorded_model(records: list[Transition]) -> ScriptedModel:
    """A model serving the recorded replies (compactions' summary calls included), raising the recorded model errors
    (a request refused as too long as such) and Ctrl-Cs, in order."""
    script: list[Reply | BaseException] = []
    for record in records:
        if record.source == "compacting" and record.trigger != "interrupted":  # a summary call, if one was made
            if record.model_called:
                script.append(record.reply if record.reply is not None else ModelError(record.error or "model error"))
            continue
        if record.source not in ("awaiting_model", "compacting") or record.trigger == "context_full":
            continue  # context_full: the agent went to compact before calling
        if record.trigger == "interrupted":
            if record.model_called and record.error != PARENT_INTERRUPTED:  # not one a replay can repeat
                script.append(KeyboardInterrupt())
        elif record.reply is None and (record.trigger == "context_exceeded" or record.outcome == "context_window"):
            script.append(ModelError(record.error or "prompt is too long", status_code=400, kind="context_window"))
        else:
            script.append(record.reply if record.reply is not None else ModelError(record.error or "model error"))
    return ScriptedModel(script)


def _describe(record: Transition, *, result: bool = False) -> str:
    """The shared one-line form, plus the tool result's first 200 characters where the results differ."""
    line = describe(record)
    if result and record.tool_result is not None:
        line += f"  result {record.tool_result.text[:200]!r}"
    return line


def _difference(expected: Transition, got: Transition, *, results: bool) -> str | None:
    edge = ("agent", "source", "trigger", "dest")
    if any(getattr(expected, name) != getattr(got, name) for name in edge):
        return "state"
    if expected.tool_call != got.tool_call:
        return "tool call"
    if expected.outcome != got.outcome:
        return "outcome"
    if results and RESUMED_NOTE not in expected.notes and expected.tool_result != got.tool_result:
        return "tool result"
    return None


class _RecordedBlock:
    """A UserPromptSubmit hook that blocks the one prompt the recording shows blocked, then none."""

    def __init__(self) -> None:
        self.words: str | None = None

    def __call__(self, event: HookEvent) -> PromptBlock | None:
        words, self.words = self.words, None
        return None if words is None else PromptBlock(words)


def _prompt_of(record: Transition) -> str:
    content = record.appended[0]["content"]
    if isinstance(content, list):
        content = next(b["text"] for b in content if b.get("type") == "text")
    return str(content)


def _mover(agent: Agent, expected: Transition) -> str | None:
    """Which running subagent the replay moves next, following the recording: subagents that ran at once
    interleaved their transitions as their threads went, so the replay steps them in that same order (and
    the recorded replies, served in order, reach the agent that had them). None: the scheduler's choice."""
    running = {c.agent_id for c in agent.children}
    if expected.depth > 0 and expected.agent in running:
        return expected.agent
    if expected.trigger == "subagent_returned" and expected.agent == agent.agent_id and expected.child in running:
        return expected.child
    return None


def replay(journal: Journal, session_id: str, *, workdir: str, results: bool = False, **options: Any) -> ReplayReport:
    """Re-run session *session_id* in *workdir* with its recorded replies and compare it transition by transition.

    Args:
        results: also compare tool results (off by default: they depend on the files in *workdir*).
        options: as for ``Agent()`` (hooks, approver, …); ``tools`` and ``max_tokens`` default to the session's.

    Raises:
        ConfigError: no such session.
    """
    info = journal.find(session_id)
    records = journal.records(info.id)
    model = recorded_model(records)
    servers: dict[str, Any] = (
        {"mcp_connect": recorded_connect(records)} if connects(records) else {"mcp_tools": recorded_mcp_tools(records)}
    )
    given = {**info.agent_options(), **servers, **options}
    agent = Agent.restore(model, workdir, journal.initial_state(info.id), **given)
    produced: list[Transition] = []
    agent.subscribe(produced.append)
    blocked = _RecordedBlock()
    agent.hooks.on("UserPromptSubmit", blocked)

    def report(matched: int, divergence: Divergence | None = None, interrupted: int | None = None) -> ReplayReport:
        return ReplayReport(info.id, workdir, len(records), matched, divergence, interrupted)

    index = 0
    while index < len(records):
        expected = records[index]
        if expected.trigger == "interrupted" and (not expected.model_called or expected.error == PARENT_INTERRUPTED):
            return report(index, interrupted=expected.seq)
        idle = not agent.busy
        if expected.trigger == "compact_requested" and expected.agent == agent.agent_id and idle:
            agent.send(f"{COMPACT_COMMAND} {expected.instructions or ''}")
        if expected.trigger in ("prompt", "skill_forked") and expected.agent == agent.agent_id and idle:
            if expected.run_limits is not None:
                agent.set_limits(*expected.run_limits, max_budget_usd=expected.max_budget_usd)
            agent.send(_prompt_of(expected))
        if expected.trigger == "prompt_blocked" and expected.agent == agent.agent_id and idle:
            blocked.words = expected.error
            agent.send(expected.prompt or "(blocked)")
        start = len(produced)
        try:
            agent.step(child=_mover(agent, expected))
        except KeyboardInterrupt:  # served by the recorded model where the recording was interrupted
            pass
        except MisuseError:
            return report(index, Divergence(expected.seq, "state", _describe(expected), "nothing: the agent is idle"))
        if len(model.requests) > len(model.script):  # the agent turned the ScriptExhaustedError into model_failed
            return report(
                index,
                Divergence(
                    expected.seq,
                    "model",
                    _describe(expected),
                    "asked the model for a reply the recording does not hold",
                ),
            )
        for got in produced[start:]:
            if index == len(records):
                return report(index, Divergence(got.seq, "state", "nothing: the recording ends", _describe(got)))
            expected = records[index]
            kind = _difference(expected, got, results=results)
            if kind is not None:
                detail = kind == "tool result"
                return report(
                    index,
                    Divergence(expected.seq, kind, _describe(expected, result=detail), _describe(got, result=detail)),
                )
            index += 1
    return report(len(records))
