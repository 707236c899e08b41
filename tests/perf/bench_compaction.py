"""Benchmark: a long run's request sizes with and without the cheap passes, and what the passes cost.

Run it directly (pytest does not collect ``bench_*.py``)::

    python tests/perf/bench_compaction.py [--turns 30] [--file-kb 20] [--threshold 40000]

The run is the issue's: each turn reads a file of ``--file-kb`` KB (numbered lines, as ``read_file`` returns
them). Without compaction every request carries every result. With it, before each request whose estimate
(:func:`fsm.compaction.estimate_tokens`) is at least ``--threshold`` tokens, :func:`fsm.compaction.cheap_passes`
runs (results over 20,000 characters persisted in a temporary store, old seen results cleared but the last 3).
The table gives each request's size in characters and estimated tokens; the last lines time the passes and the
estimate on the whole uncompacted history.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from fsm.compaction import ResultStore, cheap_passes, estimate_tokens
from fsm.compaction.tokens import messages_tokens


def _file(kb: int, serial: int) -> str:
    lines, size, n = [], 0, 0
    while size < kb * 1024:
        n += 1
        line = f"{n:6}\tdef function_{serial}_{n}(value):  # handles case {n} of module {serial}\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def _turns(count: int, kb: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for n in range(count):
        call = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": "read_file", "input": {"path": f"src/m{n}.py"}}
        result = {"type": "tool_result", "tool_use_id": call["id"], "content": _file(kb, n)}
        out.append(({"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}))
    return out


def _size(messages: list[dict[str, Any]]) -> int:
    return len(repr(messages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--file-kb", type=int, default=20)
    parser.add_argument("--threshold", type=int, default=40_000)
    args = parser.parse_args()
    turns = _turns(args.turns, args.file_kb)
    plain: list[dict[str, Any]] = [{"role": "user", "content": "Read every module and review it."}]
    compacted = list(plain)
    passes = 0
    with tempfile.TemporaryDirectory() as state:
        store = ResultStore(Path(state))
        print(f"{'request':>7} {'plain chars':>12} {'plain tokens':>13} {'compacted chars':>16} {'tokens':>8}")
        for n, (reply, results) in enumerate(turns, 1):
            plain += [reply, results]
            compacted += [reply, results]
            if estimate_tokens(compacted, system="", tools=[], last_input_tokens=None, counted=0) >= args.threshold:
                compacted = cheap_passes(compacted, store=store).messages
                passes += 1
            print(
                f"{n:>7} {_size(plain):>12,} {messages_tokens(plain):>13,} {_size(compacted):>16,} "
                f"{messages_tokens(compacted):>8,}"
            )
        print(f"cheap passes run: {passes}; files in the store: {len(list(Path(state).iterdir()))}")
        started = time.perf_counter()
        cheap_passes(plain, store=ResultStore(Path(state) / "again"))
        print(f"cheap_passes on the whole plain history: {(time.perf_counter() - started) * 1000:.1f} ms")
        started = time.perf_counter()
        estimate_tokens(plain, system="", tools=[], last_input_tokens=None, counted=0)
        print(f"estimate_tokens of the whole plain history: {(time.perf_counter() - started) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
