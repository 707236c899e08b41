"""results.jsonl: torn last lines are cut, final lines superseded atomically."""

from __future__ import annotations

import json
from pathlib import Path

from fsm.batch.results import final_lines, open_results, read_results, supersede


def test_torn_last_line_is_cut_before_appending(tmp_path: Path) -> None:
    """A line a killed driver left half written is dropped, and the next line starts on its own."""
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"id": "a", "final": True}) + "\n" + '{"id": "b", "fin')
    results = open_results(path)
    results.append({"id": "c", "final": True})
    results.close()
    assert [line["id"] for line in read_results(path)] == ["a", "c"]
    assert path.read_text().count("\n") == 2


def test_supersede_marks_final_lines_not_final(tmp_path: Path) -> None:
    """supersede leaves one final line per id at most: the chosen ones become not final."""
    path = tmp_path / "results.jsonl"
    lines = [
        {"id": "a", "attempt": 1, "final": True, "is_error": True},
        {"id": "b", "attempt": 1, "final": True, "is_error": False},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert supersede(path, lambda line: bool(line["is_error"])) == 1
    assert set(final_lines(read_results(path))) == {"b"}
    assert read_results(path)[0]["superseded"] is True
    assert supersede(path, lambda line: False) == 0
    assert not (tmp_path / "results.jsonl.tmp").exists()
