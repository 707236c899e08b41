"""PassesCompactor answers the machine's five questions with the package's passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attrs import frozen

from fsm.compaction import CompactSettings, PassesCompactor, ResultStore
from fsm.compaction.passes import MARKER, PERSIST_OVER
from fsm.compaction.tokens import messages_tokens
from tests.strategies_compaction import problems, tool_results


@frozen
class Request:
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    last_input_tokens: int | None = None
    counted: int = 0


def _history() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "read the modules"}]
    for n in range(5):
        call = {"type": "tool_use", "id": f"t{n}", "name": "read_file", "input": {"path": f"m{n}.py"}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"x = {n}\n" * (4_000 if n == 0 else 10)}
        messages += [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]
    return messages


def test_the_five_answers(tmp_path: Path) -> None:
    """Threshold from the window, tokens from usage, the cheap passes, a request cut to the window, and a history
    that gives back the files touched last."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for n in range(5):
        (workspace / f"m{n}.py").write_text(f"x = {n}\n")
    compactor = PassesCompactor.for_model(
        "claude-sonnet-4-5",
        max_output=8_000,
        workspace=workspace,
        store=ResultStore(tmp_path / "state", workspace=workspace),
        settings=CompactSettings(threshold=5_000),
    )
    assert compactor.threshold == 5_000 and compactor.window.effective == 192_000
    messages = [*_history(), {"role": "assistant", "content": [{"type": "text", "text": "done"}]}]
    assert compactor.tokens(Request("s", messages, [], 1_000, 11)) == 1_000 + messages_tokens(messages[11:])
    cheap = compactor.cheap(messages)
    assert (cheap.persisted, cheap.cleared) == (["t0"], ["t0", "t1"])
    results = tool_results(cheap.messages)
    assert results["t0"]["content"].startswith(MARKER[:-1]) and len("x = 0\n" * 4_000) > PERSIST_OVER
    system, request = compactor.summary_request(cheap.messages, instructions="keep tests")
    assert system and problems(request) == [] and "keep tests" in request[-1]["content"][-1]["text"]
    history = compactor.summarized("<summary>read five modules</summary>", cheap.messages)
    texts = [b["text"] for b in history[0]["content"]]
    assert len(history) == 1 and "Summary:\nread five modules" in texts[0]
    assert [t.split(" (")[0] for t in texts[1:]] == [f"Contents of m{n}.py" for n in (4, 3, 2, 1, 0)]


def test_disabled_has_no_threshold(tmp_path: Path) -> None:
    """With automatic compaction off the machine gets no threshold (it still compacts on /compact or a refusal)."""
    compactor = PassesCompactor.for_model(
        "haiku", max_output=8_000, workspace=tmp_path, settings=CompactSettings(disabled=True)
    )
    assert compactor.threshold is None and compactor.store is None


def test_the_summary_request_fits_the_smallest_limit(tmp_path: Path) -> None:
    """The summary request is cut to the threshold, or to a smaller limit the caller knows."""
    messages: list[dict[str, Any]] = []
    for n in range(40):
        messages += [
            {"role": "user", "content": f"prompt {n} " + "word " * 500},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        ]
    messages.append({"role": "user", "content": "last"})
    compactor = PassesCompactor.for_model(
        "haiku", max_output=8_000, workspace=tmp_path, settings=CompactSettings(threshold=6_000)
    )
    assert messages_tokens(compactor.summary_request(messages, instructions=None)[1]) <= 6_000
    assert messages_tokens(compactor.summary_request(messages, instructions=None, limit=3_000)[1]) <= 3_000
    kept = compactor.summary_request(messages, instructions=None, limit=3_000)[1]
    assert problems(kept) == [] and kept[-1]["content"][0]["text"] == "last"
