"""The todo list on the real agent: written by the reducer, per agent, journalled and resumed, given back after
a compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsm import Agent
from fsm.session.journal import Journal, default_path
from fsm.session.restore import resume
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.core.compaction_double import CharCompactor

TODOS = [
    {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
]


def write(todos: list[dict[str, Any]], id: str = "t") -> dict[str, Any]:
    return tool_reply(tool_use("TodoWrite", {"todos": todos}, id=id))


def test_the_list_is_agent_data_and_each_agent_has_its_own(tmp_path: Path) -> None:
    """A TodoWrite sets the agent's list; a subagent's TodoWrite sets its own, never its parent's; a bad call
    changes nothing."""
    child_list = [{"content": "Look", "status": "in_progress", "activeForm": "Looking"}]
    model = ScriptedModel(
        [
            write(TODOS),
            tool_reply(tool_use("task", {"prompt": "look around"})),
            write(child_list),
            text_reply("looked"),
            write([{"content": "x", "status": "nope", "activeForm": "x"}]),
            text_reply("done"),
        ]
    )
    agent = Agent(model, str(tmp_path))
    children: list[Agent] = []
    agent.subscribe(lambda r: children.extend(agent.children) if r.trigger == "tool_ran" and r.depth == 1 else None)
    agent.run("go")
    assert agent.data.todos == TODOS  # the child's list and the bad call left the root's as it was
    assert children and children[0].data.todos == child_list
    child_rows = [r for r in agent.history if r.depth == 1 and r.tool_call and r.tool_call["name"] == "TodoWrite"]
    assert child_rows and child_rows[0].tool_result is not None and not child_rows[0].tool_result.is_error


def test_the_list_survives_a_resume(tmp_path: Path) -> None:
    """Restored from the journal, the agent has the list its last TodoWrite left."""
    agent = Agent(ScriptedModel([write(TODOS), text_reply("done")]), str(tmp_path))
    with Journal(default_path(tmp_path)) as journal:
        session = journal.start(agent)
        agent.run("go")
    with Journal(default_path(tmp_path)) as journal:
        again = resume(journal, session, ScriptedModel([]))
    assert again.data.todos == TODOS


def test_the_list_and_the_skills_come_back_after_a_summary(tmp_path: Path) -> None:
    """/compact's new history gives back the todo list as a checklist and the text of each skill in use."""
    skill = tmp_path / ".claude" / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: greet\ndescription: d\n---\nGREET-BODY $ARGUMENTS\n")
    from fsm.skills import discover

    model = ScriptedModel(
        [
            write(TODOS),
            tool_reply(tool_use("Skill", {"skill": "greet", "args": "Bob"})),
            text_reply("done"),
            text_reply("the summary"),
            text_reply("after"),
        ]
    )
    agent = Agent(
        model, str(tmp_path), compactor=CharCompactor(threshold=None), skills=discover(tmp_path, home=tmp_path)
    )
    agent.run("go")
    agent.run("/compact")
    first = agent.messages[0]["content"]
    texts = [b["text"] for b in first]
    assert "the summary" in texts[0]
    assert texts[1] == "The todo list as it stands:\n☒ Read the code\n◼ Fixing the bug"
    assert (
        texts[2]
        == f"A skill in use before the summary:\nBase directory for this skill: {skill.parent}\n\nGREET-BODY Bob"
    )
    agent.run("/compact")  # a second summary still gives the skill back, once
    assert sum("GREET-BODY" in b["text"] for b in agent.messages[0]["content"]) == 1
