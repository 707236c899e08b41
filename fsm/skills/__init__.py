"""Skills, as the agentskills.io spec and Claude Code define them: found on disk, listed to the model by name and
description, loaded on demand.

- :mod:`~fsm.skills.catalog`: one skill (:class:`Skill`), its frontmatter checked (:func:`parse_skill`), and every
  skill of a workspace (:func:`discover` → :class:`Catalog`, one warning per skill skipped);
- :mod:`~fsm.skills.listing`: the ``<available_skills>`` block of the system prompt, within a budget, and the
  notice naming the skills left out (:func:`listing`);
- :mod:`~fsm.skills.invoke`: what invoking one gives (:func:`load` for the ``Skill`` tool, :func:`expand_slash`
  for a ``/name args`` prompt, :func:`skills_in_use` for compaction to give back).

The package reads files and returns text; it never calls a model, prints, or touches an agent.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.skills.catalog import SKILL_TOOL, Catalog, Skill, discover, parse_skill
    from fsm.skills.invoke import Loaded, expand, expand_slash, load, skills_in_use, slash_skill
    from fsm.skills.listing import BUDGET, listing
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "catalog": ["SKILL_TOOL", "Catalog", "Skill", "discover", "parse_skill"],
            "invoke": ["Loaded", "expand", "expand_slash", "load", "skills_in_use", "slash_skill"],
            "listing": ["BUDGET", "listing"],
        },
    )

__all__ = [
    "BUDGET",
    "SKILL_TOOL",
    "Catalog",
    "Loaded",
    "Skill",
    "discover",
    "expand",
    "expand_slash",
    "listing",
    "load",
    "parse_skill",
    "skills_in_use",
    "slash_skill",
]
