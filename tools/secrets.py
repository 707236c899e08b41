"""Credentials out of the tools' reach: taken from the process once, kept out of tool environments, redacted.

:func:`take_secrets` is called once at startup, before any tool runs. It reads the credential variables
(:data:`SECRET_VARS`), removes them from ``os.environ`` (and so from the C ``environ`` the process would
hand to a child) and **overwrites them in the process's initial environment block** — the memory that
``/proc/PID/environ`` shows, which keeps the variables the process was started with whatever the process
does to its environment later. So no process a tool starts finds the key in ``env``,
``/proc/$PPID/environ`` or any ``/proc/*/environ``. The caller keeps the values (the model client gets them
as arguments) and they are registered for :func:`redact`.

:func:`tool_environment` is what a tool's command starts with: this process's environment without any
``ANTHROPIC_*`` variable (the SDK's credentials, ``ANTHROPIC_CUSTOM_HEADERS``, base URL and all).
:func:`redact` replaces every exact occurrence of a taken value (8 characters or longer) with
``[REDACTED]``; the tool runner applies it to every result before it is recorded or sent.

What this does not do: a command running as the same user can still read agentfsm's memory where the
kernel lets it ptrace (root can); the sandbox (``tools/sandbox.py``) hides agentfsm's processes entirely.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

__all__ = [
    "REDACTED",
    "SECRET_VARS",
    "redact",
    "register_secret",
    "scrub_initial_environ",
    "take_secrets",
    "tool_environment",
]

SECRET_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_WEBHOOK_SIGNING_KEY",
)
"""The variables that carry credentials (the SDK reads each of them)."""
TOOL_ENV_DROPPED_PREFIX = "ANTHROPIC_"
REDACTED = "[REDACTED]"
MIN_REDACTED = 8
"""Shorter values are not redacted: a 4-letter test key would blank every 'test' in a tool's output."""

_secrets: set[str] = set()
_taken: dict[str, str] = {}
"""What :func:`take_secrets` has taken from this process so far."""
_lock = threading.Lock()


def register_secret(value: str) -> None:
    """Redact *value* (and each line of it, for a multi-line header block) from tool results from now on."""
    with _lock:
        for part in (value, *value.splitlines(), *(line.partition(":")[2].strip() for line in value.splitlines())):
            if len(part) >= MIN_REDACTED:
                _secrets.add(part)


def redact(text: str) -> str:
    """*text* with every exact occurrence of a registered secret replaced by :data:`REDACTED`."""
    with _lock:
        found = [s for s in _secrets if s in text]
    for secret in sorted(found, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def tool_environment() -> dict[str, str]:
    """This process's environment without any ``ANTHROPIC_*`` variable: what a tool's command starts with."""
    return {k: v for k, v in os.environ.items() if not k.startswith(TOOL_ENV_DROPPED_PREFIX)}


def take_secrets(names: tuple[str, ...] = SECRET_VARS) -> dict[str, str]:
    """Remove the credential variables *names* from this process and return their values.

    Each value is registered for :func:`redact`, dropped from ``os.environ`` and overwritten in the initial
    environment block (:func:`scrub_initial_environ`). Call it before any tool runs; a later call returns
    what earlier ones took too (a variable set since then wins).
    """
    found = {name: os.environ[name] for name in names if os.environ.get(name)}
    for name in names:
        os.environ.pop(name, None)  # unsetenv: the C environ forgets it too
    for value in found.values():
        register_secret(value)
    scrub_initial_environ(names)
    with _lock:
        _taken.update(found)
        return {name: _taken[name] for name in names if name in _taken}


def scrub_initial_environ(names: tuple[str, ...]) -> int:
    """Overwrite ``NAME=value`` of each of *names* in the initial environment block with NUL bytes.

    That block (``env_start``..``env_end`` in ``/proc/self/stat``) is what ``/proc/PID/environ`` reads; it
    lives on the main thread's stack, writable. Returns how many entries were wiped (0 off Linux).
    """
    if not sys.platform.startswith("linux"):
        return 0
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # fields 50 and 51: env_start, env_end
    except (OSError, ValueError, IndexError):
        return 0
    if not 0 < start < end:
        return 0
    block = ctypes.string_at(start, end - start)
    wiped, offset = 0, 0
    for entry in block.split(b"\0"):
        name = entry.partition(b"=")[0].decode("utf-8", "replace")
        if name in names and b"=" in entry:
            ctypes.memset(start + offset, 0, len(entry))
            wiped += 1
        offset += len(entry) + 1
    return wiped
