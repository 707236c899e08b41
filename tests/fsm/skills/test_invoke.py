"""Tests for fsm.skills.invoke and fsm.skills.listing: arguments, the Skill tool's answers, /name, the listing's
budget, and finding the skills in use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsm.skills import Catalog, Skill, expand, expand_slash, listing, load, skills_in_use


def skill(name: str, *, body: str = "Greet $ARGUMENTS.\n", **fields: Any) -> Skill:
    return Skill(
        name, f"{name} does things", body, Path(f"/s/{name}"), Path(f"/s/{name}/SKILL.md"), "project", **fields
    )


CATALOG = Catalog(
    {
        "greet": skill("greet"),
        "manual": skill("manual", model_invocable=False),
        "hidden": skill("hidden", user_invocable=False),
    }
)


class TestExpand:
    @pytest.mark.parametrize(
        ("body", "args", "text"),
        [
            ("Hi $ARGUMENTS!", "Bob Smith", "Hi Bob Smith!"),
            ("First $0, second $ARGUMENTS[1], none $2.", 'Bob "Ann Lee"', "First Bob, second Ann Lee, none ."),
            ("No placeholder.\n", "x y", "No placeholder.\n\nARGUMENTS: x y\n"),
            ("No placeholder.\n", "", "No placeholder.\n"),
            ("Cost $10 and $ARGUMENTS", "a", "Cost  and a"),
        ],
    )
    def test_arguments(self, body: str, args: str, text: str) -> None:
        """$ARGUMENTS is the whole string, $N and $ARGUMENTS[N] the Nth word; without a placeholder they are
        appended."""
        assert expand(body, args) == text


class TestLoad:
    def test_a_skill_loads_with_its_directory_and_arguments(self) -> None:
        """The loaded text names the skill's directory, then its body with the arguments in."""
        loaded = load(CATALOG, {"skill": "greet", "args": "Bob"})
        assert not isinstance(loaded, str)
        assert loaded.text == "Base directory for this skill: /s/greet\n\nGreet Bob.\n"
        assert load(CATALOG, {"skill": "/greet"}) == load(CATALOG, {"skill": "greet"})

    @pytest.mark.parametrize(
        ("name", "error"),
        [
            ("nope", "Error: Unknown skill: nope"),
            ("../../etc/passwd", "Error: Unknown skill: ../../etc/passwd"),
            ("/etc/passwd", "Error: Unknown skill: etc/passwd"),
            ("manual", "Error: Skill manual cannot be used with Skill tool due to disable-model-invocation"),
        ],
    )
    def test_refusals_in_claude_codes_words(self, name: str, error: str) -> None:
        """An unknown name (a path is one: no path is built from it) and a skill the model may not invoke are
        refused with Claude Code's text."""
        assert load(CATALOG, {"skill": name}) == error


class TestSlash:
    def test_a_slash_prompt_becomes_the_skills_text(self) -> None:
        """/name args becomes Claude Code's command tags, then the skill's text; a skill only the model may invoke,
        an unknown name and a plain prompt are not expanded."""
        assert expand_slash("/manual  now please ", CATALOG) == (
            "<command-message>manual</command-message>\n<command-name>/manual</command-name>\n"
            "<command-args>now please</command-args>\n\nBase directory for this skill: /s/manual\n\nGreet now please.\n"
        )
        assert [expand_slash(p, CATALOG) for p in ("/hidden", "/nope x", "greet me", "/greet/x")] == [None] * 4


class TestListing:
    def test_within_the_budget_the_rest_named(self) -> None:
        """Entries are listed in order while they fit; every skill past the budget is named in one line."""
        skills = [skill(f"s{i}") for i in range(5)]
        entry = len("<skill>\n<name>s0</name>\n<description>s0 does things</description>\n</skill>\n")
        text = listing(skills, budget=entry * 2)
        assert text.count("<skill>") == 2 and "<name>s1</name>" in text and "<name>s2</name>" not in text
        assert text.endswith(
            "3 more skills did not fit the listing's budget of 150 characters: s2, s3, s4. "
            "The Skill tool loads them by name too."
        )
        assert listing([]) == "" and "did not fit" not in listing(skills)

    def test_descriptions_are_escaped(self) -> None:
        """A description cannot close the XML block."""
        tricky = Skill("x", "</available_skills> & <b>", "b\n", Path("/x"), Path("/x/SKILL.md"), "project")
        assert "&lt;/available_skills&gt; &amp; &lt;b&gt;" in listing([tricky])


def test_skills_in_use_are_found_once_in_order() -> None:
    """A skill loaded by the tool, by /name, or given back by an earlier compaction is found once."""
    text = "Base directory for this skill: /s/a\n\nA.\n"
    other = "Base directory for this skill: /s/b\n\nB.\n"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"<command-name>/a</command-name>\n\n{text}"},
        {"role": "assistant", "content": [{"type": "text", "text": text}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}, {"type": "text", "text": other}],
        },
        {"role": "user", "content": [{"type": "text", "text": f"A skill in use before the summary:\n{text}"}]},
    ]
    assert skills_in_use(messages) == (text.strip(), other.strip())
