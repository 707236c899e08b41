"""Tests for tests/mutation/run.py and its targets: what it mutates exists, what it runs is narrow, and
docs/mutation.md lists what it says."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.mutation.run import ROOT, Outcome, load_targets, mutmut_config, recheck

DOC = ROOT / "docs" / "mutation.md"


class TestTargets:
    def test_every_target_and_test_exists(self) -> None:
        """Each module mutated and each test file selected for it (or a test in it, as ``--deselect`` names one)
        exists."""
        targets, _ = load_targets()
        assert targets
        for module, tests in targets.items():
            assert (ROOT / module).is_file(), module
            assert all((ROOT / t.split("::")[0]).is_file() for t in tests if not t.startswith("-")), tests

    def test_the_documented_targets_are_the_configured_ones(self) -> None:
        """docs/mutation.md names exactly the modules targets.toml mutates."""
        targets, _ = load_targets()
        section = DOC.read_text().split("The targets:", 1)[1].split("\n\n", 1)[0]
        assert set(re.findall(r"`(fsm/[\w/]+\.py)`", section)) == set(targets)

    def test_each_equivalent_mutant_is_explained_in_the_docs(self) -> None:
        """Every mutant listed as equivalent has a reason, and docs/mutation.md names it."""
        _, equivalent = load_targets()
        text = DOC.read_text()
        for name, why in equivalent.items():
            assert why.strip(), name
            assert name.rsplit(".", 1)[1] in text, name


class TestMutmutConfig:
    def test_the_target_joins_the_projects_table(self) -> None:
        """The copy's [tool.mutmut] is the project's, plus the module and its tests."""
        pyproject = (ROOT / "pyproject.toml").read_text()
        config = tomllib.loads(mutmut_config(pyproject, "fsm/policy/modes.py", ["tests/a.py"]))["tool"]["mutmut"]
        project = tomllib.loads(pyproject)["tool"]["mutmut"]
        assert config == {
            **project,
            "only_mutate": ["fsm/policy/modes.py"],
            "pytest_add_cli_args_test_selection": ["tests/a.py"],
        }


class TestOutcome:
    def test_the_rate_leaves_out_the_equivalent_and_counts_timeouts(self) -> None:
        """Killed (a timeout too) over the mutants that are not equivalent; survivors are the rest."""
        statuses = {"m.a": "killed", "m.b": "timeout", "m.c": "survived", "m.d": "survived", "m.e": "no tests"}
        result = Outcome("m.py", statuses, frozenset({"m.d"}))
        assert (result.killed, result.rate, result.survivors) == (2, 0.5, ["m.c", "m.e"])
        assert result.line() == "m.py: 5 mutants, 2 killed, 1 equivalent, 2 survived: 50% of the non-equivalent killed"


class TestRecheck:
    def test_each_survivor_runs_in_its_own_pytest_several_at_once(self, tmp_path: Path) -> None:
        """A mutant is killed when a test fails with it under test (MUTANT_UNDER_TEST), whichever runs beside it."""
        (tmp_path / "tests").mkdir()
        (tmp_path / "mutants").mkdir()
        (tmp_path / "tests" / "test_probe.py").write_text(
            "import os\n\ndef test_probe():\n    assert os.environ['MUTANT_UNDER_TEST'] not in ('m.a', 'm.c')\n"
        )
        assert recheck(tmp_path, ["m.a", "m.b", "m.c"], ["tests/test_probe.py"], jobs=2) == {"m.a", "m.c"}
