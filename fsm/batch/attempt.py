"""One attempt at one task, as a worker runs it: workspace, setup, the agent, verify, patch and trajectory.

:func:`run_attempt` is the task function both backends run (in a driver thread for ``process``, as a Ray task for
``ray``). The agent is the real ``agentfsm -p PROMPT --output-format stream-json`` in a child process, in the
task's workspace (``OUT/work/ID``), journalling to the task's own ``OUT/ID/sessions.db``. A child process rather than
an agent in the worker: it has its own process group, so an interrupt reaches the agent and every tool process it
started and nothing else; the agent's own SIGINT handling writes its result and leaves its session resumable; a
crash of one agent is one task's ``crashed`` result, never the worker's; and it is exactly what a user's ``-p`` run
is. Its stream is read line by line, so the driver sees each transition (the task's current state) and each
``api_retry`` (rate limits are shared) as they happen. The process backend forks it from a server that imported
agentfsm once (``forked``: :mod:`fsm.batch.launch`), a Ray worker starts it with ``subprocess``; the same command
either way.

The child dies with its parent (``PR_SET_PDEATHSIG``: SIGTERM, which agentfsm treats as an interrupt; the fork
server dies with the driver), so a driver killed with ``kill -9`` leaves no agent running. Setup and verify commands
run under the same :class:`Control`, so an interrupt reaches them too. What an attempt returns,
:class:`AttemptResult`, is plain JSON data: a Ray worker sends it back whole (result object, patch, trajectory), so
workers need not share the driver's disk.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import define, frozen

from fsm.batch.launch import ForkedAgent, die_with_parent
from fsm.batch.tasks import Task
from fsm.batch.workspace import WorkspaceError, patch, prepare

__all__ = ["TAIL_CHARS", "AttemptResult", "AttemptSpec", "Control", "Event", "run_attempt", "run_shell"]

TAIL_CHARS = 2000
"""How much of a setup or verify command's output a results line keeps (its end)."""

INTERRUPT_GRACE = 10.0
"""Seconds an interrupted agent has to write its result before its process group is killed."""

Event = Callable[[dict[str, Any]], None]
"""Receives each stream-json line the agent writes (a dict), as it writes it."""


@frozen
class AttemptSpec:
    """Everything a worker needs for one attempt: plain data, sent as it is to a Ray worker."""

    task: dict[str, Any]
    """The task, as :meth:`Task.to_json` gives it."""
    attempt: int
    out: str
    """The batch's output directory, absolute."""
    agent_args: tuple[str, ...] = ()
    """The agent flags every task gets (``--permission-mode dontAsk``, ``--max-turns 5``, …)."""
    env: dict[str, str] | None = None
    """The agent's environment (default: the worker's)."""


@frozen
class AttemptResult:
    """What one attempt gives back: the line for ``results.jsonl`` and the task's trajectory."""

    line: dict[str, Any]
    trajectory: str
    """The session's journal export (``agentfsm sessions export``), JSON lines; empty when no session was run."""
    interrupted: bool = False
    """The attempt was stopped from outside (Ctrl-C, a cancel): not a final answer for its task."""


@define
class Control:
    """The driver's handle on a running attempt: interrupt it from another thread (the process it is running: the
    agent, or a setup or verify command)."""

    proc: Any = None
    """The process it is running (a ``subprocess.Popen``, or a :class:`~fsm.batch.launch.ForkedAgent`)."""
    stopping: bool = False

    def runs(self, proc: Any) -> None:
        """Hold *proc* as the process it is running, interrupted at once when a stop came while it was starting."""
        self.proc = proc
        if self.stopping:
            self.interrupt()

    def interrupt(self, *, hard: bool = False) -> None:
        """SIGINT the agent's process group (the agent writes its result and stops), or SIGKILL it when *hard*."""
        self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL if hard else signal.SIGINT)


def run_shell(command: str, cwd: Path, env: dict[str, str], control: Control | None = None) -> dict[str, Any]:
    """Run *command* with ``bash -c`` in *cwd*: its exit code, the tail of its output and its duration. Its
    session is its own, and *control* interrupts it as it does the agent (a second Ctrl-C kills it)."""
    control = control or Control()
    started = time.monotonic()
    with subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    ) as proc:
        control.runs(proc)
        try:
            output = proc.communicate()[0].decode("utf-8", "replace")
        except BaseException:  # a Ray cancel in this thread: the command goes with it
            control.interrupt(hard=True)
            raise
    control.proc = None
    return {
        "command": command,
        "exit_code": proc.returncode,
        "output": output[-TAIL_CHARS:],
        "duration_ms": round((time.monotonic() - started) * 1000),
    }


_SECRET_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_OAUTH_TOKEN")


def _shell_env(env: dict[str, str]) -> dict[str, str]:
    """*env* without the model's credentials and endpoint: setup and verify run the repository's code, which the
    agent's own tools are never given the key for either."""
    return {name: value for name, value in env.items() if not name.startswith(_SECRET_PREFIXES)}


def _agent_argv(task: Task, spec: AttemptSpec, workdir: Path, db: Path) -> list[str]:
    argv = [sys.executable, "-m", "fsm", "-p", task.prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--cwd", str(workdir), "--session-db", str(db), *spec.agent_args]
    if task.model is not None:
        argv += ["--model", task.model]
    if task.max_turns is not None:
        argv += ["--max-turns", str(task.max_turns)]
    if task.max_budget_usd is not None:
        argv += ["--max-budget-usd", str(task.max_budget_usd)]
    if task.allowed_tools is not None:
        argv += ["--allowedTools", *task.allowed_tools]
    return argv


def _run_agent(
    argv: list[str], env: dict[str, str], cwd: str, control: Control, on_event: Event | None, *, forked: bool = False
) -> tuple[dict[str, Any] | None, int, str]:
    """Run the agent (*forked*: from the fork server, :mod:`fsm.batch.launch`); its result object (None if it wrote
    none), exit status and stderr's tail."""
    proc: Any
    if forked:
        proc = ForkedAgent(argv[3:], env, cwd)  # after ``python -m fsm``
    else:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            process_group=0,  # its own group: an interrupt reaches the agent and its tools, nothing else
            preexec_fn=die_with_parent,  # prctl has no other door; it runs between fork and exec only
        )
    control.runs(proc)
    stderr = io.StringIO()
    found: list[dict[str, Any]] = []
    readers = [
        threading.Thread(target=lambda: shutil.copyfileobj(proc.stderr, stderr), daemon=True),
        threading.Thread(target=_read_stream, args=(proc, found, on_event), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        # Wait in short sleeps, not in a blocking read: an interrupt raised in this thread (a Ray cancel) is then
        # handled at once rather than when the agent next writes.
        while proc.poll() is None:
            time.sleep(0.05)
    except BaseException:  # KeyboardInterrupt from a Ray cancel, or the driver's own: stop the agent, then go
        control.interrupt()
        try:
            proc.wait(INTERRUPT_GRACE)
        except subprocess.TimeoutExpired:
            control.interrupt(hard=True)
            proc.wait()
        raise
    for reader in readers:
        reader.join(5)
    return (found[-1] if found else None), proc.returncode, stderr.getvalue()[-TAIL_CHARS:]


def _read_stream(proc: Any, found: list[dict[str, Any]], on_event: Event | None) -> None:
    """Read the agent's stream-json lines: the result object into *found*, every other message to *on_event*."""
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if message.get("type") == "result":
            found.append(message)
        elif on_event is not None:
            on_event(message)


def _trajectory(db: Path, session_id: str | None) -> str:
    if session_id is None or not db.exists():
        return ""
    from fsm.session.export import export_jsonl
    from fsm.session.journal import Journal

    out = io.StringIO()
    try:
        with Journal(db, readonly=True) as journal:
            export_jsonl(journal, session_id, out)
    except Exception:  # a trajectory that cannot be read is a missing trajectory, not a failed batch
        return ""
    return out.getvalue()


def _failure(subtype: str, outcome: str, text: str) -> dict[str, Any]:
    """A result object for an attempt whose agent wrote none (it never ran, or died)."""
    return {
        "type": "result",
        "subtype": subtype,
        "is_error": True,
        "num_turns": 0,
        "result": text,
        "session_id": None,
        "total_cost_usd": 0.0,
        "outcome": outcome,
    }


def run_attempt(
    spec: AttemptSpec, *, control: Control | None = None, on_event: Event | None = None, forked: bool = False
) -> AttemptResult:
    """Run one attempt of ``spec.task`` and return its results line and trajectory; never raises for the task's
    own failures (a workspace that cannot be made, a setup that fails, an agent that crashes are results).
    *forked*: start the agent from the fork server (:mod:`fsm.batch.launch`), not as a new Python."""
    control = control or Control()
    task = Task.from_json(spec.task)
    out = Path(spec.out)
    workdir, task_dir = out / "work" / task.id, out / task.id
    env = dict(spec.env if spec.env is not None else os.environ)
    started = time.time()
    line: dict[str, Any] = {"id": task.id, "attempt": spec.attempt}
    result: dict[str, Any] | None = None
    trajectory = ""
    try:
        if workdir.exists():  # an attempt that died before: start again from the source
            shutil.rmtree(workdir)
        task_dir.mkdir(parents=True, exist_ok=True)
        base = prepare(workdir, source=task.workspace, base_commit=task.base_commit)
    except (OSError, WorkspaceError) as exc:
        result = _failure("error_during_execution", "workspace_error", f"workspace: {exc}")
        base = None
    if result is None and task.setup is not None:
        line["setup"] = run_shell(task.setup, workdir, _shell_env(env), control)
        if line["setup"]["exit_code"] != 0:
            result = _failure("error_during_execution", "setup_failed", f"setup exited {line['setup']['exit_code']}")
    if result is None and not control.stopping:
        db = task_dir / "sessions.db"
        result, code, stderr = _run_agent(
            _agent_argv(task, spec, workdir, db), env, str(workdir), control, on_event, forked=forked
        )
        if result is None:
            result = _failure("error_during_execution", "crashed", f"agentfsm exited {code}: {stderr.strip()}")
        trajectory = _trajectory(db, result.get("session_id"))
    if result is None:
        result = _failure("error_during_execution", "interrupted", "interrupted before the agent started")
    interrupted = control.stopping
    line.update({key: value for key, value in result.items() if key != "type"})
    if "setup" in line:  # after the result's keys, in the order things ran
        line["setup"] = line.pop("setup")
    if base is not None and not interrupted and task.verify is not None:
        line["verify"] = run_shell(task.verify, workdir, _shell_env(env), control)
    try:
        line["diff"] = patch(workdir, base) if base is not None else ""
    except WorkspaceError as exc:
        line["diff"] = ""
        line["diff_error"] = str(exc)
    line["started_at"] = round(started, 3)
    line["duration_s"] = round(time.time() - started, 3)
    return AttemptResult(line=line, trajectory=trajectory, interrupted=interrupted)
