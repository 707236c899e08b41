"""Hypothesis strategies for model replies, shared by the machine's property tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fsm import ModelError

STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "pause_turn", "refusal", "stop_sequence", None]

_words = st.text(alphabet="abcdefgh ", min_size=0, max_size=12)


def _tool_inputs(child: bool) -> st.SearchStrategy[tuple[str, Any]]:
    return st.sampled_from(
        [
            ("glob", {"pattern": "*.txt"}),
            ("read_file", {"path": "x.txt"}),
            ("read_file", {"path": "missing.txt", "limit": 1}),
            ("write_file", {"path": "out/a.txt", "content": "c"}),
            ("write_file", {"path": "../escape.txt", "content": "c"}),  # outside: the approver is asked
            ("edit_file", {"path": "x.txt", "old_text": "nothere", "new_text": "y"}),
            ("read_file", {"path": 5}),  # wrong type
            ("glob", {"nope": 1}),  # unknown and missing parameters
            ("bash", "not an object"),
            ("teleport", {}),  # unknown tool
            ("task", {"prompt": "subtask to do"}),  # from the child too: must be refused
            ("task", {"prompt": ""}),
            ("bash", {"command": ": sudo reboot"}),  # deny list; harmless if it ever ran (':' does nothing)
        ]
    )


@st.composite
def _reply(draw: st.DrawFn, child: bool, serial: int) -> dict[str, Any]:
    prefix = "c" if child else "p"
    blocks: list[dict[str, Any]] = []
    if not child and draw(st.integers(0, 4), label="task batch") == 0:  # several subagents at once
        tasks = draw(st.integers(2, 5), label="tasks")
        names = ["task"] * tasks
        names.insert(draw(st.integers(0, tasks), label="other at"), draw(st.sampled_from(["glob", "task", "none"])))
        blocks = [
            {
                "type": "tool_use",
                "id": f"{prefix}_{serial}_{i}",
                "name": name,
                "input": {"pattern": "*.txt"} if name == "glob" else {"prompt": "subtask to do"},
            }
            for i, name in enumerate(n for n in names if n != "none")
        ]
        return {"content": blocks, "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}
    for i in range(draw(st.integers(0, 3), label="blocks")):
        if draw(st.booleans(), label="is text"):
            blocks.append({"type": "text", "text": draw(_words)})
        else:
            name, tool_input = draw(_tool_inputs(child))
            blocks.append({"type": "tool_use", "id": f"{prefix}_{serial}_{i}", "name": name, "input": tool_input})
    return {
        "content": blocks,
        "stop_reason": draw(st.sampled_from(STOP_REASONS)),
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }


@st.composite
def replies(draw: st.DrawFn, *, child: bool, serial: int) -> dict[str, Any] | BaseException:
    """A reply dict; one time in 20 a model error, one in 40 another exception, one in 40 a Ctrl-C (to raise
    from the model call); one in 10 a parent's reply with 2 or 3 task calls, one in 10 a pause_turn."""
    roll = draw(st.integers(0, 39), label="roll")
    if roll < 2:
        return ModelError("drawn failure")
    if roll == 2:
        return KeyboardInterrupt()
    if roll == 3:
        return draw(st.sampled_from([RuntimeError("drawn crash"), ValueError("bad"), TypeError("odd")]))
    if roll < 8 and not child:
        calls = [
            {"type": "tool_use", "id": f"p_{serial}_{i}", "name": "task", "input": {"prompt": f"subtask {i}"}}
            for i in range(draw(st.integers(2, 3), label="tasks"))
        ]
        return {"content": calls, "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 2}}
    if roll < 12:
        return {
            "content": [{"type": "text", "text": "thinking"}],
            "stop_reason": "pause_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    return draw(_reply(child, serial))
