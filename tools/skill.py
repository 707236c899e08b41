"""The ``Skill`` tool's schema (Claude Code's). Its handler lives in ``fsm``: loading a skill reads the run's skill
catalog and may start a subagent, the machine's business (as ``task``'s)."""

from __future__ import annotations

from tools.base import REGISTRY, Tool

__all__ = ["SKILL"]

SKILL = Tool(
    name="Skill",
    description=(
        "Execute a skill within the main conversation\n\n"
        "When users ask you to perform tasks, check if any of the available skills match. Skills provide "
        "specialized capabilities and domain knowledge.\n\n"
        'When users reference a "slash command" or "/<something>", they are referring to a skill. Use this tool '
        "to invoke it.\n\n"
        "How to invoke:\n"
        "- Set `skill` to the exact name of an available skill (no leading slash).\n"
        "- Set `args` to pass optional arguments.\n\n"
        "Important:\n"
        "- Available skills are listed in the system prompt (<available_skills>)\n"
        "- Only invoke a skill that appears in that list, or one the user explicitly typed as `/<name>` in their "
        "message. Never guess or invent a skill name; otherwise do not call this tool\n"
        "- When a skill matches the user's request, invoke it BEFORE generating any other response about the task\n"
        "- Do not invoke a skill that is already running\n"
    ),
    input_schema={
        "type": "object",
        "properties": {
            "skill": {
                "type": "string",
                "description": "The name of a skill from the available-skills list. Do not guess names.",
            },
            "args": {"type": "string", "description": "Optional arguments for the skill"},
        },
        "required": ["skill"],
        "additionalProperties": False,
    },
)
REGISTRY[SKILL.name] = SKILL
