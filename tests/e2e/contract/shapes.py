"""What a script sees of a run, and the script-visible fields the contract compares.

:func:`capture` keeps a run's exit code, stdout (its JSON lines as events, else the text) and stderr lines: a
fixture's data. :func:`fields` reads one capture as named fields, each a short string, that do not depend on what
always differs between two runs (ids, uuids, timestamps, durations, costs, paths):

- ``exit``; ``stderr`` (``empty`` or ``lines``); ``stdout`` for a text run (the text, stripped);
- ``count:KIND`` how many events of a kind (``type`` or ``type/subtype``) the stream holds;
- ``type:KIND.PATH`` the value type at a key path of that kind's events (``str``, ``number``, ``bool``,
  ``null``, ``list``, ``dict``; several joined by ``|``), lists' items under ``[]``, dynamic keys (model names
  under ``modelUsage``) as ``<key>``; tool inputs and tool outputs are not opened (their keys are each tool's);
- ``value:…`` the values a script branches on: the result's ``subtype``, ``is_error``, ``terminal_reason``,
  ``num_turns``, ``stop_reason``, ``api_error_status``, ``structured_output``, the tool names of its
  ``permission_denials``, ``system/init``'s ``permissionMode``, and the tools the main agent called, in order
  (tool names in Claude Code's words, ``Bash``, ``Read``…, whichever harness ran).

:func:`compare` pairs two captures' fields: the kinds' order (``order``, over the kinds both streams hold) and
every field either side has; types are compared only for kinds both sides stream, and not inside a list that
one side has only empty (its items have no type to compare).
"""

from __future__ import annotations

import json
from typing import Any

from attrs import frozen

from tests.e2e.contract.harness import CANONICAL

__all__ = ["ABSENT", "Field", "capture", "compare", "fields", "kind"]

ABSENT = "absent"
OPAQUE = frozenset({"input", "tool_input", "tool_use_result", "content_block", "delta"})
"""Keys whose values are the tool's or the API's own (not opened)."""
DYNAMIC = frozenset({"modelUsage"})
"""Keys whose dict keys are data (model names)."""
RESULT_VALUES = (
    "subtype",
    "is_error",
    "terminal_reason",
    "num_turns",
    "stop_reason",
    "api_error_status",
    "structured_output",
)


@frozen
class Field:
    """One script-visible field of one scenario, as each side has it."""

    path: str
    ours: str
    theirs: str

    @property
    def agrees(self) -> bool:
        """Whether both sides have the same."""
        return self.ours == self.theirs


def capture(output: Any) -> dict[str, Any]:
    """*output* (a :class:`tests.e2e.contract.harness.Output`) as a fixture's data."""
    lines = [line for line in output.stdout.splitlines() if line.strip()]
    events: list[Any] = []
    for line in lines:
        try:
            events.append(json.loads(line))
        except ValueError:
            break
    streamed = bool(lines) and len(events) == len(lines) and all(isinstance(e, dict) for e in events)
    return {
        "exit": output.code,
        "events": events if streamed else None,
        "stdout": None if streamed else output.stdout,
        "stderr": output.stderr.splitlines(),
    }


def kind(event: dict[str, Any]) -> str:
    """``type/subtype`` of a system or result event... ``type`` of the others."""
    if event.get("type") == "system" and "subtype" in event:
        return f"system/{event['subtype']}"
    return str(event.get("type"))


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return {str: "str", list: "list", dict: "dict"}.get(type(value), type(value).__name__)


def _walk(value: Any, path: str, out: dict[str, set[str]], depth: int = 0) -> None:
    out.setdefault(path, set()).add(_type(value))
    if depth >= 4 or path.rsplit(".", 1)[-1] in OPAQUE:
        return
    if isinstance(value, dict):
        dynamic = path.rsplit(".", 1)[-1] in DYNAMIC
        for key, item in value.items():
            _walk(item, f"{path}.{'<key>' if dynamic else key}", out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _walk(item, f"{path}[]", out, depth + 1)


def _tool_name(name: Any) -> str:
    return CANONICAL.get(str(name), str(name))


def _values(events: list[dict[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    results = [e for e in events if e.get("type") == "result"]
    if results:
        result = results[-1]
        for key in RESULT_VALUES:
            out[f"value:result.{key}"] = json.dumps(result[key], sort_keys=True) if key in result else ABSENT
        denials = result.get("permission_denials")
        if isinstance(denials, list):
            out["value:result.permission_denials"] = ",".join(_tool_name(d.get("tool_name")) for d in denials)
    for event in events:
        if kind(event) == "system/init":
            out["value:system/init.permissionMode"] = str(event.get("permissionMode", ABSENT))
            break
    calls = [
        _tool_name(block.get("name"))
        for event in events
        if event.get("type") == "assistant" and not event.get("parent_tool_use_id")
        for block in event.get("message", {}).get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    if events:
        out["value:tool_calls"] = ",".join(calls)
    return out


def fields(data: dict[str, Any]) -> dict[str, str]:
    """The named fields of one capture (:func:`capture`)."""
    out = {"exit": str(data["exit"]), "stderr": "lines" if data["stderr"] else "empty"}
    events = data["events"]
    if events is None:
        out["stdout"] = (data["stdout"] or "").strip()
        return out
    counts: dict[str, int] = {}
    types: dict[str, set[str]] = {}
    for event in events:
        name = kind(event)
        counts[name] = counts.get(name, 0) + 1
        _walk(event, name, types)
    out.update({f"count:{name}": str(n) for name, n in counts.items()})
    out.update({f"type:{path}": "|".join(sorted(found)) for path, found in types.items() if "." in path})
    out.update(_values(events))
    return out


def _order(data: dict[str, Any], kinds: set[str]) -> str:
    seen: list[str] = []
    for event in data["events"] or []:
        name = kind(event)
        if name in kinds and (not seen or seen[-1] != name):
            seen.append(name)
    return " ".join(seen)


def _in_an_empty_list(path: str, side: dict[str, str]) -> bool:
    """Whether *path* is inside a list that *side* has but always empty (no item to take a type from)."""
    if path in side:
        return False
    end = path.find("[]")
    while end != -1:
        prefix = path[: end + 2]
        if prefix not in side:
            return f"{path[:end]}" in side
        end = path.find("[]", end + 2)
    return False


def compare(ours: dict[str, Any], theirs: dict[str, Any]) -> list[Field]:
    """Every field of either capture, paired; types only for the kinds both sides stream."""
    mine, other = fields(ours), fields(theirs)
    both = {p[6:] for p in mine if p.startswith("count:")} & {p[6:] for p in other if p.startswith("count:")}
    paired = []
    for path in sorted(mine.keys() | other.keys()):
        if path.startswith("type:") and path[5:].split(".", 1)[0] not in both:
            continue
        if _in_an_empty_list(path, mine) or _in_an_empty_list(path, other):
            continue
        paired.append(Field(path, mine.get(path, ABSENT), other.get(path, ABSENT)))
    if ours["events"] is not None and theirs["events"] is not None:
        paired.append(Field("order", _order(ours, both), _order(theirs, both)))
    return paired
