"""Benchmark: what a user pays at the ends of a run: start to first request, last response to exit, ``--help``,
and a journalled turn against an unjournalled one, against Claude Code and a bare Python floor, same run.

Every contender runs as a process against the loopback fake server of the e2e tests (``tests/e2e/fake_server.py``),
which notes when each request arrives and when it hands over its last answer. The contenders take turns, round
after round (the order rotates each round), so a load that comes and goes on a shared machine hits them alike;
each has its own HOME kept across rounds (its journal, Claude Code's ``~/.claude``), and a first round is a
warm-up not counted. Reported: medians, and ratios of medians from this same run.

- start: ``agentfsm -p hi`` (journalled, ``--no-session``, and journalled with its price cache emptied before each
  run, as runs were before ``fsm.model.price_cache``), ``claude -p hi`` (when installed:
  ``$CLAUDE_BIN``, ``/work/cc/node_modules/.bin/claude`` or on PATH; on the fake with
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``), and the floor: ``python`` posting the same kind of request with
  ``http.client`` and printing the text. Columns: process start to the first request, the last response to the
  process's exit, the whole run, and the CPU the process (and its children) used.
- ``agentfsm --help`` against ``claude --version`` and ``python -c pass``.
- a journalled turn: ``agentfsm -p`` for TURNS model calls (each but the last asks for one ``glob``), journalled
  and ``--no-session``; a turn's time is (last request - first request) / (TURNS - 1), so start and exit drop out.
  Then the same run in this process (``Agent`` and ``ScriptedModel``, no HTTP), journalled with the journal's
  setting (``synchronous=NORMAL``), with ``FULL`` (an fsync per commit, the setting before), and not journalled.

The targets (issue 27): start to first request <= Claude Code's; ``--help`` <= 0.3 s on an idle machine; last
response to exit <= 0.3 s; a journalled turn <= 1.3x an unjournalled one. Say the load (``uptime``) with the figures.

Run: python tests/perf/bench_ends.py [ROUNDS [LATENCY]]   (defaults: 7 rounds, 0.5 s; LATENCY 0 is the worst case for
the exit, where the price table's loading, done in the background while a real model answers, has no wait to hide in)
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fsm.session.journal
from fsm import Agent
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

TURNS = 20
LATENCY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
"""Seconds the fake takes to answer in the one-turn rows, as a model would (a real one takes longer)."""
FLOOR = """
import http.client, json, os, sys, urllib.parse
url = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [{"role": "user", "content": sys.argv[1]}]}
conn = http.client.HTTPConnection(url.hostname, url.port)
conn.request("POST", "/v1/messages", json.dumps(body), {"content-type": "application/json",
             "x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"})
print(json.loads(conn.getresponse().read())["content"][0]["text"])
"""


def claude_binary() -> str | None:
    for candidate in (os.environ.get("CLAUDE_BIN"), "/work/cc/node_modules/.bin/claude", shutil.which("claude")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class Marks:
    """The fake server's script: answers each request after *latency* seconds, noting when the first arrived and
    when the last was answered."""

    def __init__(self, replies: list[dict[str, Any]], latency: float = 0.0) -> None:
        self.replies, self.latency, self.first, self.last = replies, latency, 0.0, 0.0
        self.times: list[float] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        now = time.perf_counter()
        self.times.append(now)
        self.first = self.first or now
        time.sleep(self.latency)
        reply = self.replies[min(len(self.times), len(self.replies)) - 1]
        self.last = time.perf_counter()
        return reply


def timed_run(
    argv: list[str], home: Path, replies: list[dict[str, Any]], latency: float = 0.0
) -> tuple[Marks, float, float, float]:
    """Run *argv* against a fresh fake: (its marks, start time, exit time, CPU seconds of the process tree)."""
    marks = Marks(replies, latency)
    with FakeAnthropic([marks] * (len(replies) + 5)) as fake:
        env = base_env(
            ANTHROPIC_BASE_URL=fake.url,
            ANTHROPIC_API_KEY="sk-ant-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            HOME=str(home),
        )
        work = home / "work"
        work.mkdir(exist_ok=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, stdin=subprocess.DEVNULL)
        ended = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or not marks.times:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return marks, started, ended, cpu


def interleaved(contenders: dict[str, Callable[[], dict[str, float]]], rounds: int) -> dict[str, dict[str, float]]:
    """Each contender once per round, the order rotating; the first round a warm-up. Medians per figure."""
    names = list(contenders)
    figures: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    for round_ in range(rounds + 1):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        for name in order:
            result = contenders[name]()
            if round_:
                for key, value in result.items():
                    figures[name].setdefault(key, []).append(value)
    return {n: {k: statistics.median(v) for k, v in f.items()} for n, f in figures.items()}


def one_turn(argv: list[str], home: Path) -> Callable[[], dict[str, float]]:
    def run() -> dict[str, float]:
        marks, started, ended, cpu = timed_run(argv, home, [text_reply("done")], LATENCY)
        return {"first": marks.first - started, "exit": ended - marks.last, "total": ended - started, "cpu": cpu}

    return run


def without_cache(run: Callable[[], dict[str, float]], home: Path) -> Callable[[], dict[str, float]]:
    """*run* with its user cache directory emptied first: what genai-prices said of the model is not kept, so the
    run loads the price table (as every run did before ``fsm.model.price_cache``)."""

    def cold() -> dict[str, float]:
        shutil.rmtree(home / ".cache", ignore_errors=True)
        return run()

    return cold


def plain(argv: list[str]) -> Callable[[], dict[str, float]]:
    def run() -> dict[str, float]:
        started = time.perf_counter()
        subprocess.run(argv, capture_output=True, check=True, stdin=subprocess.DEVNULL, env=base_env())
        return {"wall": time.perf_counter() - started}

    return run


def turns(argv: list[str], home: Path) -> Callable[[], dict[str, float]]:
    replies = [tool_reply(tool_use("glob", {"pattern": "*"}, id=f"t{i}")) for i in range(TURNS - 1)]
    replies.append(text_reply("done"))

    def run() -> dict[str, float]:
        marks, *_ = timed_run(argv, home, replies)
        assert len(marks.times) == TURNS, f"{len(marks.times)} requests, not {TURNS}"
        return {"turn": (marks.times[-1] - marks.times[0]) / (TURNS - 1)}

    return run


def in_process(work: Path, synchronous: str | None) -> Callable[[], dict[str, float]]:
    """TURNS turns of an Agent in this process, journalled with *synchronous* (None: not journalled)."""

    def run() -> dict[str, float]:
        replies = [tool_reply(tool_use("glob", {"pattern": "*"}, id=f"t{i}")) for i in range(TURNS - 1)]
        agent = Agent(ScriptedModel([*replies, text_reply("done")]), str(work))
        journal = None
        if synchronous is not None:
            fsm.session.journal.SYNCHRONOUS = synchronous  # read when the journal is opened
            journal = Journal(work / f"{synchronous}.db")
            journal.start(agent)
        started = time.perf_counter()
        agent.run("go")
        spent = time.perf_counter() - started
        if journal is not None:
            journal.close()
        return {"turn": spent / TURNS}

    return run


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    claude = claude_binary()
    print(f"load before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores; {rounds} rounds + 1 warm-up")
    with tempfile.TemporaryDirectory(prefix="bench-ends-") as tmp:
        names = ("floor", "journalled", "no-session", "cold", "claude", "t1", "t2")
        homes = {name: Path(tmp) / name for name in names}
        for home in homes.values():
            home.mkdir()
        agentfsm = [str(AGENTFSM), "-p", "hi"]
        start: dict[str, Callable[[], dict[str, float]]] = {
            "python http.client (floor)": one_turn([sys.executable, "-c", FLOOR, "hi"], homes["floor"]),
            "agentfsm -p": one_turn(agentfsm, homes["journalled"]),
            "agentfsm -p --no-session": one_turn([*agentfsm, "--no-session"], homes["no-session"]),
            "agentfsm -p, no price cache": without_cache(one_turn(agentfsm, homes["cold"]), homes["cold"]),
        }
        if claude:
            start["claude -p"] = one_turn([claude, "-p", "hi"], homes["claude"])
        results = interleaved(start, rounds)
        base = results.get("claude -p", results["python http.client (floor)"])
        against = "claude -p" if claude else "the floor"
        print(
            f"\none-turn run, the model answering in {LATENCY} s; medians in s (ratios: vs {against})"
            f"{'' if claude else '; claude is not installed'}"
        )
        print(f"{'':<28}{'start->1st request':>20}{'last response->exit':>21}{'whole run':>11}{'CPU':>8}")
        for name, r in results.items():
            print(
                f"{name:<28}{r['first']:>11.3f} ×{r['first'] / base['first']:<6.2f}"
                f"{r['exit']:>12.3f} ×{r['exit'] / base['exit']:<6.2f}{r['total']:>11.3f}{r['cpu']:>8.3f}"
            )

        quick = {"agentfsm --help": plain([str(AGENTFSM), "--help"]), "python -c ''": plain([sys.executable, "-c", ""])}
        if claude:
            quick["claude --version"] = plain([claude, "--version"])
        results = interleaved(quick, rounds)
        print("\nquick commands, median wall s")
        for name, r in results.items():
            print(f"{name:<28}{r['wall']:>8.3f}")

        per_turn = {
            "agentfsm -p (journalled)": turns([str(AGENTFSM), "-p", "go"], homes["t1"]),
            "agentfsm -p --no-session": turns([str(AGENTFSM), "-p", "go", "--no-session"], homes["t2"]),
        }
        results = interleaved(per_turn, rounds)
        journalled, bare = (r["turn"] for r in results.values())
        print(f"\nper turn over the wire ({TURNS} model calls, one glob each), median ms")
        print(f"{'agentfsm -p (journalled)':<28}{journalled * 1000:>8.1f}  ×{journalled / bare:.2f}")
        print(f"{'agentfsm -p --no-session':<28}{bare * 1000:>8.1f}")

        work = Path(tmp) / "in-process"
        work.mkdir()
        kept = fsm.session.journal.SYNCHRONOUS
        results = interleaved(
            {
                f"synchronous={kept}": in_process(work, kept),
                "synchronous=FULL": in_process(work, "FULL"),
                "not journalled": in_process(work, None),
            },
            rounds,
        )
        fsm.session.journal.SYNCHRONOUS = kept
        bare = results["not journalled"]["turn"]
        print(f"\nper turn in this process (Agent + ScriptedModel, {TURNS} turns), median ms")
        for name, r in results.items():
            print(f"{name:<28}{r['turn'] * 1000:>8.2f}  ×{r['turn'] / bare:.2f}")
    print(f"\nload after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
