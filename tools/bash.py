"""The ``bash`` tool: run a shell command in the workspace and report what it printed.

The command runs in its own session (so its process group is ours to kill), with stdin closed and no
``ANTHROPIC_*`` variable in its environment, and with an untrusted repository's git configuration neutralised
(``tools.secrets``). It runs under the reaper
(``tools/reaper.py``), or, with ``Workspace.sandbox``, under the sandbox backend (``tools.sandbox``), whose
PID namespace does the reaper's job. Either way it starts only once its processes are reported to
``Workspace.process_listener`` (the journal records them), and nothing it starts outlives the call: when the
shell exits, times out or is interrupted, every process it left — ``setsid`` daemons and double forks
included — is killed, so a background child holding the pipe open cannot make us wait either. Output is
read through a bounded buffer: the first :data:`MAX_OUTPUT_CHARS` characters are kept, the rest is read,
counted and dropped, so a command that prints gigabytes costs time but not memory.

A non-zero exit status is information, not a tool failure: it is appended to the output as
``(exit status N)`` and ``is_error`` stays False. Only a timeout is an error result.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import secrets
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from tools.base import ToolOutput, tool
from tools.gitconfig import is_git_override
from tools.processes import TAG_VAR, ToolProcess
from tools.sandbox import KEPT_ENV, Launch, SandboxRefused, backend_for, note_for
from tools.secrets import tool_environment
from tools.workspace import Workspace

__all__ = ["MAX_OUTPUT_CHARS", "bash"]

MAX_OUTPUT_CHARS = 50_000
"""Characters of output the model sees; the rest is counted and dropped."""

_READ_SIZE = 1 << 16
_POLL_SECONDS = 0.05
"""How often we look whether the shell has exited while its pipe stays quiet."""
_DRAIN_SECONDS = 1.0
"""How long we keep reading what is left in the pipe after the process group is killed."""
_STOP_SECONDS = 2.0
"""How long the reaper may take to kill what a stopped call left before we SIGKILL its group."""
_REAPER = str(Path(__file__).with_name("reaper.py"))
_REAPS = sys.platform == "linux"
"""Whether commands run under the reaper (it needs Linux's PR_SET_CHILD_SUBREAPER)."""


class _Capture:
    """The stripped head of a stream of bytes, decoded as UTF-8, with a count of what was dropped."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._kept = 0
        self._dropped = 0
        self._trailing_space = 0
        self._started = False

    def feed(self, data: bytes, *, final: bool = False) -> None:
        """Decode *data* (the decoder holds a character split across chunks) and keep what fits."""
        text = self._decoder.decode(data, final)
        if not self._started:
            text = text.lstrip()
            if not text:
                return
            self._started = True
        room = self._limit - self._kept
        if room > 0:
            head = text[:room]
            self._parts.append(head)
            self._kept += len(head)
        self._dropped += max(0, len(text) - max(room, 0))
        if text and text[-1].isspace():
            rest = text.rstrip()
            self._trailing_space = len(text) - len(rest) + (0 if rest else self._trailing_space)
        elif text:
            self._trailing_space = 0

    def text(self) -> str:
        """The output stripped, at most *limit* characters, with a note when more was dropped."""
        self.feed(b"", final=True)
        length = self._kept + self._dropped - self._trailing_space
        shown = "".join(self._parts)[:length]
        if not shown:
            return "(no output)"
        more = length - len(shown)
        return f"{shown.rstrip()}\n... ({more} more chars truncated)" if more else shown


@tool(
    name="bash",
    description=(
        "Run a shell command (/bin/sh) in the workspace directory and return its combined stdout and "
        "stderr. Use it to list files, search (grep, find), run tests, builds, git and scripts. "
        "stdin is closed, so interactive commands (editors, pagers, prompts) will not work; pass flags "
        "such as --yes or --no-pager instead. Each call starts a fresh shell: `cd` and exported variables "
        "do not carry over to the next call. The command is killed after the timeout (120 s by default), "
        "and processes it leaves running in the background are killed when it exits. "
        f"Only the first {MAX_OUTPUT_CHARS} characters of output are returned, so filter large output "
        "(head, tail, grep). A non-zero exit status is reported as '(exit status N)' after the output."
    ),
    input_schema={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The shell command to run."}},
        "required": ["command"],
    },
)
def bash(workspace: Workspace, *, command: str) -> ToolOutput:
    """Run *command* with ``sh`` in the workspace root; nothing it starts outlives the call."""
    tag = secrets.token_hex(8)
    env = {**tool_environment(workspace.root), TAG_VAR: tag}
    go_read, go_write = os.pipe()  # the command waits for one byte here: recorded first, then run
    try:
        launch, confined_by = _launch(workspace, command, go_read, env)
    except BaseException as exc:
        os.close(go_read)
        os.close(go_write)
        if isinstance(exc, SandboxRefused):
            return ToolOutput(f"Error: {exc}", is_error=True)
        raise
    try:
        proc = subprocess.Popen(
            launch.argv,
            cwd=workspace.root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(go_read, *launch.fds),
        )
    except BaseException:
        os.close(go_write)
        launch.release()
        raise
    finally:
        os.close(go_read)
    record = ToolProcess.started(proc.pid, tag, sandbox=confined_by)
    listener = workspace.process_listener
    capture = _Capture(MAX_OUTPUT_CHARS)
    try:
        try:
            if listener is not None:
                listener(record, True)
            os.write(go_write, b"g")
        finally:
            os.close(go_write)
        finished = _collect(proc, capture, deadline=time.monotonic() + workspace.bash_timeout)
    finally:
        # Also on KeyboardInterrupt: the group is in its own session, so Ctrl-C never reached it.
        _stop(proc, reaper=_REAPS and confined_by is None)
        undone = launch.release()
        assert proc.stdout is not None
        proc.stdout.close()
        if listener is not None:
            listener(record, False)
    if not finished:
        return ToolOutput(f"Error: Timeout ({workspace.bash_timeout:g}s)", is_error=True)
    text = capture.text()
    notes = [note_for(text, workspace.sandbox) if workspace.sandbox is not None else None, *undone]
    return ToolOutput(text + _status_note(proc.returncode) + "".join(f"\n{note}" for note in notes if note))


def _launch(workspace: Workspace, command: str, go_fd: int, env: dict[str, str]) -> tuple[Launch, str | None]:
    """What to start for *command* (release it after the call), and the sandbox backend's name (None
    unsandboxed); it runs once *go_fd* gives a byte. In the sandbox its PID namespace ends every process with
    the shell; otherwise the reaper does; without either (not Linux), a shell waits for the byte itself and
    only the group is killed.

    Raises:
        SandboxRefused: the sandbox cannot confine this call as asked (the message says why).
    """
    shell = ["/bin/sh", "-c", command]
    if workspace.sandbox is not None:
        backend = backend_for(workspace.sandbox)
        kept = {k: v for k, v in env.items() if k in (*KEPT_ENV, TAG_VAR) or is_git_override(k)}
        return backend.wrap(
            shell, sandbox=workspace.sandbox, root=workspace.root, writable=workspace.extra, env=kept, go_fd=go_fd
        ), backend.name
    if not _REAPS:
        return Launch(["/bin/sh", "-c", f'read -r _ <&{go_fd}; exec {go_fd}<&-; exec /bin/sh -c "$0"', command]), None
    return Launch([sys.executable, "-I", "-S", _REAPER, str(os.getpid()), str(go_fd), *shell]), None


def _stop(proc: subprocess.Popen[bytes], *, reaper: bool) -> None:
    """End the call's processes: ask the reaper to kill everything below it, then SIGKILL the group (in the
    sandbox that kills bwrap, whose namespace's processes die with it)."""
    if reaper and not _gone(proc):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        give_up = time.monotonic() + _STOP_SECONDS
        while not _gone(proc) and time.monotonic() < give_up:
            time.sleep(0.005)
    _kill_group(proc)
    proc.wait()


def _collect(proc: subprocess.Popen[bytes], capture: _Capture, *, deadline: float) -> bool:
    """Feed *proc*'s output to *capture* until the shell exits; False if *deadline* passed first."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while not _has_exited(proc):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if selector.get_map() and selector.select(timeout=min(remaining, _POLL_SECONDS)):
                if _read_into(fd, capture) == 0:  # EOF: every writer closed the pipe
                    selector.unregister(fd)
            elif not selector.get_map():
                time.sleep(min(remaining, _POLL_SECONDS / 5))
    # The shell is done, so its own output is already in the pipe. Kill what it left behind before
    # draining, so a background writer cannot keep us reading; the zombie shell still holds the group id.
    _kill_group(proc)
    stop = time.monotonic() + _DRAIN_SECONDS  # not clipped to the deadline: the shell finished in time
    while time.monotonic() < stop and _read_into(fd, capture):
        pass
    return True


def _read_into(fd: int, capture: _Capture) -> int | None:
    """Read one chunk into *capture*: its size, 0 at EOF, None when nothing is ready."""
    try:
        data = os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return None
    capture.feed(data)
    return len(data)


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the shell (or its reaper) has exited, while the call is under way."""
    return _gone(proc)


def _gone(proc: subprocess.Popen[bytes]) -> bool:
    """Whether *proc* has exited, without reaping it: until reaped, its pid names our group only."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL every process left in the command's process group (its id is the shell's pid)."""
    if proc.returncode is not None:  # reaped: the group id may belong to someone else by now
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _status_note(returncode: int) -> str:
    """``''`` for success, else a line saying how the shell ended."""
    if returncode == 0:
        return ""
    if returncode > 0:
        return f"\n(exit status {returncode})"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"\n(killed by signal {name})"
