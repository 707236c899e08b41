"""Benchmark: the append-only session journal against a full snapshot per transition, as a run grows.

The workload: 30 turns with a zero-latency ScriptedModel; each of the first 29 asks for one read_file of
its own 20 KB file, the last answers. Two listeners record the same run, each in its own SQLite file with
the same settings (WAL, synchronous=NORMAL as the journal's ``SYNCHRONOUS``, one commit per transition):

- the journal (``fsm.session.journal``): each transition's data and the messages it appended, each message once;
- snapshots: the agent's whole AgentState as JSON, one row per transition (what checkpointers do).

Every 10 transitions it prints the bytes of the conversation (its messages as JSON), each file's size
(``page_count * page_size``, WAL included) and its ratio to the messages, and the mean time each listener
took per transition in that stretch. The journal's ratio stays near 1 (it grows with the messages); the
snapshots' grows with the run (quadratic in total).

Run: python tests/perf/bench_journal.py
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from pathlib import Path

from fsm import Agent, Transition
from fsm.core.records import converter
from fsm.session.journal import SYNCHRONOUS, Journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

TURNS = 30
OUTPUT_BYTES = 20_000
EVERY = 10


class Snapshots:
    """A listener that stores the whole AgentState after every transition (the approach we avoid)."""

    def __init__(self, path: Path, agent: Agent) -> None:
        self.agent = agent
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
        self.db.execute("CREATE TABLE snapshots (seq INTEGER PRIMARY KEY, state TEXT NOT NULL)")

    def __call__(self, record: Transition) -> None:
        state = json.dumps(converter.unstructure(self.agent.data), ensure_ascii=False, separators=(",", ":"))
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO snapshots VALUES (?, ?)", (record.seq, state))
        self.db.execute("COMMIT")


class Stopwatch:
    """Two listeners around another one: the time spent between them, per transition."""

    def __init__(self) -> None:
        self.started = 0.0
        self.spent: list[float] = []

    def start(self, record: Transition) -> None:
        self.started = time.perf_counter()

    def stop(self, record: Transition) -> None:
        self.spent.append(time.perf_counter() - self.started)


def size(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    finally:
        db.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        for i in range(TURNS - 1):  # distinct contents: nothing for SQLite to share between files
            (ws / f"f{i}.txt").write_text("".join(f"{i:02d}:{n:07d} " for n in range(OUTPUT_BYTES // 11)))
        script = [tool_reply(tool_use("read_file", {"path": f"f{i}.txt"}, id=f"t{i}")) for i in range(TURNS - 1)]
        agent = Agent(ScriptedModel([*script, text_reply("done")]), str(ws))
        journal_watch, snapshot_watch = Stopwatch(), Stopwatch()
        agent.subscribe(journal_watch.start)
        journal = Journal(Path(tmp) / "journal.db")
        journal.start(agent)
        agent.subscribe(journal_watch.stop)
        agent.subscribe(snapshot_watch.start)
        agent.subscribe(Snapshots(Path(tmp) / "snapshots.db", agent))
        agent.subscribe(snapshot_watch.stop)
        rows = []
        agent.send("read the files")
        while True:
            record = agent.step()
            last = agent.state == "idle"
            if record.seq % EVERY == 0 or last:
                messages = len(json.dumps(agent.messages, ensure_ascii=False, separators=(",", ":")).encode())
                window = slice(-(record.seq - (rows[-1][0] if rows else 0)), None)
                rows.append(
                    (
                        record.seq,
                        messages,
                        size(Path(tmp) / "journal.db"),
                        size(Path(tmp) / "snapshots.db"),
                        1000 * sum(journal_watch.spent[window]) / len(journal_watch.spent[window]),
                        1000 * sum(snapshot_watch.spent[window]) / len(snapshot_watch.spent[window]),
                    )
                )
            if last:
                break
        journal.close()
    header = (
        f"{'transitions':>11}  {'messages':>10}  {'journal':>10}  {'ratio':>5}  {'snapshots':>11}  "
        f"{'ratio':>6}  {'journal ms/tr':>13}  {'snapshot ms/tr':>14}"
    )
    print(
        f"{TURNS} turns, {TURNS - 1} read_file outputs of {OUTPUT_BYTES // 1000} KB; sizes in KB, WAL included; "
        f"times are the mean per transition since the previous row"
    )
    print(header)
    for seq, messages, journal_size, snapshot_size, journal_ms, snapshot_ms in rows:
        print(
            f"{seq:>11}  {messages / 1000:>10,.1f}  {journal_size / 1000:>10,.1f}  {journal_size / messages:>5.2f}  "
            f"{snapshot_size / 1000:>11,.1f}  {snapshot_size / messages:>6.1f}  {journal_ms:>13.2f}  "
            f"{snapshot_ms:>14.2f}"
        )
    final = rows[-1]
    print(
        f"at the end: the journal holds {final[2] / final[1]:.2f} bytes per byte of messages, the snapshots "
        f"{final[3] / final[1]:.1f} ({final[3] / final[2]:.0f}x the journal)"
    )


if __name__ == "__main__":
    main()
