"""A journal that cannot be written mid-run, for real: the process may write files of at most 400 KB
(RLIMIT_FSIZE; Python ignores SIGXFSZ, so the write fails with EFBIG), and the model's second reply is 800 KB, so
the journal cannot take the transition that holds it. Every output mode still ends with the result, one
stderr line and exit 1, and the session is consistent as far as it was written: a later resume finishes it."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

import pytest

from fsm.session.journal import Journal, default_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

LIMIT = 400_000


def _small_files_only() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


@pytest.mark.parametrize("output", ["json", "stream-json", "text"])
def test_a_journal_that_fills_up_mid_run(tmp_path: Path, output: str) -> None:
    """The run stops at the transition the journal could not take; json modes print the result object
    (error_during_execution, outcome journal_error); one stderr line; exit 1; --continue finishes it
    (checked once, after the json run)."""
    with FakeAnthropic() as fake:
        fake.script = [
            tool_reply(tool_use("glob", {"pattern": "*"})),
            text_reply("x" * (2 * LIMIT)),
            text_reply("done after all"),
        ]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        done = subprocess.run(
            [str(AGENTFSM), "-p", "look", "--output-format", output],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            preexec_fn=_small_files_only,
        )
        with Journal(default_path(tmp_path)) as journal:
            (info,) = journal.sessions()
            records = journal.records(info.id)
        assert done.returncode == 1
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"agentfsm: cannot write to session journal {default_path(tmp_path)} (")
        assert line.endswith(
            f"; session {info.id} is journalled up to the transition before seq 5; the run "
            f"stopped there: once the journal can be written, go on with agentfsm -p --resume "
            f"{info.id}"
        )
        if output == "text":
            assert done.stdout == ""
        else:
            result = json.loads(done.stdout.splitlines()[-1])
            assert (result["type"], result["subtype"], result["outcome"], result["is_error"]) == (
                "result",
                "error_during_execution",
                "journal_error",
                True,
            )
            assert (result["session_id"], result["model_calls"], result["transitions"]) == (info.id, 2, 5)
            assert f"agentfsm: {result['errors'][0]}" == line
        assert [r.trigger for r in records] == ["prompt", "replied_with_tools", "tool_ran", "tools_done"]
        assert info.state == "awaiting_model"
        if output != "json":
            return
        finished = subprocess.run(
            [str(AGENTFSM), "-p", "--continue"],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    assert (finished.returncode, finished.stdout, finished.stderr) == (0, "done after all\n", "")
