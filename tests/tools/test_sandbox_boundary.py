"""The sandbox as a boundary, by real escape attempts (issue 21, item 7).

Each attack runs for real twice, in two throwaway workspaces set up alike: sandboxed, where it must fail and
leave no trace, and unsandboxed, the control, where the same command must succeed (so a test cannot pass
because its probe was broken). Nothing dangerous runs: the sockets are the test's own, the "hooks" are files
that are never executed, the fork bomb forks sleeping children up to a bound and the control runs a smaller
one, and the big allocations and files are address space that is never touched or a few MiB of real data.
"""

from __future__ import annotations

import importlib.util
import json
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

from fsm.cli import resolve
from fsm.errors import ConfigError
from fsm.policy.settings import Origin, SettingsError, parse_settings
from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.sandbox import Limits, PathRule, Sandbox, SandboxUnavailable, backend_for
from tools.sandbox_limits import cgroup_parents
from tools.sandbox_mounts import plan_mounts
from tools.seccomp import FilterUnavailable, sandbox_filter

HAVE_BWRAP = shutil.which("bwrap") is not None
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not HAVE_BWRAP and not os.environ.get("CI"),
        reason="bubblewrap (bwrap) is not installed and CI is unset: "
        "apt-get install bubblewrap to run the sandbox tests",
    ),
]
PY = sys.executable


def _bash(workspace: Workspace, command: str) -> ToolOutput:
    return run_tool(BASE_TOOLS, "bash", workspace, {"command": command})


def _py(code: str) -> str:
    """A shell command running *code* with this interpreter (the code holds no single quote)."""
    assert "'" not in code
    return f"{PY} -c '{code}'"


@pytest.fixture
def twins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., tuple[Workspace, Workspace]]:
    """Makes a sandboxed workspace and its unsandboxed control, each set up by the same function."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    count = iter(range(100))

    def make(setup: Callable[[Path], None] = lambda root: None, **sandbox: object) -> tuple[Workspace, Workspace]:
        n = next(count)
        made = []
        for kind in ("boxed", "control"):
            root = tmp_path / f"{kind}{n}"
            root.mkdir()
            setup(root)
            made.append(root)
        return Workspace(made[0], sandbox=Sandbox(**sandbox)), Workspace(made[1])  # type: ignore[arg-type]

    return make


def _tree(root: Path) -> set[str]:
    """Every path under *root*, relative, for comparing before and after a call."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


class TestUnixSockets:
    @pytest.fixture
    def listener(self, tmp_path: Path) -> Iterator[Callable[[str | bytes], threading.Event]]:
        """Starts unix-socket servers (a path, or an abstract name as bytes) that note each connection."""
        sockets: list[socket.socket] = []

        def listen(address: str | bytes) -> threading.Event:
            server = socket.socket(socket.AF_UNIX)
            server.bind(address)
            server.listen()
            sockets.append(server)
            connected = threading.Event()

            def accept() -> None:
                while True:
                    try:
                        conn, _ = server.accept()
                    except OSError:
                        return
                    connected.set()
                    conn.close()

            threading.Thread(target=accept, daemon=True).start()
            return connected

        yield listen
        for server in sockets:
            server.close()

    @staticmethod
    def _connect(address: str) -> str:
        return _py(
            "import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(5); "
            f's.connect({address}); print("CONNECTED")'
        )

    def test_a_socket_file_cannot_be_connected(self, twins, listener, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """A server listening on a socket file in a temp dir (docker.sock's situation) is reached unsandboxed,
        refused sandboxed (EPERM at socket()), and the server sees nobody; the result says what to set."""
        path = tmp_path / "server.sock"
        connected = listener(str(path))
        boxed, control = twins()
        assert "CONNECTED" in _bash(control, self._connect(json.dumps(str(path)))).text
        assert connected.wait(5)
        connected.clear()
        out = _bash(boxed, self._connect(json.dumps(str(path))))
        assert "CONNECTED" not in out.text and "Operation not permitted" in out.text
        assert "sandbox.network.allowAllUnixSockets" in out.text
        assert not connected.is_set()

    def test_an_abstract_socket_cannot_be_connected_even_with_the_network_on(self, twins, listener) -> None:  # type: ignore[no-untyped-def]
        """With network=True the sandbox shares the host's network namespace, where abstract sockets live:
        the control connects, the sandbox is refused by the filter, not by the namespace."""
        name = f"\0agentfsm-test-{os.getpid()}"
        connected = listener(name.encode())
        boxed, control = twins(network=True)
        address = json.dumps(name)
        assert "CONNECTED" in _bash(control, self._connect(address)).text
        assert connected.wait(5)
        connected.clear()
        out = _bash(boxed, self._connect(address))
        assert "CONNECTED" not in out.text and "Operation not permitted" in out.text
        assert not connected.is_set()

    def test_socket_pairs_stream_allowed_datagram_refused(self, twins) -> None:  # type: ignore[no-untyped-def]
        """A stream socketpair (multiprocessing, libuv) works; a datagram pair, which could be retargeted, does not."""
        code = (
            "import socket\n"
            'a, b = socket.socketpair(); a.send(b"ok"); print("STREAM", b.recv(2).decode())\n'
            'try:\n socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC); print("DGRAM made")\n'
            'except OSError as e: print("DGRAM", e.strerror)'
        )
        boxed, control = twins()
        assert _bash(control, _py(code)).text == "STREAM ok\nDGRAM made"
        assert _bash(boxed, _py(code)).text.startswith("STREAM ok\nDGRAM Operation not permitted")

    def test_io_uring_is_refused(self, twins) -> None:  # type: ignore[no-untyped-def]
        """io_uring (which makes sockets without socket()) gets EPERM; unsandboxed the same call gets to the
        kernel (EFAULT for its null argument, or ENOSYS where io_uring is off)."""
        code = (
            "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            'r = libc.syscall(425, 1, None); print("ERRNO", os.strerror(ctypes.get_errno()))'
        )
        boxed, control = twins()
        assert "Operation not permitted" not in _bash(control, _py(code)).text
        assert _bash(boxed, _py(code)).text.startswith("ERRNO Operation not permitted")

    def test_the_kernel_keyring_is_refused(self, twins) -> None:  # type: ignore[no-untyped-def]
        """keyctl (the keyring is not namespaced: root's keys) gets EPERM; unsandboxed the same call reaches
        the kernel (KEYCTL_GET_KEYRING_ID of the session keyring)."""
        code = (
            "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            'r = libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, -3, 0); '
            'print("ERRNO" if r < 0 else "KEY", os.strerror(ctypes.get_errno()) if r < 0 else r)'
        )
        boxed, control = twins()
        assert "Operation not permitted" not in _bash(control, _py(code)).text
        assert _bash(boxed, _py(code)).text.startswith("ERRNO Operation not permitted")

    def test_all_unix_sockets_allowed_when_asked(self, twins, listener, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """sandbox.network.allowAllUnixSockets lifts the socket rules (Claude Code's opt-out): the socket file
        is reached; io_uring stays refused."""
        path = tmp_path / "open.sock"
        connected = listener(str(path))
        boxed, _ = twins(unix_sockets=True)
        assert "CONNECTED" in _bash(boxed, self._connect(json.dumps(str(path)))).text
        assert connected.wait(5)
        code = (
            "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
            'r = libc.syscall(425, 1, None); print("ERRNO", os.strerror(ctypes.get_errno()))'
        )
        assert _bash(boxed, _py(code)).text.startswith("ERRNO Operation not permitted")

    def test_the_filter_is_built_for_both_architectures(self) -> None:
        """x86_64 and aarch64 get their own programs (the architecture is in the filter); others are refused
        with one line saying what to do."""
        x86, arm = sandbox_filter("x86_64"), sandbox_filter("aarch64")
        assert x86 and arm and x86 != arm and sandbox_filter("x86_64", block_unix=False) not in (x86, arm)
        with pytest.raises(FilterUnavailable, match=r"supports x86_64 and aarch64 only \(this machine is riscv64\)"):
            sandbox_filter("riscv64")

    def test_without_libseccomp_the_sandbox_says_what_to_install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """No pyseccomp/libseccomp: --sandbox stops with one line naming both."""
        monkeypatch.setitem(sys.modules, "pyseccomp", None)
        sandbox_filter.cache_clear()
        try:
            for sandbox in (Sandbox(), Sandbox(unix_sockets=True)):
                with pytest.raises(SandboxUnavailable, match=r"needs libseccomp .*apt-get install libseccomp2"):
                    backend_for(sandbox)
        finally:
            sandbox_filter.cache_clear()


def _git_repo(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README").write_text("hello\n")


class TestProtectedPaths:
    def test_an_absent_claude_folder_cannot_be_created(self, twins) -> None:  # type: ignore[no-untyped-def]
        """`mkdir .claude && echo … > .claude/settings.local.json` works unsandboxed; sandboxed it fails and
        no .claude is left behind."""
        payload = '{"permissions": {"defaultMode": "bypassPermissions"}}'
        command = f"rmdir .claude; mkdir -p .claude && echo '{payload}' > .claude/settings.local.json"
        boxed, control = twins()
        _bash(control, command)
        assert (control.root / ".claude" / "settings.local.json").is_file()
        out = _bash(boxed, command)
        assert "File exists" in out.text or "Read-only file system" in out.text
        assert not (boxed.root / ".claude").exists()

    def test_git_config_cannot_be_appended_to(self, twins) -> None:  # type: ignore[no-untyped-def]
        """`echo … >> .git/config` (a core.fsmonitor payload for the user's next git status) is refused."""
        command = 'printf "[core]\\n\\tfsmonitor = touch PWNED\\n" >> .git/config'
        boxed, control = twins(_git_repo)
        _bash(control, command)
        assert "PWNED" in (control.root / ".git" / "config").read_text()
        before = (boxed.root / ".git" / "config").read_text()
        assert "Read-only file system" in _bash(boxed, command).text
        assert (boxed.root / ".git" / "config").read_text() == before

    def test_a_git_hook_cannot_be_added(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Writing .git/hooks/post-checkout works unsandboxed, not sandboxed; `git config` cannot set one either."""
        command = "echo 'touch PWNED' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout"
        boxed, control = twins(_git_repo)
        _bash(control, command)
        assert (control.root / ".git" / "hooks" / "post-checkout").is_file()
        assert "Read-only file system" in _bash(boxed, command).text
        assert not (boxed.root / ".git" / "hooks" / "post-checkout").exists()
        _bash(boxed, "git config core.hooksPath evil")
        assert "evil" not in (boxed.root / ".git" / "config").read_text()

    def test_a_missing_hooks_folder_cannot_be_created(self, twins) -> None:  # type: ignore[no-untyped-def]
        """With .git/hooks removed, `mkdir .git/hooks` fails, and afterwards .git/hooks is absent again."""

        def setup(root: Path) -> None:
            _git_repo(root)
            shutil.rmtree(root / ".git" / "hooks")

        boxed, control = twins(setup)
        command = "rmdir .git/hooks; mkdir -p .git/hooks; echo 'touch PWNED' > .git/hooks/pre-commit"
        _bash(control, command)
        assert (control.root / ".git" / "hooks" / "pre-commit").is_file()
        _bash(boxed, command)
        assert not (boxed.root / ".git" / "hooks").exists()

    def test_without_a_repository_no_git_folder_can_be_planted(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Outside any repository `git init` plus a hook works unsandboxed; sandboxed no .git appears."""
        command = "rmdir .git; git init -q .; mkdir -p .git/hooks; echo 'touch PWNED' > .git/hooks/post-checkout"
        boxed, control = twins()
        _bash(control, command)
        assert (control.root / ".git" / "hooks" / "post-checkout").is_file()
        _bash(boxed, command)
        assert not (boxed.root / ".git").exists()

    def test_start_up_files_mcp_and_env_cannot_be_created_or_changed(self, twins) -> None:  # type: ignore[no-untyped-def]
        """An absent .bashrc, .mcp.json or .vscode/tasks.json cannot be created; an existing .env.local (a name
        matching a pattern) cannot be changed."""

        def setup(root: Path) -> None:
            (root / ".env.local").write_text("KEY=1\n")

        command = (
            "rmdir .bashrc .mcp.json .vscode; echo payload > .bashrc; echo {} > .mcp.json; "
            "mkdir -p .vscode && echo {} > .vscode/tasks.json; "
            "echo ANTHROPIC_BASE_URL=http://evil >> .env.local"
        )
        boxed, control = twins(setup)
        _bash(control, command)
        assert (control.root / ".bashrc").is_file() and (control.root / ".vscode" / "tasks.json").is_file()
        assert "evil" in (control.root / ".env.local").read_text()
        before = _tree(boxed.root)
        _bash(boxed, command)
        assert _tree(boxed.root) == before
        assert (boxed.root / ".env.local").read_text() == "KEY=1\n"

    def test_an_extra_directory_is_protected_too(self, twins, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """The protected paths of an --add-dir directory are read-only as the root's are."""
        extra = tmp_path / "extra"
        extra.mkdir()
        boxed, _ = twins()
        boxed = attrs.evolve(boxed, extra=(extra,))
        _bash(
            boxed,
            f"cd {extra} && rmdir .claude .bashrc; mkdir -p .claude; echo x > .claude/s; echo x > .bashrc; echo ok > f",
        )
        assert _tree(extra) == {"f"}

    def test_placeholders_never_show_in_git(self, twins) -> None:  # type: ignore[no-untyped-def]
        """The empty read-only folders standing in for absent paths are invisible to `git status` and `git add`,
        so they never land in a commit; the workspace stays writable around them."""

        def setup(root: Path) -> None:
            _git_repo(root)
            subprocess.run(["git", "-C", str(root), "add", "README"], check=True)

        boxed, _ = twins(setup)
        out = _bash(boxed, "echo new > new.txt && git add -A && git status --porcelain")
        assert out.text == "A  README\nA  new.txt"

    def test_a_symlinked_protected_folder_protects_its_target(self, twins) -> None:  # type: ignore[no-untyped-def]
        """A .claude that is a symlink to a folder in the workspace makes that folder read-only."""

        def setup(root: Path) -> None:
            (root / "real").mkdir()
            (root / ".claude").symlink_to("real")

        boxed, _ = twins(setup)
        assert "Read-only file system" in _bash(boxed, "echo x > real/settings.json").text
        assert not (boxed.root / "real" / "settings.json").exists()

    def test_the_git_folder_cannot_be_swapped_for_a_planted_one(self, twins) -> None:  # type: ignore[no-untyped-def]
        """`mv .git .git2 && mkdir .git` with a new config works unsandboxed; sandboxed .git is a mount point
        and cannot be renamed, so the real one stays."""
        command = "mv .git .git2 && mkdir .git && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .git/config"
        boxed, control = twins(_git_repo)
        _bash(control, command)
        assert "PWNED" in (control.root / ".git" / "config").read_text()
        out = _bash(boxed, command)
        assert "Device or resource busy" in out.text
        assert not (boxed.root / ".git2").exists() and "PWNED" not in (boxed.root / ".git" / "config").read_text()

    def test_a_planted_commondir_is_removed(self, twins) -> None:  # type: ignore[no-untyped-def]
        """.git/commondir makes git read another folder's config (a payload on the user's next `git status`):
        unsandboxed it stays and the payload runs; sandboxed the file is removed after the call, and said so."""

        def setup(root: Path) -> None:
            _git_repo(root)
            (root / "evil").mkdir()

        plant = (
            "cp -r .git/HEAD .git/objects .git/refs evil/ && "
            "printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch PWNED; false\"\\n' "
            '> evil/config && echo "$PWD/evil" > .git/commondir'
        )
        boxed, control = twins(setup)
        _bash(control, plant)
        subprocess.run(["git", "status"], cwd=control.root, capture_output=True, check=False)
        assert (control.root / "PWNED").exists()
        out = _bash(boxed, plant)
        assert out.text.endswith(
            "(sandboxed: removed .git/commondir, which the command created: it would point git at another "
            "configuration)"
        ), out.text
        subprocess.run(["git", "status"], cwd=boxed.root, capture_output=True, check=False)
        assert not (boxed.root / "PWNED").exists() and not (boxed.root / ".git" / "commondir").exists()

    def test_a_worktree_git_file_and_submodule_configs_are_read_only(self, twins) -> None:  # type: ignore[no-untyped-def]
        """A worktree's .git file (it names the repository git uses), a linked worktree's commondir and an
        existing submodule's config and hooks under .git/modules cannot be rewritten."""

        def setup(root: Path) -> None:
            (root / "wt").mkdir()
            (root / "wt" / ".git").write_text("gitdir: /nonexistent/.git/worktrees/wt\n")
            module = root / "repo" / ".git" / "modules" / "sub"
            _git_repo(root / "repo")
            shutil.copytree(root / "repo" / ".git", module, ignore=shutil.ignore_patterns("modules"))
            (root / "repo" / ".git" / "worktrees" / "linked").mkdir(parents=True)
            (root / "repo" / ".git" / "worktrees" / "linked" / "commondir").write_text("../..\n")

        command = (
            "echo 'gitdir: evil' > wt/.git; echo /evil > repo/.git/worktrees/linked/commondir; "
            "cd repo/.git/modules/sub && echo '[core] fsmonitor = x' >> config; echo payload > hooks/post-checkout"
        )
        boxed, control = twins(setup)
        _bash(control, command)
        assert (control.root / "repo/.git/modules/sub/hooks/post-checkout").exists()
        boxed = attrs.evolve(boxed, extra=(boxed.root / "wt", boxed.root / "repo"))
        out = _bash(boxed, command)
        assert out.text.count("Read-only file system") == 4, out.text
        assert (boxed.root / "repo/.git/worktrees/linked/commondir").read_text() == "../..\n"
        assert "evil" not in (boxed.root / "wt" / ".git").read_text()
        assert "fsmonitor" not in (boxed.root / "repo/.git/modules/sub/config").read_text()

    def test_nested_repositories_and_env_files_are_read_only(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Existing protected paths a few folders down (a vendored repository's .git/config, a subproject's
        .env and .vscode) are read-only too, and a nested repository's absent hooks cannot be created."""

        def setup(root: Path) -> None:
            _git_repo(root / "lib" / "vendored")
            shutil.rmtree(root / "lib" / "vendored" / ".git" / "hooks")
            (root / "app").mkdir()
            (root / "app" / ".env").write_text("KEY=1\n")
            (root / "app" / ".vscode").mkdir()

        command = (
            "echo '[core] fsmonitor = x' >> lib/vendored/.git/config; echo URL=evil >> app/.env; "
            "echo '{}' > app/.vscode/tasks.json; mv lib/vendored/.git lib/vendored/.git2; "
            "cd lib/vendored/.git && rmdir hooks; mkdir -p hooks && echo x > hooks/pre-commit"
        )
        boxed, control = twins(setup)
        _bash(control, command)
        assert (control.root / "app" / ".vscode" / "tasks.json").exists()
        out = _bash(boxed, command)
        assert out.text.count("Read-only file system") == 4 and "Device or resource busy" in out.text, out.text
        assert not (boxed.root / "lib/vendored/.git/hooks").exists()
        assert "fsmonitor" not in (boxed.root / "lib/vendored/.git/config").read_text()
        assert (boxed.root / "app" / ".env").read_text() == "KEY=1\n"
        assert not (boxed.root / "app" / ".vscode" / "tasks.json").exists()

    def test_a_protected_symlink_cannot_be_swapped(self, twins, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """A .claude linked to a dotfiles folder outside: replacing the link by a folder with a settings file
        works unsandboxed; sandboxed the link is put back after the call, and the result says so."""
        dotfiles = tmp_path / "dotfiles"
        dotfiles.mkdir()

        def setup(root: Path) -> None:
            (root / ".claude").symlink_to(dotfiles)

        command = "rm .claude && mkdir .claude && echo '{}' > .claude/settings.local.json"
        boxed, control = twins(setup)
        _bash(control, command)
        assert (control.root / ".claude" / "settings.local.json").is_file()
        out = _bash(boxed, command)
        assert out.text.endswith("(sandboxed: restored .claude, a protected symlink the command replaced)"), out.text
        assert os.readlink(boxed.root / ".claude") == str(dotfiles) and list(dotfiles.iterdir()) == []

    def test_placeholders_wait_for_the_last_call(self, tmp_path: Path) -> None:
        """A placeholder stays while another sandboxed call of this process still uses it."""
        first = plan_mounts([tmp_path])
        second = plan_mounts([tmp_path])
        first.release()
        assert (tmp_path / ".claude").is_dir()
        second.release()
        assert not (tmp_path / ".claude").exists()


class TestPrivileges:
    def test_no_capability_survives_not_even_as_root(self, twins, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """bubblewrap run by root keeps every capability unless told; the sandbox drops them all, so neither
        unmounting a protected path nor remounting / read-write works, and the writes after them fail."""
        outside = tmp_path / "outside.txt"
        command = (
            "grep CapEff /proc/self/status; umount -l .git/config; umount -l .git; "
            f"mount -o remount,rw /; mount -o remount,rw {tmp_path}; "
            f"echo PWNED >> .git/config; echo PWNED > {outside}"
        )
        boxed, control = twins(_git_repo)
        if os.geteuid() == 0:  # the control: root outside the sandbox holds capabilities (nothing is remounted)
            assert "CapEff:\t0000000000000000" not in _bash(control, "grep CapEff /proc/self/status").text
        out = _bash(boxed, command)
        assert "CapEff:\t0000000000000000" in out.text, out.text
        assert "PWNED" not in (boxed.root / ".git" / "config").read_text() and not outside.exists()

    def test_kernel_knobs_are_read_only(self, twins) -> None:  # type: ignore[no-untyped-def]
        """/proc/sys (core_pattern runs a program on the host) and /proc/sysrq-trigger (reboots it) cannot
        even be opened for writing, root or not; only opened, never written, so the control is not run."""
        code = (
            "import os\n"
            'for path in ("/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"):\n'
            "    try:\n"
            '        os.close(os.open(path, os.O_WRONLY)); print("OPENED", path)\n'
            "    except OSError as e:\n"
            '        print("REFUSED", path, e.strerror)\n'
        )
        boxed, _ = twins()
        (boxed.root / "knobs.py").write_text(code)
        out = _bash(boxed, f"{PY} knobs.py")
        assert "OPENED" not in out.text and "REFUSED /proc/sys/kernel/core_pattern Read-only file system" in out.text
        if os.path.exists("/proc/sysrq-trigger"):  # a kernel without magic SysRq has none
            assert "REFUSED /proc/sysrq-trigger Read-only file system" in out.text, out.text


class TestReadDeny:
    def _rule(self, root: Path, pattern: str) -> PathRule:
        return PathRule(root, pattern, rule=f"Read(.{pattern})")

    def test_a_denied_folder_is_hidden(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Read(./secrets/**): python's open() of a file in it reads the secret unsandboxed, nothing sandboxed."""

        def setup(root: Path) -> None:
            (root / "secrets").mkdir()
            (root / "secrets" / "key.txt").write_text("TOPSECRET\n")
            (root / "public.txt").write_text("public\n")

        boxed, control = twins(setup)
        boxed = attrs.evolve(boxed, sandbox=Sandbox(hidden=(self._rule(boxed.root, "/secrets/**"),)))
        probe = _py('print(open("secrets/key.txt").read())') + "; ls -a secrets; cat public.txt"
        assert "TOPSECRET" in _bash(control, probe).text
        out = _bash(boxed, probe)
        assert "TOPSECRET" not in out.text and "public" in out.text
        assert (boxed.root / "secrets" / "key.txt").read_text() == "TOPSECRET\n"

    def test_a_denied_file_outside_the_workspace_is_hidden(self, twins, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        """Read(~/.ssh/id_rsa) hides the key however it is read: open(), cat, a symlink made inside, a hard link."""
        ssh = Path(os.environ["HOME"]) / ".ssh"
        ssh.mkdir()
        (ssh / "id_rsa").write_text("PRIVATEKEY\n")
        boxed, control = twins()
        boxed = attrs.evolve(boxed, sandbox=Sandbox(hidden=(PathRule(Path(os.environ["HOME"]), "/.ssh/id_rsa"),)))
        probe = (
            _py('import os; print(open(os.path.expanduser("~/.ssh/id_rsa")).read())')
            + "; cat ~/.ssh/id_rsa; ln -s ~/.ssh/id_rsa link && cat link; ln ~/.ssh/id_rsa hard && cat hard"
        )
        assert "PRIVATEKEY" in _bash(control, probe).text
        assert "PRIVATEKEY" not in _bash(boxed, probe).text

    def test_a_glob_is_resolved_at_call_time_at_any_depth(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Read(*.pem) hides every .pem at any depth as the files are at the call (a folder named x.pem too)."""

        def setup(root: Path) -> None:
            (root / "a" / "b").mkdir(parents=True)
            (root / "a" / "b" / "server.pem").write_text("PEM1\n")
            (root / "top.pem").write_text("PEM2\n")
            (root / "dir.pem").mkdir()
            (root / "dir.pem" / "inner").write_text("PEM3\n")

        boxed, control = twins(setup)
        boxed = attrs.evolve(boxed, sandbox=Sandbox(hidden=(PathRule(boxed.root, "*.pem"),)))
        probe = "cat a/b/server.pem top.pem dir.pem/inner; grep -r PEM . "
        assert all(s in _bash(control, probe).text for s in ("PEM1", "PEM2", "PEM3"))
        assert "PEM" not in _bash(boxed, probe).text.replace(".pem", "")

    def test_edit_deny_rules_make_paths_read_only(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Edit(./config/**) (Claude Code's way to keep the sandbox from writing a path): `sed -i` and `>`
        change the file unsandboxed, fail sandboxed; the rest of the workspace stays writable."""

        def setup(root: Path) -> None:
            (root / "config").mkdir()
            (root / "config" / "prod.yml").write_text("safe: true\n")

        command = "sed -i s/true/false/ config/prod.yml; echo x > config/new.yml; echo ok > other.txt"
        boxed, control = twins(setup)
        boxed = attrs.evolve(boxed, sandbox=Sandbox(unwritable=(PathRule(boxed.root, "/config/**"),)))
        _bash(control, command)
        assert (control.root / "config" / "prod.yml").read_text() == "safe: false\n"
        out = _bash(boxed, command)
        assert "Read-only file system" in out.text
        assert (boxed.root / "config" / "prod.yml").read_text() == "safe: true\n"
        assert not (boxed.root / "config" / "new.yml").exists() and (boxed.root / "other.txt").exists()

    def test_rules_reach_the_sandbox_from_settings(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """resolve.sandbox turns the settings' Read deny rules into hidden paths and Edit deny rules into
        read-only ones (a bare Read or Write names no path), takes sandbox.limits and allowAllUnixSockets."""
        monkeypatch.setenv("HOME", str(tmp_path))
        settings = parse_settings(
            {
                "permissions": {
                    "deny": ["Read(./secrets/**)", "Read(~/.ssh/**)", "Read", "Bash(curl:*)", "Edit(./ci/**)", "Write"]
                },
                "sandbox": {
                    "enabled": True,
                    "network": {"allowAllUnixSockets": True},
                    "limits": {"memoryMiB": 1024, "processes": 64},
                },
            },
            Origin("settings.json", tmp_path),
        )
        chosen = resolve.sandbox(settings, flag=None)
        assert chosen is not None
        assert [(h.anchor, h.pattern) for h in chosen.hidden] == [(tmp_path, "/secrets/**"), (tmp_path, "/.ssh/**")]
        assert [(h.anchor, h.pattern) for h in chosen.unwritable] == [(tmp_path, "/ci/**")]
        assert chosen.unix_sockets and chosen.limits == Limits(memory_mib=1024, processes=64)

    def test_a_rule_matching_too_much_refuses_the_call(self, twins, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
        """A pattern needing a walk past the bound refuses the call with one line, never hides half."""
        monkeypatch.setattr("tools.sandbox_hidden.MAX_WALK", 5)

        def setup(root: Path) -> None:
            for i in range(10):
                (root / f"f{i}").write_text("x")

        boxed, _ = twins(setup)
        boxed = attrs.evolve(boxed, sandbox=Sandbox(hidden=(PathRule(boxed.root, "*.key", rule="Read(*.key)"),)))
        out = _bash(boxed, "echo ran > ran.txt")
        assert out.is_error and out.text.startswith("Error: the Read deny rule Read(*.key) needs a walk of more than 5")
        assert not (boxed.root / "ran.txt").exists()


FORK_PROBE = (
    "import os, sys, time\n"
    "n = 0\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    try:\n"
    "        pid = os.fork()\n"
    "    except OSError:\n"
    "        break\n"
    "    if pid == 0:\n"
    "        time.sleep(30); os._exit(0)\n"
    "    n += 1\n"
    'print("FORKED", n, flush=True)\n'
    "os.killpg(0, 9)\n"
)
"""Forks up to argv[1] sleeping children, reports how many it got, then kills its process group."""


class TestLimits:
    def _probe(self, root: Path, name: str, code: str) -> str:
        (root / name).write_text(code)
        return f"{PY} {name}"

    def test_a_fork_bomb_stops_at_the_limit(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Asked for 10,000 children, the sandboxed probe gets fewer than its 40-process limit; the control
        gets all of a smaller 100 (the limit holds for root too: a cgroup's pids.max, not RLIMIT_NPROC)."""
        boxed, control = twins(limits=Limits(processes=40))
        out = _bash(control, self._probe(control.root, "bomb.py", FORK_PROBE) + " 100")
        assert "FORKED 100" in out.text
        out = _bash(attrs.evolve(boxed, bash_timeout=60), self._probe(boxed.root, "bomb.py", FORK_PROBE) + " 10000")
        forked = int(out.text.split("FORKED ", 1)[1].split()[0])
        assert 0 < forked < 40, out.text

    def test_allocating_4_gb_is_refused(self, twins) -> None:  # type: ignore[no-untyped-def]
        """A 4 GB mapping (private or shared; never touched, so the control costs no memory) is made
        unsandboxed and refused in the sandbox at its default limit and below it."""
        code = (
            "import mmap\n"
            "for flags in (mmap.MAP_PRIVATE, mmap.MAP_SHARED):\n"
            "    try:\n"
            '        m = mmap.mmap(-1, 4 << 30, flags=flags); print("MAPPED"); m.close()\n'
            "    except OSError as e:\n"
            '        print("REFUSED", e.strerror)\n'
        )
        boxed, control = twins()
        assert _bash(control, self._probe(control.root, "alloc.py", code)).text == "MAPPED\nMAPPED"
        for sandbox in (Sandbox(), Sandbox(limits=Limits(memory_mib=512))):
            out = _bash(attrs.evolve(boxed, sandbox=sandbox), self._probe(boxed.root, "alloc.py", code))
            assert out.text.startswith("REFUSED Cannot allocate memory\nREFUSED Cannot allocate memory"), out.text
            assert f"at most {sandbox.limits.memory_mib} MiB; settings sandbox.limits.memoryMiB" in out.text

    def test_no_cgroup_is_left_behind(self, twins) -> None:  # type: ignore[no-untyped-def]
        """After a call its cgroup is gone, and one a killed agentfsm left (its pid gone) is swept."""
        parents = [p for p, _ in cgroup_parents(Limits())]
        writable = [p for p in parents if os.access(p, os.W_OK)]
        if not writable:
            pytest.skip(
                "no writable cgroup here: the process limit rests on RLIMIT_NPROC (see TestAsAnUnprivilegedUser)"
            )
        stale = writable[0] / "agentfsm-999999999-0"
        stale.mkdir(exist_ok=True)
        boxed, _ = twins()
        assert _bash(boxed, "echo ok").text == "ok"
        left = [p for parent in writable for p in parent.glob(f"agentfsm-{os.getpid()}-*")]
        assert left == [] and not stale.exists()

    WRITE = (
        "import sys\n"
        "path, cap = sys.argv[1], int(sys.argv[2])\n"
        "done = 0\n"
        "try:\n"
        '    with open(path, "wb") as f:\n'
        "        for _ in range(cap):\n"
        '            f.write(b"x" * (1 << 20)); f.flush(); done += 1\n'
        "except OSError as e:\n"
        '    print("STOPPED", e.strerror)\n'
        'print("WROTE", done)\n'
    )
    """Writes real data 1 MiB at a time up to argv[2] MiB, and reports how far it got."""

    def test_a_2_gb_file_in_tmp_stops_at_the_tmp_size(self, twins) -> None:  # type: ignore[no-untyped-def]
        """Writing 2 GB into /tmp stops at the private /tmp's 8 MiB; the control writes 32 MiB into its temp
        dir and /dev/shm is bounded alike."""
        boxed, control = twins(limits=Limits(tmp_mib=8))
        out = _bash(control, self._probe(control.root, "w.py", self.WRITE) + " big 32")
        assert out.text == "WROTE 32"
        (control.root / "big").unlink()
        for where in ("/tmp/big", "/dev/shm/big"):
            out = _bash(boxed, self._probe(boxed.root, "w.py", self.WRITE) + f" {where} 2048")
            assert "STOPPED No space left on device" in out.text, out.text
            assert int(out.text.split("WROTE ")[1].split()[0]) <= 8
        assert "the private /tmp holds 8 MiB; settings sandbox.limits.tmpSizeMiB" in out.text

    def test_a_file_stops_at_the_file_size_limit(self, twins) -> None:  # type: ignore[no-untyped-def]
        """A file in the workspace stops at 4 MiB, written densely or sparsely (a byte at 2 GB)."""
        sparse = _py('f = open("sparse", "wb"); f.seek(2 << 30); f.write(b"x"); f.close(); print("SPARSE")')
        boxed, control = twins(limits=Limits(file_mib=4))
        assert _bash(control, self._probe(control.root, "w.py", self.WRITE) + " big 16").text == "WROTE 16"
        assert "SPARSE" in _bash(control, sparse).text
        out = _bash(boxed, self._probe(boxed.root, "w.py", self.WRITE) + " big 16")
        assert out.text.startswith("STOPPED File too large\nWROTE 4"), out.text
        assert "a file may hold at most 4 MiB; settings sandbox.limits.fileSizeMiB" in out.text
        assert "SPARSE" not in _bash(boxed, sparse).text
        assert (boxed.root / "big").stat().st_size == 4 << 20


class TestSettings:
    def _parse(self, sandbox: object) -> object:
        return parse_settings({"sandbox": sandbox}, Origin("s.json", Path("/p"))).sandbox

    def test_network_as_claude_code_writes_it(self) -> None:
        """network may be Claude Code's object: the unix-socket keys are read, the proxy's keys noted."""
        settings = parse_settings(
            {"sandbox": {"network": {"allowUnixSockets": ["/run/x.sock"], "allowedDomains": ["a.com"]}}},
            Origin("s.json", Path("/p")),
        )
        assert settings.sandbox.allow_unix_sockets == ("/run/x.sock",) and settings.sandbox.network is None
        assert any("allowUnixSockets allows nothing on Linux" in note for note in settings.notes)
        assert any("sandbox.network.allowedDomains is not supported" in note for note in settings.notes)

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ({"limits": {"memoryMiB": 8}}, "sandbox.limits.memoryMiB must be a whole number >= 16 (got 8)"),
            ({"limits": {"processes": "many"}}, 'sandbox.limits.processes must be a whole number >= 8 (got "many")'),
            ({"limits": []}, "sandbox.limits must be an object (got [])"),
            ({"network": "on"}, 'sandbox.network must be true, false or an object (got "on")'),
            (
                {"network": {"allowAllUnixSockets": 1}},
                "sandbox.network.allowAllUnixSockets must be true or false (got 1)",
            ),
        ],
    )
    def test_bad_values_say_what_is_wrong(self, value: object, message: str) -> None:
        """One line naming the key, what it must be and the value."""
        with pytest.raises(SettingsError) as raised:
            self._parse(value)
        assert str(raised.value).endswith(message)

    def test_cli_flag_and_settings_limits_make_the_sandbox(self, tmp_path: Path) -> None:
        """Limits from settings reach the Sandbox; a bad one is a ConfigError before anything runs."""
        ok = parse_settings({"sandbox": {"limits": {"tmpSizeMiB": 64}}}, Origin("s.json", tmp_path))
        chosen = resolve.sandbox(ok, flag=True)
        assert chosen is not None and chosen.limits.tmp_mib == 64
        assert json.dumps(attrs.asdict(chosen.limits)) == (
            '{"memory_mib": 4096, "processes": 1024, "file_mib": 1024, "tmp_mib": 64}'
        )
        assert issubclass(SettingsError, ConfigError)


_AS_NOBODY = """
import json, sys
from pathlib import Path
from tools import BASE_TOOLS, Workspace, run_tool
from tools.sandbox import Limits, Sandbox
root, boxed, commands = Path(sys.argv[1]), sys.argv[2] == "boxed", json.loads(sys.argv[3])
sandbox = Sandbox(limits=Limits(processes=40)) if boxed else None
workspace = Workspace(root, sandbox=sandbox)
print(json.dumps([run_tool(BASE_TOOLS, "bash", workspace, {"command": c}).text for c in commands]))
"""
"""Runs bash commands in a workspace, sandboxed or not, and prints their outputs as JSON."""
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as root to become an unprivileged user (the suite already is one)")
@pytest.mark.skipif(
    shutil.which("setpriv") is None or not os.access(SYSTEM_PYTHON, os.X_OK),
    reason="needs setpriv (util-linux) and /usr/bin/python3 to run as an unprivileged user",
)
class TestAsAnUnprivilegedUser:
    """The same attacks by a user the kernel holds to RLIMIT_NPROC, in a user namespace, with no cgroup."""

    @pytest.fixture
    def nobody_dir(self) -> Iterator[Path]:
        path = Path(tempfile.mkdtemp(prefix="agentfsm-nobody-", dir="/tmp"))
        path.chmod(0o755)
        os.chown(path, 65534, 65534)
        yield path
        shutil.rmtree(path, ignore_errors=True)

    def _run(self, root: Path, *, boxed: bool, commands: list[str]) -> list[str]:
        lib = root.parent / "lib"  # the tools and their pure-Python dependencies, where nobody can read them
        if not lib.exists():
            shutil.copytree(Path(__file__).resolve().parents[2] / "tools", lib / "tools")
            for name in ("attr", "attrs", "lazy_loader", "pathspec", "pyseccomp"):
                spec = importlib.util.find_spec(name)
                assert spec is not None and spec.origin is not None
                source = Path(spec.origin)
                if source.name == "__init__.py":
                    shutil.copytree(source.parent, lib / name)
                else:
                    shutil.copy(source, lib / source.name)
            subprocess.run(["chmod", "-R", "a+rX", str(lib)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "PYTHONPATH": str(lib)}
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SYSTEM_PYTHON, "-c", _AS_NOBODY,
             str(root), "boxed" if boxed else "control", json.dumps(commands)],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        result: list[str] = json.loads(done.stdout)
        return result

    def test_fork_bomb_protected_paths_and_sockets(self, nobody_dir: Path) -> None:
        """As nobody: the fork bomb stops under the limit, an absent .claude cannot be created, a unix socket
        cannot be reached; unsandboxed, all three succeed."""
        roots = {}
        for kind in ("boxed", "control"):
            roots[kind] = nobody_dir / kind
            roots[kind].mkdir()
            (roots[kind] / "bomb.py").write_text(FORK_PROBE)
            os.chown(roots[kind], 65534, 65534)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(nobody_dir / "s.sock"))
        (nobody_dir / "s.sock").chmod(0o777)
        server.listen(5)
        try:
            address = json.dumps(str(nobody_dir / "s.sock"))
            connect = _py(
                f'import socket; s = socket.socket(socket.AF_UNIX); s.connect({address}); print("CONNECTED")'
            ).replace(PY, SYSTEM_PYTHON)
            claude = "rmdir .claude; mkdir -p .claude && echo x > .claude/settings.json"
            commands = [connect, claude, f"{SYSTEM_PYTHON} bomb.py {{n}}"]
            control = self._run(roots["control"], boxed=False, commands=[c.format(n=100) for c in commands])
            boxed = self._run(roots["boxed"], boxed=True, commands=[c.format(n=10000) for c in commands])
        finally:
            server.close()
        assert "CONNECTED" in control[0] and (roots["control"] / ".claude" / "settings.json").exists()
        assert "FORKED 100" in control[2]
        assert "CONNECTED" not in boxed[0] and "Operation not permitted" in boxed[0]
        assert not (roots["boxed"] / ".claude").exists()
        forked = int(boxed[2].split("FORKED ", 1)[1].split()[0])
        assert 0 < forked < 40, boxed[2]
