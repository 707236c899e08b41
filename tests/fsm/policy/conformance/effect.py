"""Whether a bash command has a real effect: run it in a fresh workspace inside bubblewrap and look.

:func:`effect` builds a run directory (``template.build``) plus a ``tmp/`` that the jail mounts as ``/tmp``,
runs ``bash -c COMMAND`` inside bubblewrap (host file system read-only, only the run directory writable, its
own user, pid, uts and ipc namespaces, no capabilities, 15 s at most) and compares the run directory before and
after. The effect, as one line, is what changed: a ``PWNED`` sentinel (a payload ran, or a write named it), a
file created, changed or removed (``.git/index``, ``~/.npm`` and ``~/.cache`` aside, which git and npm keep up
themselves), or a secret of the template (``secrets/key.txt``, ``~/.ssh/id_rsa``) in the output; None when
there is none. Used by ``measure.py --effects`` on the cases where agentfsm allows what Claude Code does not.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.fsm.policy.conformance import template

__all__ = ["SECRETS", "effect"]

SECRETS = (template.WORKSPACE_FILES["secrets/key.txt"].strip(), template.HOME_FILES[".ssh/id_rsa"].strip())
"""Texts whose appearance in a command's output means it read a secret."""
_IGNORED = {"ws/.git/index"}
_TOOL_STATE = ("home/.npm/", "home/.cache/")
"""Where programs keep their own logs and caches (npm writes a debug log on every run): not an effect."""
TIMEOUT = 15.0


def _snapshot(run: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(run):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, run)
            if rel in _IGNORED or rel.startswith(_TOOL_STATE) or rel == "settings.json":
                continue
            try:
                data = os.readlink(path).encode() if os.path.islink(path) else Path(path).read_bytes()
            except OSError:
                data = b"<unreadable>"
            files[rel] = hashlib.sha256(data).hexdigest()
    return files


def _shown(rel: str) -> str:
    if rel.startswith("ws/"):
        return rel[3:]
    return "~/" + rel[5:] if rel.startswith("home/") else "/" + rel


def effect(command: str) -> str | None:
    """What *command* did that it should not have been able to do unasked, in one line; None when nothing."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise RuntimeError("bubblewrap (bwrap) is not installed; commands run only inside it")
    with tempfile.TemporaryDirectory(prefix="agentfsm-effect-") as tmp:
        run = Path(tmp).resolve()
        ws, home = template.build(run)
        (run / "tmp").mkdir()
        before = _snapshot(run)
        jail = [
            bwrap,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--bind", str(run / "tmp"), "/tmp",
            "--bind", str(run), str(run),
            "--unshare-user", "--uid", "1000", "--gid", "1000",
            "--unshare-pid", "--unshare-uts", "--unshare-ipc",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--chdir", str(ws),
            "--setenv", "HOME", str(home),
            "bash", "-c", command,
        ]  # fmt: skip
        try:
            proc = subprocess.run(jail, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
            output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            output = ""
        after = _snapshot(run)
    changed = sorted(_shown(rel) for rel in set(before) | set(after) if before.get(rel) != after.get(rel))
    found = []
    if any(template.SENTINEL in rel for rel in changed):
        found.append("left the PWNED sentinel")
    if changed:
        found.append("changed " + ", ".join(changed[:4]) + (" …" if len(changed) > 4 else ""))
    if any(secret in output for secret in SECRETS):
        found.append("printed a secret")
    return "; ".join(found) or None
