"""Tests for tests/suite.py: the Hypothesis profile chosen, the examples it scales, the markers given by path."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings

from tests.suite import CI_EXAMPLES, TESTS, examples, markers_for, profile_for

ROOT = TESTS.parent


class TestProfileFor:
    def test_ci_when_ci_is_set(self) -> None:
        """CI set (as .ci/run sets it) chooses the thorough profile."""
        assert profile_for({"CI": "true"}) == "ci"

    def test_dev_otherwise(self) -> None:
        """Without CI, or with CI empty, the quick profile."""
        assert profile_for({}) == profile_for({"CI": ""}) == "dev"

    def test_hypothesis_profile_overrides(self) -> None:
        """HYPOTHESIS_PROFILE names the profile whatever CI says."""
        assert profile_for({"CI": "true", "HYPOTHESIS_PROFILE": "dev"}) == "dev"
        assert profile_for({"HYPOTHESIS_PROFILE": "ci"}) == "ci"


class TestProfiles:
    def test_mutation_is_quick_and_repeatable(self) -> None:
        """mutation (tests/mutation/run.py) draws dev's tenth, derandomized, with no database, and lets mutmut run a
        test twice in one process."""
        mutation = settings.get_profile("mutation")
        assert (mutation.max_examples, mutation.deadline, mutation.derandomize, mutation.database) == (
            CI_EXAMPLES // 10,
            None,
            True,
            None,
        )
        assert HealthCheck.differing_executors in mutation.suppress_health_check

    def test_ci_is_thorough_and_repeatable(self) -> None:
        """ci draws the full count, without a deadline, derandomized, printing the reproducing blob."""
        ci = settings.get_profile("ci")
        assert (ci.max_examples, ci.deadline, ci.derandomize, ci.print_blob, ci.database) == (
            CI_EXAMPLES,
            None,
            True,
            True,
            None,
        )

    def test_examples_are_asked_for_under_ci_and_a_tenth_under_dev(self) -> None:
        """examples(n) is n under ci; dev runs a tenth, never fewer than one."""
        ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
        assert [examples(n, under=ci) for n in (300, 40, 1)] == [300, 40, 1]
        assert [examples(n, under=dev) for n in (300, 40, 1)] == [30, 4, 1]


class TestMarkersFor:
    def test_every_e2e_file_is_e2e_and_slow(self) -> None:
        """A test anywhere under tests/e2e, in a file that does not exist yet too, is e2e and slow."""
        for path in (TESTS / "e2e" / "test_headless.py", TESTS / "e2e" / "new" / "test_new.py"):
            assert markers_for(path, ["tmp_path"]) == {"e2e", "slow"}

    def test_a_browser_test_is_e2e_and_slow(self) -> None:
        """A test using the browser fixture (page does) is e2e and slow wherever it lives."""
        assert markers_for(TESTS / "fsm" / "ui" / "test_new.py", ["page", "browser", "ui"]) == {"e2e", "slow"}

    def test_others_get_none(self) -> None:
        """Any other test gets no marker from its path: it says so itself."""
        assert markers_for(TESTS / "tools" / "test_bash.py", ["workspace"]) == set()
        assert markers_for(TESTS / "e2e_like" / "test_x.py", []) == set()


@pytest.mark.slow  # two pytest processes
def test_the_hook_marks_what_pytest_selects() -> None:
    """Through pytest itself: -m 'not slow' leaves nothing of an e2e file or of the browser tests, and the
    sandbox tests, which are not slow; -m e2e takes all three files."""
    files = ["tests/e2e/test_budget.py", "tests/fsm/ui/test_browser.py", "tests/tools/test_sandbox.py"]

    def collected(marks: str) -> set[str]:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", "-m", marks, *files],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        return {line.split("::")[0] for line in run.stdout.splitlines() if "::" in line}

    assert collected("not slow") == {"tests/tools/test_sandbox.py"}
    assert collected("e2e") == set(files)
