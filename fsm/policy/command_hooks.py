"""Command hooks, Claude Code's shape: a shell command gets the event as JSON on stdin and answers.

A settings file's ``{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command",
"command": "…", "timeout": 60}]}]}}`` becomes one :class:`CommandHook` per command, registered beside the
Python hooks (:func:`install`). The command runs with ``/bin/sh -c`` in the workspace, with
``$CLAUDE_PROJECT_DIR`` set, and reads one JSON object, Claude Code's hook input (:mod:`fsm.policy.hook_input`:
``session_id``, ``transcript_path``, ``cwd``, ``prompt_id``, ``permission_mode``, ``hook_event_name``, and per
event ``tool_name``, ``tool_input``, ``tool_use_id``, ``tool_response``, ``duration_ms``, ``prompt``,
``stop_hook_active``, ``last_assistant_message``, ``agent_id``/``agent_type`` inside a subagent). Its answer:

- exit 0: proceed; stdout, when it is a JSON object, may hold ``hookSpecificOutput.permissionDecision``
  (``allow``/``deny``/``ask``) with ``permissionDecisionReason``, ``decision: "block"`` with ``reason``,
  ``continue: false`` with ``stopReason`` (a PreToolUse call is denied with it; a Stop hook's run ends),
  ``hookSpecificOutput.additionalContext`` and ``systemMessage``. Plain stdout of a UserPromptSubmit hook
  is added to the prompt.
- exit 2: block. stderr goes to the model: a PreToolUse call is denied with it; for Stop/SubagentStop the
  agent goes on with it; for PostToolUse the model reads it as the hook's blocking error, in a context block
  after the tool results (the tool_result itself is left alone). A PreCompact hook blocks the compaction. A
  UserPromptSubmit hook's exit 2 (or its ``decision: "block"``) stops the prompt
  (:class:`~fsm.policy.hooks.PromptBlock`).
  (PreCompact and SessionStart: exit 0's plain stdout is added to the summary's instructions, or to the new
  history; their matcher selects ``trigger`` / ``source``.)
- any other exit: a non-blocking error, shown as a notice.

A command that outlives its ``timeout`` is killed with its process group and raises :class:`HookTimeout`
(so a PreToolUse hook denies: the chain fails closed).

An optional :data:`HookObserver` is told of each command that runs, in Claude Code's ``--include-hook-events``
shape: ``("hook_started", {"hook_id", "hook_name", "hook_event"})`` before it, ``("hook_response", {…, "output",
"stdout", "stderr", "exit_code", "outcome"})`` after it (``outcome``: ``success`` for exit 0, else ``error``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsm.policy.hook_input import hook_input
from fsm.policy.hooks import Allow, Ask, BlockingError, Decision, Deny, HookEvent, Hooks, Notice, PromptBlock
from fsm.policy.rules import claude_name
from fsm.policy.settings import HookCommand, Settings

__all__ = ["CommandHook", "HookObserver", "HookTimeout", "answer", "hook_input", "install"]

HookObserver = Callable[[str, dict[str, Any]], None]
"""Told ``(subtype, fields)`` as each command hook starts and ends (see the module docstring)."""

_TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})


class HookTimeout(RuntimeError):
    """A command hook ran past its timeout and was killed."""


class CommandHook:
    """One command of a settings file's ``hooks``, callable as a hook of its event."""

    thread_safe = True
    """Called without the registry's lock (``fsm.policy.hooks``): it keeps no state, and its command runs in a
    process of its own, so subagents running at once may run their commands at once."""

    def __init__(
        self, spec: HookCommand, *, project: str | os.PathLike[str], observer: HookObserver | None = None
    ) -> None:
        self.spec = spec
        self.observer = observer
        self.project = str(Path(project).resolve())
        matcher = spec.matcher.strip()
        self._matcher = None if matcher in ("", "*") else re.compile(matcher)

    @property
    def hook_name(self) -> str:
        """The command, as notices and denials name the hook."""
        return self.spec.command

    def __repr__(self) -> str:
        return f"<CommandHook {self.spec.event} {self.spec.matcher!r} {self.spec.command!r}>"

    def matches(self, tool: str) -> bool:
        """Whether the matcher selects *tool* (our name or Claude Code's spelling, matched in full)."""
        if self._matcher is None:
            return True
        return any(self._matcher.fullmatch(name) for name in (tool, claude_name(tool)))

    def __call__(self, event: HookEvent) -> Decision:
        if event.name != self.spec.event:
            return None
        if (
            event.name in _TOOL_EVENTS
            and event.tool_call is not None
            and not self.matches(str(event.tool_call.get("name")))
        ):
            return None
        subject = {"PreCompact": event.trigger, "SessionStart": event.source}.get(event.name)
        if subject is not None and self._matcher is not None and not self._matcher.fullmatch(subject):
            return None
        code, stdout, stderr = self._observed(event, json.dumps(hook_input(event)))
        if code == 0:
            return answer(event.name, stdout, self.spec.command)
        if code == 2:
            text = stderr.strip() or f"blocked by hook {self.spec.command}"
            if event.name in ("PreToolUse", "PreCompact"):
                return Deny(text)
            if event.name == "PostToolUse":
                return BlockingError(text, self.spec.command)
            if event.name in ("Stop", "SubagentStop"):
                return text
            if event.name == "UserPromptSubmit":  # Claude Code quotes the command and its stderr, newline kept
                return PromptBlock(f"[{self.spec.command}]: {text}\n")
            return Notice(f"hook {self.spec.command}: {text}")
        first = (stderr.strip().splitlines() or [""])[0]
        return Notice(f"hook {self.spec.command} failed (exit {code}){': ' + first if first else ''}")

    def _observed(self, event: HookEvent, payload: str) -> tuple[int, str, str]:
        """Run the command, telling the observer (if any) as it starts and ends."""
        if self.observer is None:
            return self._run(payload, cwd=str(event.workspace.root))
        tool = event.tool_call.get("name") if event.name in _TOOL_EVENTS and event.tool_call else None
        name = f"{event.name}:{claude_name(str(tool))}" if tool else event.name
        if event.name == "SessionStart" and event.source:  # Claude Code's "SessionStart:startup"
            name = f"{event.name}:{event.source}"
        about = {"hook_id": str(uuid.uuid4()), "hook_name": name, "hook_event": event.name}
        self.observer("hook_started", about)
        code: int | None = None
        stdout = stderr = ""
        try:
            code, stdout, stderr = self._run(payload, cwd=str(event.workspace.root))
        except HookTimeout as exc:
            stderr = f"hook {self.spec.command} {exc}"
            raise
        finally:
            outcome = "success" if code == 0 else "error"
            ended = {"output": stdout + stderr, "stdout": stdout, "stderr": stderr, "exit_code": code}
            self.observer("hook_response", {**about, **ended, "outcome": outcome})
        return code, stdout, stderr

    def _run(self, payload: str, *, cwd: str) -> tuple[int, str, str]:
        env = {**os.environ, "CLAUDE_PROJECT_DIR": self.project}
        proc = subprocess.Popen(
            ["/bin/sh", "-c", self.spec.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(payload.encode(), timeout=self.spec.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise HookTimeout(f"timed out after {self.spec.timeout:g}s and was killed") from None
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def answer(event: str, stdout: str, command: str) -> Decision:
    """What an exit-0 hook's stdout means for *event*."""
    text = stdout.strip()
    try:
        data = json.loads(text) if text.startswith("{") else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        return text if event in ("UserPromptSubmit", "PreCompact", "SessionStart") and text else None
    # a lone surrogate ("\ud800") is valid JSON but no UTF-8 text: the journal could not store it; make it "?"
    data = json.loads(json.dumps(data, ensure_ascii=False).encode("utf-8", "replace"))
    found = data.get("hookSpecificOutput")
    specific: dict[str, Any] = found if isinstance(found, dict) else {}
    context = specific.get("additionalContext")
    reason = str(data.get("reason") or specific.get("permissionDecisionReason") or "")
    if data.get("continue") is False:
        stop = str(data.get("stopReason") or f"stopped by hook {command}")
        return Deny(stop) if event == "PreToolUse" else Notice(f"hook {command}: {stop}")
    if event == "PreToolUse":
        decision = specific.get("permissionDecision") or {"block": "deny", "approve": "allow"}.get(
            str(data.get("decision"))
        )
        if decision == "deny":
            return Deny(reason or f"denied by hook {command}")
        if decision == "ask":
            return Ask(reason or f"hook {command} asks for approval")
        if decision == "allow":
            return Allow(reason)
    elif data.get("decision") == "block" and event == "UserPromptSubmit":
        return PromptBlock(reason or f"blocked by hook {command}")
    elif data.get("decision") == "block" and event in ("Stop", "SubagentStop", "PostToolUse"):
        said = reason or f"blocked by hook {command}"
        return BlockingError(said, command) if event == "PostToolUse" else said
    if data.get("decision") == "block" and event == "PreCompact":
        return Deny(reason or f"blocked by hook {command}")
    if isinstance(context, str) and context.strip() and event in ("UserPromptSubmit", "PostToolUse", "SessionStart"):
        return context
    message = data.get("systemMessage")
    return Notice(f"hook {command}: {message}") if isinstance(message, str) and message else None


def install(
    hooks: Hooks, settings: Settings, *, project: str | os.PathLike[str], observer: HookObserver | None = None
) -> Hooks:
    """Register every command hook of *settings* on *hooks* (none when ``disableAllHooks``), each telling
    *observer* as it runs; returns *hooks*."""
    if settings.disable_all_hooks:
        return hooks
    for spec in settings.hooks:
        hooks.on(spec.event, CommandHook(spec, project=project, observer=observer))
    return hooks
