"""What the debugger prints, as plain text built from the Python API: locations, message blocks and ``print`` views.

A transition's line is :func:`fsm.core.lines.describe`, shared with every other view.

Every function here reads an ``Agent`` (its ``data`` and ``children``) and the transitions so far (the
agent's ``history``, after those a fork was restored from) and returns text; nothing prints and nothing
moves the agent, so the same views serve the ``(afsm)`` prompt, tests and pdb.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from fsm.core.agent import Agent
from fsm.core.lines import short
from fsm.core.records import Transition
from fsm.model.reply import Usage
from fsm.view.nextstep import describe_next
from tools.todo import checklist

__all__ = ["VIEWS", "block", "headline", "location", "usage_line"]


def location(agent: Agent) -> str:
    """One line: where *agent* is and what its next step does."""
    return (
        f"depth {agent.depth}  agent {agent.agent_id}  {agent.state}  turn {agent.turn}/{agent.max_turns}"
        f"  next: {describe_next(agent)}"
    )


def headline(agent: Agent) -> str:
    """``repr(agent)`` with its next step in words: ``<Agent a1 depth=0 state=idle turn=2/30 outcome=end_turn>``."""
    nxt = f" next={describe_next(agent)!r}" if agent.busy else ""
    outcome = f" outcome={agent.outcome}" if agent.outcome and agent.state == "idle" else ""
    return (
        f"<Agent {agent.agent_id} depth={agent.depth} state={agent.state} "
        f"turn={agent.turn}/{agent.max_turns}{outcome}{nxt}>"
    )


def usage_line(usage: Usage) -> str:
    """``in 10 out 5 (cache write 0, read 0)``."""
    return (
        f"in {usage.input_tokens} out {usage.output_tokens} "
        f"(cache write {usage.cache_creation_input_tokens}, read {usage.cache_read_input_tokens})"
    )


def block(content: dict[str, Any]) -> str:
    """One line for a content block of a message."""
    kind = content.get("type")
    if kind == "text":
        return f"text {short(content['text'], 200)}"
    if kind == "tool_use":
        return f"tool_use {content['id']} {content['name']} {short(content['input'], 200)}"
    if kind == "tool_result":
        error = " (error)" if content.get("is_error") else ""
        return f"tool_result {content['tool_use_id']} {short(content.get('content', ''), 200)}{error}"
    return f"{kind} {short(content, 200)}"


# -- the `print` views: (root, the current agent, N, the transitions so far) -> lines ---------------------

History = Sequence[Transition]


def _state(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    lines = [headline(agent)]
    for field in attrs.fields(type(agent.data)):
        value = getattr(agent.data, field.name)
        lines.append(f"  {field.name}: {f'{len(value)} (p messages)' if field.name == 'messages' else repr(value)}")
    return lines


def _messages(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    start = max(0, len(agent.messages) - count) if count else 0
    lines = []
    for index, message in enumerate(agent.messages[start:], start):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        lines += [f"[{index}] {message['role']}", *(f"    {block(b)}" for b in blocks)]
    return lines or ["No messages yet."]


def _reply(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    record = next((r for r in reversed(history) if r.agent == agent.agent_id and r.reply), None)
    if record is None or record.reply is None:
        return [f"No reply yet from agent {agent.agent_id}."]
    return [
        f"stop_reason {record.reply.stop_reason}  usage {usage_line(record.reply.usage)}",
        *(f"    {block(b)}" for b in record.reply.content),
    ]


def _pending(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    lines = [
        f"{n}. {call['id']} {call['name']} {json.dumps(call['input'], ensure_ascii=False)}"
        for n, call in enumerate(agent.data.pending, 1)
    ] or ["No tool call is pending."]
    if agent.data.results:
        lines.append(f"({len(agent.data.results)} result(s) collected for this reply)")
    return lines


def _child(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    if not root.children:
        return ["No subagent is running."]
    lines = []
    for child in root.children:
        prompt = child.messages[0]["content"] if child.messages else child.data.inbox
        lines += [location(child), f"  prompt {short(prompt)}"]
    return lines


def _todos(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    """The current agent's todo list as a checklist (each agent, a subagent too, has its own)."""
    todos = agent.data.todos
    return [f"todos of {agent.agent_id}:", *checklist(todos).splitlines()] if todos else ["The todo list is empty."]


def _usage(root: Agent, agent: Agent, count: int, history: History) -> list[str]:
    calls: dict[str, list[Usage]] = {}
    for record in history:
        if record.source == "awaiting_model" and record.trigger != "interrupted":
            calls.setdefault(record.agent, []).append(record.reply.usage if record.reply else Usage())
    every = [u for usages in calls.values() for u in usages]
    return [
        *(
            f"agent {agent_id}: {len(usages)} model call(s), {usage_line(sum(usages, Usage()))}"
            for agent_id, usages in calls.items()
        ),
        f"total: {len(every)} model call(s), {usage_line(sum(every, Usage()))}",
    ]


VIEWS: dict[str, Callable[[Agent, Agent, int, History], list[str]]] = {
    "state": _state,
    "messages": _messages,
    "reply": _reply,
    "pending": _pending,
    "child": _child,
    "usage": _usage,
    "todos": _todos,
}
"""``print WHAT``: each view takes the root, the current agent, N (``messages N``: the last N, 10 by
default, 0 for all) and the transitions so far (a fork's restored ones first)."""
