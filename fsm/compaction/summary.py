"""The summary call's request, and the history that replaces the conversation once the summary comes back.

:func:`summary_request` asks for what Claude Code's compact prompt asks for (2.1.197: primary request and intent,
key technical concepts, files and code, errors and fixes, problem solving, all user messages, pending tasks,
current work, the next step), ``/compact``'s instructions appended; the request has no tools. It sends the whole
conversation, made valid to end on a user turn, with the prompt as that turn's last text; when the conversation
is too long for the summary call itself, its oldest turns are dropped (whole exchanges: never a ``tool_use``
without its ``tool_result``).

:func:`summarized` is the new history: one user message holding Claude Code's continuation preamble, the summary
(its ``<analysis>`` dropped, as Claude Code does; the wording is the real CLI's, checked in
``tests/e2e/test_compaction_summary.py``) and the re-injected context
(:class:`~fsm.compaction.reinject.Reinjection`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fsm.compaction.passes import result_text
from fsm.compaction.reinject import Reinjection
from fsm.compaction.tokens import messages_tokens
from fsm.model.reply import Block, Message

__all__ = [
    "CONTINUE",
    "NOT_RUN",
    "PREAMBLE",
    "REMINDER",
    "SUMMARY_PROMPT",
    "SUMMARY_SYSTEM",
    "TRANSCRIPT",
    "clean_summary",
    "summarized",
    "summary_request",
]

SUMMARY_SYSTEM = "You are a helpful AI assistant tasked with summarizing conversations."
"""The summary call's system prompt (Claude Code's)."""

SUMMARY_PROMPT = """\
CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.
- You already have all the context you need in the conversation above.
- Your entire response must be plain text: an <analysis> block followed by a <summary> block.

Your task is to create a detailed summary of the conversation so far, paying close attention to the user's \
explicit requests and your previous actions.
This summary should be thorough in capturing technical details, code patterns, and architectural decisions that \
would be essential for continuing development work without losing context.

Before providing your final summary, wrap your analysis in <analysis> tags to organize your thoughts and ensure \
you've covered all necessary points. In your analysis process:
1. Chronologically analyze each message and section of the conversation. For each section thoroughly identify:
   - The user's explicit requests and intents
   - Your approach to addressing the user's requests
   - Key decisions, technical concepts and code patterns
   - Specific details like file names, full code snippets, function signatures and file edits
   - Errors that you ran into and how you fixed them
   - Specific user feedback, especially if the user told you to do something differently
   - Any security-relevant instructions or constraints the user stated: keep them verbatim in the summary
2. Double-check for technical accuracy and completeness.

Your summary should include the following sections:
1. Primary Request and Intent: Capture all of the user's explicit requests and intents in detail
2. Key Technical Concepts: List all important technical concepts, technologies, and frameworks discussed.
3. Files and Code Sections: Enumerate specific files and code sections examined, modified, or created. Pay \
special attention to the most recent messages and include full code snippets where applicable and a summary of \
why this file read or edit is important.
4. Errors and fixes: List all errors that you ran into, and how you fixed them, with any user feedback on them.
5. Problem Solving: Document problems solved and any ongoing troubleshooting efforts.
6. All user messages: List ALL user messages that are not tool results, in order. Keep security-relevant \
instructions verbatim.
7. Pending Tasks: Outline any pending tasks that you have explicitly been asked to work on.
8. Current Work: Describe in detail precisely what was being worked on immediately before this summary request, \
paying special attention to the most recent messages from both user and assistant, with file names and code \
snippets.
9. Optional Next Step: The next step that you will take, related to the most recent work. It must be DIRECTLY in \
line with the user's most recent explicit requests; if the last task was concluded, list a next step only if the \
user asked for it. Quote the most recent conversation verbatim to show where you left off.

Structure your output as:
<analysis>
[Your thought process]
</analysis>
<summary>
1. Primary Request and Intent:
   [Detailed description]
2. Key Technical Concepts:
   - [Concept]
3. Files and Code Sections:
   - [File name]
      - [Why it matters; changes made; important code]
4. Errors and fixes:
   - [Error]: [How it was fixed]
5. Problem Solving:
   [Description]
6. All user messages:
   - [Message]
7. Pending Tasks:
   - [Task]
8. Current Work:
   [Precise description]
9. Optional Next Step:
   [Next step]
</summary>
"""
"""The summary call's last user text: what Claude Code's compact prompt asks for, in its order."""
REMINDER = (
    "REMINDER: Do NOT call any tools. Respond with plain text only: an <analysis> block followed by a <summary> block."
)
"""The prompt's last words, after ``/compact``'s instructions (as Claude Code places them)."""

PREAMBLE = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation."
)
"""The first words of the history after a compaction (Claude Code's)."""
CONTINUE = (
    "Continue the conversation from where it left off without asking the user any further questions. Resume "
    "directly \u2014 do not acknowledge the summary, do not recap what was happening, do not preface with "
    '"I\'ll continue" or similar. Pick up the last task as if the break never happened.'
)
"""The last words of the summary turn (Claude Code's)."""
TRANSCRIPT = (
    "If you need specific details from before compaction (like exact code snippets, error messages, or content you "
    "generated), read the full transcript at: "
)
"""Claude Code's pointer to the full conversation, when there is a file to point to."""
NOT_RUN = "Not run: the conversation was compacted before this call could run."
"""The result the summary request gives a ``tool_use`` that had none yet (the request must answer every one)."""


def summary_request(
    messages: Sequence[Message], *, instructions: str | None, max_tokens: int | None = None
) -> tuple[str, list[Message]]:
    """The system prompt and messages of the summary call for *messages* (no tools: the caller sends none).

    Args:
        instructions: ``/compact``'s text, appended to the prompt as Claude Code does ("Additional Instructions").
        max_tokens: when given, the oldest exchanges are dropped until the estimate of the messages fits.
    """
    prompt = SUMMARY_PROMPT
    if instructions and instructions.strip():
        prompt += f"\nAdditional Instructions:\n{instructions.strip()}\n"
    prompt += f"\n{REMINDER}"
    body = _answered(list(messages))
    if max_tokens is not None:
        body = _fitted(body, max_tokens - messages_tokens([{"role": "user", "content": prompt}]))
    if body and body[-1]["role"] == "user":
        last = body[-1]
        blocks = _blocks(last["content"])
        body[-1] = {**last, "content": [*blocks, {"type": "text", "text": prompt}]}
    else:
        body.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    return SUMMARY_SYSTEM, body


def clean_summary(text: str) -> str:
    """The summary as the history keeps it: the ``<analysis>`` dropped and ``<summary>`` made ``Summary:``."""
    text = re.sub(r"<analysis>[\s\S]*?</analysis>", "", text, count=1)
    match = re.search(r"<summary>([\s\S]*?)</summary>", text)
    if match:
        text = text.replace(match.group(0), f"Summary:\n{match.group(1).strip()}", 1)
    return re.sub(r"\n\n+", "\n\n", text).strip()


def summarized(summary: str, *, reinject: Reinjection, transcript: str | None = None) -> list[Message]:
    """The history after a compaction: one user message with the summary, as Claude Code words it, then the
    re-injected context.

    Args:
        transcript: where the whole conversation can be read, if anywhere (Claude Code names its transcript).
    """
    text = f"{PREAMBLE}\n\n{clean_summary(summary)}"
    if transcript:
        text += f"\n\n{TRANSCRIPT}{transcript}"
    blocks: list[Block] = [{"type": "text", "text": f"{text}\n{CONTINUE}"}]
    blocks += [{"type": "text", "text": text} for text in reinject.texts()]
    return [{"role": "user", "content": blocks}]


def _blocks(content: object) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _answered(messages: list[Message]) -> list[Message]:
    """*messages* with every ``tool_use`` answered: a trailing assistant turn's calls get :data:`NOT_RUN`."""
    if messages and messages[-1].get("role") == "assistant":
        calls = [b for b in _blocks(messages[-1]["content"]) if b.get("type") == "tool_use"]
        if calls:
            results = [{"type": "tool_result", "tool_use_id": b["id"], "content": NOT_RUN} for b in calls]
            messages.append({"role": "user", "content": results})
    return messages


def _fitted(messages: list[Message], budget: int) -> list[Message]:
    """*messages* less their oldest turns until they fit *budget* tokens (or only the last user turn is left).

    The kept part starts with a user turn; a ``tool_result`` in that turn, whose ``tool_use`` is dropped, becomes
    plain text, so no result is left without its call.
    """
    sizes = [messages_tokens([m]) for m in messages]
    remaining = sum(sizes)
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    dropped = 0
    for start in starts:
        while dropped < start:
            remaining -= sizes[dropped]
            dropped += 1
        if remaining <= budget or start == starts[-1]:
            return [_unlinked(messages[start]), *messages[start + 1 :]] if start else messages
    return messages


def _unlinked(message: Message) -> Message:
    """A user turn whose ``tool_result`` blocks are made text (their calls are not in the request)."""
    blocks = _blocks(message["content"])
    if not any(b.get("type") == "tool_result" for b in blocks):
        return message
    content = [
        {"type": "text", "text": f"[earlier tool result]\n{result_text(b) or '(not text)'}"}
        if b.get("type") == "tool_result"
        else b
        for b in blocks
    ]
    return {**message, "content": content}
