"""Record the real Claude Code's verdict on every conformance case: ``python -m tests.fsm.policy.conformance.record``.

For each group of cases (same mode and rules; a case marked ``solo`` alone) the recorder builds a fresh
workspace and home (``template.build``), writes the rules to a settings file beside them, starts the loopback
fake model (``tests/e2e/fake_server.py``) and runs
``claude -p --output-format stream-json --verbose --permission-mode MODE --settings FILE`` inside bubblewrap
(the host file system read-only, only the run directory writable, a private ``/tmp``, its own user — uid
1000, as Claude Code refuses ``bypassPermissions`` to root —, pid, uts and ipc namespaces, no capabilities;
the network is shared so it reaches 127.0.0.1). The fake model asks for one tool call per turn — the case's
Bash command, or a Read of the file and then the case's Write/Edit — and ends the run with text after the
last. Claude Code's verdict is read from the tool_result it streams back (:func:`verdict_of`): the command
ran (allow), "requested permissions" (ask: headless, nobody can answer), "denied" (deny). Claude Code 2.1.x
in ``-p`` mode sends the model nothing else (no title or prefix-detection requests); any request without
the Bash tool gets a short text answer all the same.

Commands Claude Code allows really run, so every case is harmless by construction (sentinel files, a
look-alike ``scripts/git``), and the bubblewrap jail holds even if one is not. Writes the cases with
``verdict``, ``message`` and ``claude_code`` (the version) to ``corpus.jsonl`` (``--holdout``: ``holdout.jsonl``,
``--holdout2``: ``holdout2.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.policy.conformance import template

__all__ = ["HERE", "claude_binary", "claude_version", "group", "main", "record", "verdict_of"]

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 300.0
"""Seconds one claude run may take."""
COMMAND_TIMEOUT_MS = 15000
"""Claude Code's own limit on one Bash command (``BASH_DEFAULT_TIMEOUT_MS``)."""
CHUNK = 25
"""Cases per claude run at most."""

_RAN = ("Exit code ", "Command timed out")
"""How a tool_result starts when the command ran and failed (the stream's ``tool_use_result`` is then text)."""
_DENY = re.compile(r"Permission to use .* has been denied|has been denied|denied by|is denied|not allowed in")
_SENSITIVE = re.compile(r"requested permissions|sensitive file")


def claude_binary() -> str | None:
    """The ``claude`` to record with: ``$CLAUDE_BIN``, ``/work/cc/node_modules/.bin/claude``, or on PATH."""
    for candidate in (os.environ.get("CLAUDE_BIN"), "/work/cc/node_modules/.bin/claude", shutil.which("claude")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def claude_version(binary: str) -> str:
    """``2.1.197`` of ``2.1.197 (Claude Code)``."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.split()[0] if out.split() else "unknown"


def verdict_of(content: str, ran: bool) -> str:
    """Claude Code's verdict on one call: ``allow`` when the tool ran (the stream's ``tool_use_result`` is the
    tool's output object, not an ``Error: …`` string), ``deny`` when the result says a rule or the mode denied
    it, ``invalid`` when the tool refused its input before judging it (``<tool_use_error>File has not been
    read yet``: the case needs fixing), else ``ask``: headless, an unanswered question comes back as its
    reason ("This command requires approval", "Contains command_substitution", "… was blocked. For security
    …", "requested permissions …")."""
    if ran:
        return "allow"
    if _DENY.search(content):
        return "deny"
    if "<tool_use_error>" in content and not _SENSITIVE.search(content):
        return "invalid"  # the tool refused its input before any permission check: fix the case
    return "ask"


def group(cases: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Runs of cases: same mode and rules together (at most :data:`CHUNK`), each ``solo`` case alone."""
    groups: dict[str, list[dict[str, Any]]] = {}
    runs: list[list[dict[str, Any]]] = []
    for case in cases:
        if case.get("solo"):
            runs.append([case])
            continue
        key = json.dumps([case["mode"], case.get("allow", []), case.get("ask", []), case.get("deny", [])])
        groups.setdefault(key, []).append(case)
    for members in groups.values():
        runs.extend(members[i : i + CHUNK] for i in range(0, len(members), CHUNK))
    return runs


def _absolute(path: str, ws: Path, home: Path) -> str:
    if path.startswith("~/"):
        return str(home / path[2:])
    return path if path.startswith("/") else str(ws / path)


def _turns(cases: list[dict[str, Any]], ws: Path, home: Path) -> list[tuple[dict[str, Any], str | None]]:
    """The tool calls the fake model makes, in order, each with the id of the case it judges (None: a Read)."""
    turns: list[tuple[dict[str, Any], str | None]] = []
    for case in cases:
        tool = case.get("tool", "Bash")
        if tool == "Bash":
            turns.append(({"name": "Bash", "input": {"command": case["command"], "description": "run"}}, case["id"]))
            continue
        path = _absolute(case["path"], ws, home)
        turns.append(({"name": "Read", "input": {"file_path": path}}, None))
        if tool == "Write":
            turns.append(({"name": "Write", "input": {"file_path": path, "content": case["content"]}}, case["id"]))
        else:
            edit = {"file_path": path, "old_string": case["old"], "new_string": case["new"]}
            turns.append(({"name": "Edit", "input": edit}, case["id"]))
    return turns


def _model(turns: list[tuple[dict[str, Any], str | None]]) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if "Bash" not in [t.get("name") for t in body.get("tools", [])]:
            return {"content": [{"type": "text", "text": "Conformance run"}]}
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if done >= len(turns):
            return {"content": [{"type": "text", "text": "done"}]}
        call, _ = turns[done]
        block = {"type": "tool_use", "id": f"toolu_{done:04d}", **call}
        return {"content": [block], "stop_reason": "tool_use"}

    return reply


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _jail(run: Path, ws: Path, binary: str) -> list[str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("record: bubblewrap (bwrap) is not installed; the recorder runs claude only inside it")
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--bind", str(run), str(run),
        "--unshare-user", "--uid", "1000", "--gid", "1000",  # claude refuses bypassPermissions as root
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-ipc",
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--chdir", str(ws),
        binary,
    ]  # fmt: skip


def record(cases: list[dict[str, Any]], binary: str, version: str, base: Path) -> list[dict[str, Any]]:
    """Run one claude process on *cases* (one group) in a fresh run directory under *base*; the cases with
    their verdicts."""
    run = Path(tempfile.mkdtemp(prefix="run-", dir=base))
    ws, home = template.build(run)
    settings = run / "settings.json"
    rules = {k: cases[0].get(k, []) for k in ("allow", "ask", "deny")}
    settings.write_text(json.dumps({"permissions": rules}))
    turns = _turns(cases, ws, home)
    with FakeAnthropic(script=[_model(turns)] * (len(turns) + 20)) as fake:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "BASH_DEFAULT_TIMEOUT_MS": str(COMMAND_TIMEOUT_MS),
            "DISABLE_AUTOUPDATER": "1",
        }
        argv = [
            *_jail(run, ws, binary),
            "-p",
            "Run the conformance cases.",
            "--output-format", "stream-json",
            "--verbose",
            "--permission-mode", cases[0]["mode"],
            "--settings", str(settings),
        ]  # fmt: skip
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=ws)
    results: dict[str, tuple[str, bool]] = {}  # tool_use id -> (the tool_result's text, whether the tool ran)
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") != "user":
            continue
        for block in event.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = _text(block.get("content"))
                ran = isinstance(event.get("tool_use_result"), dict) or text.startswith(_RAN)
                results[block["tool_use_id"]] = (text, ran)
    out = []
    for n, (_, case_id) in enumerate(turns):
        if case_id is None:
            continue
        case = next(c for c in cases if c["id"] == case_id)
        content, ran = results.get(f"toolu_{n:04d}", (f"no tool_result (claude exit {proc.returncode}: "
                                                          f"{proc.stderr.strip()[-300:]})", False))  # fmt: skip
        verdict = verdict_of(content, ran) if f"toolu_{n:04d}" in results else "missing"
        shown = content.replace(str(ws), "<ws>").replace(str(home), "<home>").replace(str(run), "<run>")
        out.append({**case, "verdict": verdict, "message": shown[:400], "claude_code": version})
    shutil.rmtree(run, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--holdout", action="store_true", help="record the hold-out corpus instead of the main one")
    parser.add_argument("--holdout2", action="store_true", help="record the second hold-out corpus")
    parser.add_argument("--only", default="", help="record only the cases whose id starts with this")
    parser.add_argument("--missing", action="store_true", help="record only the cases the output does not hold yet")
    parser.add_argument("--out", help="write here instead of corpus.jsonl / holdout.jsonl")
    args = parser.parse_args(argv)
    binary = claude_binary()
    if binary is None:
        print("record: claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
        return 2
    if args.holdout2:
        from tests.fsm.policy.conformance.holdout2_cases import CASES
    elif args.holdout:
        from tests.fsm.policy.conformance.holdout_cases import CASES
    else:
        from tests.fsm.policy.conformance.cases import CASES
    name = "holdout2.jsonl" if args.holdout2 else "holdout.jsonl" if args.holdout else "corpus.jsonl"
    out = Path(args.out) if args.out else HERE / name
    previous = {}
    if out.exists():
        previous = {c["id"]: c for c in map(json.loads, out.read_text().splitlines()) if c}
    chosen = [c for c in CASES if c["id"].startswith(args.only) and not (args.missing and c["id"] in previous)]
    version = claude_version(binary)
    recorded: dict[str, dict[str, Any]] = {}
    base = Path(tempfile.mkdtemp(prefix="agentfsm-conformance-"))
    start = time.monotonic()
    runs = group(chosen)
    for n, cases in enumerate(runs, 1):
        for case in record(cases, binary, version, base):
            recorded[case["id"]] = case
        print(f"record: run {n}/{len(runs)} ({len(recorded)} cases, {time.monotonic() - start:.0f} s)", file=sys.stderr)
    shutil.rmtree(base, ignore_errors=True)
    rows = [recorded.get(c["id"]) or previous.get(c["id"]) for c in CASES]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows if r))
    counts: dict[str, int] = {}
    for case in recorded.values():
        counts[case["verdict"]] = counts.get(case["verdict"], 0) + 1
    print(f"record: {len(recorded)} cases with claude {version}: {counts} -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
