"""Benchmark: what the session transcript costs per transition, beside the journal it sits next to.

The workload is ``bench_journal``'s: 30 turns with a zero-latency ScriptedModel; each of the first 29 asks for one
read_file of its own 20 KB file, the last answers. Two listeners record the same run: the journal
(``fsm.session.journal``, SQLite, one fsynced commit per transition) and the transcript
(``fsm.session.transcript``, one JSONL line per message, flushed, not fsynced). Prints each one's mean and
worst time per transition and the bytes each wrote.

Run: python tests/perf/bench_transcript.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from fsm import Agent, Transition
from fsm.policy.hooks import HookContext
from fsm.session.journal import Journal
from fsm.session.transcript import Transcript
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

TURNS = 30
OUTPUT_BYTES = 20_000


class Stopwatch:
    """Two listeners around another one: the time spent between them, per transition."""

    def __init__(self) -> None:
        self.started = 0.0
        self.spent: list[float] = []

    def start(self, record: Transition) -> None:
        self.started = time.perf_counter()

    def stop(self, record: Transition) -> None:
        self.spent.append(time.perf_counter() - self.started)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        for i in range(TURNS - 1):
            (ws / f"f{i}.txt").write_text("".join(f"{i:02d}:{n:07d} " for n in range(OUTPUT_BYTES // 11)))
        script = [tool_reply(tool_use("read_file", {"path": f"f{i}.txt"}, id=f"t{i}")) for i in range(TURNS - 1)]
        agent = Agent(ScriptedModel([*script, text_reply("done")]), str(ws))
        journal_watch, transcript_watch = Stopwatch(), Stopwatch()
        agent.subscribe(journal_watch.start)
        journal = Journal(Path(tmp) / "sessions.db")
        session = journal.start(agent)
        agent.subscribe(journal_watch.stop)
        agent.subscribe(transcript_watch.start)
        context = HookContext(session, tmp)
        transcript = Transcript(context, version=lambda: "bench").attach(agent)
        agent.subscribe(transcript_watch.stop)
        agent.run("read the files")
        transcript.close()
        journal.close()
        written = Path(str(context.transcript_path)).stat().st_size
        stored = (Path(tmp) / "sessions.db").stat().st_size
    print(
        f"{TURNS} turns, {TURNS - 1} read_file outputs of {OUTPUT_BYTES // 1000} KB, {len(agent.history)} transitions"
    )
    print(f"{'listener':>10}  {'mean ms/tr':>10}  {'worst ms':>8}  {'KB written':>10}")
    for name, watch, size in (("journal", journal_watch, stored), ("transcript", transcript_watch, written)):
        mean = 1000 * sum(watch.spent) / len(watch.spent)
        print(f"{name:>10}  {mean:>10.3f}  {1000 * max(watch.spent):>8.3f}  {size / 1000:>10,.1f}")


if __name__ == "__main__":
    main()
