"""Record the real Claude Code on every contract scenario: ``python -m tests.e2e.contract.record``.

For each scenario of :mod:`tests.e2e.contract.scenarios` the recorder starts the loopback fake model
(``tests/e2e/fake_server.py``) with the scenario's script in Claude Code's tool words and runs ``claude`` with the
scenario's arguments inside bubblewrap (:func:`tests.e2e.contract.harness.run`: the host read-only, a fresh run
directory the only writable place, uid 1000 since Claude Code refuses bypassPermissions to root, a temporary
``HOME``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``, ``ANTHROPIC_BASE_URL`` the fake,
``ANTHROPIC_API_KEY=sk-ant-fake``). What a script sees — exit code, stdout (one JSON event a line, one JSON
document, or text), stderr lines — is written to ``fixtures/NAME.json`` with the Claude Code version, paths of the
run directory written as ``<ws>``, ``<home>``, ``<run>``.

Re-record after a Claude Code upgrade or a new scenario (``--only NAME`` for some, ``--missing`` for the new ones;
the binary is ``$CLAUDE_BIN``, else ``/work/cc/node_modules/.bin/claude``, else ``claude`` on PATH), commit the
fixtures, then run ``python -m tests.e2e.contract.compare --report`` and bring ``differences.yaml`` up to date.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.e2e.contract import harness
from tests.e2e.contract.scenarios import SCENARIOS, Scenario
from tests.e2e.contract.shapes import capture
from tests.fsm.policy.conformance.record import claude_binary, claude_version

__all__ = ["FIXTURES", "main", "record_one"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def record_one(scenario: Scenario, binary: str, version: str, base: Path) -> dict[str, Any]:
    """Claude Code's run of *scenario*, as a fixture."""
    output = harness.run("claude", binary, scenario, base=base)
    return {"scenario": scenario.name, "claude_code": version, "argv": list(scenario.argv), **capture(output)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", default=[], help="record only these scenarios")
    parser.add_argument("--missing", action="store_true", help="record only the scenarios with no fixture yet")
    parser.add_argument("--jobs", type=int, default=2, help="claude runs at once (default 2)")
    args = parser.parse_args(argv)
    binary = claude_binary()
    if binary is None:
        print("record: claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
        return 2
    version = claude_version(binary)
    chosen = [
        s
        for s in SCENARIOS
        if (not args.only or s.name in args.only) and not (args.missing and (FIXTURES / f"{s.name}.json").exists())
    ]
    FIXTURES.mkdir(exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="agentfsm-contract-"))
    start = time.monotonic()

    def one(scenario: Scenario) -> str:
        fixture = record_one(scenario, binary, version, base)
        path = FIXTURES / f"{scenario.name}.json"
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
        return f"record: {scenario.name}: exit {fixture['exit']} ({time.monotonic() - start:.0f} s)"

    try:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for line in pool.map(one, chosen):
                print(line, file=sys.stderr)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"record: {len(chosen)} scenarios with claude {version} -> {FIXTURES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
