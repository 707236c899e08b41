"""The batch driver: which tasks run, when, how often, and what is written; the engines only run attempts.

:func:`run` reads what ``OUT/results.jsonl`` already holds, skips the ids that have a final line (unless told to
redo them or retry their errors), then keeps up to ``workers`` attempts running on the chosen backend. It owns:

- **exactly once**: an attempt's trajectory, then its results line, are written when it finishes; an id gets its
  final line once (a failed attempt that will be retried is written ``"final": false``);
- **retries**: an attempt whose result ``is_error`` runs again until ``max_attempts`` attempts in this run;
- **the cost cap**: no attempt starts once the batch's cost (every attempt's ``total_cost_usd``) reaches
  ``max_total_usd``; those running finish, and the summary says by how much they went over;
- **shared rate limits**: an agent's ``api_retry`` on a 429 or 529 holds back every new start for its retry delay;
- **interrupts**: the first ``KeyboardInterrupt`` stops starting attempts and interrupts the running ones (each agent
  writes its result, its session stays resumable; no line is written, so a rerun runs it again); a second kills
  their process groups at once;
- ``summary.json`` (and ``preds.json`` when asked) at the end, from every line of the task file's ids.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from attrs import define, field, frozen, validators

from fsm.batch.attempt import AttemptResult, AttemptSpec
from fsm.batch.backends import BACKENDS, Backend, make_backend
from fsm.batch.results import final_lines, open_results, read_results, supersede
from fsm.batch.summary import predictions, summarize
from fsm.batch.tasks import Task
from fsm.errors import ConfigError

__all__ = ["DEFAULT_AGENT_ARGS", "BatchOptions", "BatchState", "Progress", "run"]

log = logging.getLogger(__name__)

DEFAULT_AGENT_ARGS = ("--permission-mode", "dontAsk")
"""What every task's agent gets unless its flags set a permission mode: nobody is there to answer an approval."""

RATE_LIMITED = (429, 529)
POLL = 0.1
"""Seconds the driver waits for an attempt to finish before it looks at the clock again (cap, pauses, progress)."""


@frozen
class BatchOptions:
    """How a batch runs; every field has the CLI's default."""

    workers: int = field(default=1, validator=validators.ge(1))
    backend: str = field(default="process", validator=validators.in_(BACKENDS))
    ray_address: str | None = None
    """Ray's address: None starts a local Ray; ``auto`` joins the running cluster."""
    num_cpus: float = field(default=1.0, validator=validators.gt(0))
    """CPUs a Ray task asks for."""
    agent_args: tuple[str, ...] = field(default=(), converter=tuple)
    """The agent flags every task gets (a task's own model, max_turns, budget and allowed tools come after), and
    :data:`DEFAULT_AGENT_ARGS` unless they hold ``--permission-mode`` or ``--dangerously-skip-permissions``."""
    max_attempts: int = field(default=1, validator=validators.ge(1))
    retry_errors: bool = False
    """Run again the ids whose final line is an error."""
    redo_existing: bool = False
    """Run again every id, finished or not."""
    max_total_usd: float | None = field(default=None, validator=validators.optional(validators.gt(0)))
    preds: bool = False
    """Also write SWE-bench's ``preds.json``."""
    model_name: str = "agentfsm"
    """``model_name_or_path`` in ``preds.json``."""
    env: dict[str, str] | None = None
    """The agents' environment (default: the driver's)."""


@define
class BatchState:
    """What the progress view reads while the batch runs."""

    total: int
    """Attempts to make in this run, first attempts only (retries add to ``started`` not here)."""
    skipped: int
    started_at: float = field(factory=time.monotonic)
    done: int = 0
    started: int = 0
    cost: float = 0.0
    running: dict[str, str] = field(factory=dict)
    """Task id → its agent's current state (``starting`` until its first transition)."""
    by_outcome: dict[str, int] = field(factory=dict)
    paused_until: float = 0.0
    stopping: bool = False
    lock: threading.Lock = field(factory=threading.Lock)

    def eta(self) -> float | None:
        """Seconds until the last task is done at the pace so far; None before the first is."""
        if not self.done:
            return None
        return (time.monotonic() - self.started_at) / self.done * (self.total - self.done)


class Progress(Protocol):
    """A view of a running batch (:mod:`fsm.batch.progress`)."""

    def refresh(self, state: BatchState) -> None:
        """Called every ~0.1 s and after each change."""

    def finished(self, state: BatchState, line: dict[str, Any]) -> None:
        """An attempt's line was written."""

    def close(self, state: BatchState) -> None:
        """The batch is over."""


@define
class _Driver:
    tasks: list[Task]
    out: Path
    options: BatchOptions
    progress: Progress | None
    rearm: Callable[[], None] | None
    backend: Backend | None = None
    running: dict[Any, tuple[Task, int, int]] = field(factory=dict)
    """Handle → (task, tries in this run, attempt number)."""
    interrupted: list[str] = field(factory=list)

    def to_run(self) -> tuple[list[Task], dict[str, int]]:
        """The tasks this run attempts and each id's attempts so far, after marking redone lines not final."""
        path = self.out / "results.jsonl"
        ids = {task.id for task in self.tasks}
        if self.options.redo_existing:
            supersede(path, lambda line: line["id"] in ids)
        elif self.options.retry_errors:
            supersede(path, lambda line: line["id"] in ids and bool(line.get("is_error")))
        lines = read_results(path)
        finals = final_lines(lines)
        attempts: dict[str, int] = {}
        for line in lines:
            attempts[line["id"]] = max(attempts.get(line["id"], 0), int(line.get("attempt") or 0))
        return [task for task in self.tasks if task.id not in finals], attempts

    def run(self) -> dict[str, Any]:
        self.out.mkdir(parents=True, exist_ok=True)
        with _claimed(self.out):
            return self._run()

    def _run(self) -> dict[str, Any]:
        todo, attempts = self.to_run()
        results = open_results(self.out / "results.jsonl")
        ids = {task.id for task in self.tasks}
        spent = sum(
            float(line.get("total_cost_usd") or 0.0)
            for line in read_results(self.out / "results.jsonl")
            if line["id"] in ids
        )
        state = BatchState(total=len(todo), skipped=len(self.tasks) - len(todo), cost=spent)
        pending = deque((task, 1) for task in todo)
        try:
            if todo:
                self.backend = make_backend(
                    self.options.backend,
                    workers=self.options.workers,
                    address=self.options.ray_address,
                    num_cpus=self.options.num_cpus,
                )
            self._loop(state, pending, attempts, results)
        finally:
            results.close()
            if self.backend is not None:
                self.backend.close()
            if self.progress is not None:
                self.progress.close(state)
        return self._finish(state, [task.id for task, _ in pending])

    def _loop(
        self, state: BatchState, pending: deque[tuple[Task, int]], attempts: dict[str, int], results: Any
    ) -> None:
        assert self.backend is not None or not pending
        interrupts = 0
        while pending or self.running:
            try:
                self._start_what_can(state, pending, attempts)
                assert self.backend is not None
                for handle, outcome in self.backend.wait(list(self.running), POLL) if self.running else []:
                    self._collect(state, handle, outcome, pending, results)
                if not self.running:
                    if state.stopping or self._capped(state):
                        break
                    time.sleep(min(POLL, max(0.0, state.paused_until - time.monotonic())))
                if self.progress is not None:
                    self.progress.refresh(state)
            except KeyboardInterrupt:
                interrupts += 1
                state.stopping = True
                assert self.backend is not None
                for handle, (task, _, _) in self.running.items():
                    self.backend.interrupt(handle, hard=interrupts > 1)
                    state.running[task.id] = "interrupting"
                if interrupts > 1:
                    self.interrupted.extend(task.id for task, _, _ in self.running.values())
                    self.running.clear()
                    return
                if self.rearm is not None:
                    self.rearm()

    def _capped(self, state: BatchState) -> bool:
        cap = self.options.max_total_usd
        return cap is not None and state.cost >= cap

    def _start_what_can(self, state: BatchState, pending: deque[tuple[Task, int]], attempts: dict[str, int]) -> None:
        while (
            pending
            and len(self.running) < self.options.workers
            and not state.stopping
            and not self._capped(state)
            and time.monotonic() >= state.paused_until
        ):
            task, tries = pending.popleft()
            attempts[task.id] = attempts.get(task.id, 0) + 1
            spec = AttemptSpec(
                task=task.to_json(),
                attempt=attempts[task.id],
                out=str(self.out.resolve()),
                agent_args=_with_default_mode(self.options.agent_args),
                env=self.options.env,
            )
            assert self.backend is not None
            with state.lock:
                state.running[task.id] = "starting"
            state.started += 1
            self.running[self.backend.submit(spec, self._listener(state, task.id))] = (task, tries, spec.attempt)

    def _listener(self, state: BatchState, task_id: str) -> Callable[[dict[str, Any]], None]:
        def on_event(message: dict[str, Any]) -> None:
            kind = message.get("type")
            if kind == "transition" and message.get("depth", 0) == 0 and isinstance(message.get("dest"), str):
                with state.lock:
                    if task_id in state.running and not state.stopping:
                        state.running[task_id] = message["dest"]
            elif _rate_limited(message):
                delay = float(message.get("retry_delay_ms") or 1000) / 1000
                with state.lock:
                    state.paused_until = max(state.paused_until, time.monotonic() + delay)

        return on_event

    def _collect(
        self,
        state: BatchState,
        handle: Any,
        outcome: AttemptResult | BaseException,
        pending: deque[tuple[Task, int]],
        results: Any,
    ) -> None:
        task, tries, attempt = self.running.pop(handle)
        with state.lock:
            state.running.pop(task.id, None)
        if isinstance(outcome, BaseException) or outcome.interrupted:
            if state.stopping:
                self.interrupted.append(task.id)
                return
            outcome = _crashed(task, attempt, outcome)
        line = outcome.line
        cost = float(line.get("total_cost_usd") or 0.0)
        state.cost += cost
        retry = bool(line.get("is_error")) and tries < self.options.max_attempts and not state.stopping
        line = {"id": line["id"], "attempt": line["attempt"], "final": not retry, **line}
        if outcome.trajectory:
            task_dir = self.out / task.id
            task_dir.mkdir(parents=True, exist_ok=True)
            fresh = task_dir / "trajectory.jsonl.tmp"
            fresh.write_text(outcome.trajectory, encoding="utf-8")
            fresh.replace(task_dir / "trajectory.jsonl")
        results.append(line)
        if retry:
            pending.appendleft((task, tries + 1))
        else:
            state.done += 1
            name = str(line.get("outcome"))
            state.by_outcome[name] = state.by_outcome.get(name, 0) + 1
        if self.progress is not None:
            self.progress.finished(state, line)

    def _finish(self, state: BatchState, not_started: Sequence[str]) -> dict[str, Any]:
        lines = read_results(self.out / "results.jsonl")
        summary = summarize(
            [task.id for task in self.tasks],
            lines,
            max_total_usd=self.options.max_total_usd,
            interrupted=self.interrupted,
            not_started=not_started,
        )
        _write_json(self.out / "summary.json", summary)
        if self.options.preds:
            ids = {task.id for task in self.tasks}
            preds = predictions((line for line in lines if line["id"] in ids), model=self.options.model_name)
            _write_json(self.out / "preds.json", preds)
        return summary


def _with_default_mode(args: tuple[str, ...]) -> tuple[str, ...]:
    moded = any(a.split("=")[0] in ("--permission-mode", "--dangerously-skip-permissions") for a in args)
    return args if moded else (*args, *DEFAULT_AGENT_ARGS)


def _rate_limited(message: dict[str, Any]) -> bool:
    """Whether a stream message is an ``api_retry`` after a 429 or 529."""
    return (
        message.get("type") == "system"
        and message.get("subtype") == "api_retry"
        and message.get("error_status") in RATE_LIMITED
    )


def _crashed(task: Task, attempt: int, error: AttemptResult | BaseException) -> AttemptResult:
    """The line of an attempt whose worker failed (a Ray worker that died, a bug of ours), not the agent."""
    text = f"the worker failed: {type(error).__name__}: {error}".splitlines()[0][:500]
    log.warning("task %s: %s", task.id, text)
    line = {
        "id": task.id,
        "attempt": attempt,
        "subtype": "error_during_execution",
        "is_error": True,
        "result": text,
        "total_cost_usd": 0.0,
        "outcome": "crashed",
        "diff": "",
    }
    if isinstance(error, AttemptResult):
        line = {**error.line, **{k: line[k] for k in ("subtype", "is_error", "outcome")}}
    return AttemptResult(line=line, trajectory="")


@contextlib.contextmanager
def _claimed(out: Path) -> Iterator[None]:
    """Hold ``OUT/batch.lock`` while the batch runs: one driver per output directory (the kernel releases the lock
    of a driver that dies, ``kill -9`` included)."""
    fd = os.open(out / "batch.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise ConfigError(
                f"{out} is being run by another batch (pid {holder}); wait for it, or use another out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)


def _write_json(path: Path, data: Any) -> None:
    fresh = path.with_name(path.name + ".tmp")
    fresh.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(fresh, path)


def run(
    tasks: Sequence[Task] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workers: int = 1,
    backend: str = "process",
    progress: Progress | None = None,
    rearm: Callable[[], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run a batch and return its summary (also written to ``OUT/summary.json``).

    Args:
        tasks: the tasks, or the path of a task file (:func:`~fsm.batch.tasks.read_tasks`).
        out: the output directory (created); a second run with the same one resumes the batch.
        workers: attempts running at once.
        backend: ``process`` or ``ray``.
        progress: a view to keep up to date (none by default).
        rearm: called after the first interrupt has been handled, so the next one interrupts again (the CLI's).
        options: the other fields of :class:`BatchOptions`.

    Raises:
        ConfigError: a task file that cannot be run (:class:`~fsm.batch.tasks.TaskFileError`), a bad option, or a
            backend that cannot start.
    """
    from fsm.batch.tasks import read_tasks

    task_list = list(tasks) if isinstance(tasks, Sequence) and not isinstance(tasks, str) else read_tasks(Path(tasks))
    try:
        settings = BatchOptions(workers=workers, backend=backend, **options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad batch option: {exc}") from None
    driver = _Driver(list(task_list), Path(out), settings, progress, rearm)
    return driver.run()
