"""Compaction as pure functions over a conversation in the Messages API wire shape (plain dicts).

The machine (``fsm.core``) decides *when* to compact and records it; this package says *how much room there is*
and *what the shorter conversation is*, and never calls a model, prints or touches the agent:

- :mod:`~fsm.compaction.window`: the context window, Claude Code's thresholds and their settings
  (:class:`Window`, :func:`window_for`, :class:`CompactSettings`);
- :mod:`~fsm.compaction.tokens`: how many tokens the next request holds (:func:`estimate_tokens`);
- :mod:`~fsm.compaction.store`: large tool results kept outside the conversation (:class:`ResultStore`);
- :mod:`~fsm.compaction.passes`: the cheap passes, persist then micro-compact (:func:`cheap_passes`);
- :mod:`~fsm.compaction.summary`: the summary request and the history that replaces the conversation
  (:func:`summary_request`, :func:`summarized`);
- :mod:`~fsm.compaction.reinject`: what is given back after a summary (:class:`Reinjection`, :func:`recent_files`);
- :mod:`~fsm.compaction.compactor`: all of it as one object the machine asks (:class:`PassesCompactor`).

Every function here keeps the conversation valid: each ``tool_use`` keeps its ``tool_result``, no ``tool_result``
is left without its ``tool_use``, and roles alternate.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.compaction.compactor import PassesCompactor
    from fsm.compaction.passes import Cheap, cheap_passes
    from fsm.compaction.reinject import RecentFile, Reinjection, recent_files
    from fsm.compaction.store import ResultStore
    from fsm.compaction.summary import SUMMARY_PROMPT, summarized, summary_request
    from fsm.compaction.tokens import estimate_tokens, text_tokens
    from fsm.compaction.window import CompactSettings, Window, window_for
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "compactor": ["PassesCompactor"],
            "passes": ["Cheap", "cheap_passes"],
            "reinject": ["RecentFile", "Reinjection", "recent_files"],
            "store": ["ResultStore"],
            "summary": ["SUMMARY_PROMPT", "summarized", "summary_request"],
            "tokens": ["estimate_tokens", "text_tokens"],
            "window": ["CompactSettings", "Window", "window_for"],
        },
    )

__all__ = [
    "SUMMARY_PROMPT",
    "Cheap",
    "CompactSettings",
    "PassesCompactor",
    "RecentFile",
    "Reinjection",
    "ResultStore",
    "Window",
    "cheap_passes",
    "estimate_tokens",
    "recent_files",
    "summarized",
    "summary_request",
    "text_tokens",
    "window_for",
]
