"""Reads stream-json lines the way the Claude Agent SDK for Python's message parser does (written from its
published contract, ``claude_agent_sdk._internal.message_parser.parse_message`` and ``types.py``, not copied).

What that parser demands, and so what :func:`parse` checks: every message is an object with a ``type``;
``user`` needs ``message.content`` (a string or blocks: ``text`` needs ``text``, ``tool_use`` needs ``id``,
``name``, ``input``, ``tool_result`` needs ``tool_use_id``); ``assistant`` needs ``message.content`` as a list
of blocks (the same, plus ``thinking`` with ``thinking`` and ``signature``) and ``message.model``; ``system``
needs ``subtype``; ``result`` needs ``subtype``, ``duration_ms``, ``duration_api_ms``, ``is_error``,
``num_turns`` and ``session_id``; ``stream_event`` needs ``uuid``, ``session_id`` and ``event``. A type it does
not know is skipped (None), which is how our ``transition`` events pass through an SDK client unharmed.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

__all__ = ["ParseError", "Parsed", "parse"]


class ParseError(ValueError):
    """The SDK's parser would raise MessageParseError on this message."""


@frozen
class Parsed:
    """A parsed message: its type, the fields the SDK's dataclass would hold."""

    type: str
    fields: dict[str, Any]


_BLOCK_KEYS = {
    "text": ("text",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id",),
    "thinking": ("thinking", "signature"),
}


def _blocks(blocks: list[Any], allowed: set[str]) -> list[dict[str, Any]]:
    out = []
    for block in blocks:
        if not isinstance(block, dict):
            raise ParseError(f"Invalid content block (expected dict, got {type(block).__name__})")
        kind = block["type"]
        if kind in allowed:
            missing = [k for k in _BLOCK_KEYS[kind] if k not in block]
            if missing:
                raise ParseError(f"content block {kind} lacks {missing}")
            out.append(block)
    return out


def parse(data: Any) -> Parsed | None:
    """Parse one stream-json message as the SDK would; None for a type it skips.

    Raises:
        ParseError: where the SDK's parser raises MessageParseError.
    """
    if not isinstance(data, dict):
        raise ParseError(f"Invalid message data type (expected dict, got {type(data).__name__})")
    kind = data.get("type")
    if not kind:
        raise ParseError("Message missing 'type' field")
    try:
        match kind:
            case "user":
                content = data["message"]["content"]
                if isinstance(content, list):
                    content = _blocks(content, {"text", "tool_use", "tool_result"})
                return Parsed(
                    "user",
                    {
                        "content": content,
                        "parent_tool_use_id": data.get("parent_tool_use_id"),
                        "uuid": data.get("uuid"),
                    },
                )
            case "assistant":
                content = data["message"]["content"]
                if not isinstance(content, list):
                    raise ParseError(f"Invalid assistant content (expected list, got {type(content).__name__})")
                return Parsed(
                    "assistant",
                    {
                        "content": _blocks(content, {"text", "thinking", "tool_use", "tool_result"}),
                        "model": data["message"]["model"],
                        "parent_tool_use_id": data.get("parent_tool_use_id"),
                        "usage": data["message"].get("usage"),
                        "message_id": data["message"].get("id"),
                        "stop_reason": data["message"].get("stop_reason"),
                        "session_id": data.get("session_id"),
                    },
                )
            case "system":
                return Parsed("system", {"subtype": data["subtype"], "data": data})
            case "result":
                keys = ("subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "session_id")
                fields = {k: data[k] for k in keys}
                for key in (
                    "stop_reason",
                    "total_cost_usd",
                    "usage",
                    "result",
                    "modelUsage",
                    "permission_denials",
                    "errors",
                    "uuid",
                    "terminal_reason",
                ):
                    fields[key] = data.get(key)
                return Parsed("result", fields)
            case "stream_event":
                return Parsed(
                    "stream_event",
                    {
                        "uuid": data["uuid"],
                        "session_id": data["session_id"],
                        "event": data["event"],
                        "parent_tool_use_id": data.get("parent_tool_use_id"),
                    },
                )
    except KeyError as exc:
        raise ParseError(f"Missing required field in {kind} message: {exc}") from exc
    return None
