"""agentfsm's policy against Claude Code's recorded verdicts: ``python -m tests.fsm.policy.conformance.measure``.

For each recorded case, :func:`judge` builds agentfsm's :class:`~fsm.policy.Policy` from the same rules
(``load_settings`` with the case's rules as ``--settings`` text) and mode, and judges the same call in a
workspace built by ``template.build``. :func:`compare` sorts every case into ``same`` (equal verdicts),
``looser`` (agentfsm allows what Claude Code asks about or denies: never acceptable), ``stricter``
(agentfsm asks or denies what Claude Code allows: acceptable only when ``stricter.txt`` gives the reason)
or ``other`` (both refuse to run it unasked, one asking, the other denying). ``--holdout`` measures the
hold-out corpus, ``--holdout2`` the second one; ``--effects`` runs each looser command in a jail (``effect.py``)
and says what it did, so the looser cases with a real effect are counted.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import frozen

from fsm.policy import Policy, Verdict, load_settings
from tests.fsm.policy.conformance import template
from tools import Workspace

__all__ = ["CORPUS", "HOLDOUT", "HOLDOUT2", "STRICTER", "Outcome", "compare", "judge", "load", "main", "stricter_list"]

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.jsonl"
HOLDOUT = HERE / "holdout.jsonl"
HOLDOUT2 = HERE / "holdout2.jsonl"
STRICTER = HERE / "stricter.txt"
_TOOLS = {"Bash": "bash", "Write": "write_file", "Edit": "edit_file"}


def load(path: Path) -> list[dict[str, Any]]:
    """The recorded cases of a JSONL file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def stricter_list(path: Path = STRICTER) -> dict[str, str]:
    """Case id → reason, from ``ID  reason`` lines (``#`` starts a comment)."""
    listed: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if line:
            case_id, _, reason = line.partition(" ")
            listed[case_id] = reason.strip()
    return listed


def _call(case: dict[str, Any], ws: Path, home: Path) -> dict[str, Any]:
    tool = case.get("tool", "Bash")
    if tool == "Bash":
        return {"name": "bash", "input": {"command": case["command"]}}
    path = case["path"]
    absolute = str(home / path[2:]) if path.startswith("~/") else path if path.startswith("/") else str(ws / path)
    if tool == "Write":
        return {"name": "write_file", "input": {"path": absolute, "content": case["content"]}}
    return {"name": "edit_file", "input": {"path": absolute, "old_text": case["old"], "new_text": case["new"]}}


def judge(case: dict[str, Any], ws: Path, home: Path) -> Verdict:
    """agentfsm's verdict on *case* in workspace *ws* with home *home* (``$HOME`` must already be *home*)."""
    rules = {k: case.get(k, []) for k in ("allow", "ask", "deny")}
    settings = load_settings(ws, sources=(), extra=json.dumps({"permissions": rules}), home=home)
    policy = Policy.from_settings(settings, mode=case["mode"])
    return policy.decide(_call(case, ws, home), Workspace(ws))


@frozen
class Outcome:
    """One case judged by both."""

    case: dict[str, Any]
    ours: Verdict

    @property
    def kind(self) -> str:
        """``same``, ``looser``, ``stricter`` or ``other``."""
        theirs, ours = self.case["verdict"], self.ours.behavior
        if theirs == ours:
            return "same"
        if ours == "allow":
            return "looser"
        if theirs == "allow":
            return "stricter"
        return "other"


def compare(cases: Iterable[dict[str, Any]], ws: Path, home: Path) -> list[Outcome]:
    """Every case judged by agentfsm, beside Claude Code's verdict."""
    return [Outcome(case, judge(case, ws, home)) for case in cases]


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    """Counts of each kind, the share of equal verdicts, and the everyday (``safe``) commands agentfsm refuses
    where Claude Code runs them."""
    counts = {k: sum(1 for o in outcomes if o.kind == k) for k in ("same", "looser", "stricter", "other")}
    safe_refused = sum(1 for o in outcomes if o.case.get("safe") and o.kind == "stricter")
    return {
        "cases": len(outcomes),
        **counts,
        "agreement": round(counts["same"] / len(outcomes), 3) if outcomes else 0.0,
        "safe": sum(1 for o in outcomes if o.case.get("safe")),
        "safe_refused": safe_refused,
    }


def _show(outcome: Outcome) -> str:
    case = outcome.case
    what = case.get("command") or f"{case['tool']} {case['path']}"
    rules = " ".join(f"{k}={v}" for k in ("allow", "ask", "deny") if (v := case.get(k)))
    return (
        f"{case['id']:<16} {case['mode']:<17} claude={case['verdict']:<5} agentfsm={outcome.ours.behavior:<5} "
        f"{what!r} {rules}".rstrip()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--holdout", action="store_true", help="measure the hold-out corpus")
    parser.add_argument("--holdout2", action="store_true", help="measure the second hold-out corpus")
    parser.add_argument("--show", default="looser", help="which kinds to list: looser,stricter,other,same")
    parser.add_argument("--effects", action="store_true", help="run each looser case in a jail and say what it did")
    parser.add_argument(
        "--stricter-lines",
        action="store_true",
        help="print stricter.txt's lines for today's policy: the listed reason, else agentfsm's own (to review)",
    )
    args = parser.parse_args(argv)
    path = HOLDOUT2 if args.holdout2 else HOLDOUT if args.holdout else CORPUS
    if not path.exists():
        print(f"measure: {path} does not exist; record it first (python -m tests.fsm.policy.conformance.record)")
        return 2
    with tempfile.TemporaryDirectory(prefix="agentfsm-measure-") as tmp:
        ws, home = template.build(tmp)
        os.environ["HOME"] = str(home)
        outcomes = compare(load(path), ws, home)
        if args.stricter_lines:
            listed = stricter_list()
            for o in outcomes:
                if o.kind == "stricter":
                    reason = listed.get(o.case["id"]) or "agentfsm: " + o.ours.reason.replace(str(ws), "<ws>")
                    print(f"{o.case['id']:<15} {reason.replace(str(home), '~')}")
            return 0
    shown = set(args.show.split(","))
    effects = 0
    for outcome in outcomes:
        if outcome.kind not in shown:
            continue
        line = _show(outcome)
        if args.effects and outcome.kind == "looser":
            did = _effect(outcome.case)
            effects += did is not None
            line += f"  => {did or 'no effect'}"
        print(line)
    result = figures(outcomes)
    if args.effects:
        result["looser_with_effect"] = effects
    print(json.dumps(result))
    return 0


def _effect(case: dict[str, Any]) -> str | None:
    if case.get("tool", "Bash") != "Bash":
        return f"writes {case['path']}"
    from tests.fsm.policy.conformance.effect import effect

    return effect(case["command"])


if __name__ == "__main__":
    raise SystemExit(main())
