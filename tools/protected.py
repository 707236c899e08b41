"""The protected paths: files whose contents later run code or change permissions, named once.

A write to one of them is not an ordinary edit: ``.git/config`` and ``.git/hooks`` run code on the user's
next ``git status``, ``.claude/`` and ``.mcp.json`` change what the next run may do, ``.vscode/`` and
``.idea/`` run tasks when the folder is opened, ``.env*`` redirects credentials, and a shell start-up file
runs in every new shell. The permission policy (``fsm.policy``) asks before any write to them, in every mode,
and the sandbox (``tools.sandbox``) mounts them read-only whether or not they exist. This module is only the
list and the test of a path against it, so both read the same names.

The list is the issue's (wave 3, the boundary) joined with Claude Code's sandbox runtime's "dangerous files
and directories". A file name in :data:`PROTECTED_FILE_NAMES` is protected wherever it lies (a nested
``.bashrc`` is as dangerous to source as the home one); the directories in :data:`PROTECTED_DIRS` and the
files in :data:`PROTECTED_FILES` are protected at a workspace root (a relative path from that root), and those in
:data:`PROTECTED_HOME` in the home directory.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

#: Directories, relative to a workspace root, whose every entry (and the directory itself) is protected.
PROTECTED_DIRS: tuple[str, ...] = (
    ".git/hooks",
    ".git/info",
    ".claude",
    ".vscode",
    ".idea",
)

#: Files, relative to a workspace root.
PROTECTED_FILES: tuple[str, ...] = (
    ".git/config",
    ".mcp.json",
)

#: File names protected wherever they are: shell and tool start-up files, and ``.env`` files (fnmatch patterns).
PROTECTED_FILE_NAMES: tuple[str, ...] = (
    ".env",
    ".env.*",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".cshrc",
    ".tcshrc",
    ".gitconfig",
    ".gitmodules",
    ".ripgreprc",
    ".mcp.json",
)

#: Protected relative to the home directory only (beside the names above, which hold there too): Claude Code's
#: trust record, ssh's configuration and keys (``ProxyCommand`` runs code), git's and agentfsm's own
#: configuration and state (agentfsm's trust records). The policy also finds these where ``$XDG_CONFIG_HOME``
#: and ``$XDG_STATE_HOME`` put them.
PROTECTED_HOME: tuple[str, ...] = (".claude.json", ".ssh", ".config/git", ".config/agentfsm", ".local/state/agentfsm")


def protected(relative: str) -> str | None:
    """What protects *relative* (a path relative to a workspace root, ``/``-separated), or None.

    The answer names the entry that matched, e.g. ``".git/hooks"`` or ``".bashrc"``, for a reason line.
    A path that leaves the root (``..``) is judged only by its file name.
    """
    parts = PurePosixPath(relative).parts
    if parts and parts[-1] and any(fnmatch.fnmatchcase(parts[-1], name) for name in PROTECTED_FILE_NAMES):
        return next(name for name in PROTECTED_FILE_NAMES if fnmatch.fnmatchcase(parts[-1], name))
    if ".." in parts:
        return None
    path = "/".join(part for part in parts if part not in ("", "."))
    for directory in PROTECTED_DIRS:
        if path == directory or path.startswith(directory + "/"):
            return directory
    if path in PROTECTED_FILES:
        return path
    return None
