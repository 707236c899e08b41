"""README's examples run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def section_code(heading: str) -> str:
    text = README.read_text()
    section = text.split(f"## {heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_stepping_example_runs(tmp_path):
    """The ten-line stepping example runs offline and steps into the subagent."""
    (tmp_path / "README.md").write_text("hi\n")
    code = section_code("Stepping an agent, one transition at a time")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert " depth=1 idle --prompt--> awaiting_model" in out
    assert lines[-2].endswith("stopping --stopped--> idle")
    assert lines[-1].startswith("The folder holds one file, README.md. <Agent ")
    assert lines[-1].endswith("depth=0 state=idle turn=2/30 outcome=end_turn>")


def test_sessions_example_prints_what_it_says(tmp_path):
    """The Sessions example resumes, replays and forks as its comments say, and really writes a.txt."""
    code = section_code("Sessions")
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint(open(work + '/a.txt').read())"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines() == [
        "resumed: this call was in flight when the run stopped; not run again",
        "a.txt says hi",
        "2",
        "True 7",
        "run bash 'cat a.txt'",
        "a.txt says hi",
        "hi",
    ]


def test_quick_start_names_the_test_command():
    """The quick start's second command is exactly the test command CI runs."""
    quick = README.read_text().split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    assert quick.splitlines()[1] == "pytest"
    assert "pytest" in (README.parent / ".ci" / "run").read_text().splitlines()[-1]
