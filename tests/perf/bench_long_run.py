"""Benchmark: the request sizes of a long session, with and without compaction.

One session of several prompts of 30 turns each (every turn reads a 9 KB file; every seventh starts a subagent
that reads three), driven by a ScriptedModel, in three ways: without a compactor (what an agent sent before issue
23), with ``fsm.compaction``'s passes and a 24k threshold (``--compact-threshold 24000``), and with the threshold
off but a model that refuses requests over 24k (``prompt is too long``: the reactive path). For each: the model
calls, the requests refused, the compactions and the summary calls among them, the largest request answered and
the last one, in the fake server's count (a
quarter of the request's JSON characters, as tests/e2e/fake_server.py counts), and the seconds the run took.

Run: python tests/perf/bench_long_run.py [PROMPTS]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fsm import Agent, ModelError
from fsm.compaction import CompactSettings, PassesCompactor
from fsm.testing import Request, ScriptedModel, text_reply, tool_reply, tool_use

WINDOW = 24_000
BIG = "a line of a large file that fills the window quickly\n" * 170


def tokens(request: Request) -> int:
    return len(json.dumps([request.system, request.messages, request.tools])) // 4


FILES = 400
"""Distinct files, read in turn: a file read again unchanged is answered with a short note, not its text."""


def work(prompts: int) -> Iterator[dict[str, Any]]:
    n = 0
    for p in range(prompts):
        for t in range(29):
            if t % 7 == 3:
                yield tool_reply(tool_use("task", {"prompt": f"read the files ({p}.{t})"}))
                for _ in range(3):
                    n += 1
                    yield tool_reply(tool_use("read_file", {"path": f"big{n % FILES}.txt"}))
                yield text_reply("read")
            else:
                n += 1
                yield tool_reply(tool_use("read_file", {"path": f"big{n % FILES}.txt"}))
        yield text_reply(f"prompt {p} done")


def model(prompts: int, *, window: int | None) -> ScriptedModel:
    replies = work(prompts)

    def answer(request: Request) -> dict[str, Any]:
        if window is not None and tokens(request) > window:
            raise ModelError(
                f"prompt is too long: {tokens(request)} tokens > {window} maximum",
                status_code=400,
                kind="context_window",
            )
        if not request.tools:
            return text_reply("Summary: files were read at the user's request; go on reading.")
        reply = next(replies)
        return {**reply, "usage": {"input_tokens": tokens(request), "output_tokens": 10}}

    return ScriptedModel([answer] * 5000)


def run(prompts: int, name: str, *, threshold: int | None, window: int | None, compacts: bool) -> str:
    root = Path(tempfile.mkdtemp(prefix="bench-compaction-"))
    for f in range(FILES):
        (root / f"big{f}.txt").write_text(f"file {f}\n{BIG}")
    fake = model(prompts, window=window)
    settings = CompactSettings(threshold=threshold) if threshold else CompactSettings(disabled=True)
    compactor = PassesCompactor.for_model("claude-sonnet-4-5", max_output=8000, workspace=root, settings=settings)
    agent = Agent(fake, str(root), compactor=compactor if compacts else None)
    started = time.perf_counter()
    outcomes = []
    for p in range(prompts):
        agent.run(f"prompt {p}: read the files")
        outcomes.append(agent.outcome)
    seconds = time.perf_counter() - started
    refused = [r for r in fake.requests if window is not None and tokens(r) > window]
    sizes = [tokens(r) for r in fake.requests if r.tools and not (window is not None and tokens(r) > window)]
    summaries = sum(1 for r in fake.requests if not r.tools)
    compactions = sum(1 for r in agent.history if r.compaction is not None)
    done = sum(1 for o in outcomes if o == "end_turn")
    return (
        f"  {name:<34}{len(fake.requests):>7}{len(refused):>8}{compactions:>12}{summaries:>11}{max(sizes):>11,}"
        f"{sizes[-1]:>11,}"
        f"{done:>6}/{prompts:<3}{seconds:>8.2f}"
    )


def main() -> None:
    prompts = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    print(f"{prompts} prompts of 30 turns; request sizes in tokens (the fake's count)")
    head = f"  {'run':<34}{'calls':>7}{'refused':>8}{'compactions':>12}{'summaries':>11}{'largest':>11}{'last':>11}"
    print(f"{head}{'ok':>10}{'seconds':>8}")
    print(run(prompts, "no compaction", threshold=None, window=None, compacts=False))
    print(run(prompts, "threshold 24k (--compact-threshold)", threshold=WINDOW, window=None, compacts=True))
    print(run(prompts, "window 24k, refused (reactive)", threshold=None, window=WINDOW, compacts=True))


if __name__ == "__main__":
    main()
