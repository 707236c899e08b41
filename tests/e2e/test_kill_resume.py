"""SIGKILL a journalled run at many points, resume it, and check nothing was lost, duplicated or run twice.

Each scenario is a chain of real processes (``tests/e2e/kill_resume_driver.py``, which parses the real
session flags): the first is killed with SIGKILL right after transition k, inside a tool, or from outside
a random moment after the journal holds k rows (in a tool, a commit, between steps); the next resumes with
``--continue``, and may be killed again. The scenarios run
concurrently, then each is checked: the journal always opens, the final messages equal an uninterrupted
run's except for calls answered as interrupted, every tool_use is answered exactly once by id, and no
tool's effect (a line appended to log.txt) happens twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from attrs import define, field

from fsm.session.journal import Journal, default_path
from fsm.session.restore import RESUMED_IN_FLIGHT

ROOT = Path(__file__).parent.parent.parent
TRANSITIONS = 18
LOGGED = {"p1": "one", "c2": "child", "p3": "two"}
"""The line each bash call of the scripted run appends to log.txt."""

Kill = dict[str, str]


@define
class Outcome:
    """What happened to one scenario: each process's exit status and what the last one printed."""

    workdir: Path
    codes: list[int] = field(factory=list)
    seqs_after_kill: list[int] = field(factory=list)
    """The journal's last seq after each killed process (-1: no session yet)."""
    final: dict[str, Any] | None = None


def _rows(workdir: Path) -> int:
    """Transitions journalled so far, read from outside while the driver writes (0 until the file is ready)."""
    try:
        db = sqlite3.connect(f"file:{default_path(workdir)}?mode=ro", uri=True, timeout=0.1)
        try:
            return db.execute("SELECT count(*) FROM transitions").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _driver(workdir: Path, env: Kill, *, resume: bool, kill_when: tuple[int, float] | None = None) -> tuple[int, str]:
    """Run the driver to its end; with *kill_when* = (rows, delay), SIGKILL it *delay* s after the journal
    holds that many rows, wherever it is then (in a tool, a commit, between steps)."""
    argv = [sys.executable, "-m", "tests.e2e.kill_resume_driver", "--cwd", str(workdir)]
    if resume:
        argv.append("--continue")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KILL_", "ANTHROPIC_"))}
    proc = subprocess.Popen(
        argv, cwd=ROOT, env={**clean, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    if kill_when is not None:
        rows, delay = kill_when
        while proc.poll() is None and _rows(workdir) < rows:
            time.sleep(0.001)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, -signal.SIGKILL), err
    return proc.returncode, out


def _last_seq(workdir: Path) -> int:
    path = default_path(workdir)
    if not path.exists():
        return -1
    with Journal(path) as journal:  # must always open, and every row must decode
        latest = journal.latest()
        return -1 if latest is None else (journal.records(latest.id)[-1].seq if latest.transitions else 0)


def _scenario(workdir: Path, kills: list[Kill], kill_when: tuple[int, float] | None = None) -> Outcome:
    workdir.mkdir()
    outcome = Outcome(workdir)
    resume = False
    for kill in kills:
        code, _ = _driver(workdir, kill, resume=resume)
        outcome.codes.append(code)
        outcome.seqs_after_kill.append(_last_seq(workdir))
        resume = True
    if kill_when is not None:
        code, _ = _driver(workdir, {}, resume=False, kill_when=kill_when)
        outcome.codes.append(code)
        outcome.seqs_after_kill.append(_last_seq(workdir))
        resume = outcome.seqs_after_kill[-1] >= 0
    code, out = _driver(workdir, {}, resume=resume)
    outcome.codes.append(code)
    outcome.final = json.loads(out)
    return outcome


_rng = random.Random(6)
SCENARIOS: dict[str, tuple[list[Kill], tuple[int, float] | None]] = {
    "uninterrupted": ([], None),
    **{f"after-{k}": ([{"KILL_AFTER_SEQ": str(k)}], None) for k in range(1, TRANSITIONS)},
    **{f"inside-{tool}": ([{"KILL_IN_TOOL": tool}], None) for tool in ("p1", "c1", "c2", "p3")},
    "after-3-then-9-then-15": ([{"KILL_AFTER_SEQ": "3"}, {"KILL_AFTER_SEQ": "9"}, {"KILL_AFTER_SEQ": "15"}], None),
    "inside-c1-then-inside-p3": ([{"KILL_IN_TOOL": "c1"}, {"KILL_IN_TOOL": "p3"}], None),
    **{f"random-{i}": ([], (_rng.randrange(1, TRANSITIONS), round(_rng.uniform(0, 0.004), 4))) for i in range(6)},
}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, Outcome]:
    """Every scenario, run concurrently (the processes mostly wait for fsync and imports)."""
    base = tmp_path_factory.mktemp("kills")
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {
            name: pool.submit(_scenario, base / name, kills, delay) for name, (kills, delay) in SCENARIOS.items()
        }
        return {name: future.result() for name, future in futures.items()}


def _results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        b["tool_use_id"]: b
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


def _answered_once(messages: list[dict[str, Any]]) -> bool:
    for i, message in enumerate(messages):
        calls = [b["id"] for b in message["content"] if message["role"] == "assistant" and b["type"] == "tool_use"]
        answers = (
            [b["tool_use_id"] for b in messages[i + 1]["content"] if b.get("type") == "tool_result"] if calls else []
        )
        if calls != answers:
            return False
    return True


@pytest.mark.parametrize("name", SCENARIOS)
def test_killed_runs_resume_without_loss_or_repeats(outcomes, name):
    """After SIGKILLs at this point and a resume, the run ends like an uninterrupted one, except for calls
    answered as interrupted, with every call answered once and no effect repeated."""
    outcome, base = outcomes[name], outcomes["uninterrupted"]
    kills, delay = SCENARIOS[name]
    assert outcome.codes[: len(kills)] == [-signal.SIGKILL] * len(kills) and outcome.codes[-1] == 0
    for kill, seq in zip(kills, outcome.seqs_after_kill, strict=False):
        if "KILL_AFTER_SEQ" in kill:
            assert seq == int(kill["KILL_AFTER_SEQ"])  # durable: the transition before the kill is there
    messages, expected = outcome.final["messages"], base.final["messages"]
    assert _answered_once(messages)
    theirs = _results(expected)
    interrupted = {i for i, block in _results(messages).items() if block["content"] == RESUMED_IN_FLIGHT}
    with Journal(default_path(outcome.workdir)) as journal:
        snapshot = journal.snapshot(outcome.final["session"])
        child = next(s for s in snapshot.agents.values() if s.depth == 1)
    interrupted |= {i for i, block in _results(child.messages).items() if block["content"] == RESUMED_IN_FLIGHT}
    assert _answered_once(child.messages)
    restored = [
        {
            **m,
            "content": [theirs[b["tool_use_id"]] if b.get("content") == RESUMED_IN_FLIGHT else b for b in m["content"]],
        }
        if isinstance(m["content"], list)
        else m
        for m in messages
    ]
    assert restored == expected
    log = (outcome.workdir / "log.txt").read_text().splitlines() if (outcome.workdir / "log.txt").exists() else []
    assert len(log) == len(set(log))
    if "KILL_IN_TOOL" in "".join(k for kill in kills for k in kill):  # the tool ran once, before the kill
        assert sorted(log) == sorted(LOGGED.values())
    elif delay is None:  # killed between transitions: an in-flight call never ran
        assert sorted(log) == sorted(line for tool, line in LOGGED.items() if tool not in interrupted)
    else:
        assert set(log) <= set(LOGGED.values())
    assert len(interrupted) <= len(kills) + (delay is not None)


def test_the_cli_resumes_a_killed_run(fake, project, agentfsm):
    """``agentfsm -p`` killed while its subagent waits for the model; ``agentfsm -p … --continue`` finishes
    that run from the journal (the subagent's context restored, no tool run twice), then the new prompt;
    ``agentfsm sessions list`` and ``agentfsm replay`` read the one session, the replay offline."""
    from fsm.testing import text_reply, tool_reply, tool_use
    from tests.e2e.conftest import base_env, killed_after

    release = threading.Event()

    def hang(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return text_reply("too late")

    fake.script = [
        tool_reply(
            tool_use("bash", {"command": "echo one >> log.txt"}, id="p1"),
            tool_use("task", {"prompt": "write the notes"}, id="p2"),
        ),
        tool_reply(tool_use("write_file", {"path": "notes.txt", "content": "n"}, id="c1")),
        hang,
    ]
    (project / ".claude").mkdir()
    rules = '{"permissions": {"allow": ["Bash(echo:*)", "Edit(notes.txt)", "Edit(log.txt)"]}}'
    (project / ".claude" / "settings.json").write_text(rules)
    proc = killed_after(fake, ["-p", "delegate the notes", "--trust"], project, 3)
    release.set()
    assert proc.returncode == -signal.SIGKILL
    with Journal(default_path(project)) as journal:
        (session,) = journal.sessions()
    assert (session.state, session.last_seq) == ("executing_tools", 8)  # the child's tools_done was the last

    fake.requests.clear()
    fake.script = [text_reply("notes written"), text_reply("all done"), text_reply("nothing else")]
    run = agentfsm("-p", "anything else?", "--continue", "--output-format", "json", "--trust")
    assert run.code == 0, run.stderr
    result = run.json()
    assert (result["result"], result["session_id"]) == ("nothing else", session.id)
    child_context = fake.requests[0].messages
    assert [m["role"] for m in child_context] == ["user", "assistant", "user"]
    assert child_context[2]["content"][0]["tool_use_id"] == "c1"
    assert (project / "log.txt").read_text() == "one\n"
    with Journal(default_path(project)) as journal:
        (info,) = journal.sessions()
        records = journal.records(session.id)
        root = journal.snapshot(session.id).root_state
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    assert (info.prompt, info.outcome, info.turns) == ("delegate the notes", "end_turn", 3)
    assert [m["content"] for m in root.messages if m["role"] == "user" and isinstance(m["content"], str)] == [
        "delegate the notes",
        "anything else?",
    ]
    assert _answered_once(root.messages)

    listing = agentfsm("sessions", "list")
    assert listing.code == 0 and listing.stdout.splitlines()[1].startswith(session.id)
    offline = agentfsm("replay", session.id[:5], env=base_env())
    assert offline.code == 0, offline.stderr
    assert offline.stdout.endswith(f": {len(records)} of {len(records)} transitions match\n")


# -- three subagents at once --------------------------------------------------------------------------------

PARALLEL = ("alpha", "beta", "gamma")
"""``SCRIPT=parallel``: the root's one reply starts these three subagents, which ``Agent.run()`` runs at once;
each appends its name to log.txt with bash (call id NAME1), then answers ``NAME done``."""
PARALLEL_SCENARIOS: dict[str, Kill] = {
    "uninterrupted": {},
    **{f"after-{k}": {"KILL_AFTER_SEQ": str(k)} for k in (6, 8, 10, 13, 16, 20, 24)},
    "inside-beta1": {"KILL_IN_TOOL": "beta1"},
}


def _parallel(workdir: Path, kill: Kill) -> Outcome:
    workdir.mkdir()
    outcome = Outcome(workdir)
    if kill:
        code, _ = _driver(workdir, {"SCRIPT": "parallel", **kill}, resume=False)
        outcome.codes.append(code)
        outcome.seqs_after_kill.append(_last_seq(workdir))
    code, out = _driver(workdir, {"SCRIPT": "parallel"}, resume=bool(kill))
    outcome.codes.append(code)
    outcome.final = json.loads(out)
    return outcome


@pytest.fixture(scope="module")
def parallel_outcomes(tmp_path_factory) -> dict[str, Outcome]:
    base = tmp_path_factory.mktemp("parallel-kills")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(_parallel, base / name, kill) for name, kill in PARALLEL_SCENARIOS.items()}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", PARALLEL_SCENARIOS)
def test_three_subagents_in_flight_finish_after_a_kill(parallel_outcomes, name):
    """Killed with three subagents in flight, then ``--continue``: all three finish, every tool_use (the
    root's and each subagent's) is answered exactly once, and no bash line is written twice."""
    outcome, kill = parallel_outcomes[name], PARALLEL_SCENARIOS[name]
    assert outcome.codes == ([-signal.SIGKILL] if kill else []) + [0]
    if "KILL_AFTER_SEQ" in kill:
        assert outcome.seqs_after_kill == [int(kill["KILL_AFTER_SEQ"])]
    messages = outcome.final["messages"]
    assert _answered_once(messages)
    answers = {
        b["tool_use_id"]: b["content"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert answers == {f"t_{n}": f"{n} done" for n in PARALLEL}
    assert messages[-1]["content"][0]["text"] == "all three done"
    with Journal(default_path(outcome.workdir)) as journal:
        snapshot = journal.snapshot(outcome.final["session"])
        records = journal.records(outcome.final["session"])
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    children = [s for s in snapshot.agents.values() if s.depth == 1]
    assert sorted(c.messages[0]["content"] for c in children) == list(PARALLEL)
    settled = set()
    for child in children:
        assert _answered_once(child.messages) and child.final_text == f"{child.messages[0]['content']} done"
        settled |= {i for i, b in _results(child.messages).items() if b["content"] == RESUMED_IN_FLIGHT}
    log = (outcome.workdir / "log.txt").read_text().splitlines() if (outcome.workdir / "log.txt").exists() else []
    assert len(log) == len(set(log)) and set(log) <= set(PARALLEL)
    ran = {f"{n}1" for n in PARALLEL if n in log}
    assert ran | settled == {f"{n}1" for n in PARALLEL}  # each bash call ran once, or was settled as in flight
    if "KILL_IN_TOOL" in kill:
        assert "beta" in log and "beta1" in settled  # it ran before the kill; resumed, it is not run again
    if not kill:
        assert sorted(log) == sorted(PARALLEL) and not settled
