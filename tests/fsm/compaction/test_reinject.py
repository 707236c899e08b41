"""recent_files gives back the files the conversation touched last, inside the workspace, within budget."""

from __future__ import annotations

import os

from fsm.compaction import recent_files, text_tokens
from fsm.compaction.reinject import MAX_FILES


def _call(use_id: str, name: str, path: str, *, error: bool = False, answered: bool = True) -> list[dict]:
    result = {"type": "tool_result", "tool_use_id": use_id, "content": "ok"}
    if error:
        result["is_error"] = True
    turns = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": use_id, "name": name, "input": {"path": path}}]}
    ]
    return turns + ([{"role": "user", "content": [result]}] if answered else [])


def test_newest_first_at_most_five(tmp_path):
    """Seven touched files give the five most recent, newest first, each once."""
    messages = [{"role": "user", "content": "go"}]
    for n in range(7):
        (tmp_path / f"f{n}.py").write_text(f"x = {n}\n")
        messages += _call(f"t{n}", "read_file", f"f{n}.py")
    messages += _call("again", "edit_file", "f3.py")
    files = recent_files(messages, tmp_path)
    assert [f.path for f in files] == ["f3.py", "f6.py", "f5.py", "f4.py", "f2.py"]
    assert len(files) == MAX_FILES
    assert files[0].text == "x = 3\n"


def test_refused_failed_unanswered_and_outside_are_left_out(tmp_path):
    """A call that failed (a refused read), an unanswered one, a path outside the workspace, a link out and a
    missing file are never read."""
    workspace, outside = tmp_path / "ws", tmp_path / "out"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("secret\n")
    (workspace / "link").symlink_to(outside / "secret")
    (workspace / "denied.env").write_text("KEY=1\n")
    (workspace / "ok.txt").write_text("fine\n")
    messages = [{"role": "user", "content": "go"}]
    messages += _call("a", "read_file", "denied.env", error=True)
    messages += _call("b", "read_file", "../out/secret")
    messages += _call("c", "read_file", str(outside / "secret"))
    messages += _call("d", "read_file", "link")
    messages += _call("e", "read_file", "missing.txt")
    messages += _call("f", "bash", "ok.txt")
    messages += _call("g", "read_file", "ok.txt")
    messages += _call("h", "write_file", "ok.txt", answered=False)
    files = recent_files(messages, workspace)
    assert [(f.path, f.text) for f in files] == [("ok.txt", "fine\n")]


def test_budget_cuts_files(tmp_path):
    """A file over the per-file budget is cut, and the total budget stops the list."""
    (tmp_path / "big.txt").write_text("word " * 5_000)
    (tmp_path / "small.txt").write_text("tiny\n")
    messages = [
        {"role": "user", "content": "go"},
        *_call("a", "read_file", "small.txt"),
        *_call("b", "read_file", "big.txt"),
    ]
    big, small = recent_files(messages, tmp_path, file_tokens=100, budget=150)
    assert big.cut and len(big.text) < 1_000 and not small.cut
    assert text_tokens(big.text) == 100
    assert [f.path for f in recent_files(messages, tmp_path, file_tokens=100, budget=100)] == ["big.txt"]


def test_a_huge_file_is_read_only_in_part(tmp_path):
    """A file far over the budget is read only as far as the budget can hold, and marked cut; a FIFO is skipped."""
    (tmp_path / "huge.log").write_text("0123456789\n" * 400_000)
    os.mkfifo(tmp_path / "pipe")
    messages = [
        {"role": "user", "content": "go"},
        *_call("a", "read_file", "huge.log"),
        *_call("b", "read_file", "pipe"),
    ]
    (huge,) = recent_files(messages, tmp_path, file_tokens=1_000)
    assert huge.cut and text_tokens(huge.text) <= 1_000 and len(huge.text) <= 8_000
