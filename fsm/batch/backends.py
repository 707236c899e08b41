"""Where attempts run: ``process`` (a pool of driver threads, each running one agent process) or ``ray`` (each
attempt a Ray task). Both run :func:`~fsm.batch.attempt.run_attempt`; the driver only submits, waits and interrupts.

``ray`` is imported here only when chosen (``pip install 'agentfsm[ray]'``). ``address=None`` starts a local Ray
for the batch (stopped when the batch ends); ``"auto"`` or ``ray://…`` joins a running cluster. A Ray task is
cancelled with Ray's own cancel, which raises ``KeyboardInterrupt`` in the task: the attempt then interrupts its
agent's process group, as the process backend does; a hard cancel kills the worker, and the agent dies with it.

A Ray task's stream stays on its worker, so what the driver must see as it happens (:func:`forwarded`: the root
agent's transitions, for the progress view, and each ``api_retry``, for the shared rate limits) is sent to a
:class:`Mailbox` actor (fire and forget), which the driver empties each time it waits: the same events reach the
same listener as with the process backend, a moment later.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import logging
from typing import Any, Protocol

from fsm.batch.attempt import AttemptResult, AttemptSpec, Control, Event, run_attempt
from fsm.errors import ConfigError

__all__ = ["BACKENDS", "RAY_HINT", "Backend", "ProcessBackend", "RayBackend", "make_backend"]

BACKENDS = ("process", "ray")
RAY_HINT = "the ray backend needs its extra: pip install 'agentfsm[ray]'"


class Backend(Protocol):
    """What the driver needs of an engine."""

    def submit(self, spec: AttemptSpec, on_event: Event | None) -> Any:
        """Start *spec*; return a handle."""

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, AttemptResult | BaseException]]:
        """The handles of *handles* that finished within *timeout* seconds, each with its result or exception."""

    def interrupt(self, handle: Any, *, hard: bool = False) -> None:
        """Interrupt a running attempt (its agent stops cleanly), or kill it when *hard*."""

    def close(self) -> None:
        """Release the engine."""


class ProcessBackend:
    """Attempts in a pool of *workers* threads, each waiting on its agent's process."""

    def __init__(self, workers: int) -> None:
        from fsm.batch.launch import start_server

        start_server()  # the agents' fork server, from the driver's thread: it dies with that thread
        self._pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch")
        self._controls: dict[cf.Future[AttemptResult], Control] = {}

    def submit(self, spec: AttemptSpec, on_event: Event | None) -> cf.Future[AttemptResult]:
        control = Control()
        future = self._pool.submit(run_attempt, spec, control=control, on_event=on_event, forked=True)
        self._controls[future] = control
        return future

    def wait(
        self, handles: list[cf.Future[AttemptResult]], timeout: float
    ) -> list[tuple[cf.Future[AttemptResult], AttemptResult | BaseException]]:
        done, _ = cf.wait(handles, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        finished: list[tuple[cf.Future[AttemptResult], AttemptResult | BaseException]] = []
        for future in done:
            self._controls.pop(future, None)
            error = future.exception()
            finished.append((future, error if error is not None else future.result()))
        return finished

    def interrupt(self, handle: cf.Future[AttemptResult], *, hard: bool = False) -> None:
        if (control := self._controls.get(handle)) is not None:
            control.interrupt(hard=hard)

    def close(self) -> None:
        for control in self._controls.values():
            control.interrupt(hard=True)
        self._pool.shutdown(wait=True, cancel_futures=True)


def forwarded(message: dict[str, Any]) -> bool:
    """Whether a Ray worker sends this stream message to the driver as it happens: a transition of the root agent
    (the task's current state) or an ``api_retry`` (a rate limit the other tasks' starts wait for)."""
    kind = message.get("type")
    if kind == "transition":
        return bool(message.get("depth", 0) == 0)
    return kind == "system" and message.get("subtype") == "api_retry"


class Mailbox:
    """A Ray actor (zero CPUs) holding the events the batch's Ray tasks sent, until the driver takes them."""

    def __init__(self) -> None:
        self._events: list[tuple[int, dict[str, Any]]] = []

    def put(self, token: int, message: dict[str, Any]) -> None:
        self._events.append((token, message))

    def take(self) -> list[tuple[int, dict[str, Any]]]:
        taken, self._events = self._events, []
        return taken


def _remote_attempt(spec: AttemptSpec, mailbox: Any = None, token: int = 0) -> AttemptResult:
    """The Ray task: one attempt, its live events sent to *mailbox* under *token*."""

    def send(message: dict[str, Any]) -> None:
        if forwarded(message):
            mailbox.put.remote(token, message)

    return run_attempt(spec, on_event=send if mailbox is not None else None)


class RayBackend:
    """Attempts as Ray tasks of *num_cpus* each, on a local Ray or the cluster at *address*."""

    def __init__(self, *, address: str | None, num_cpus: float, workers: int) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError(RAY_HINT) from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            # Ray's own INFO and WARNING lines (its start, its token) would mix with the batch's progress on stderr
            kwargs: dict[str, Any] = {"address": address, "log_to_driver": False, "logging_level": logging.ERROR}
            if address is None:
                # a Ray of our own, for this batch: on the loopback, no dashboard; "local", since Ray's None would
                # join the cluster a `ray start` left running here (and refuse num_cpus)
                kwargs.update(
                    address="local",
                    num_cpus=max(workers * num_cpus, 1),
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                )
            try:
                ray.init(**kwargs)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ConfigError(f"cannot start or join Ray at {address or 'a local instance'}: {exc}") from None
        self._task = ray.remote(num_cpus=num_cpus, max_retries=0)(_remote_attempt)
        self._mailbox: Any = ray.remote(num_cpus=0)(Mailbox).remote()
        self._listeners: dict[int, Event] = {}
        self._tokens: dict[Any, int] = {}
        self._count = itertools.count(1)

    def submit(self, spec: AttemptSpec, on_event: Event | None) -> Any:
        token = next(self._count)
        handle = self._task.remote(spec, self._mailbox if on_event is not None else None, token)
        self._tokens[handle] = token
        if on_event is not None:
            self._listeners[token] = on_event
        return handle

    def _deliver(self) -> None:
        """Hand each event the workers sent since the last call to its attempt's listener, in order."""
        for token, message in self._ray.get(self._mailbox.take.remote()):
            if (listener := self._listeners.get(token)) is not None:
                listener(message)

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, AttemptResult | BaseException]]:
        self._deliver()
        done, _ = self._ray.wait(handles, num_returns=1, timeout=timeout)
        if done:
            self._deliver()  # what the finished attempt sent before it returned
        finished: list[tuple[Any, AttemptResult | BaseException]] = []
        for ref in done:
            try:
                finished.append((ref, self._ray.get(ref)))
            except BaseException as exc:  # a cancelled or crashed task: the driver decides
                finished.append((ref, exc))
            self._listeners.pop(self._tokens.pop(ref, 0), None)
        return finished

    def interrupt(self, handle: Any, *, hard: bool = False) -> None:
        self._ray.cancel(handle, force=hard)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a cluster that went away took the actor with it
            self._ray.kill(self._mailbox)
        if self._started:
            self._ray.shutdown()


def make_backend(name: str, *, workers: int, address: str | None = None, num_cpus: float = 1.0) -> Backend:
    """The backend *name* (:data:`BACKENDS`)."""
    if name == "process":
        return ProcessBackend(workers)
    if name == "ray":
        return RayBackend(address=address, num_cpus=num_cpus, workers=workers)
    raise ConfigError(f"'backend' must be one of {', '.join(BACKENDS)} (got {name!r})")
