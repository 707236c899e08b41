"""The progress views: plain lines off a terminal, rich's live view on one."""

from __future__ import annotations

import io

import pytest

from fsm.batch.driver import BatchState
from fsm.batch.progress import LiveProgress, PlainProgress, make_progress


def _state() -> BatchState:
    state = BatchState(total=3, skipped=1, done=1, cost=0.25)
    state.running.update({"t2": "awaiting_model", "t3": "executing_tools"})
    return state


def test_plain_lines() -> None:
    """One line per finished attempt: count, id, outcome (retry marked), verify, cost, time."""
    out = io.StringIO()
    view = PlainProgress(out)
    state = _state()
    view.finished(
        state,
        {
            "id": "t1",
            "final": True,
            "outcome": "end_turn",
            "verify": {"exit_code": 0},
            "total_cost_usd": 0.25,
            "duration_s": 1.5,
        },
    )
    view.finished(state, {"id": "t2", "final": False, "outcome": "model_error", "total_cost_usd": 0, "duration_s": 0.2})
    assert out.getvalue().splitlines() == [
        "[1/3] t1 end_turn verify passed $0.2500 1.5s",
        "[1/3] t2 model_error (retry) $0.0000 0.2s",
    ]


def test_live_view_shows_running_tasks_and_their_states() -> None:
    """The live view draws done/total, cost, ETA and each running task's state."""
    pytest.importorskip("rich")
    from rich.console import Console

    view = LiveProgress(io.StringIO())
    state = _state()
    view.refresh(state)
    view.close(state)
    screen = Console(file=io.StringIO(), width=100, force_terminal=False)
    screen.print(view._render(state))
    text = screen.file.getvalue()  # type: ignore[attr-defined]
    assert "1/3 done (1 already)" in text and "$0.2500" in text
    assert "t2  awaiting_model" in text and "t3  executing_tools" in text


def test_not_a_terminal_is_plain() -> None:
    """Off a terminal the view is plain lines."""
    assert isinstance(make_progress(io.StringIO()), PlainProgress)
