"""One contract scenario run by one harness: the fake model's replies in that harness's tool words, and the run.

A scenario's script is written once, in harness-neutral steps (:mod:`tests.e2e.contract.scenarios`); this module
turns each step into the reply the harness under test understands and runs the command. The two harnesses name
their tools differently on the wire (Claude Code 2.1.197 offers ``Bash``, ``Read``, ``Write``, ``Edit`` and
``Agent``; agentfsm offers ``bash``, ``read_file``, ``write_file``, ``edit_file`` and ``task``) and take different
input keys (``file_path``, absolute, and ``old_string`` for Claude Code; ``path``, relative to the workspace, and
``old_text`` for us): :func:`translate` maps a neutral call onto either.

The fake answers each request by where the conversation is, not by how many requests came before it: the main
agent's request gets step N of ``script`` when it holds N assistant messages, and a subagent's request (its first
user message holds :data:`SUBTASK`) gets step N of ``sub``. So a retried request gets the same answer again and
a harness that sends one more or one fewer request (a retry, a fallback) still gets the same conversation.

:func:`run` runs one scenario for one harness in a fresh directory (a workspace ``ws`` with the scenario's files
and an empty ``home``) and returns what a script sees: exit code, stdout, stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from attrs import frozen

from tests.e2e.fake_server import FakeAnthropic, Raw, Status

__all__ = ["SUBTASK", "Harness", "Output", "model", "run", "translate"]

Harness = Literal["claude", "agentfsm"]

SUBTASK = "SUBTASK:"
"""Starts the prompt of every subagent call a script makes, so the fake can tell a subagent's request apart."""

_NAMES: dict[Harness, dict[str, str]] = {
    "claude": {"Bash": "Bash", "Read": "Read", "Write": "Write", "Edit": "Edit", "Agent": "Agent", "Skill": "Skill"},
    "agentfsm": {
        "Bash": "bash",
        "Read": "read_file",
        "Write": "write_file",
        "Edit": "edit_file",
        "Agent": "task",
        "Skill": "Skill",
    },
}
CANONICAL = {ours: neutral for neutral, ours in _NAMES["agentfsm"].items()} | {"Task": "Agent"}
"""Any harness's tool name → the neutral (Claude Code) one, for comparing values that name tools."""

_OUR_KEYS = {"file_path": "path", "old_string": "old_text", "new_string": "new_text"}
RUN_TIMEOUT = 120.0
RETRIES = 2
"""API retries for both harnesses (agentfsm's default; Claude Code's is 10)."""


@frozen
class Output:
    """What a script sees of one run."""

    code: int
    stdout: str
    stderr: str


def translate(harness: Harness, call: dict[str, Any], ws: Path, call_id: str) -> dict[str, Any]:
    """The tool_use block for the neutral *call* (``{"call": "Read", "input": {"file_path": "a.txt"}}``) as
    *harness* names it: Claude Code's file paths absolute under *ws*, its Bash with a description; ours
    relative, with our key names."""
    name, given = call["call"], dict(call.get("input", {}))
    if harness == "claude":
        if "file_path" in given:
            given["file_path"] = str(ws / given["file_path"])
        if name == "Bash":
            given.setdefault("description", "run it")
        if name == "Agent":
            given.setdefault("description", "a subtask")
    else:
        given = {_OUR_KEYS.get(k, k): v for k, v in given.items() if k != "description"}
    return {"type": "tool_use", "id": call_id, "name": _NAMES[harness][name], "input": given}


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
    return ""


def _answer(step: dict[str, Any], harness: Harness, ws: Path, body: dict[str, Any], n: int) -> Any:
    """The fake's answer to one request for the neutral *step*."""
    if "unless_model" in step and step["unless_model"] in str(body.get("model", "")):
        step = step["then"]
    if "status" in step:
        return Status(step["status"], step.get("message", "scripted error"))
    if "raw" in step:
        return Raw(step["raw"], content_type=step.get("content_type", "application/json"))
    blocks: list[dict[str, Any]] = []
    if "thinking" in step:
        blocks.append({"type": "thinking", "thinking": step["thinking"], "signature": "c2lnbmF0dXJl"})
    if "text" in step:
        blocks.append({"type": "text", "text": step["text"]})
    calls = step.get("calls") or ([step] if "call" in step else [])
    blocks += [translate(harness, call, ws, f"toolu_{n:02d}_{i}") for i, call in enumerate(calls)]
    if "structured" in step:  # Claude Code answers through its StructuredOutput tool; we answer with the JSON
        if harness == "claude" and "StructuredOutput" in [t.get("name") for t in body.get("tools", [])]:
            block = {"type": "tool_use", "id": f"toolu_{n:02d}_s", "name": "StructuredOutput"}
            blocks.append({**block, "input": step["structured"]})
        else:
            blocks.append({"type": "text", "text": json.dumps(step["structured"])})
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else step.get("stop_reason", "end_turn")
    return {"content": blocks, "stop_reason": stop}


def model(
    harness: Harness, ws: Path, script: Sequence[dict[str, Any]], sub: Sequence[dict[str, Any]] = ()
) -> Callable[[dict[str, Any]], Any]:
    """The fake's reply function for one scenario: step N of *script* (or of *sub*, for a subagent) for a
    conversation holding N assistant messages; past the end, a short final text."""

    def reply(body: dict[str, Any]) -> Any:
        steps = sub if SUBTASK in _first_user_text(body) else script
        n = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        if n >= len(steps):
            return {"content": [{"type": "text", "text": "(the script is over)"}], "stop_reason": "end_turn"}
        if "wait" in steps[n]:  # a slow model: the request is answered this many seconds late
            time.sleep(steps[n]["wait"])
        return _answer(steps[n], harness, ws, body, n)

    return reply


def _jail(run_dir: Path, ws: Path, binary: str) -> list[str]:
    """Claude Code inside bubblewrap: the host read-only, the run directory writable, uid 1000 (Claude Code
    refuses bypassPermissions to root), its own pid/uts/ipc namespaces, no capabilities."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("record: bubblewrap (bwrap) is not installed; the recorder runs claude only inside it")
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--bind", str(run_dir), str(run_dir),
        "--unshare-user", "--uid", "1000", "--gid", "1000",
        "--unshare-pid", "--unshare-uts", "--unshare-ipc",
        "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--chdir", str(ws),
        binary,
    ]  # fmt: skip


def _environment(harness: Harness, home: Path, url: str) -> dict[str, str]:
    if harness == "claude":
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": str(RETRIES),  # Claude Code's default is 10, ours 2: retry as often
        }
    from tests.e2e.conftest import base_env

    # IS_SANDBOX=1: the suite may run as root, where --dangerously-skip-permissions is refused (Claude Code was
    # recorded as uid 1000, where it is not).
    return base_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="sk-ant-fake", IS_SANDBOX="1")


def _fill(argv: Sequence[str], values: dict[str, str]) -> list[str]:
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def _command(harness: Harness, binary: str, run_dir: Path, ws: Path) -> list[str]:
    return _jail(run_dir, ws, binary) if harness == "claude" else [binary]


def run(harness: Harness, binary: str, scenario: Any, *, base: Path | None = None) -> Output:
    """Run *scenario* (a :class:`tests.e2e.contract.scenarios.Scenario`) with *harness* at *binary* in a fresh
    directory under *base*, its ``before`` runs first in the same workspace and home; the last run's output.

    ``{session}`` in an argument is the scenario's fixed session id, ``{assistant_uuid}`` the ``uuid`` of the first
    assistant message the first ``before`` run streamed (what Claude Code's ``--resume-session-at`` takes)."""
    run_dir = Path(tempfile.mkdtemp(prefix="contract-", dir=base))
    try:
        ws, home = run_dir / "ws", run_dir / "home"
        ws.mkdir()
        home.mkdir()
        for name, text in scenario.files.items():
            (ws / name).parent.mkdir(parents=True, exist_ok=True)
            (ws / name).write_text(text)
        values = {"session": scenario.SESSION, "assistant_uuid": "none"}
        url = ""
        with FakeAnthropic(script=[model(harness, ws, scenario.script, scenario.sub)] * 200) as fake:
            url = fake.url
            env = _environment(harness, home, url)
            output = Output(0, "", "")
            for argv, stdin in [*scenario.before, (scenario.argv, scenario.stdin)]:
                fake.requests.clear()
                done = _run([*_command(harness, binary, run_dir, ws), *_fill(argv, values)], ws, env, stdin, fake)
                output = Output(done.returncode, done.stdout, done.stderr)
                if values["assistant_uuid"] == "none":
                    values["assistant_uuid"] = _assistant_uuid(done.stdout)
        return _scrub(output, run_dir, url)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _run(
    argv: list[str], ws: Path, env: dict[str, str], stdin: str | tuple[str | None, ...] | None, fake: FakeAnthropic
) -> subprocess.CompletedProcess[str]:
    """Run *argv*, writing *stdin* to it: text, or pieces of text where ``None`` waits until the fake has received
    a model request (so a control request goes in while the turn is under way), then closing it."""
    if not isinstance(stdin, tuple):
        return subprocess.run(argv, cwd=ws, env=env, input=stdin or "", capture_output=True, text=True,
                              timeout=RUN_TIMEOUT)  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ws, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip

    def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            for piece in stdin:
                if piece is None:
                    deadline = time.monotonic() + RUN_TIMEOUT
                    while not fake.messages_requests and time.monotonic() < deadline:
                        time.sleep(0.02)
                    continue
                proc.stdin.write(piece)
                proc.stdin.flush()
            proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    out, err = _drain(proc)
    writer.join(timeout=5)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """stdout and stderr read to the end while another thread writes stdin; the process waited for."""
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    out = proc.stdout.read()
    reader.join(timeout=RUN_TIMEOUT)
    proc.wait(timeout=RUN_TIMEOUT)
    return out, "".join(errors)


def _assistant_uuid(stdout: str) -> str:
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "assistant":
            return str(event.get("uuid", "none"))
    return "none"


def _scrub(output: Output, run_dir: Path, url: str) -> Output:
    """The output with the run directory's paths written as ``<ws>``, ``<home>``, ``<run>`` and the fake's
    address (``127.0.0.1:PORT``) as ``<fake>``."""

    def clean(text: str) -> str:
        for path, name in ((run_dir / "ws", "<ws>"), (run_dir / "home", "<home>"), (run_dir, "<run>")):
            text = text.replace(str(path), name)
        return text.replace(url.removeprefix("http://"), "<fake>")

    return Output(output.code, clean(output.stdout), clean(output.stderr))
