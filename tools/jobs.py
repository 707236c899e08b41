"""Background bash jobs: :class:`Jobs`, the registry of one agent tree's jobs, and :class:`Job`, one of them.

``bash`` with ``run_in_background`` starts its command as a job (:meth:`Jobs.start`), exactly as a foreground call
is started (``tools.bash``: the supervisor's call reaper, or the sandbox), so the job's process group is journalled
before it runs (``Workspace.process_listener``) and killed when agentfsm exits, even by SIGKILL (the supervisor's
socket closes), or by a resume (``fsm.session.restore.kill_orphans``). One thread per job (a *pump*) copies its
output into a file (``DIRECTORY/ID.output``, at most :data:`MAX_OUTPUT_BYTES`: the rest is counted and dropped),
watches its deadline (its ``timeout``, :data:`DEFAULT_TIMEOUT` by default: every job ends) and, when it ends,
records how (``completed``, ``failed`` with its exit code, or ``killed``) and wakes whoever waits
(:meth:`Jobs.wait`). Telling the model is the agent's business (``fsm.core.agent``): this module only says which
jobs have ended (:meth:`Jobs.ended`), in Claude Code's ``<task-notification>`` words (:func:`notification`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import selectors
import string
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tools.processes import TAG_VAR, ToolProcess, boot_id
from tools.secrets import tool_environment

if TYPE_CHECKING:
    from tools.running import Running

ProcessListener = Callable[[ToolProcess, bool], None]


class Place(Protocol):
    """What a job needs of the workspace it starts in (``tools.workspace.Workspace`` has it)."""

    @property
    def root(self) -> Path: ...
    @property
    def process_listener(self) -> ProcessListener | None: ...
    @property
    def call_id(self) -> str | None: ...


__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_OUTPUT_BYTES",
    "MAX_TIMEOUT",
    "Job",
    "JobStatus",
    "Jobs",
    "notification",
]

log = logging.getLogger(__name__)

JobStatus = Literal["running", "completed", "failed", "killed"]
Launcher = Callable[[Any, str, dict[str, str]], tuple["Running", str | None, Callable[[], list[str]]]]
"""Starts a command, waiting to be told to run: the started command, the sandbox's name, and its undo."""
DEFAULT_TIMEOUT = 600.0
"""Seconds a job may run when its call gives no ``timeout`` (Claude Code's maximum, 10 minutes)."""
MAX_TIMEOUT = 600.0
"""The most a call's ``timeout`` may ask for, in seconds (Claude Code's 600000 ms)."""
MAX_OUTPUT_BYTES = 8 << 20
"""Bytes of a job's output kept in its file; the rest is counted and dropped (a note at the end says how much)."""
_POLL_SECONDS = 0.05
_ALPHABET = string.digits + string.ascii_lowercase


def _new_id() -> str:
    """A job id as Claude Code makes one for a local bash task: ``b`` and 8 characters of [0-9a-z]."""
    return "b" + "".join(secrets.choice(_ALPHABET) for _ in range(8))


class Job:
    """One background job: its command, its output file, and how it ended (``status``)."""

    def __init__(
        self, job_id: str, *, command: str, description: str, tool_use_id: str | None, output: Path, timeout: float
    ) -> None:
        self.id, self.command, self.description, self.tool_use_id = job_id, command, description, tool_use_id
        self.output = output
        """The file the job's output goes to (stdout and stderr, as a foreground call's)."""
        self.timeout = timeout
        self.started = time.monotonic()
        self.deadline = self.started + timeout
        self.status: JobStatus = "running"
        self.exit_code: int | None = None
        self.dropped = 0
        """Bytes of output past :data:`MAX_OUTPUT_BYTES`, not kept."""
        self.ended_at: float | None = None
        """When the job ended (``time.time()``), or None while it runs."""
        self._stop = threading.Event()
        self._why: JobStatus = "killed"

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def summary(self) -> str:
        """Claude Code's words for how a background command ended (the notification's ``<summary>``)."""
        name = self.description or self.command
        if self.status == "completed":
            return f'Background command "{name}" completed (exit code {self.exit_code})'
        if self.status == "failed":
            return f'Background command "{name}" failed with exit code {self.exit_code}'
        if self.status == "killed":
            return f'Background command "{name}" was stopped'
        return f'Background command "{name}" is running'

    def read(self) -> str:
        """What the job has printed so far (its output file, decoded; a note when output was dropped)."""
        try:
            text = self.output.read_bytes().decode("utf-8", "replace")
        except OSError:
            text = ""
        return text + (f"\n... ({self.dropped} more bytes dropped)" if self.dropped else "")


def notification(job: Job) -> str:
    """The ``<task-notification>`` that tells the model *job* ended, in Claude Code's shape."""
    use = f"\n<tool-use-id>{job.tool_use_id}</tool-use-id>" if job.tool_use_id else ""
    return (
        f"<task-notification>\n<task-id>{job.id}</task-id>{use}\n<output-file>{job.output}</output-file>\n"
        f"<status>{job.status}</status>\n<summary>{_escape(job.summary)}</summary>\n</task-notification>"
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Jobs:
    """The background jobs of one agent tree (the root makes it; its subagents share it).

    Args:
        directory: where the output files go (the session's state directory); a new temporary directory, made
            on the first job, when None.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._jobs: dict[str, Job] = {}
        self._by_call: dict[str, str] = {}
        self._changed = threading.Condition()

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._jobs

    def get(self, job_id: str) -> Job | None:
        """The job *job_id*, or None when this registry never started it."""
        return self._jobs.get(job_id)

    def started_by(self, tool_use_id: str) -> str | None:
        """The id of the job the tool call *tool_use_id* started, if it started one."""
        return self._by_call.get(tool_use_id)

    def start(
        self,
        workspace: Place,
        command: str,
        *,
        launch: Launcher,
        timeout: float = DEFAULT_TIMEOUT,
        description: str = "",
    ) -> Job:
        """Start *command* as a job in *workspace* with *launch* (``tools.bash.start_command``: as a foreground
        call starts), recorded by the workspace's process listener before it runs.

        Raises:
            tools.sandbox.SandboxRefused: the sandbox cannot confine the command.
            OSError: the command could not be started, or its output file made.
        """
        directory = self._directory()
        job_id = _new_id()
        while job_id in self._jobs:
            job_id = _new_id()
        tag = secrets.token_hex(8)
        env = {**tool_environment(workspace.root), TAG_VAR: tag}
        output = directory / f"{job_id}.output"
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            running, confined_by, release = launch(workspace, command, env)
        except BaseException:
            os.close(fd)
            raise
        record = ToolProcess(running.pid, running.start_ticks, boot_id(), tag, confined_by)
        job = Job(
            job_id, command=command, description=description, tool_use_id=workspace.call_id, output=output,
            timeout=timeout,
        )  # fmt: skip
        listener = workspace.process_listener
        try:
            if listener is not None:
                listener(record, True)
            running.go()
        except BaseException:
            running.stop()
            release()
            os.close(fd)
            if listener is not None:
                listener(record, False)
            raise
        with self._changed:
            self._jobs[job_id] = job
            if workspace.call_id is not None:
                self._by_call[workspace.call_id] = job_id
        pump = threading.Thread(
            target=self._pump, args=(job, running, fd, record, listener, release), name=f"agentfsm-job-{job_id}"
        )
        pump.daemon = True
        pump.start()
        return job

    def _directory(self) -> Path:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="agentfsm-tasks-"))
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self.directory

    def _pump(
        self,
        job: Job,
        running: Running,
        fd: int,
        record: ToolProcess,
        listener: ProcessListener | None,
        release: Callable[[], list[str]],
    ) -> None:
        """Copy *job*'s output to its file until it exits, its deadline passes or it is stopped; then record how it
        ended and wake the waiters."""
        status: JobStatus | None = None
        kept = 0
        try:
            source = running.stdout
            os.set_blocking(source, False)
            with selectors.DefaultSelector() as selector:
                selector.register(source, selectors.EVENT_READ)
                if running.exit_fd is not None:
                    selector.register(running.exit_fd, selectors.EVENT_READ)
                while True:
                    if job._stop.is_set():
                        status = job._why
                        break
                    if time.monotonic() >= job.deadline:
                        status = "killed"
                        break
                    if running.exited():
                        break
                    for key, _ in selector.select(timeout=_POLL_SECONDS):
                        if key.fd == source:
                            kept = self._copy(job, source, fd, kept, selector)
            if status is None:  # exited: what is left in the pipe is its own
                with contextlib.suppress(OSError):
                    while _readable(source):
                        more = self._copy(job, source, fd, kept, None)
                        if more < 0:
                            break
                        kept = more
        except Exception:  # a pump must end its job whatever happened
            log.debug("job %s: its pump failed", job.id, exc_info=True)
            status = "killed"
        finally:
            running.stop()
            with contextlib.suppress(Exception):
                release()
            os.close(fd)
            if listener is not None:
                with contextlib.suppress(Exception):  # the journal's trouble is reported by its next write
                    listener(record, False)
            code = running.returncode
            with self._changed:
                job.exit_code = code if code is not None and code >= 0 else None
                job.status = status or ("completed" if code == 0 else "failed" if (code or 0) > 0 else "killed")
                job.ended_at = time.time()
                self._changed.notify_all()

    def _copy(self, job: Job, source: int, fd: int, kept: int, selector: selectors.BaseSelector | None) -> int:
        """Copy one chunk of *source* to *fd* within the cap; the bytes kept so far (-1 at EOF)."""
        try:
            data = os.read(source, 1 << 16)
        except BlockingIOError:
            return kept
        if not data:
            if selector is not None:
                selector.unregister(source)
            return -1 if selector is None else kept
        room = max(0, MAX_OUTPUT_BYTES - kept)
        if room:
            os.write(fd, data[:room])
        job.dropped += max(0, len(data) - room)
        return kept + min(room, len(data))

    def stop(self, job_id: str, *, wait: float = 5.0) -> Job | None:
        """Kill job *job_id* and wait (up to *wait* s) until it has ended; the job, or None when it is unknown."""
        job = self._jobs.get(job_id)
        if job is None:
            return None
        job._stop.set()
        with self._changed:
            self._changed.wait_for(lambda: not job.running, timeout=wait)
        return job

    def stop_all(self, ids: Iterable[str] | None = None) -> list[Job]:
        """Kill every running job (of *ids*, when given) and wait until they have ended; the jobs stopped."""
        chosen = [j for j in self._jobs.values() if ids is None or j.id in set(ids)]
        for job in chosen:
            if job.running:
                job._stop.set()
        with self._changed:
            self._changed.wait_for(lambda: not any(j.running for j in chosen), timeout=5.0)
        return chosen

    def ended(self, ids: Iterable[str]) -> list[Job]:
        """The jobs of *ids* that have ended, in the order given (an id this registry never started, a resumed
        run's, counts as ended: :meth:`lost`)."""
        found = []
        for job_id in ids:
            job = self._jobs.get(job_id) or self.lost(job_id)
            if not job.running:
                found.append(job)
        return found

    def lost(self, job_id: str) -> Job:
        """A job of an earlier process (a resumed session's): its processes were killed by the resume, so it is
        recorded as ``killed``."""
        with self._changed:
            job = self._jobs.get(job_id)
            if job is None:
                output = (self.directory or Path(tempfile.gettempdir())) / f"{job_id}.output"
                job = Job(job_id, command="", description="", tool_use_id=None, output=output, timeout=0.0)
                job.description = f"{job_id} (killed when its run was)"
                job.status, job.ended_at = "killed", time.time()
                self._jobs[job_id] = job
            return job

    def wait(self, ids: Iterable[str], timeout: float) -> bool:
        """Wait up to *timeout* seconds until a job of *ids* has ended; whether one has."""
        wanted = list(ids)
        with self._changed:
            return self._changed.wait_for(lambda: bool(self.ended(wanted)), timeout=max(0.0, timeout))


def _readable(fd: int) -> bool:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        return bool(selector.select(timeout=0))
