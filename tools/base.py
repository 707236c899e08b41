"""The tool contract: a schema plus a handler, the registry, and the one safe way to call a tool.

Adding a tool means writing one handler and decorating it with :func:`tool`; the toolsets in
``tools/__init__.py`` are read from the registry. A handler takes a :class:`~tools.workspace.Workspace`
and the tool's input as keyword arguments and returns a :class:`ToolOutput`. :func:`run_tool` is the
only caller: it checks the input against the schema first, so handlers see well-typed arguments, and it
turns every exception into an ``Error: …`` result, so a tool call never raises. Every result passes
through :func:`tools.secrets.redact` on the way out, so a credential a command printed never reaches the
model, the journal or a stream as itself, and through :func:`tools.workspace.shown_path`, so a name that is
not UTF-8 (in an OS error, say) reaches them as ``\\xNN``, never as a lone surrogate no encoder takes.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from attrs import field, frozen

from tools.secrets import redact
from tools.workspace import OutsideWorkspaceError, Workspace, shown_path

__all__ = ["REGISTRY", "Tool", "ToolOutput", "check_input", "run_tool", "tool", "toolset"]

log = logging.getLogger(__name__)

Handler = Callable[..., "ToolOutput"]


@frozen
class ToolOutput:
    """What a tool call produced."""

    text: str
    """Exactly what the model receives as the tool_result content (unless *blocks* holds more)."""
    is_error: bool = False
    blocks: tuple[Mapping[str, Any], ...] = ()
    """The content as the API's text and image blocks, when it holds more than text (an MCP tool's image); the
    tool_result's content is then these blocks, *text* their text."""


@frozen
class Tool:
    """One tool: the schema the model sees and the handler that runs it."""

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(repr=False)
    handler: Handler | None = field(default=None, repr=False, eq=False)
    """None for tools whose handler lives elsewhere (``task``: spawning is the machine's business)."""
    path_param: str | None = None
    """The input key that names a file path, for the permission hook's workspace check."""
    checked: bool = True
    """Whether :func:`run_tool` checks the input against the schema first (an MCP tool's server checks its own:
    its schema may use what :func:`check_input` does not know)."""
    aliases: tuple[str, ...] = ()
    """Other names a call may give the tool (Claude Code's older names: ``BashOutput`` for ``TaskOutput``)."""

    @property
    def schema(self) -> dict[str, Any]:
        """The tool as the Messages API expects it in ``tools``."""
        return {"name": self.name, "description": self.description, "input_schema": dict(self.input_schema)}


REGISTRY: dict[str, Tool] = {}
"""Every tool by name, in registration order."""


def tool(
    *,
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    path_param: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of tool *name* (also called by its *aliases*)."""

    def register(handler: Handler) -> Handler:
        REGISTRY[name] = Tool(name, description, input_schema, handler, path_param, aliases=aliases)
        return handler

    return register


def toolset(names: Iterable[str]) -> tuple[Tool, ...]:
    """The registered tools with these names, in the order given."""
    return tuple(REGISTRY[n] for n in names)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def check_input(schema: Mapping[str, Any], tool_input: object) -> str | None:
    """Return why *tool_input* does not fit *schema*, or None when it does.

    Checks what our schemas use: an object, required keys, unknown keys, each property's JSON type
    (booleans are not integers) and ``minLength``/``minimum``.
    """
    if not isinstance(tool_input, dict):
        return f"input must be an object (got {type(tool_input).__name__})"
    props: Mapping[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in tool_input]
    if missing:
        return f"missing required parameter {', '.join(repr(k) for k in missing)}"
    unknown = [] if schema.get("additionalProperties") is True else [k for k in tool_input if k not in props]
    if unknown:
        return f"unknown parameter {', '.join(repr(k) for k in unknown)} (expected {', '.join(props)})"
    for key, value in tool_input.items():
        spec = props.get(key, {})
        expected = spec.get("type")
        wrong_bool = isinstance(value, bool) and expected in ("integer", "number")
        if expected in _JSON_TYPES and (wrong_bool or not isinstance(value, _JSON_TYPES[expected])):
            return f"'{key}' must be {expected} (got {value!r})"
        if "minLength" in spec and len(value) < spec["minLength"]:
            return f"'{key}' must not be empty"
        if "minimum" in spec and value < spec["minimum"]:
            return f"'{key}' must be >= {spec['minimum']} (got {value!r})"
    return None


def run_tool(tools: Iterable[Tool], name: str, workspace: Workspace, tool_input: object) -> ToolOutput:
    """Run tool *name* from *tools* on *tool_input*; never raises (but KeyboardInterrupt passes)."""
    found = {t.name: t for t in tools}
    chosen = found.get(name) or next((t for t in found.values() if name in t.aliases), None)
    if chosen is None or chosen.handler is None:
        available = ", ".join(found) or "none"
        return ToolOutput(f"Error: unknown tool {name!r} (available: {available})", is_error=True)
    problem = check_input(chosen.input_schema if chosen.checked else {"additionalProperties": True}, tool_input)
    if problem:
        return ToolOutput(f"Error: {name}: {problem}", is_error=True)
    assert isinstance(tool_input, dict)
    try:
        output = chosen.handler(workspace, **tool_input)
        return ToolOutput(shown_path(redact(output.text)), is_error=output.is_error, blocks=_redacted(output.blocks))
    except OutsideWorkspaceError as exc:
        return ToolOutput(shown_path(f"Error: {exc}"), is_error=True)
    except Exception as exc:  # a handler bug or I/O failure must reach the model, not kill the agent
        if log.isEnabledFor(logging.DEBUG):  # escaped: a name that is not UTF-8 must not break a log's encoder
            log.debug("tool %s raised:\n%s", name, shown_path("".join(traceback.format_exception(exc)).rstrip()))
        return ToolOutput(shown_path(redact(f"Error: {name}: {type(exc).__name__}: {exc}")), is_error=True)


def _redacted(blocks: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """*blocks* with each text block's text passed through :func:`redact` (images as they are)."""
    return tuple(
        {**b, "text": shown_path(redact(str(b.get("text", ""))))} if b.get("type") == "text" else b for b in blocks
    )
