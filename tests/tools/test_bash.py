"""Tests for tools/bash.py: output, exit status, timeouts, process groups and the environment."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import attrs
import pytest

import tools.bash
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.bash import _Capture
from tools.processes import ToolProcess


def _bash(workspace: Workspace, command: str) -> ToolOutput:
    return run_tool(BASE_TOOLS, "bash", workspace, {"command": command})


def _python(code: str) -> str:
    """A shell command running *code* with this interpreter."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def _dead(pid: int, *, within: float = 3.0) -> bool:
    """Whether process *pid* is gone (or a zombie awaiting its reaper) within *within* seconds."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        except OSError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            state = "?"
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


class TestOutput:
    def test_stdout(self, workspace: Workspace) -> None:
        """The command's output comes back, stripped, as a non-error result."""
        assert _bash(workspace, "echo hello") == ToolOutput("hello")

    def test_stderr_is_merged(self, workspace: Workspace) -> None:
        """stderr is interleaved with stdout in one text."""
        assert _bash(workspace, "echo out; echo err >&2").text == "out\nerr"

    def test_whitespace_is_stripped(self, workspace: Workspace) -> None:
        """Leading and trailing whitespace is removed, inner whitespace kept."""
        assert _bash(workspace, "printf '\\n\\n  a\\n\\n b  \\n\\n'").text == "a\n\n b"

    def test_empty_output(self, workspace: Workspace) -> None:
        """A command that prints nothing gives '(no output)'."""
        assert _bash(workspace, "true") == ToolOutput("(no output)")

    def test_runs_in_workspace_root(self, workspace: Workspace) -> None:
        """The command's working directory is the workspace root."""
        assert _bash(workspace, "pwd -P").text == str(workspace.root)

    def test_undecodable_bytes_are_replaced(self, workspace: Workspace) -> None:
        """Bytes that are not UTF-8 become U+FFFD instead of failing."""
        assert _bash(workspace, "printf 'a\\377\\376b'").text == "a\ufffd\ufffdb"

    def test_utf8_split_across_reads_survives(self, workspace: Workspace) -> None:
        """A multi-byte character split between two pipe reads is decoded whole."""
        out = _bash(workspace, _python("import sys; sys.stdout.buffer.write('€'.encode() * 30000)"))
        assert out.text == "€" * 30000


class TestExitStatus:
    def test_non_zero_status_is_reported_not_an_error(self, workspace: Workspace) -> None:
        """A failing command's status follows its output, and the result is not a tool error."""
        assert _bash(workspace, "echo oops; exit 3") == ToolOutput("oops\n(exit status 3)")

    def test_status_without_output(self, workspace: Workspace) -> None:
        """A silent failing command says '(no output)' and then its status."""
        assert _bash(workspace, "false").text == "(no output)\n(exit status 1)"

    def test_killed_by_signal(self, workspace: Workspace) -> None:
        """A shell killed by a signal is reported by the signal's name."""
        assert _bash(workspace, "echo bye; kill -9 $$").text == "bye\n(killed by signal SIGKILL)"


class TestTruncation:
    def test_output_is_capped_with_a_count(self, workspace: Workspace) -> None:
        """Only the first 50,000 characters are kept; the note counts the rest (after stripping)."""
        out = _bash(workspace, "yes | head -c 200000")
        assert out.text == ("y\n" * 25000).rstrip() + "\n... (149999 more chars truncated)"

    def test_exactly_the_cap_is_not_truncated(self, workspace: Workspace) -> None:
        """50,000 characters plus a trailing newline fit: no note."""
        assert _bash(workspace, _python("print('x' * 50000)")).text == "x" * 50000

    def test_leading_whitespace_does_not_use_the_cap(self, workspace: Workspace) -> None:
        """Leading whitespace longer than the cap is stripped before counting."""
        assert _bash(workspace, _python("print('\\n' * 60000 + 'hi')")).text == "hi"

    def test_large_output_is_counted(self, workspace: Workspace) -> None:
        """Twenty megabytes of output are read to the end and counted exactly."""
        out = _bash(workspace, "yes | head -c 20000000")
        assert out.text.endswith("\n... (19949999 more chars truncated)")
        assert len(out.text) < 50_100


class TestCaptureBuffer:
    def test_character_split_across_chunks(self) -> None:
        """The incremental decoder joins a character whose bytes arrive in two feeds."""
        capture = _Capture(10)
        data = "é€".encode()
        for i in range(len(data)):
            capture.feed(data[i : i + 1])
        assert capture.text() == "é€"

    def test_truncated_byte_at_end_is_replaced(self) -> None:
        """An incomplete character at the end of the stream becomes U+FFFD."""
        capture = _Capture(10)
        capture.feed(b"ok\xe2\x82")
        assert capture.text() == "ok\ufffd"

    def test_trailing_whitespace_after_the_cap_is_not_counted(self) -> None:
        """Whitespace at the very end, even past the cap, does not count as truncated."""
        capture = _Capture(3)
        for piece in (b"abcdef", b"  ", b"\n", b"\n"):
            capture.feed(piece)
        assert capture.text() == "abc\n... (3 more chars truncated)"


class TestProcesses:
    def test_stdin_is_closed(self, workspace: Workspace) -> None:
        """A command reading stdin sees end-of-file at once instead of hanging."""
        start = time.monotonic()
        assert _bash(workspace, "cat; echo done").text == "done"
        assert time.monotonic() - start < 5

    def test_timeout_kills_the_process_group(self, tmp_path: Path) -> None:
        """On timeout the result is 'Error: Timeout (1s)' and the command's background children die too."""
        workspace = Workspace(tmp_path, bash_timeout=1)
        start = time.monotonic()
        out = _bash(workspace, "sleep 1000 & echo $! > bg.pid; sleep 1000")
        assert out == ToolOutput("Error: Timeout (1s)", is_error=True)
        assert time.monotonic() - start < 5
        assert _dead(int((tmp_path / "bg.pid").read_text()))

    def test_timeout_text_uses_the_configured_value(self, tmp_path: Path) -> None:
        """A fractional timeout is shown as given."""
        out = _bash(Workspace(tmp_path, bash_timeout=0.5), "sleep 10")
        assert out == ToolOutput("Error: Timeout (0.5s)", is_error=True)

    def test_timeout_when_stdout_is_closed_early(self, tmp_path: Path) -> None:
        """A shell that closes its output and keeps running still times out."""
        out = _bash(Workspace(tmp_path, bash_timeout=1), "exec >&- 2>&-; sleep 1000")
        assert out == ToolOutput("Error: Timeout (1s)", is_error=True)

    def test_background_child_does_not_block_or_survive(self, workspace: Workspace) -> None:
        """`sleep 1000 & echo hi` returns 'hi' promptly, and the sleep is killed once the shell exits."""
        start = time.monotonic()
        out = _bash(workspace, "sleep 1000 & echo $! > bg.pid; echo hi")
        assert out == ToolOutput("hi")
        assert time.monotonic() - start < 5
        assert _dead(int((workspace.root / "bg.pid").read_text()))

    def test_background_writer_does_not_keep_us_reading(self, workspace: Workspace) -> None:
        """A background process that prints forever is killed when the shell exits."""
        start = time.monotonic()
        out = _bash(workspace, "(sleep 0.2; yes) & echo started")
        assert "started" in out.text
        assert time.monotonic() - start < 5

    def test_interrupt_kills_the_group_and_propagates(
        self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """KeyboardInterrupt while waiting kills the command's process group and is re-raised."""
        pid_file = workspace.root / "bg.pid"
        real = tools.bash._has_exited

        def interrupt_once_started(proc: object) -> bool:
            if pid_file.exists():
                raise KeyboardInterrupt
            return real(proc)  # type: ignore[arg-type]

        monkeypatch.setattr(tools.bash, "_has_exited", interrupt_once_started)
        with pytest.raises(KeyboardInterrupt):
            _bash(workspace, "sleep 1000 & echo $! > bg.tmp && mv bg.tmp bg.pid; wait")
        assert _dead(int(pid_file.read_text()))


WAIT_FOR_PID = "while [ ! -s d.pid ]; do sleep 0.01; done"
"""Shell: wait until the daemon has written its pid, so the call cannot end before the daemon exists."""


@pytest.mark.skipif(sys.platform != "linux", reason="the reaper needs Linux (PR_SET_CHILD_SUBREAPER)")
class TestNothingOutlivesTheCall:
    def test_setsid_daemon_is_gone_when_the_call_returns(self, workspace: Workspace) -> None:
        """`setsid sleep &` leaves the process group, yet it is dead when the call returns."""
        _bash(workspace, f"setsid sh -c 'echo $$ > d.pid; exec sleep 3141' & {WAIT_FOR_PID}")
        assert _dead(int((workspace.root / "d.pid").read_text()), within=0.5)

    def test_double_fork_with_setsid_is_gone(self, workspace: Workspace) -> None:
        """A classic daemon (fork, setsid, fork again, the middle process exits) does not survive."""
        code = (
            "import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        open('d.pid', 'w').write(str(os.getpid())); time.sleep(3142)\n"
            "    os._exit(0)\n"
        )
        _bash(workspace, f"{_python(code)}; {WAIT_FOR_PID}")
        assert _dead(int((workspace.root / "d.pid").read_text()), within=0.5)

    def test_daemon_with_a_cleared_environment_is_gone(self, workspace: Workspace) -> None:
        """A daemon that drops its environment (no tag to find it by) is still the reaper's child: killed."""
        _bash(workspace, f"env -i setsid /bin/sh -c 'echo $$ > d.pid; exec sleep 3143' & {WAIT_FOR_PID}")
        assert _dead(int((workspace.root / "d.pid").read_text()), within=0.5)

    def test_timeout_kills_a_setsid_daemon(self, tmp_path: Path) -> None:
        """On timeout the daemon outside the group dies too."""
        _bash(Workspace(tmp_path, bash_timeout=1), "setsid sh -c 'echo $$ > d.pid; exec sleep 3144' & sleep 1000")
        assert _dead(int((tmp_path / "d.pid").read_text()), within=0.5)

    def test_exit_status_passes_through_the_reaper(self, workspace: Workspace) -> None:
        """The shell's status reaches the result unchanged."""
        assert _bash(workspace, "exit 7").text == "(no output)\n(exit status 7)"

    def test_processes_are_reported_before_the_command_runs(self, workspace: Workspace) -> None:
        """The listener hears of the call's process group before the command runs, and again when it is gone."""
        seen: list[tuple[int, bool, bool]] = []

        def listen(process: ToolProcess, running: bool) -> None:
            seen.append((process.pid, running, (workspace.root / "ran").exists()))

        _bash(attrs.evolve(workspace, process_listener=listen), "touch ran")
        assert [(running, ran) for _, running, ran in seen] == [(True, False), (False, True)]
        assert seen[0][0] == seen[1][0]

    def test_a_failing_listener_means_the_command_never_runs(self, workspace: Workspace) -> None:
        """If the start cannot be recorded, the command does not run (the error reaches the model)."""

        def refuse(process: ToolProcess, running: bool) -> None:
            if running:
                raise OSError("journal is gone")

        out = _bash(attrs.evolve(workspace, process_listener=refuse), "touch ran")
        assert out.is_error and "journal is gone" in out.text
        time.sleep(0.2)
        assert not (workspace.root / "ran").exists()


class TestEnvironment:
    def test_api_keys_are_removed(self, workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are not passed on; other variables are."""
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-secret")
        monkeypatch.setenv("AGENTFSM_TEST_VAR", "kept")
        command = 'echo "${ANTHROPIC_API_KEY-unset} ${ANTHROPIC_AUTH_TOKEN-unset} ${AGENTFSM_TEST_VAR-unset}"'
        assert _bash(workspace, command).text == "unset unset kept"
