"""The summary adds up, from the lines alone, and preds.json has SWE-bench's shape."""

from __future__ import annotations

from typing import Any

import pytest

from fsm.batch.summary import percentile, predictions, render_table, summarize


def _line(id: str, *, final: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "id": id,
        "final": final,
        "outcome": "end_turn",
        "is_error": False,
        "total_cost_usd": 0.01,
        "duration_s": 1.0,
        **extra,
    }


def test_percentile_nearest_rank() -> None:
    """p50 and p95 by nearest rank; None for nothing."""
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([], 50) is None


def test_summary_adds_up() -> None:
    """Counts, errors, verify rate, cost over every attempt and the mean over finished tasks."""
    lines = [
        _line("a", final=False, is_error=True, outcome="model_error", total_cost_usd=0.02),
        _line("a", verify={"exit_code": 0}, duration_s=2.0),
        _line("b", is_error=True, outcome="model_error", verify={"exit_code": 1}, duration_s=4.0),
        _line("c", duration_s=3.0),
        _line("other"),
    ]
    summary = summarize(["a", "b", "c", "d"], lines, max_total_usd=0.04, not_started=["d"])
    assert summary["tasks"] == 4
    assert summary["finished"] == 3
    assert summary["unfinished"] == 1
    assert summary["by_outcome"] == {"end_turn": 2, "model_error": 1}
    assert sum(summary["by_outcome"].values()) == summary["finished"]
    assert summary["errors"] == 1
    assert summary["attempts"] == 4
    assert summary["verify"] == {"run": 2, "passed": 1, "pass_rate": 0.5}
    assert summary["cost_usd"] == {"total": 0.05, "mean": pytest.approx(0.05 / 3, abs=1e-6)}
    assert summary["duration_s"] == {"p50": 3.0, "p95": 4.0}
    assert summary["max_total_usd"] == {"cap": 0.04, "over_by": 0.01, "reached": True}
    assert summary["not_started"] == 1
    table = render_table(summary)
    assert "verify passed  1/2 (50%)" in table
    assert "$0.0400 reached, over by $0.0100" in table


def test_predictions_shape() -> None:
    """One entry per final line: instance_id, model_name_or_path, model_patch."""
    preds = predictions([_line("a", diff="patch"), _line("b", final=False, diff="x"), _line("c")], model="m")
    assert preds == {
        "a": {"instance_id": "a", "model_name_or_path": "m", "model_patch": "patch"},
        "c": {"instance_id": "c", "model_name_or_path": "m", "model_patch": ""},
    }
