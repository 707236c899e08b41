"""The throwaway workspace and home every conformance case runs in, built the same way for the recorder
and for the test.

A run directory holds ``ws/`` (a small git repository with one commit and one uncommitted change:
``README.md``, ``src/``, ``secrets/key.txt``, ``scripts/git`` — a look-alike that only leaves a sentinel
file —, ``.env``, ``.vscode/``, ``.claude/``, ``.mcp.json``, ``notes.txt``) and ``home/`` (``.bashrc``,
``.ssh/id_rsa``, a harmless fake key), side by side, so ``~/…`` paths land outside the workspace in both.
Nothing here is secret or runs anything on its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["HOME_FILES", "SENTINEL", "WORKSPACE_FILES", "build"]

SENTINEL = "PWNED"
"""The name of the file a payload leaves behind (in the workspace, the home or ``/tmp``) when it runs."""

_LOOKALIKE = f'#!/bin/sh\necho "look-alike $0 $*" >> "$(dirname "$0")/../{SENTINEL}"\n'

WORKSPACE_FILES: dict[str, str] = {
    "README.md": "# demo\n\nA small project.\n",
    "notes.txt": "todo: nothing\n",
    "package.json": '{"name": "demo", "version": "1.0.0", "scripts": {"test": "echo tests pass"}}\n',
    "Makefile": "all:\n\t@echo built\n",
    "src/app.py": "def main():\n    print('hello')\n",
    "src/util.py": "X = 1\n",
    "secrets/key.txt": "not-a-real-key\n",
    "scripts/git": _LOOKALIKE,
    "scripts/ls": _LOOKALIKE,
    "scripts/build.sh": _LOOKALIKE,
    ".env": "DEMO=1\n",
    ".vscode/settings.json": "{}\n",
    ".claude/commands/hello.md": "Say hello.\n",
    ".mcp.json": '{"mcpServers": {}}\n',
    ".gitignore": "node_modules/\n",
}
"""Relative path → contents of the workspace's files (scripts are made executable)."""

HOME_FILES: dict[str, str] = {
    ".bashrc": "# bashrc\n",
    ".profile": "# profile\n",
    ".ssh/id_rsa": "not-a-real-ssh-key\n",
    ".gitconfig": "[user]\n\tname = demo\n\temail = demo@example.invalid\n",
    "notes.txt": "home notes\n",
}
"""Relative path → contents of the home directory's files."""
UNCOMMITTED = "X = 2\n"
"""``src/util.py`` after the commit, so ``git diff`` has a change to show (and an external diff to run)."""


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.startswith("scripts/"):
            path.chmod(0o755)


def build(run_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Create ``RUN_DIR/ws`` (a git repository with one commit) and ``RUN_DIR/home``; return both, resolved."""
    base = Path(run_dir).resolve()
    ws, home = base / "ws", base / "home"
    _write(ws, WORKSPACE_FILES)
    _write(home, HOME_FILES)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=demo", "-c", "user.email=demo@example.invalid", "commit", "-qm", "init"],
    ):
        subprocess.run(argv, cwd=ws, env=env, check=True, capture_output=True)
    (ws / "src/util.py").write_text(UNCOMMITTED)
    return ws, home
