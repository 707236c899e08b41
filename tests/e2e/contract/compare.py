"""Run agentfsm on every contract scenario and compare with Claude Code's fixtures:
``python -m tests.e2e.contract.compare --report``.

Each scenario of :mod:`tests.e2e.contract.scenarios` runs through the installed ``agentfsm`` (the script beside
this interpreter) against the loopback fake, the scenarios in parallel threads; its capture is compared field by
field (:func:`tests.e2e.contract.shapes.compare`) with the fixture recorded from Claude Code
(:mod:`tests.e2e.contract.record`). Every difference is either listed in ``differences.yaml`` — an intended one,
with why — or new. ``--report`` prints every current difference (``listed`` or ``NEW``), every listed difference
that no longer occurs (``GONE``: prune it), and the agreement figure, ``N of M script-visible fields agree (P %)``,
which docs/cli.md quotes. Exit status 1 when a difference is new or a listed one is gone.

``differences.yaml`` holds a list of ``{scenario, path, ours, theirs, why}``; ``scenario``, ``path``, ``ours`` and
``theirs`` match a difference's exactly, where each ``*`` stands for any text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from attrs import frozen

from tests.e2e.contract import harness
from tests.e2e.contract.record import FIXTURES
from tests.e2e.contract.scenarios import SCENARIOS, Scenario
from tests.e2e.contract.shapes import Field, capture, compare

__all__ = ["DIFFERENCES", "Comparison", "Difference", "figure", "load_listed", "main", "matches", "measure", "run_ours"]

HERE = Path(__file__).resolve().parent
DIFFERENCES = HERE / "differences.yaml"
AGENTFSM = Path(sys.executable).parent / "agentfsm"


@frozen
class Difference:
    """One field of one scenario where the two harnesses differ."""

    scenario: str
    path: str
    ours: str
    theirs: str


@frozen
class Comparison:
    """All scenarios compared: the fields, the differences, and which are listed."""

    fields: int
    agree: int
    differences: list[Difference]
    unlisted: list[Difference]
    gone: list[dict[str, str]]
    """Listed differences that match none of today's."""

    @property
    def figure(self) -> str:
        """``N of M script-visible fields agree (P %)``."""
        return figure(self.agree, self.fields)


def figure(agree: int, total: int) -> str:
    """The agreement sentence docs/cli.md quotes."""
    return f"{agree} of {total} script-visible fields agree ({100 * agree // max(total, 1)} %)"


def matches(pattern: Any, value: str) -> bool:
    """Whether *value* matches *pattern*, where each ``*`` stands for any text (and nothing else is special)."""
    regex = ".*".join(re.escape(part) for part in str(pattern).split("*"))
    return re.fullmatch(regex, value, re.S) is not None


def _listed_by(entry: dict[str, Any], difference: Difference) -> bool:
    return all(matches(entry[key], getattr(difference, key)) for key in ("scenario", "path", "ours", "theirs"))


def load_listed(path: Path = DIFFERENCES) -> list[dict[str, Any]]:
    """The intended differences, each checked to have its five keys."""
    entries = yaml.safe_load(path.read_text()) or []
    for entry in entries:
        missing = {"scenario", "path", "ours", "theirs", "why"} - entry.keys()
        if missing:
            raise ValueError(f"{path.name}: an entry lacks {sorted(missing)}: {entry}")
        for key in ("ours", "theirs"):  # YAML's null, true, 2 are the fields' "null", "true", "2"
            if not isinstance(entry[key], str):
                entry[key] = json.dumps(entry[key])
    return list(entries)


def fixture(scenario: Scenario) -> dict[str, Any]:
    """Claude Code's recorded run of *scenario*."""
    path = FIXTURES / f"{scenario.name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no fixture for {scenario.name}: python -m tests.e2e.contract.record --missing")
    return dict(json.loads(path.read_text()))


def run_ours(scenarios: Sequence[Scenario], *, jobs: int = 4) -> dict[str, dict[str, Any]]:
    """agentfsm's capture of each scenario, by name, run *jobs* at a time."""
    base = Path(tempfile.mkdtemp(prefix="agentfsm-contract-"))

    def one(scenario: Scenario) -> tuple[str, dict[str, Any]]:
        return scenario.name, capture(harness.run("agentfsm", str(AGENTFSM), scenario, base=base))

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return dict(pool.map(one, scenarios))
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def measure(
    ours: dict[str, dict[str, Any]], listed: Iterable[dict[str, Any]], scenarios: Sequence[Scenario] = SCENARIOS
) -> Comparison:
    """Compare *ours* with the fixtures of *scenarios* and sort the differences by *listed*."""
    listed = list(listed)
    total = agree = 0
    differences: list[Difference] = []
    for scenario in scenarios:
        paired: list[Field] = compare(ours[scenario.name], fixture(scenario))
        total += len(paired)
        agree += sum(f.agrees for f in paired)
        differences += [Difference(scenario.name, f.path, f.ours, f.theirs) for f in paired if not f.agrees]
    unlisted = [d for d in differences if not any(_listed_by(e, d) for e in listed)]
    gone = [e for e in listed if not any(_listed_by(e, d) for d in differences)]
    return Comparison(total, agree, differences, unlisted, gone)


def _line(difference: Difference, status: str) -> str:
    ours, theirs = difference.ours, difference.theirs
    return f"{status:6} {difference.scenario}: {difference.path}: ours {ours!r}, theirs {theirs!r}"


def report(comparison: Comparison, listed: list[dict[str, Any]], out: Any = sys.stdout) -> None:
    """Print every current difference, the listed ones gone, and the figure."""
    unlisted = set(comparison.unlisted)
    for difference in comparison.differences:
        status = "NEW" if difference in unlisted else "listed"
        print(_line(difference, status), file=out)
    for entry in comparison.gone:
        print(f"GONE   {entry['scenario']}: {entry['path']}: ours {entry['ours']!r}, theirs {entry['theirs']!r} "
              f"(listed: {entry['why']})", file=out)  # fmt: skip
    print(f"{len(comparison.differences)} differences: {len(unlisted)} new, {len(comparison.gone)} listed but gone "
          f"({len(listed)} entries in {DIFFERENCES.name})", file=out)  # fmt: skip
    print(comparison.figure, file=out)


def _yaml_entries(differences: Iterable[Difference]) -> str:
    """Unlisted differences as entries to paste into differences.yaml (why left to fill in)."""
    rows = [{**{k: getattr(d, k) for k in ("scenario", "path", "ours", "theirs")}, "why": "TODO"} for d in differences]
    return yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=200)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--report", action="store_true", help="print every difference and the agreement figure")
    parser.add_argument("--only", nargs="*", default=[], help="only these scenarios")
    parser.add_argument("--new-entries", action="store_true", help="print the new differences as YAML entries")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="agentfsm runs at once")
    parser.add_argument("--save", type=Path, help="also write agentfsm's captures to this JSON file")
    parser.add_argument("--load", type=Path, help="compare the captures saved by --save instead of running agentfsm")
    args = parser.parse_args(argv)
    scenarios = [s for s in SCENARIOS if not args.only or s.name in args.only]
    listed = load_listed()
    if args.load:
        ours = json.loads(args.load.read_text())
        scenarios = [s for s in scenarios if s.name in ours]
    else:
        ours = run_ours(scenarios, jobs=args.jobs)
    if args.save:
        args.save.write_text(json.dumps(ours, indent=1, ensure_ascii=False))
    comparison = measure(ours, listed, scenarios)
    if args.new_entries:
        print(_yaml_entries(comparison.unlisted), end="")
    else:
        report(comparison, listed)
    return 1 if comparison.unlisted or (comparison.gone and not args.only) else 0


if __name__ == "__main__":
    raise SystemExit(main())
