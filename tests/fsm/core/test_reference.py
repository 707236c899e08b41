"""Ports of the reference harness's own tests (REFERENCE.md, "The reference's own tests")."""

from __future__ import annotations

from fsm import Agent, default_hooks
from fsm.policy.hooks import large_output_hook
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import BASE_TOOLS, PARENT_TOOLS, REGISTRY

BASE = {"bash", "read_file", "write_file", "edit_file", "glob"}


def test_toolsets():
    """Base = the five file and shell tools; parent = base + task + the jobs' two; a child gets the base."""
    assert {t.name for t in BASE_TOOLS} == BASE
    assert {t.name for t in PARENT_TOOLS} == BASE | {"task", "TaskOutput", "TaskStop"} and len(PARENT_TOOLS) == 8


def test_child_toolset(tmp_path):
    """A subagent is built with exactly the base tools, and its own TodoWrite."""
    model = ScriptedModel([tool_reply(tool_use("task", {"prompt": "p"})), text_reply("s"), text_reply("t")])
    agent = Agent(model=model, workdir=str(tmp_path))
    agent.send("x")
    for _ in range(3):
        agent.step()
    assert {t.name for t in agent.children[0].tools} == BASE | {"TodoWrite"}


def test_task_requires_prompt():
    """task's schema requires a non-empty prompt."""
    schema = REGISTRY["task"].input_schema
    assert schema["required"] == ["prompt"] and schema["properties"]["prompt"]["minLength"] == 1


def test_large_output_hook_on_post_tool_use():
    """The large-output hook is registered on PostToolUse."""
    assert large_output_hook in default_hooks().callbacks("PostToolUse")


def test_child_read_then_text_returns_text(tmp_path):
    """A child's read_file followed by a text reply returns that text to the parent."""
    (tmp_path / "notes.md").write_text("the notes\n")
    model = ScriptedModel(
        [
            tool_reply(tool_use("task", {"prompt": "read notes"}, id="k")),
            tool_reply(tool_use("read_file", {"path": "notes.md"})),
            text_reply("they say: the notes"),
            text_reply("ok"),
        ]
    )
    Agent(model=model, workdir=str(tmp_path)).run("x")
    assert model.requests[1].messages == [{"role": "user", "content": "read notes"}]
    assert len(model.requests[1].tools) == 6  # the base five and TodoWrite
    assert model.requests[2].messages[-1]["content"][0]["content"] == "the notes"
    assert model.requests[3].messages[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "k", "content": "they say: the notes"}
    ]
