"""One attempt's own failures are results, never exceptions; setup and verify never see the model's key."""

from __future__ import annotations

import os
from pathlib import Path

from fsm.batch.attempt import AttemptSpec, run_attempt


def _env() -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "ANTHROPIC_API_KEY": "sk-ant-secret",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }


def test_failed_setup_skips_the_agent_and_hides_the_key(tmp_path: Path) -> None:
    """A setup that fails is the attempt's result (setup_failed, its exit code and output); it ran without the key."""
    task = {"id": "s", "prompt": "p", "setup": "env > env.txt; echo preparing; exit 3", "verify": "true"}
    result = run_attempt(AttemptSpec(task=task, attempt=1, out=str(tmp_path), env=_env()))
    line = result.line
    assert (line["outcome"], line["is_error"], line["subtype"]) == ("setup_failed", True, "error_during_execution")
    assert line["setup"]["exit_code"] == 3 and line["setup"]["output"] == "preparing\n"
    assert line["verify"]["exit_code"] == 0
    written = (tmp_path / "work" / "s" / "env.txt").read_text()
    assert "PATH=" in written and "ANTHROPIC" not in written and "sk-ant-secret" not in line["diff"]
    assert "+++ b/env.txt" in line["diff"]
    assert result.trajectory == "" and not result.interrupted
    assert not (tmp_path / "s" / "sessions.db").exists()  # no agent ran


def test_missing_workspace_is_a_result(tmp_path: Path) -> None:
    """A workspace that does not exist is a workspace_error line naming it."""
    task = {"id": "w", "prompt": "p", "workspace": str(tmp_path / "nowhere")}
    line = run_attempt(AttemptSpec(task=task, attempt=2, out=str(tmp_path / "out"), env=_env())).line
    assert (line["id"], line["attempt"], line["outcome"], line["is_error"]) == ("w", 2, "workspace_error", True)
    assert "is not a directory" in line["result"] and line["diff"] == ""
