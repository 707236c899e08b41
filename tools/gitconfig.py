"""A repository's own git configuration, neutralised for the git commands a tool runs in an untrusted workspace.

A repository's ``.git/config`` (and the files it includes) can make plain ``git status``, ``git diff`` or
``git log -p`` run a program of its choosing: ``core.fsmonitor``, ``diff.external``, ``core.pager``/``pager.*``,
``filter.*.clean|smudge|process``, ``diff.*.textconv|command``, ``core.hooksPath`` and ``.git/hooks``,
``core.sshCommand``, ``credential.helper``, ``gpg.program``, ``alias.*`` with ``!`` and more (:data:`NEUTRAL`).

:func:`git_overrides` returns environment variables for a tool's process that set each such key to a harmless
value: git's ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, which take command-line
precedence over every config file. Keys set in the repository's local (or worktree) configuration, includes
followed, are found by ``git config --list --show-scope --includes -z``, which only reads files; a few keys
(:data:`ALWAYS`) are overridden whether or not the repository sets them yet, so a repository created or edited
during the session, or a nested one, cannot use them either. After each neutral value the user's own values
of that key (system, global, their own ``GIT_CONFIG_*``) are given again, so their settings still apply.

Limits: per-name keys (``filter.NAME.*``, ``diff.NAME.textconv``, ``alias.NAME``) are found in the workspace's
repository when the call starts; a repository elsewhere, or a key added to the config by the same command, is
covered only for the :data:`ALWAYS` keys (writing ``.git/config`` is a protected-path write, which asks).
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ALWAYS", "NEUTRAL", "git_overrides", "is_git_override", "neutral_value"]

_EXTERNAL_DIFF = 'git --no-pager diff --no-ext-diff --no-index -- "$2" "$5" || : #'
"""An external diff command that prints git's own diff of the two files it is given (git runs it with the
shell and the path, old file, old hex, old mode, new file, ... as arguments)."""

NEUTRAL: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hookspath", "/dev/null"),
    ("diff.external", _EXTERNAL_DIFF),
    ("core.pager", "cat"),
    ("core.sshcommand", "ssh"),
    ("core.gitproxy", ""),
    ("core.askpass", ""),
    ("core.editor", "false"),
    ("core.alternaterefscommand", ""),
    ("sequence.editor", "false"),
    ("credential.helper", ""),
    ("credential.*.helper", ""),
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.ssh.defaultkeycommand", ""),
    ("pager.*", "false"),
    ("alias.*", ""),
    ("filter.*.clean", ""),
    ("filter.*.smudge", ""),
    ("filter.*.process", ""),
    ("filter.*.required", "false"),
    ("diff.*.textconv", "cat"),
    ("diff.*.command", _EXTERNAL_DIFF),
    ("merge.*.driver", "false"),
    ("interactive.difffilter", "cat"),
    ("remote.*.uploadpack", "git-upload-pack"),
    ("remote.*.receivepack", "git-receive-pack"),
    ("submodule.*.update", "checkout"),
    ("protocol.ext.allow", "never"),
    ("difftool.*.cmd", "false"),
    ("difftool.*.path", "false"),
    ("mergetool.*.cmd", "false"),
    ("mergetool.*.path", "false"),
    ("trailer.*.command", ""),
    ("trailer.*.cmd", ""),
    ("tar.*.command", "gzip -cn"),
    ("browser.*.cmd", "false"),
    ("browser.*.path", "false"),
    ("man.*.cmd", "false"),
    ("sendemail.smtpserver", ""),
    ("sendemail.*.smtpserver", ""),
    ("sendemail.tocmd", ""),
    ("sendemail.cccmd", ""),
)
"""Key pattern (lower case; ``*`` is a subsection) → the harmless value it gets."""
ALWAYS = ("core.fsmonitor", "core.hookspath", "core.pager", "credential.helper")
"""Keys overridden whether or not the repository sets them."""
_LOCAL_SCOPES = {"local", "worktree"}
_LIST_TIMEOUT = 10.0


def neutral_value(key: str) -> str | None:
    """The harmless value of config *key* (``filter.lfs.clean``), or None when it cannot run code."""
    lowered = key.lower()
    for pattern, value in NEUTRAL:
        if fnmatch.fnmatchcase(lowered, pattern):
            return value
    return None


def _entries(root: Path, env: Mapping[str, str]) -> list[tuple[str, str, str]] | None:
    """(scope, key, value) of every config entry git sees in *root*; None when git cannot say."""
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "config", "--list", "--show-scope", "--includes", "-z"],
            cwd=root,
            env={**env, "GIT_TERMINAL_PROMPT": "0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_LIST_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries = []
    for scope, item in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = item.partition("\n")
        entries.append((scope, key, value))
    return entries


def git_overrides(root: Path, env: Mapping[str, str]) -> dict[str, str]:
    """``GIT_CONFIG_*`` variables to add to *env* (a tool's environment) so that no git command run in *root*
    runs a program the repository's configuration names; the user's own ``GIT_CONFIG_COUNT`` entries are kept."""
    entries = _entries(root, env) or []
    keys: dict[str, None] = dict.fromkeys(ALWAYS)
    for scope, key, _ in entries:
        if scope in _LOCAL_SCOPES and neutral_value(key) is not None:
            keys.setdefault(key, None)
    pairs: list[tuple[str, str]] = []
    for key in keys:
        neutral = neutral_value(key)
        assert neutral is not None  # every key kept names one
        pairs.append((key, neutral))
        pairs += [(k, v) for scope, k, v in entries if k.lower() == key.lower() and scope not in _LOCAL_SCOPES]
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    overrides = {"GIT_CONFIG_COUNT": str(start + len(pairs))}
    for n, (key, value) in enumerate(pairs, start):
        overrides[f"GIT_CONFIG_KEY_{n}"] = key
        overrides[f"GIT_CONFIG_VALUE_{n}"] = value
    return overrides


def is_git_override(name: str) -> bool:
    """Whether environment variable *name* is one :func:`git_overrides` sets (the sandbox must pass them on)."""
    return name == "GIT_CONFIG_COUNT" or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
