"""The ``bash`` tool: run a shell command in the workspace and report what it printed.

The command runs in its own session (so its process group is ours to kill), with stdin closed and no
``ANTHROPIC_*`` variable in its environment, and with an untrusted repository's git configuration neutralised
(``tools.secrets``). It runs under a call reaper of this process's supervisor (``tools.supervision``: a fork of
one long-lived helper, not a new interpreter per call), or, with ``Workspace.sandbox``, under the sandbox backend
(``tools.sandbox``), whose PID namespace does the call reaper's job. Either way it starts only once its processes
are reported to
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
import os
import secrets
import selectors
import signal
import time
from collections.abc import Callable

import attrs

from tools.base import ToolOutput, tool
from tools.gitconfig import is_git_override
from tools.jobs import DEFAULT_TIMEOUT, MAX_TIMEOUT
from tools.processes import TAG_VAR, ToolProcess, boot_id
from tools.running import Running, spawned
from tools.sandbox import KEPT_ENV, Launch, SandboxRefused, backend_for, note_for
from tools.secrets import tool_environment
from tools.supervision import AVAILABLE, supervised
from tools.workspace import Workspace

__all__ = ["MAX_OUTPUT_CHARS", "bash", "start_command"]

MAX_OUTPUT_CHARS = 50_000
"""Characters of output the model sees; the rest is counted and dropped."""

_READ_SIZE = 1 << 16
_POLL_SECONDS = 0.05
"""How often we look whether the shell has exited while its pipe stays quiet."""
_DRAIN_SECONDS = 1.0
"""How long we keep reading what is left in the pipe after the process group is killed."""


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
        "do not carry over to the next call. The command is killed after the timeout (120 s by default; "
        "'timeout' in milliseconds, at most 600000), and processes it leaves running in the background are "
        "killed when it exits. "
        f"Only the first {MAX_OUTPUT_CHARS} characters of output are returned, so filter large output "
        "(head, tail, grep). A non-zero exit status is reported as '(exit status N)' after the output. "
        "With run_in_background the command runs as a background job (killed after its timeout, 10 minutes by "
        "default): the call returns its task id at once, a <task-notification> tells you when it ends, "
        "TaskOutput reads its output and TaskStop kills it. You do not need to wait or poll for it."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "timeout": {"type": "number", "description": "Optional timeout in milliseconds (max 600000)"},
            "description": {
                "type": "string",
                "description": "Clear, concise description of what this command does in active voice.",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Set to true to run this command in the background.",
            },
        },
        "required": ["command"],
    },
)
def bash(
    workspace: Workspace,
    *,
    command: str,
    timeout: float | None = None,
    description: str = "",
    run_in_background: bool = False,
) -> ToolOutput:
    """Run *command* with ``sh`` in the workspace root; nothing it starts outlives the call (with
    *run_in_background*: the job, ``tools.jobs``). *timeout* is in milliseconds, as Claude Code's."""
    if timeout is not None and not 0 < timeout <= MAX_TIMEOUT * 1000:
        return ToolOutput(f"Error: 'timeout' must be 1..{MAX_TIMEOUT * 1000:.0f} ms (got {timeout:g})", is_error=True)
    if run_in_background:
        return _background(workspace, command, timeout=timeout, description=description)
    seconds = workspace.bash_timeout if timeout is None else timeout / 1000
    if seconds != workspace.bash_timeout:
        workspace = attrs.evolve(workspace, bash_timeout=seconds)
    tag = secrets.token_hex(8)
    env = {**tool_environment(workspace.root), TAG_VAR: tag}
    try:
        running, confined_by, release = start_command(workspace, command, env)
    except SandboxRefused as exc:
        return ToolOutput(f"Error: {exc}", is_error=True)
    record = ToolProcess(running.pid, running.start_ticks, boot_id(), tag, confined_by)
    listener = workspace.process_listener
    capture = _Capture(MAX_OUTPUT_CHARS)
    try:
        if listener is not None:
            listener(record, True)
        running.go()
        finished = _collect(running, capture, deadline=time.monotonic() + workspace.bash_timeout)
    finally:
        # Also on KeyboardInterrupt: the command is in its own session, so Ctrl-C never reached it.
        running.stop()
        undone = release()
        if listener is not None:
            listener(record, False)
    if not finished:
        return ToolOutput(f"Error: Timeout ({workspace.bash_timeout:g}s)", is_error=True)
    text = capture.text()
    notes = [note_for(text, workspace.sandbox) if workspace.sandbox is not None else None, *undone]
    assert running.returncode is not None
    return ToolOutput(text + _status_note(running.returncode) + "".join(f"\n{note}" for note in notes if note))


def _background(workspace: Workspace, command: str, *, timeout: float | None, description: str) -> ToolOutput:
    """Start *command* as a background job of ``workspace.jobs``; Claude Code's words for it, with its id."""
    if workspace.jobs is None:
        return ToolOutput(
            "Error: run_in_background is for the main agent only (it waits for its jobs); run the command in the "
            "foreground",
            is_error=True,
        )
    try:
        seconds = DEFAULT_TIMEOUT if timeout is None else timeout / 1000
        job = workspace.jobs.start(workspace, command, launch=start_command, timeout=seconds, description=description)
    except SandboxRefused as exc:
        return ToolOutput(f"Error: {exc}", is_error=True)
    return ToolOutput(
        f"Command running in background with ID: {job.id}. Output is being written to: {job.output}. You will be "
        "notified when it completes. To check interim output, use TaskOutput with that ID."
    )


def start_command(
    workspace: Workspace, command: str, env: dict[str, str]
) -> tuple[Running, str | None, Callable[[], list[str]]]:
    """*command* started, waiting to be told to run; the sandbox backend's name (None unsandboxed); and what to
    call once it is over (the sandbox's undo, whose lines go in the result). In the sandbox its PID namespace ends
    every process with the shell; otherwise a call reaper of the supervisor does (``tools.supervision``); without
    either (not Linux), a shell waits for the go byte itself and only the group is killed.

    Raises:
        SandboxRefused: the sandbox cannot confine this call as asked (the message says why).
    """
    shell = ["/bin/sh", "-c", command]
    if workspace.sandbox is None and AVAILABLE:
        return supervised(shell, cwd=workspace.root, env=env), None, list
    go_read, go_write = os.pipe()  # the command waits for one byte here: recorded first, then run
    try:
        if workspace.sandbox is None:
            waits = f'read -r _ <&{go_read}; exec {go_read}<&-; exec /bin/sh -c "$0"'
            launch, confined_by = Launch(["/bin/sh", "-c", waits, command]), None
        else:
            backend = backend_for(workspace.sandbox)
            kept = {k: v for k, v in env.items() if k in (*KEPT_ENV, TAG_VAR) or is_git_override(k)}
            launch = backend.wrap(
                shell,
                sandbox=workspace.sandbox,
                root=workspace.root,
                writable=workspace.extra,
                env=kept,
                go_fd=go_read,
            )
            confined_by = backend.name
    except BaseException:
        os.close(go_read)
        os.close(go_write)
        raise
    try:
        running = spawned(launch.argv, cwd=workspace.root, env=env, go_fd=(go_read, go_write), fds=launch.fds)
    except BaseException:
        launch.release()
        raise
    return running, confined_by, launch.release


def _collect(running: Running, capture: _Capture, *, deadline: float) -> bool:
    """Feed the command's output to *capture* until it exits; False if *deadline* passed first."""
    fd = running.stdout
    os.set_blocking(fd, False)
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ, "output")
        if running.exit_fd is not None:
            selector.register(running.exit_fd, selectors.EVENT_READ, "exit")
        while not _has_exited(running):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if not selector.get_map():
                time.sleep(min(remaining, _POLL_SECONDS / 5))
                continue
            for key, _ in selector.select(timeout=min(remaining, _POLL_SECONDS)):
                if key.data == "output" and _read_into(fd, capture) == 0:  # EOF: every writer closed the pipe
                    selector.unregister(fd)
    # The shell is done, so its own output is already in the pipe. Kill what it left behind before
    # draining, so a background writer cannot keep us reading.
    running.leftovers()
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


def _has_exited(running: Running) -> bool:
    """Whether the command has exited, while the call is under way."""
    return running.exited()


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
