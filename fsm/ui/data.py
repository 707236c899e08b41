"""What the web view sends the browser: sessions as rows, transitions as events, the machine as classed SVG.

Everything here is plain JSON data; the page renders every string from the journal as text. An event is one
Transition flattened for the page (the reply's blocks, the tool call and its full result, an MCP call's server and
tool, the prompt text, the todo list a ``TodoWrite`` left, shown as a checklist; each MCP server's status is a
note of the ``connecting`` step), so
the browser builds the transcript and the timeline from events alone and appends new ones as they come.
"""

from __future__ import annotations

from typing import Any

from fsm.core.records import Transition
from fsm.model.pricing import price_of
from fsm.session.journal import SessionInfo
from fsm.view.diagram import CHILD, NODES, graph
from tools.todo import TODO_WRITE, todos_after

__all__ = ["compaction", "cost", "edge_class", "event", "mcp_call", "node_class", "session_row", "svg"]


def cost(info: SessionInfo) -> float | None:
    """What the session's model calls cost in US dollars, or None when it is not known (no model recorded, or
    one the price table lacks)."""
    model = info.settings.get("model")
    price = price_of(model, info.usage) if isinstance(model, str) and model else None
    return None if price is None else price.usd


def session_row(info: SessionInfo) -> dict[str, Any]:
    """One row of the sessions page."""
    return {
        "id": info.id,
        "root_agent": info.root_agent,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "prompt": info.prompt,
        "outcome": info.outcome,
        "state": info.state,
        "turns": info.turns,
        "model_calls": info.model_calls,
        "tokens": info.tokens,
        "transitions": info.transitions,
        "last_seq": info.last_seq,
        "forked_from": info.forked_from,
        "forked_at": info.forked_at,
        "workdir": info.workdir,
        "model": info.settings.get("model"),
        "cost_usd": cost(info),
    }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def event(record: Transition) -> dict[str, Any]:
    """*record* as the page reads it: the edge and timing always, the rest only where the step produced it
    (a session of thousands of transitions is sent whole when its page opens)."""
    data: dict[str, Any] = {
        "seq": record.seq,
        "agent": record.agent,
        "depth": record.depth,
        "source": record.source,
        "trigger": record.trigger,
        "dest": record.dest,
        "turn": record.turn,
        "duration_ms": round(record.duration_ms, 3),
    }
    if record.reply is not None:
        usage = record.reply.usage
        data["reply"] = {
            "blocks": list(record.reply.content),
            "stop_reason": record.reply.stop_reason,
            "usage": {"input": usage.input_tokens, "output": usage.output_tokens},
        }
    if record.trigger in ("prompt", "continue_forced") and record.appended:
        data["prompt"] = _text_of(record.appended[0].get("content", ""))
    if record.trigger == "compact_requested":  # a prompt that appends no message: its words are the record's
        data["prompt"] = "/compact" + (f" {record.instructions}" if record.instructions else "")
    if record.tool_call is not None:  # its input is in the reply that asked for it
        data["call"] = {"id": record.tool_call.get("id"), "name": record.tool_call.get("name")}
        server = mcp_call(str(record.tool_call.get("name", "")))
        if server is not None:
            data["call"]["mcp"] = server
    call, result = record.tool_call, record.tool_result
    if call is not None and call.get("name") == TODO_WRITE and result is not None and not result.is_error:
        data["todos"] = todos_after(call["input"])  # the list as the step left it, for the page's checklist
    if record.tool_result is not None:
        data["result"] = {
            "text": record.tool_result.text,
            "is_error": record.tool_result.is_error,
            "denied_by": None if record.denial is None else record.denial.by,
        }
    if record.compaction is not None:
        data["compaction"] = compaction(record)
    for key in ("outcome", "error", "child"):
        if getattr(record, key) is not None:
            data[key] = getattr(record, key)
    if record.notes:
        data["notes"] = list(record.notes)
    return data


def mcp_call(name: str) -> dict[str, str] | None:
    """The server and tool of an MCP call's name (``mcp__tiny__add``: ``{"server": "tiny", "tool": "add"}``), or
    None for a built-in tool's; the page reads names of the replies' tool_use blocks the same way."""
    if not name.startswith("mcp__"):
        return None
    server, _, tool = name.removeprefix("mcp__").partition("__")
    return {"server": server, "tool": tool}


def compaction(record: Transition) -> dict[str, Any]:
    """Where *record*'s compaction happened and what it replaced, for the page: its trigger, the tokens before and
    after, how many messages the new history replaced, how many old tool results it cleared and persisted (their
    tool_use ids), and the summary the model sees from then on (None when the cheap passes were enough)."""
    info = record.compaction
    assert info is not None
    return {
        "trigger": info.trigger,
        "pre_tokens": info.pre_tokens,
        "post_tokens": info.post_tokens,
        "replaced": info.replaced,
        "cleared": list(info.cleared),
        "persisted": list(info.persisted),
        "summary": record.reply.text if record.reply is not None else None,
    }


def node_class(node: str) -> str:
    """The SVG class of a state's node: ``st_awaiting_model``, ``st_sub_idle``."""
    return f"st_{node}"


def edge_class(source: str, trigger: str) -> str:
    """The SVG class of the edge *trigger* takes out of node *source*: ``tr_sub_idle__prompt``."""
    return f"tr_{source}__{trigger}"


def svg() -> str:
    """The machine as ``agentfsm diagram --format svg`` draws it, each node and edge given a class the page
    highlights (:func:`node_class`, :func:`edge_class`), with no fixed size so it scales to its panel.

    Raises:
        ConfigError: pygraphviz is not installed.
    """
    g = graph()
    g.graph_attr.update(label="", pad="0.05")  # the page says what it is; the panel needs the room
    for node in NODES:
        if g.has_node(node):
            g.get_node(node).attr["class"] = node_class(node)
    for source, dest, key in g.edges(keys=True):
        if key in ("start", f"{CHILD}start"):
            continue
        names = [edge_class(*part.split(":")) for part in key.split("|")]
        g.get_edge(source, dest, key).attr["class"] = " ".join(names)
    text: str = g.draw(format="svg", prog="dot").decode()
    start = text.index("<svg")
    head, rest = text[start:].split(">", 1)
    head = (
        " ".join(p for p in head.split("\n") if p)
        .replace(' width="', ' data-width="')
        .replace(' height="', ' data-height="')
    )
    return head + ">" + rest
