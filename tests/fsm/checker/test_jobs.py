"""The background jobs' proof (``fsm.checker.jobs``): it holds on the table, and fails on a table or driver that
breaks it."""

from __future__ import annotations

import pytest

from fsm.checker import jobs as job_check
from fsm.checker.jobs import JobBounds, check_jobs
from fsm.core import machine


@pytest.fixture
def table(monkeypatch):
    """Edit or drop a row of the table for one test."""

    def edit(trigger: str, source: str, to: str, /, **changes) -> None:
        row = next(r for r in machine.TRANSITIONS if r["trigger"] == trigger and r["dest"] == to)
        assert source in machine.sources(row)
        rows = [r for r in machine.TRANSITIONS if r is not row]
        if changes:
            rows.insert(machine.TRANSITIONS.index(row), {k: v for k, v in {**row, **changes}.items() if v is not None})
        monkeypatch.setattr(job_check, "TRANSITIONS", rows)

    return edit


class TestCheckJobs:
    @pytest.mark.parametrize("bounds", [JobBounds(), JobBounds(6, 3, 2)])
    def test_the_table_is_proved(self, bounds: JobBounds) -> None:
        """Every job told exactly once, waits only for jobs, every wait ends, no endless run: proved, not vacuously."""
        report = check_jobs(bounds)
        assert report.problem is None and report.configurations > 100

    def test_a_final_reply_that_waits_without_jobs_is_found(self, table) -> None:
        """With has_jobs dropped from the waiting row, a run waits with nothing to wait for."""
        table("replied_final", "awaiting_model", "awaiting_jobs", conditions=None)
        assert check_jobs().problem.startswith("a run waits with no job to wait for")

    def test_a_wait_without_a_ceiling_is_found(self, table) -> None:
        """Without the wait_ceiling row, a wait may last for ever (the driver has no move of its own)."""
        table("wait_ceiling", "awaiting_jobs", "stopping")
        assert check_jobs().problem.startswith("stuck: the driver has no move from ('awaiting_jobs'")

    def test_a_final_reply_that_never_waits_is_vacuous(self, table) -> None:
        """Without the waiting row, no run waits: the proof says it would be vacuous."""
        table("replied_final", "awaiting_model", "awaiting_jobs")
        assert check_jobs().problem == "vacuous: no run ever waits for a job"

    def test_a_run_that_ends_without_killing_its_jobs_is_found(self, monkeypatch) -> None:
        """A driver that kills no job when the run stops leaves a job untold at idle."""
        monkeypatch.setattr(job_check, "_KILLED_ON", frozenset({"wait_ceiling", "interrupted"}))
        assert check_jobs().problem.startswith("a run ended with a job the model was not told the end of")

    def test_a_wake_that_costs_no_turn_is_an_endless_run(self, table) -> None:
        """A job's end that leads back to waiting without a model call loops (a cycle)."""
        table("job_ended", "awaiting_jobs", "awaiting_model", dest="awaiting_jobs", unless=None)
        assert check_jobs().problem is not None
