"""Test doubles users can rely on: ``ScriptedModel`` and helpers that build wire-format replies.

``ScriptedModel`` satisfies the ``Model`` protocol from a script of replies, so tests (ours and users',
for their own hooks) drive the real machine and the real tools without a network::

    model = ScriptedModel([tool_reply(tool_use("bash", {"command": "ls"})), text_reply("done")])
    Agent(model=model, workdir=".").run("list the files")
    assert model.requests[1].messages[-1]["content"][0]["type"] == "tool_result"

Recording is linear in the run: an agent passes the same list on every call, growing by appends, and
each request copies only the messages appended since that list's previous call, sharing the copies of
the rest, so ``requests[i]`` shows exactly what call ``i`` received while a run costs no more than the
messages it adds. (A message is never changed or replaced once it is in an agent's list; a list that is not the
one seen before, or that no longer holds the item it ended with, is copied whole.) Treat the recorded messages as
read-only: each request's list is its own, the message dicts in it are shared with later requests.
The script's reply dicts are parsed into Replies once, when the model is built (a dict that is no valid reply
fails when it is asked for, as from a real model), so a run pays for recording only; change a script by
assigning or appending items, not by editing a dict already in it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from attrs import frozen

from fsm.errors import ModelError, ScriptExhaustedError
from fsm.model.reply import Reply

__all__ = ["Request", "ScriptedByPrompt", "ScriptedModel", "text", "text_reply", "tool_reply", "tool_use"]

_ids = itertools.count(1)


@frozen(slots=False)  # made at every call: a frozen slotted class's __init__ costs about twice as much
class Request:
    """One call a ScriptedModel received, copied so later changes to the agent's list do not alter it."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered, in order."""
        return [t["name"] for t in self.tools]


ScriptItem = dict[str, Any] | Reply | BaseException | Callable[[Request], "dict[str, Any] | Reply"]


class ScriptedModel:
    """A Model that answers from a list: reply dicts, Replies, exceptions to raise, or callables of the request.

    Raises:
        ScriptExhaustedError: (from ``create``) the agent asked for more replies than the script holds.
    """

    def __init__(self, replies: Iterable[ScriptItem] = ()) -> None:
        self.script: list[ScriptItem] = list(replies)
        self.requests: list[Request] = []
        self._parsed = {id(item): (item, reply) for item, reply in _parse_ahead(self.script)}
        """id(a reply dict of the script) -> (that dict, its Reply): parsed here once, not during the run."""
        self._seen: dict[int, tuple[list[Any], int, Any, list[Any]]] = {}
        """id(a list the caller passed) -> (that list, its length and last item when last seen, their copies)."""
        self._lock = threading.Lock()

    def _copy(self, items: list[Any]) -> list[Any]:
        """A copy of *items* sharing the copies of the items a previous call with the same list already had."""
        known = self._seen.get(id(items))
        if known is not None and known[0] is items and 0 < known[1] <= len(items) and items[known[1] - 1] is known[2]:
            copies = known[3] + [_copied(item) for item in items[known[1] :]]
        else:
            copies = [_copied(item) for item in items]
        self._seen[id(items)] = (items, len(items), items[-1] if items else None, copies)
        return copies

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        with self._lock:  # subagents running in parallel call one model from several threads
            request = Request(system, self._copy(messages), self._copy(tools), max_tokens)
            self.requests.append(request)
            index = len(self.requests) - 1
        if index >= len(self.script):
            raise ScriptExhaustedError(
                f"ScriptedModel was asked for reply #{index + 1} but its script holds {len(self.script)}; "
                "add replies, or check why the agent called the model again"
            )
        item = self.script[index]
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(request)
        if isinstance(item, Reply):
            return item
        known = self._parsed.get(id(item))
        return known[1] if known is not None and known[0] is item else Reply.from_wire(item)


def _parse_ahead(script: list[ScriptItem]) -> Iterable[tuple[dict[str, Any], Reply]]:
    """The script's reply dicts with their Replies; a dict that is no reply is left to fail when it is asked for."""
    for item in script:
        if isinstance(item, dict):
            try:
                yield item, Reply.from_wire(item)
            except ModelError:
                continue


class ScriptedByPrompt:
    """A Model that answers each conversation from its own script, chosen by the conversation's first prompt.

    Reply ``i`` of a conversation is the script's item ``i``, ``i`` being how many assistant messages the
    request holds. Nothing depends on the order of calls, so subagents running at once (or a run resumed
    from a journal) get the same replies however their calls interleave, unlike ``ScriptedModel``, whose
    one list is consumed in call order. Items are as for ``ScriptedModel``.

    Args:
        scripts: first prompt (the text of the conversation's first user message) -> its replies.
        delay: seconds each call sleeps first, as a model's latency would.

    Raises:
        ScriptExhaustedError: (from ``create``) no script for the prompt, or it has no reply left.
    """

    def __init__(self, scripts: dict[str, list[ScriptItem]], *, delay: float = 0.0) -> None:
        self.scripts = scripts
        self.delay = delay
        self.calls: list[tuple[str, int]] = []
        """(first prompt, reply index) of every call, in the order they came."""
        self._lock = threading.Lock()

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        content = messages[0]["content"] if messages else ""
        prompt = (
            content
            if isinstance(content, str)
            else next(  # a hook's extra context comes after it
                (b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"), ""
            )
        )
        index = sum(m["role"] == "assistant" for m in messages)
        with self._lock:
            self.calls.append((prompt, index))
        script = self.scripts.get(prompt)
        if script is None or index >= len(script):
            raise ScriptExhaustedError(f"ScriptedByPrompt has no reply #{index + 1} for prompt {prompt[:60]!r}")
        if self.delay:
            time.sleep(self.delay)
        item = script[index]
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(Request(system, list(messages), list(tools), max_tokens))
        return item if isinstance(item, Reply) else Reply.from_wire(item)


_LEAVES = frozenset({str, int, float, bool, type(None)})
"""Types whose values are shared, not copied (immutable): most of a message is these, so they are not recursed into."""


def _copied(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists and tuples of them); anything else is shared, not copied."""
    kind = type(value)
    if kind is dict or (kind not in _LEAVES and isinstance(value, dict)):
        return {key: item if type(item) in _LEAVES else _copied(item) for key, item in value.items()}
    if kind is list or (kind not in _LEAVES and isinstance(value, list)):
        return [item if type(item) in _LEAVES else _copied(item) for item in value]
    if kind is tuple or (kind not in _LEAVES and isinstance(value, tuple)):
        return tuple([item if type(item) in _LEAVES else _copied(item) for item in value])
    return value


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: Any, *, id: str | None = None) -> dict[str, Any]:
    """A tool_use content block with a fresh id unless one is given."""
    return {"type": "tool_use", "id": id or f"toolu_{next(_ids):04d}", "name": name, "input": tool_input}


def _usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens}


def text_reply(value: str, *, stop_reason: str = "end_turn", usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A final reply holding one text block."""
    return {"content": [text(value)] if value else [], "stop_reason": stop_reason, "usage": _usage(*usage)}


def tool_reply(
    *blocks: dict[str, Any], stop_reason: str = "tool_use", usage: tuple[int, int] = (10, 5)
) -> dict[str, Any]:
    """A reply holding *blocks* (tool_use and text blocks, in order)."""
    return {"content": list(blocks), "stop_reason": stop_reason, "usage": _usage(*usage)}
