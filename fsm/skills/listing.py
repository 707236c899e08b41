"""The skills as the system prompt lists them: :func:`listing`, an ``<available_skills>`` block of names and
descriptions (the agentskills.io form) within :data:`BUDGET` characters.

Only names and descriptions are listed; a body is loaded when the skill is invoked. Skills past the budget are
never dropped silently: one line after the block names each of them, so the model can still load them by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape

from fsm.skills.catalog import SKILL_TOOL, Skill

__all__ = ["BUDGET", "listing"]

BUDGET = 8_000
"""The most characters the ``<skill>`` entries of the listing take together."""

_INTRO = (
    f"# Skills\nThe {SKILL_TOOL} tool loads one of these skills by name, with its instructions. When a skill "
    "matches the task, invoke it before doing the task yourself; never invent a name."
)


def _entry(skill: Skill) -> str:
    return (
        f"<skill>\n<name>{escape(skill.name)}</name>\n<description>{escape(skill.description)}</description>\n"
        "</skill>\n"
    )


def listing(skills: Sequence[Skill], *, budget: int = BUDGET) -> str:
    """The system prompt's skills section for *skills* (in their order), '' without any: the entries that fit in
    *budget* characters, then a notice naming the ones that do not."""
    if not skills:
        return ""
    entries: list[str] = []
    left_out: list[str] = []
    spent = 0
    for skill in skills:
        entry = _entry(skill)
        if left_out or spent + len(entry) > budget:
            left_out.append(skill.name)
            continue
        entries.append(entry)
        spent += len(entry)
    text = f"{_INTRO}\n\n<available_skills>\n{''.join(entries)}</available_skills>"
    if left_out:
        text += (
            f"\n{len(left_out)} more skill{'s' if len(left_out) > 1 else ''} did not fit the listing's budget of "
            f"{budget:,} characters: {', '.join(left_out)}. The {SKILL_TOOL} tool loads them by name too."
        )
    return text
