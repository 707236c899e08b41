"""What a tool's process inherits: the user's environment, without our credentials or anything a repository set.

Credentials are taken from the process once, kept out of tool environments, and redacted.

:func:`take_secrets` is called once at startup, before any tool runs. It reads the credential variables
(:data:`SECRET_VARS`), removes them from ``os.environ`` (and so from the C ``environ`` the process would
hand to a child) and **overwrites them in the process's initial environment block** — the memory that
``/proc/PID/environ`` shows, which keeps the variables the process was started with whatever the process
does to its environment later. So no process a tool starts finds the key in ``env``,
``/proc/$PPID/environ`` or any ``/proc/*/environ``. The caller keeps the values (the model client gets them
as arguments) and they are registered for :func:`redact`.

:func:`take_secrets` also turns ``PR_SET_DUMPABLE`` off (Linux): ``/proc/PID/mem``, ``environ`` and ptrace of
agentfsm are then closed to other processes of the same user (root can still read them); a program a tool
starts is dumpable again (``execve`` resets it), so tools are unaffected.

:func:`tool_environment` is what a tool's command starts with: this process's environment without any
``ANTHROPIC_*`` variable (the SDK's credentials, ``ANTHROPIC_CUSTOM_HEADERS``, base URL and all) and without
the variables a workspace's ``.env`` set (:func:`withhold`). For a workspace that is not trusted
(:func:`distrust`), git's configuration overrides of ``tools.gitconfig`` are added, so the repository's own
git configuration cannot run code in a tool's git commands. :func:`is_endpoint` and :func:`is_hijack` name
the variables a repository must not set for us (endpoint and credentials) or for any program we start
(``LD_PRELOAD``, ``GIT_*``, ``PATH``, ...).
:func:`redact` replaces every exact occurrence of a taken value (8 characters or longer) with
``[REDACTED]``; the tool runner applies it to every result before it is recorded or sent.

What this does not do: root can still read agentfsm's memory; redaction is an exact-occurrence filter (an
encoded or split key passes), not a boundary; the sandbox (``tools/sandbox.py``) hides agentfsm's processes
entirely.
"""

from __future__ import annotations

import ctypes
import fnmatch
import os
import sys
import threading
from pathlib import Path

from tools.gitconfig import git_overrides

__all__ = [
    "ENDPOINT_VARS",
    "HIJACK_VARS",
    "REDACTED",
    "SECRET_VARS",
    "distrust",
    "is_endpoint",
    "is_hijack",
    "redact",
    "register_secret",
    "scrub_initial_environ",
    "take_secrets",
    "tool_environment",
    "undumpable",
    "withhold",
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

ENDPOINT_VARS = (
    "ANTHROPIC_*",
    "CLAUDE_CODE_*",
    "*_BASE_URL",
    "*_PROXY",
    "SSL_CERT_*",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "SSLKEYLOGFILE",
    "NETRC",
    "AWS_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUD_ML_REGION",
    "MODEL_ID",
)
"""Patterns (upper-cased names) of the variables that choose the model endpoint, its credentials or model."""
HIJACK_VARS = (
    "GIT_*",
    "LD_*",
    "DYLD_*",
    "BASH_ENV",
    "ENV",
    "BASHOPTS",
    "SHELLOPTS",
    "PROMPT_COMMAND",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "ZDOTDIR",
    "PATH",
    "HOME",
    "XDG_*",
    "SHELL",
    "TMPDIR",
    "PYTHON*",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "SSH_AUTH_SOCK",
    "NPM_CONFIG_*",
    "PIP_*",
    "AGENTFSM_*",
    "OPENSSL_*",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "RES_OPTIONS",
    "TERMINFO",
    "TERMINFO_DIRS",
)
"""Patterns (upper-cased names) of the variables that make a program we start run other code or look elsewhere."""

_secrets: set[str] = set()
_taken: dict[str, str] = {}
"""What :func:`take_secrets` has taken from this process so far."""
_withheld: set[str] = set()
"""Variables a workspace's ``.env`` set in this process: never passed to a tool."""
_untrusted: set[Path] = set()
"""Workspaces (real paths) whose git configuration is neutralised in tool processes."""
_lock = threading.Lock()
_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name.upper(), pattern) for pattern in patterns)


def is_endpoint(name: str) -> bool:
    """Whether variable *name* chooses the model's endpoint, credentials or model (:data:`ENDPOINT_VARS`)."""
    return _matches(name, ENDPOINT_VARS)


def is_hijack(name: str) -> bool:
    """Whether variable *name* can make a program run other code or use other files (:data:`HIJACK_VARS`)."""
    return _matches(name, HIJACK_VARS)


def withhold(names: set[str] | frozenset[str] | list[str]) -> None:
    """Keep the variables *names* (set in this process by a workspace's ``.env``) out of every tool's environment."""
    with _lock:
        _withheld.update(names)


def distrust(root: str | os.PathLike[str]) -> None:
    """Neutralise the git configuration of the repository at *root* (an untrusted workspace) for tool commands."""
    with _lock:
        _untrusted.add(Path(root).resolve())


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


def tool_environment(root: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """What a tool's command in workspace *root* starts with: this process's environment without any
    ``ANTHROPIC_*`` variable or one a workspace's ``.env`` set, plus git's configuration overrides when *root*
    is not trusted (:func:`distrust`)."""
    with _lock:
        withheld, untrusted = set(_withheld), root is not None and Path(root).resolve() in _untrusted
    env = {k: v for k, v in os.environ.items() if not k.startswith(TOOL_ENV_DROPPED_PREFIX) and k not in withheld}
    if untrusted and root is not None:
        env.update(git_overrides(Path(root), env))
    return env


def take_secrets(names: tuple[str, ...] = SECRET_VARS) -> dict[str, str]:
    """Remove the credential variables *names* from this process and return their values.

    Each value is registered for :func:`redact`, dropped from ``os.environ`` and overwritten in the initial
    environment block (:func:`scrub_initial_environ`); the process is made non-dumpable (:func:`undumpable`).
    Call it before any tool runs; a later call returns what earlier ones took too (a variable set since then
    wins).
    """
    found = {name: os.environ[name] for name in names if os.environ.get(name)}
    for name in names:
        os.environ.pop(name, None)  # unsetenv: the C environ forgets it too
    for value in found.values():
        register_secret(value)
    scrub_initial_environ(names)
    undumpable()
    with _lock:
        _taken.update(found)
        return {name: _taken[name] for name in names if name in _taken}


def undumpable() -> bool:
    """Turn ``PR_SET_DUMPABLE`` off for this process (Linux); whether it is off now (False elsewhere)."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return int(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0


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
