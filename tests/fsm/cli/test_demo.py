"""Tests for fsm.cli.demo: the offline demo plays the three prompts over a real sample project."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fsm.cli.demo import PROMPTS, SAMPLE_FILES, Row, context_bytes, play_prompt, run_demo, table, write_sample


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    root.mkdir()
    write_sample(root)
    return root


class TestSample:
    def test_is_a_pytest_project_whose_tests_pass(self, sample: Path) -> None:
        """The sample project is real: pytest is configured in pyproject.toml and its tests pass."""
        assert sorted(str(p.relative_to(sample)) for p in sample.rglob("*") if p.is_file()) == sorted(SAMPLE_FILES)
        assert "[tool.pytest.ini_options]" in (sample / "pyproject.toml").read_text()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=sample,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "3 passed" in done.stdout


class TestPlayPrompt:
    def test_framework_is_found_from_the_files(self, sample: Path) -> None:
        """The subagent's evidence comes from the files it read."""
        out = io.StringIO()
        row = play_prompt(0, sample, out=out)
        assert row.outcome == "end_turn"
        assert (
            "This project uses pytest. The subagent's evidence: 2 test files (tests/test_pricing.py, "
            "tests/test_stock.py); pyproject.toml has a [tool.pytest.ini_options] table."
        ) in " ".join(out.getvalue().split())  # the answer is wrapped to 100 columns

    def test_summary_is_read_from_the_files(self, sample: Path) -> None:
        """Change a docstring and the delegated summary changes with it: nothing is canned."""
        stock = sample / "inventory" / "stock.py"
        stock.write_text(stock.read_text().replace("Track how many of each item are in stock.", "Count apples."))
        (sample / "extra.py").write_text('"""An extra file."""\n')
        out = io.StringIO()
        play_prompt(1, sample, out=out)
        text = out.getvalue()
        assert "A subagent read 6 Python files. What each one does:" in text
        assert "- inventory/stock.py: Count apples." in text
        assert "- extra.py: An extra file." in text

    def test_module_is_created_and_verified(self, sample: Path) -> None:
        """The child writes the module; the parent reads it and runs it."""
        out = io.StringIO()
        row = play_prompt(2, sample, out=out)
        assert (sample / "inventory" / "report.py").is_file()
        assert (
            "Verified: inventory/report.py defines report() (Reports: a one-line text summary of a Stock.), "
            "and calling it on a sample stock printed: 2 items, 4 units in stock"
        ) in " ".join(out.getvalue().split())
        assert 0 < row.with_subagent < row.without_subagent

    def test_transitions_are_shown(self, sample: Path) -> None:
        """Console lines and one line per transition appear as the run goes."""
        out = io.StringIO()
        play_prompt(0, sample, out=out)
        text = out.getvalue()
        assert "\n● task(test-finder: " in text and "\n  ● glob(**/test_*.py)\n    ⎿  tests/" in text
        assert re.search(r"^  #1 depth 0 [\w-]+: idle --prompt--> awaiting_model \(turn 0\)$", text, re.MULTILINE)
        assert re.search(r"^  #4 depth 1 [\w-]+\.1: idle --prompt--> awaiting_model \(turn 0\)$", text, re.MULTILINE)


class TestRunDemo:
    def test_whole_demo(self) -> None:
        """The demo plays all three prompts, exits 0 and ends with the table."""
        out = io.StringIO()
        assert run_demo(out=out) == 0
        text = out.getvalue()
        assert text.count("\n● task(") == 3 and text.count("\n● task(test-finder: ") == 1
        tail = text[text.index("Parent context in bytes of JSON") :].splitlines()
        assert [line.split("  ")[1] for line in tail[2:]] == list(PROMPTS)

    def test_keep(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--keep leaves the sample project in place and says where."""
        out = io.StringIO()
        assert run_demo(keep=True, out=out) == 0
        kept = Path(out.getvalue().rsplit("The sample project is kept in ", 1)[1].strip())
        assert (kept / "inventory" / "report.py").is_file()
        shutil.rmtree(kept.parent)


class TestTable:
    def test_layout(self) -> None:
        """Columns: prompt, bytes with the subagent, without it, and the share kept out."""
        rows = [Row("short", "end_turn", 1000, 4000), Row("a longer prompt", "end_turn", 1500, 1500)]
        assert table(rows) == "\n".join(
            [
                "Parent context in bytes of JSON (each prompt in a fresh session):",
                "  prompt           with subagent   without  kept out",
                "  short                    1,000     4,000       75%",
                "  a longer prompt          1,500     1,500        0%",
            ]
        )

    def test_context_bytes(self) -> None:
        """Context size is the UTF-8 length of the messages' JSON."""
        assert context_bytes([{"role": "user", "content": "é"}]) == len('[{"role": "user", "content": "é"}]'.encode())
