"""A batch's summary (``OUT/summary.json`` and the printed table) and SWE-bench's ``preds.json``, from its results.

The summary covers the task file's ids whatever run wrote their lines, so a resumed batch's summary is the whole
batch's: ``finished`` of ``tasks`` have a final line, counted ``by_outcome`` (the agent's outcome, ``end_turn`` for
a finished answer, or ours when no agent answered: ``workspace_error``, ``setup_failed``, ``crashed``), with
``errors`` (``is_error``), the ``verify`` pass rate over the tasks that have a verify command, cost (every attempt's,
retries included; the mean per finished task) and p50/p95 of a final attempt's duration.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["percentile", "predictions", "render_table", "summarize"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The *q*-th percentile (0..100) of *values* by the nearest-rank method; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(
    ids: Iterable[str],
    lines: Iterable[dict[str, Any]],
    *,
    max_total_usd: float | None = None,
    interrupted: Sequence[str] = (),
    not_started: Sequence[str] = (),
) -> dict[str, Any]:
    """The summary of the batch whose task ids are *ids*, from its results *lines* (every attempt's)."""
    wanted = list(ids)
    known = set(wanted)
    mine = [line for line in lines if line.get("id") in known]
    finals = {line["id"]: line for line in mine if line.get("final")}
    verified = [line["verify"]["exit_code"] == 0 for line in finals.values() if isinstance(line.get("verify"), dict)]
    total = round(sum(float(line.get("total_cost_usd") or 0.0) for line in mine), 6)
    durations = [float(line.get("duration_s") or 0.0) for line in finals.values()]
    summary: dict[str, Any] = {
        "tasks": len(wanted),
        "finished": len(finals),
        "unfinished": len(wanted) - len(finals),
        "by_outcome": dict(sorted(Counter(str(line.get("outcome")) for line in finals.values()).items())),
        "errors": sum(1 for line in finals.values() if line.get("is_error")),
        "attempts": len(mine),
        "verify": {
            "run": len(verified),
            "passed": sum(verified),
            "pass_rate": round(sum(verified) / len(verified), 4) if verified else None,
        },
        "cost_usd": {"total": total, "mean": round(total / len(finals), 6) if finals else None},
        "duration_s": {"p50": percentile(durations, 50), "p95": percentile(durations, 95)},
    }
    if max_total_usd is not None:
        summary["max_total_usd"] = {
            "cap": max_total_usd,
            "over_by": round(max(0.0, total - max_total_usd), 6),
            "reached": total >= max_total_usd,
        }
    if interrupted:
        summary["interrupted"] = sorted(interrupted)
    if not_started:
        summary["not_started"] = len(not_started)
    return summary


def predictions(lines: Iterable[dict[str, Any]], *, model: str = "agentfsm") -> dict[str, dict[str, Any]]:
    """SWE-bench's ``preds.json``: ``{instance_id: {"instance_id", "model_name_or_path", "model_patch"}}`` from each
    final line (its patch; empty when the task changed nothing)."""
    return {
        line["id"]: {"instance_id": line["id"], "model_name_or_path": model, "model_patch": line.get("diff") or ""}
        for line in lines
        if line.get("final")
    }


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def render_table(summary: dict[str, Any]) -> str:
    """The summary as a short plain-text table for a terminal or a log."""
    rows = [("tasks", str(summary["tasks"])), ("finished", str(summary["finished"]))]
    rows += [(f"  {name}", str(count)) for name, count in summary["by_outcome"].items()]
    rows.append(("errors", str(summary["errors"])))
    verify = summary["verify"]
    if verify["run"]:
        rows.append(("verify passed", f"{verify['passed']}/{verify['run']} ({verify['pass_rate']:.0%})"))
    cost = summary["cost_usd"]
    rows.append(("cost", f"{_money(cost['total'])} total, {_money(cost['mean'])} mean"))
    duration = summary["duration_s"]
    rows.append(("duration", f"p50 {_seconds(duration['p50'])}, p95 {_seconds(duration['p95'])}"))
    if (cap := summary.get("max_total_usd")) is not None and cap["reached"]:
        rows.append(("cost cap", f"{_money(cap['cap'])} reached, over by {_money(cap['over_by'])}"))
    if summary.get("not_started"):
        rows.append(("not started", str(summary["not_started"])))
    if summary.get("interrupted"):
        rows.append(("interrupted", ", ".join(summary["interrupted"])))
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows) + "\n"
