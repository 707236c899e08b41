"""MCP tools as agentfsm tools: their names (``mcp__server__tool``), their handlers and their results.

A connected server's tools become :class:`tools.Tool` records whose handler calls the server through
:class:`~fsm.mcp.client.Connections`. Names are Claude Code's: ``mcp__`` + the server's name + ``__`` + the
tool's, each with every character outside ``[A-Za-z0-9_-]`` made ``_``; a name over 128 characters (the API's
limit) is left out, with a notice. A result becomes the tool_result as Claude Code makes it: its
``structuredContent`` as compact JSON when it has some, else its blocks in order (an image as the API's base64
image block; a resource link or embedded resource as text); ``isError`` is kept, and the text is cut at
``MAX_MCP_OUTPUT_TOKENS`` (default 25,000 tokens, counted as 4 characters each) with Claude Code's note naming the
cap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from fsm.mcp.client import CallResult, Connections, ServerStatus
from tools import Tool, ToolOutput, Workspace

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "MAX_NAME",
    "mcp_tools",
    "output_of",
    "sanitise",
    "tool_name",
]

MAX_NAME = 128
"""The longest tool name the Messages API takes."""
DEFAULT_MAX_OUTPUT_TOKENS = 25_000
"""Claude Code's ``MAX_MCP_OUTPUT_TOKENS`` default."""
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_TRUNCATED = (
    "\n\n[OUTPUT TRUNCATED - exceeded {cap} token limit]\n\nThe tool output was truncated. If this MCP server "
    "provides pagination or filtering tools, use them to retrieve specific portions of the data. If pagination is "
    "not available, inform the user that you are working with truncated output and results may be incomplete."
)
"""Claude Code's note on a cut MCP result."""


def sanitise(name: str) -> str:
    """*name* with every character outside ``[A-Za-z0-9_-]`` made ``_``, as Claude Code does."""
    return _UNSAFE.sub("_", name)


def tool_name(server: str, tool: str) -> str:
    """The name the model calls: ``mcp__SERVER__TOOL``, both sanitised."""
    return f"mcp__{sanitise(server)}__{sanitise(tool)}"


def max_output_tokens(environ: Mapping[str, str] | None = None) -> int:
    """``MAX_MCP_OUTPUT_TOKENS`` (a positive integer), else 25,000."""
    try:
        value = int((os.environ if environ is None else environ).get("MAX_MCP_OUTPUT_TOKENS", ""))
    except ValueError:
        return DEFAULT_MAX_OUTPUT_TOKENS
    return value if value > 0 else DEFAULT_MAX_OUTPUT_TOKENS


def mcp_tools(statuses: Iterable[ServerStatus], connections: Connections) -> tuple[tuple[Tool, ...], list[str]]:
    """The tools of every connected server in *statuses*, and a notice for each one left out."""
    made: list[Tool] = []
    notices: list[str] = []
    seen: set[str] = set()
    for status in statuses:
        if status.status != "connected":
            continue
        for listed in status.tools:
            name = tool_name(status.name, str(listed.get("name", "")))
            if len(name) > MAX_NAME:
                notices.append(
                    f"MCP tool {name[:60]}… of server {status.name!r} left out: its name is over 128 characters"
                )
                continue
            if name in seen:
                notices.append(f"MCP tool {name} of server {status.name!r} left out: another tool has that name")
                continue
            seen.add(name)
            schema = listed.get("inputSchema") or {"type": "object", "properties": {}}
            made.append(
                Tool(
                    name,
                    str(listed.get("description") or ""),
                    schema,
                    _handler(connections, status.name, str(listed["name"])),
                    checked=False,
                )
            )
    return tuple(made), notices


def _handler(connections: Connections, server: str, tool: str) -> Any:
    def call(workspace: Workspace, **arguments: Any) -> ToolOutput:
        return output_of(connections.call(server, tool, arguments))

    call.__name__ = f"mcp_{sanitise(server)}_{sanitise(tool)}"
    return call


def output_of(result: CallResult, *, cap_tokens: int | None = None) -> ToolOutput:
    """*result* as a tool_result, as Claude Code makes it: its structured content as compact JSON when it has some,
    else its blocks in order (text; images as the API's base64 image blocks; a resource's text), ``is_error`` kept,
    the text cut at the output cap."""
    cap = max_output_tokens() if cap_tokens is None else cap_tokens
    if result.structured is not None:
        text = json.dumps(result.structured, ensure_ascii=False, separators=(",", ":"))
        return ToolOutput(_capped(text, cap), is_error=result.is_error)
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        kind = block.get("type")
        if kind == "image":
            source = {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")}
            blocks.append({"type": "image", "source": source})
            continue
        if kind == "text":
            text = str(block.get("text", ""))
        elif kind == "resource":
            resource = block.get("resource") or {}
            text = str(resource.get("text") or f"[resource {resource.get('uri', '')}]")
        elif kind == "resource_link":
            text = f"[resource link {block.get('uri', '')}: {block.get('name', '')}]"
        else:
            text = f"[{kind} content]"
        blocks.append({"type": "text", "text": text})
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    joined = _capped("\n".join(texts), cap)
    if all(b["type"] == "text" for b in blocks):
        return ToolOutput(joined, is_error=result.is_error)
    room = cap * 4
    for block in blocks:  # the cap spread over the text blocks in order
        if block["type"] == "text":
            block["text"], room = _capped(block["text"], cap, room=room), max(room - len(block["text"]), 0)
    return ToolOutput(joined, is_error=result.is_error, blocks=tuple(blocks))


def _capped(text: str, cap: int, *, room: int | None = None) -> str:
    """*text* cut at *room* characters (default: the cap's, 4 a token) with Claude Code's note naming the cap."""
    limit = cap * 4 if room is None else room
    return text if len(text) <= limit else text[:limit] + _TRUNCATED.format(cap=cap)
