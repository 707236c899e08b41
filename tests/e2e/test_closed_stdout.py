"""A closed stdout (``>&-``) or a reader that leaves (``| head -c1``) ends every command quietly: no traceback,
nothing on stderr, and the journal consistent as far as the run got."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fsm.session.journal import Journal, default_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic


def closed(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``agentfsm ARGS >&-`` (stdout closed before it starts) through the shell."""
    command = " ".join(f"'{a}'" for a in [str(AGENTFSM), *args])
    return subprocess.run(
        ["sh", "-c", f"exec {command} >&-"],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=False,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=60,
    )


def reader_gone(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``agentfsm ARGS`` into a pipe whose reader has already left (as ``| head -c1`` leaves)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [str(AGENTFSM), *args],
            cwd=cwd,
            env=env,
            text=True,
            stdout=write,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    finally:
        os.close(write)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    """A workspace with one journalled delegating run; its session id; an environment without a model."""
    root = tmp_path_factory.mktemp("closed")
    with FakeAnthropic() as fake:
        fake.script = [
            tool_reply(tool_use("task", {"prompt": "look"})),
            text_reply("the child looked"),
            text_reply("all done"),
        ]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
        done = subprocess.run(
            [str(AGENTFSM), "-p", "look around", "--output-format", "json"],
            cwd=root,
            env=env,
            text=True,
            capture_output=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    with Journal(default_path(root)) as journal:
        (info,) = journal.sessions()
    return root, info.id, base_env()


READERS = [
    ["sessions", "list"],
    ["sessions", "show", "SESSION"],
    ["sessions", "export", "SESSION"],
    ["replay", "SESSION"],
    ["diagram"],
    ["--help"],
]


@pytest.mark.parametrize("how", [closed, reader_gone], ids=[">&-", "| head -c1"])
def test_reading_commands_end_quietly(workspace, how):
    """sessions list/show/export, replay, diagram and --help print nothing on stderr when stdout is closed
    (exit as usual) or its reader has left (exit 1: each had something to say, and nobody read it)."""
    root, session, env = workspace
    ended = {" ".join(args): how([a.replace("SESSION", session) for a in args], root, env) for args in READERS}
    assert {name: done.stderr for name, done in ended.items()} == {name: "" for name in ended}
    expected = {name: 0 if how is closed or name == "--help" else 1 for name in ended}
    assert {name: done.returncode for name, done in ended.items()} == expected


class TestRuns:
    def test_a_run_with_stdout_closed_runs_and_is_journalled(self, tmp_path):
        """-p with stdout closed runs to the end (its output dropped), exit 0, the session complete."""
        with FakeAnthropic() as fake:
            fake.script = [text_reply("done")]
            done = closed(
                ["-p", "hi", "--output-format", "json"],
                tmp_path,
                base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test"),
            )
        assert (done.returncode, done.stderr) == (0, "")
        with Journal(default_path(tmp_path)) as journal:
            (info,) = journal.sessions()
        assert (info.outcome, info.transitions) == ("end_turn", 3)

    @pytest.mark.parametrize("output", ["text", "json", "stream-json"])
    def test_a_run_whose_reader_left_ends_quietly(self, tmp_path, output):
        """-p into a pipe nobody reads: exit 1, nothing on stderr; whatever the run journalled rebuilds."""
        with FakeAnthropic() as fake:
            fake.script = [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]
            done = reader_gone(
                ["-p", "hi", "--output-format", output],
                tmp_path,
                base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test"),
            )
        assert (done.returncode, done.stderr) == (1, "")
        with Journal(default_path(tmp_path)) as journal:
            for info in journal.sessions():
                journal.snapshot(info.id)  # raises if the rows do not rebuild
                if output != "stream-json":  # stream-json's first line (system/init) fails before any step
                    assert (info.outcome, info.transitions) == ("end_turn", 6)

    def test_a_reader_that_leaves_mid_stream_stops_the_run_resumably(self, tmp_path):
        """stream-json read for one line, then the reader leaves: the run stops quietly (exit 1) where it was,
        and --continue finishes it."""
        with FakeAnthropic() as fake:
            fake.script = [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]
            fake.latency = 1.0  # the reader is gone before the reply comes
            env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
            process = subprocess.Popen(
                [str(AGENTFSM), "-p", "hi", "--output-format", "stream-json"],
                cwd=tmp_path,
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
            assert process.stdout is not None and process.stderr is not None
            assert '"subtype": "init"' in process.stdout.readline()
            process.stdout.close()
            assert (process.wait(timeout=60), process.stderr.read()) == (1, "")
            with Journal(default_path(tmp_path)) as journal:
                (info,) = journal.sessions()
            assert info.outcome is None and info.state in ("awaiting_model", "executing_tools")
            finished = subprocess.run(
                [str(AGENTFSM), "-p", "--continue"],
                cwd=tmp_path,
                env=env,
                text=True,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                timeout=60,
            )
        assert (finished.returncode, finished.stdout, finished.stderr) == (0, "done\n", "")
