"""Tests for tools/sandbox.py with real bubblewrap: what a sandboxed bash command can and cannot do.

They run for real wherever bwrap exists, and in CI always (``.ci/run`` installs bubblewrap); without CI and
without bwrap they are skipped, saying so. No test writes outside its temporary directory even if the
sandbox failed: HOME points into the test's directory.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.processes import ToolProcess, survivors
from tools.sandbox import Bubblewrap, Sandbox, SandboxUnavailable, backend_for, note_for

HAVE_BWRAP = shutil.which("bwrap") is not None
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not HAVE_BWRAP and not os.environ.get("CI"),
        reason="bubblewrap (bwrap) is not installed and CI is unset: "
        "apt-get install bubblewrap to run the sandbox tests",
    ),
]

READ_ONLY_NOTE = (
    "(sandboxed: only the workspace, its extra directories and a private /tmp are writable; .git/config, "
    ".git/hooks, .claude/ and the other protected paths stay read-only even where absent)"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME inside the test's directory, so a failed sandbox could only write there."""
    path = tmp_path / "home"
    path.mkdir()
    (path / ".bashrc").write_text("# original\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def boxed(workspace: Workspace, home: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """The workspace, sandboxed; this interpreter's folder is first on PATH, as an activated virtualenv has it,
    so a command can run it wherever it lives (a virtualenv under /tmp too)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return attrs.evolve(workspace, sandbox=Sandbox())


def _bash(workspace: Workspace, command: str) -> ToolOutput:
    return run_tool(BASE_TOOLS, "bash", workspace, {"command": command})


class TestFiles:
    def test_writing_next_to_the_workspace_is_refused_by_the_kernel(self, boxed: Workspace) -> None:
        """`echo x > ../outside` fails with EROFS, the result says why, and no file appears."""
        out = _bash(boxed, "echo x > ../outside")
        assert "Read-only file system" in out.text and out.text.endswith(READ_ONLY_NOTE)
        assert not (boxed.root.parent / "outside").exists()

    def test_copying_into_home_is_refused(self, boxed: Workspace, home: Path) -> None:
        """`cp f ~/.bashrc` fails; the file is unchanged."""
        (boxed.root / "f").write_text("PWNED\n")
        out = _bash(boxed, "cp f ~/.bashrc")
        assert "Read-only file system" in out.text
        assert (home / ".bashrc").read_text() == "# original\n"

    def test_the_workspace_is_writable(self, boxed: Workspace) -> None:
        """Files in the workspace are created, changed and deleted as usual."""
        assert _bash(boxed, "mkdir -p d && echo hi > d/f && cat d/f && rm d/f && echo gone").text == "hi\ngone"

    def test_extra_directories_are_writable(self, tmp_path: Path, workspace: Workspace, home: Path) -> None:
        """A directory added to the boundary (--add-dir) is writable too."""
        extra = tmp_path / "extra"
        extra.mkdir()
        out = _bash(attrs.evolve(workspace, extra=(extra,), sandbox=Sandbox()), f"echo ok > {extra}/f && cat {extra}/f")
        assert out.text == "ok" and (extra / "f").read_text() == "ok\n"

    def test_tmp_is_private(self, boxed: Workspace) -> None:
        """What a command writes to /tmp is gone after the call and never reaches the real /tmp."""
        name = f"agentfsm-sandbox-test-{os.getpid()}"
        assert _bash(boxed, f"echo t > /tmp/{name} && cat /tmp/{name}").text == "t"
        assert not Path("/tmp", name).exists()

    def test_journal_and_settings_folders_stay_read_only(self, boxed: Workspace) -> None:
        """.agentfsm (the journal) and .claude (settings) cannot be rewritten from inside."""
        for name in (".agentfsm", ".claude"):
            (boxed.root / name).mkdir()
            (boxed.root / name / "f").write_text("kept\n")
            assert "Read-only file system" in _bash(boxed, f"echo x > {name}/f").text
            assert (boxed.root / name / "f").read_text() == "kept\n"


class TestTmp:
    @pytest.fixture
    def under_tmp(self) -> Iterator[Callable[[], Path]]:
        """Makes folders right under the real /tmp (pytest's own folder there already shows: it holds the
        workspace); all are removed afterwards."""
        made: list[Path] = []

        def make() -> Path:
            made.append(Path(tempfile.mkdtemp(prefix="agentfsm-sandbox-test-", dir="/tmp")))
            return made[-1]

        yield make
        for path in made:
            shutil.rmtree(path, ignore_errors=True)

    def test_a_virtualenv_under_tmp_on_path_runs_read_only(
        self, boxed: Workspace, under_tmp: Callable[[], Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An activated virtualenv under /tmp runs inside as outside, and cannot be written; another folder
        under /tmp stays hidden."""
        venv = under_tmp() / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        hidden = under_tmp()
        (hidden / "f").write_text("x\n")
        monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
        assert _bash(boxed, 'python -c "import sys; print(sys.prefix)"').text == str(venv)
        assert "Read-only file system" in _bash(boxed, f"touch {venv}/new").text
        assert not (venv / "new").exists()
        assert "No such file or directory" in _bash(boxed, f"cat {hidden}/f").text

    def test_path_shows_top_folders_under_tmp_never_tmp_itself(self) -> None:
        """Each absolute PATH directory under /tmp shows as its /tmp/X folder, normalized, if it exists; /tmp
        itself, a path that only looks under /tmp and a relative entry show nothing."""
        launch = Bubblewrap(executable="bwrap").wrap(
            ["true"],
            sandbox=Sandbox(),
            root=Path("/srv/ws"),
            writable=(),
            env={"PATH": "/tmp:/tmp/v/bin:/tmp/../etc:tmp/x:/usr/bin:/tmp/./w/x/bin:/tmp/v/sbin"},
            go_fd=3,
        )
        launch.release()
        argv = launch.argv
        shown = [argv[i + 1 : i + 3] for i, arg in enumerate(argv) if arg.startswith("--ro-bind")]
        assert [pair for pair in shown if pair[0].startswith("/tmp")] == [["/tmp/v", "/tmp/v"], ["/tmp/w", "/tmp/w"]]


class TestNetworkAndProcesses:
    @pytest.fixture
    def server(self) -> tuple[int, threading.Event]:
        """A loopback TCP listener that notes whether anybody connected."""
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        connected = threading.Event()

        def accept() -> None:
            try:
                conn, _ = listener.accept()
                connected.set()
                conn.close()
            except OSError:
                pass

        threading.Thread(target=accept, daemon=True).start()
        yield listener.getsockname()[1], connected
        listener.close()

    def _connect(self, port: int) -> str:
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')"
        return f'{sys.executable} -c "{code}"'

    def test_network_is_off(self, boxed: Workspace, server: tuple[int, threading.Event]) -> None:
        """A connection to a server on the host's loopback fails inside; the result says the network is off."""
        port, connected = server
        out = _bash(boxed, self._connect(port))
        assert "connected" not in out.text and out.text.endswith("(sandboxed: the network is off)")
        assert not connected.is_set()

    def test_network_on_when_allowed(self, boxed: Workspace, server: tuple[int, threading.Event]) -> None:
        """With network=True the same connection works (so the test above fails for the right reason)."""
        port, connected = server
        assert "connected" in _bash(attrs.evolve(boxed, sandbox=Sandbox(network=True)), self._connect(port)).text
        assert connected.wait(5)

    def test_no_outside_process_is_visible(self, boxed: Workspace) -> None:
        """Its own PID namespace: only the sandbox's processes are in /proc, none of ours."""
        out = _bash(boxed, "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done")
        programs = {os.path.basename(line.split()[0]) for line in out.text.splitlines() if line.strip()}
        assert programs <= {"bwrap", "sh", "tr"}, out.text

    def test_setsid_daemon_dies_with_the_call(self, boxed: Workspace) -> None:
        """A daemon started inside is gone when the call returns (the namespace ends with the shell)."""
        seen: list[ToolProcess] = []
        out = _bash(
            attrs.evolve(boxed, process_listener=lambda p, running: seen.append(p)), "setsid sleep 3200 & echo started"
        )
        assert out.text == "started"
        assert seen[0].sandbox == "bubblewrap" and survivors(seen[0]) == []

    def test_environment_is_clean(self, boxed: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
        """Only PATH, HOME, locale, TERM and the call's tag get in; no ANTHROPIC_* and nothing else."""
        monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-api-key: secret-header-value")
        monkeypatch.setenv("SOME_TOKEN", "t0ken")
        names = {line.split("=", 1)[0] for line in _bash(boxed, "env").text.splitlines()}
        assert names <= {
            "PATH",
            "HOME",
            "USER",
            "LOGNAME",
            "LANG",
            "LANGUAGE",
            "LC_ALL",
            "LC_CTYPE",
            "TERM",
            "TZ",
            "AGENTFSM_TOOL_TAG",
            "PWD",
            "SHLVL",
            "_",
            "OLDPWD",
        }


class TestAvailability:
    def test_missing_bubblewrap_says_how_to_install_it(self) -> None:
        """No bwrap: one line naming the package and the install command."""
        assert Bubblewrap(executable="").problem() == (
            "the bash sandbox needs bubblewrap (bwrap), which is not installed: sudo apt-get install bubblewrap"
        )

    def test_a_platform_without_a_backend_says_so(self) -> None:
        """macOS has no backend yet: one line saying so."""
        with pytest.raises(SandboxUnavailable, match=r"^the bash sandbox has no backend for darwin yet "):
            backend_for(Sandbox(), platform="darwin")

    def test_notes(self) -> None:
        """The network note is only given when the network is off."""
        assert note_for("curl: (7) Couldn't connect to server", Sandbox()) == "(sandboxed: the network is off)"
        assert note_for("curl: (7) Couldn't connect to server", Sandbox(network=True)) is None


class TestAutoAllow:
    def _verdict(self, policy: Policy, command: str, workspace: Workspace) -> str:
        return policy.decide({"name": "bash", "input": {"command": command}}, workspace).behavior

    def test_sandboxed_bash_needs_no_approval_but_deny_and_ask_rules_hold(self, boxed: Workspace) -> None:
        """autoAllowBashIfSandboxed: a command that would ask runs; deny rules, the built-in refusals and
        explicit ask rules still decide; without the sandbox it asks."""
        policy = Policy(deny=(parse_rule("Bash(curl:*)"),), ask=(parse_rule("Bash(git push:*)"),))
        assert self._verdict(policy, "rm -rf build", boxed) == "allow"
        assert self._verdict(policy, "rm -rf build", attrs.evolve(boxed, sandbox=None)) == "ask"
        assert self._verdict(policy, "curl https://example.com", boxed) == "deny"
        assert self._verdict(policy, "sudo ls", boxed) == "deny"
        assert self._verdict(policy, "git push origin main", boxed) == "ask"
        assert self._verdict(policy, "rm -rf build", attrs.evolve(boxed, sandbox=Sandbox(auto_allow=False))) == "ask"
        assert self._verdict(Policy(mode="plan"), "rm -rf build", boxed) == "deny"

    def test_an_approved_call_stays_in_the_sandbox(self, boxed: Workspace) -> None:
        """The unconfined workspace an approval gives (file tools outside the root) keeps the sandbox."""
        approved = boxed.unconfined()
        assert approved.sandbox == boxed.sandbox and not approved.confined
        assert "Read-only file system" in _bash(approved, "echo x > ../outside").text
