"""The cheap passes, in the seed course's order: persist large tool results, then micro-compact old ones.

:func:`cheap_passes` never calls a model. (a) Each ``tool_result`` whose text is over :data:`PERSIST_OVER`
characters is saved in the :class:`~fsm.compaction.store.ResultStore` and replaced by a preview naming the file.
(b) Each older result the model has already seen is replaced by :data:`MARKER` (Claude Code's words), except the
last *keep_last* results, those the model has not seen yet (after the last assistant message) and ``task``
results (a subagent's answer is already a summary). A persisted result's marker keeps the file's path, from the
store.

Only a result's ``content`` changes: every block keeps its place, its ``tool_use_id`` and its ``is_error``, so
each ``tool_use`` keeps its ``tool_result`` and the roles still alternate. The input list is never changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from fsm.compaction.store import OPEN_TAG, ResultStore, preview
from fsm.compaction.tokens import block_tokens, messages_tokens
from fsm.model.reply import Block, Message

__all__ = ["KEEP_LAST", "MARKER", "PERSIST_OVER", "SPARED_TOOLS", "Cheap", "cheap_passes", "result_text"]

PERSIST_OVER = 20_000
"""A tool result longer than this (characters, about 5,000 tokens) is persisted and previewed."""
KEEP_LAST = 3
"""The latest tool results micro-compaction never clears."""
MARKER = "[Old tool result content cleared]"
"""What a cleared tool result says (Claude Code's words)."""
SPARED_TOOLS = frozenset({"task"})
"""Tools whose results micro-compaction leaves alone."""


@frozen
class Cheap:
    """What the cheap passes made of a conversation."""

    messages: list[Message]
    """The new conversation (a new list; the messages that did not change are the same objects)."""
    persisted: list[str]
    """The ``tool_use`` ids whose results were saved in the store and replaced by a preview."""
    cleared: list[str]
    """The ``tool_use`` ids whose results were replaced by the marker."""
    tokens_before: int
    """The estimated tokens of the messages before (:func:`~fsm.compaction.tokens.messages_tokens`)."""
    tokens_after: int

    @property
    def saved(self) -> int:
        """Estimated tokens the passes took off."""
        return self.tokens_before - self.tokens_after


def result_text(block: Block) -> str | None:
    """The text of a ``tool_result`` block's content, or None when it holds more than text (an image)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "\n".join(str(b.get("text", "")) for b in content)
    return None


def cheap_passes(
    messages: Sequence[Message],
    *,
    store: ResultStore | None,
    keep_last: int = KEEP_LAST,
    persist_over: int = PERSIST_OVER,
) -> Cheap:
    """Persist the large tool results of *messages* (when there is a *store*), then clear the old ones.

    Args:
        store: where large results go; None skips pass (a).
        keep_last: how many of the latest tool results are never cleared.
        persist_over: a result longer than this many characters is persisted.
    """
    names = _tool_names(messages)
    seen_until = _last_assistant(messages)
    results = [(i, j, b) for i, m in enumerate(messages) for j, b in _results(m)]
    kept = {b["tool_use_id"] for _, _, b in results[max(len(results) - keep_last, 0) :]} if keep_last > 0 else set()
    changed: dict[tuple[int, int], str] = {}
    persisted: list[str] = []
    cleared: list[str] = []
    for i, j, block in results:
        use_id = block["tool_use_id"]
        text = result_text(block)
        if text is None:
            continue
        ours = store is not None and _is_our_preview(store, use_id, text)
        if store is not None and not ours and len(text) > persist_over and (kept_text := _persist(store, use_id, text)):
            text = changed[i, j] = kept_text
            persisted.append(use_id)
            ours = True
        if i > seen_until or use_id in kept or names.get(use_id) in SPARED_TOOLS:
            continue
        saved_marker = _saved_marker(store, use_id) if store is not None else None
        marker = saved_marker if ours and saved_marker else MARKER
        if text not in (MARKER, saved_marker) and len(text) > len(marker):
            changed[i, j] = marker
            cleared.append(use_id)
    new = [_with_contents(m, i, changed) for i, m in enumerate(messages)]
    before = messages_tokens(messages)
    saved = sum(
        block_tokens(messages[i]["content"][j]) - block_tokens(new[i]["content"][j]) for i, j in changed
    )  # only the changed blocks are estimated again
    return Cheap(new, persisted, cleared, before, before - saved)


def _persist(store: ResultStore, use_id: str, text: str) -> str | None:
    """The preview of *text* once the store holds it; None when it cannot be written (the text stays)."""
    try:
        return store.persist(use_id, text)
    except OSError:
        return None


def _saved_marker(store: ResultStore, use_id: str) -> str:
    """The marker of a cleared result the store keeps: it names the file (the store's path, never the text's)."""
    return f"{MARKER[:-1]}; full output saved to: {store.path_for(use_id)}]"


def _is_our_preview(store: ResultStore, use_id: str, text: str) -> bool:
    """Whether *text* is the store's own preview of *use_id*'s result: never judged by what the text says."""
    if not text.startswith(OPEN_TAG):
        return False
    saved = store.load(use_id)
    return saved is not None and text == preview(saved, store.path_for(use_id))


def _results(message: Message) -> list[tuple[int, Block]]:
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return [(j, b) for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == "tool_result"]


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    names = {}
    for message in messages:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            names.update({b["id"]: b.get("name", "") for b in content if b.get("type") == "tool_use"})
    return names


def _last_assistant(messages: Sequence[Message]) -> int:
    """The index of the last assistant message (-1 without one): results after it are unseen."""
    return next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), -1)


def _with_contents(message: Message, index: int, changed: dict[tuple[int, int], str]) -> Message:
    if not any((index, j) in changed for j in range(len(message["content"]) if _results(message) else 0)):
        return message
    content = [
        {**b, "content": changed[index, j]} if (index, j) in changed else b for j, b in enumerate(message["content"])
    ]
    return {**message, "content": content}
