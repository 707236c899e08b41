"""What invoking a skill gives, in Claude Code's words: :func:`load` for the ``Skill`` tool, :func:`expand_slash`
for a ``/name args`` prompt (:func:`typed_fork` when the skill is ``context: fork``), :func:`skills_in_use` for
compaction to give back.

A skill is found by its name in the :class:`~fsm.skills.catalog.Catalog` (a key): no path is ever built from the
name the model or the user gave. Its text is ``Base directory for this skill: DIR``, a blank line, and its body
with the arguments substituted (:func:`expand`): ``$ARGUMENTS`` is the whole argument string, ``$ARGUMENTS[N]``
and ``$N`` the Nth word (from 0, shell quoting respected); a body with no ``$ARGUMENTS`` gets
``ARGUMENTS: …`` appended when arguments were given.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from fsm.skills.catalog import Catalog, Skill

__all__ = [
    "HEADER",
    "TYPED",
    "Loaded",
    "expand",
    "expand_slash",
    "fork_result",
    "launching",
    "load",
    "skills_in_use",
    "slash_skill",
    "stdout",
    "typed_fork",
    "typed_text",
]

HEADER = "Base directory for this skill: "
"""How a loaded skill's text starts (Claude Code's words); :func:`skills_in_use` finds skills by it."""
TYPED = "forked-command-"
"""How the id of the call :func:`typed_fork` makes starts (Claude Code's progress id for a forked ``/name``)."""
_POSITIONAL = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$(\d+)(?!\d)")


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:  # an unclosed quote: plain words
        return args.split()


def expand(body: str, args: str) -> str:
    """*body* with *args* substituted (see the module docstring)."""
    words = _words(args)

    def nth(match: re.Match[str]) -> str:
        index = int(match.group(1) or match.group(2))
        return words[index] if index < len(words) else ""

    text = _POSITIONAL.sub(nth, body)
    if "$ARGUMENTS" in text:
        return text.replace("$ARGUMENTS", args)
    if args.strip() and text == body:
        return f"{text.rstrip()}\n\nARGUMENTS: {args}\n"
    return text


@frozen
class Loaded:
    """A skill invoked: which one, and its text with the arguments in."""

    skill: Skill
    text: str


def _text(skill: Skill, args: str) -> str:
    return f"{HEADER}{skill.base}\n\n{expand(skill.body, args)}"


def launching(name: str) -> str:
    """The ``Skill`` tool's result for a skill loaded into the conversation (its text follows, as a text block)."""
    return f"Launching skill: {name}"


def fork_result(name: str, result: str) -> str:
    """The ``Skill`` tool's result for a ``context: fork`` skill: its subagent's final answer."""
    return f'Skill "{name}" completed (forked execution).\n\nResult:\n{result}'


def load(catalog: Catalog, tool_input: Mapping[str, Any], *, running: str | None = None) -> Loaded | str:
    """The skill a ``Skill`` call with *tool_input* (``{skill, args}``) loads, or the error text that answers it.

    Args:
        running: the forked skill this agent runs, if it is one (invoking it again is refused).
    """
    name = tool_input.get("skill")
    name = name.removeprefix("/") if isinstance(name, str) else name
    skill = catalog.get(name)
    if skill is None:
        return f"Error: Unknown skill: {name}"
    if not skill.model_invocable:
        return f"Error: Skill {skill.name} cannot be used with Skill tool due to disable-model-invocation"
    if running == skill.name:
        return (
            f"Error: Skill {skill.name} is already executing in this forked context — you are the subagent running "
            "it. Execute the instructions in the skill body directly instead of re-invoking the Skill tool."
        )
    args = tool_input.get("args")
    return Loaded(skill, _text(skill, args if isinstance(args, str) else ""))


_SLASH = re.compile(r"/([a-z0-9-]+)(?:\s+([\s\S]*))?$")


def slash_skill(prompt: str, catalog: Catalog) -> Skill | None:
    """The skill a ``/name args`` *prompt* invokes: one of *catalog* a user may invoke; else None."""
    match = _SLASH.match(prompt.strip())
    skill = catalog.get(match.group(1)) if match else None
    return skill if skill is not None and skill.user_invocable else None


def expand_slash(prompt: str, catalog: Catalog) -> str | None:
    """The prompt a ``/name args`` prompt becomes when *name* is a skill a user may invoke (Claude Code's command
    tags, then the skill's text); None for any other prompt, which is sent as it is."""
    skill = slash_skill(prompt, catalog)
    match = _SLASH.match(prompt.strip())
    if skill is None or match is None:
        return None
    args = (match.group(2) or "").strip()
    tags = (
        f"<command-message>{skill.name}</command-message>\n<command-name>/{skill.name}</command-name>\n"
        f"<command-args>{args}</command-args>\n"
    )
    return f"{tags}\n{_text(skill, args)}"


def typed_fork(prompt: str, catalog: Catalog) -> dict[str, Any] | None:
    """The ``Skill`` call a ``/name args`` *prompt* stands for when *name* is a ``context: fork`` skill a user may
    invoke: Claude Code runs its text as a subagent's prompt, no model turn of the main agent's. The call is never
    sent to the model (its id starts with :data:`TYPED`); None for any other prompt."""
    skill = slash_skill(prompt, catalog)
    match = _SLASH.match(prompt.strip())
    if skill is None or match is None or not skill.fork:
        return None
    args = (match.group(2) or "").strip()
    return {
        "type": "tool_use",
        "id": f"{TYPED}{skill.name}",
        "name": "Skill",
        "input": {"skill": skill.name, "args": args},
    }


def typed_text(skill: Skill, args: str) -> str:
    """The prompt of the subagent that runs a typed ``/name args`` of the forked *skill*."""
    return _text(skill, args)


def stdout(text: str) -> str:
    """The message that carries a forked ``/name``'s answer into the conversation (Claude Code's words)."""
    return f"<local-command-stdout>\n{text}\n</local-command-stdout>"


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def skills_in_use(messages: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The text of every skill loaded in *messages* (by the ``Skill`` tool, a ``/name`` prompt, or given back by an
    earlier compaction), oldest first, each once."""
    found: dict[str, None] = {}
    for message in messages:
        if message.get("role") != "user":
            continue
        for text in _texts(message.get("content")):
            at = text.find(HEADER)
            if at >= 0:
                found.setdefault(text[at:].strip(), None)
    return tuple(found)
