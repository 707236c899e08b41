"""Project context and custom subagents end to end: CLAUDE.md on the wire, .claude/agents definitions."""

from __future__ import annotations

from pathlib import Path

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic

REVIEWER = """---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Glob
model: haiku
---
You are the reviewer. Report bugs only.
"""


def _delegate(kind: str | None = None) -> list[object]:
    task = {"prompt": "Review app.py", **({"subagent_type": kind} if kind else {})}
    return [tool_reply(tool_use("task", task, id="toolu_task")), text_reply("no bugs"), text_reply("Reviewed.")]


class TestContext:
    def test_claude_md_reaches_root_and_subagent(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path, tmp_path: Path
    ) -> None:
        """CLAUDE.md, AGENTS.md and ~/.claude/CLAUDE.md are in both system prompts; --verbose names them."""
        home = tmp_path / "home"
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "CLAUDE.md").write_text("USER-RULE: be terse.\n")
        (project / "CLAUDE.md").write_text("PROJECT-RULE: run pytest -q.\n")
        (project / "AGENTS.md").write_text("AGENTS-RULE: no network.\n")
        fake.script = _delegate()
        run = agentfsm(
            "-p", "go", "--verbose", env=base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="t", HOME=str(home))
        )
        assert run.code == 0, run.stderr
        root, child = fake.messages_requests[0], fake.messages_requests[1]
        for system in (root.system, child.system):
            assert f"## Contents of {project / 'CLAUDE.md'} (project instructions):\n\nPROJECT-RULE" in system
            assert "AGENTS-RULE: no network." in system and "USER-RULE: be terse." in system
        assert root.system != child.system
        assert f"agentfsm: context: loaded {project / 'CLAUDE.md'} (29 characters)" in run.stderr
        assert f"agentfsm: context: loaded {home / '.claude' / 'CLAUDE.md'}" in run.stderr


class TestCustomSubagents:
    def test_reviewer_gets_its_tools_prompt_and_model(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """subagent_type "reviewer" runs with exactly Read and Glob, the file's body as prompt, and haiku."""
        (project / ".claude" / "agents").mkdir(parents=True)
        (project / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER)
        fake.script = _delegate("reviewer")
        run = agentfsm("-p", "review it", "--output-format", "stream-json", "--no-transition-events")
        assert run.code == 0, run.stderr
        root, child = fake.messages_requests[0], fake.messages_requests[1]
        task = next(t for t in root.body["tools"] if t["name"] == "task")
        assert "reviewer: Reviews a change for bugs." in task["description"]
        assert "subagent_type" in task["input_schema"]["properties"]
        assert child.tool_names == ["read_file", "glob"]
        assert child.system.startswith("You are the reviewer. Report bugs only.")
        assert (root.body["model"], child.body["model"]) == (
            "claude-sonnet-4-5",
            "claude-haiku-4-5-20251001",
        )  # the alias, as Claude Code sends it
        assert run.json_lines()[0]["agents"] == ["general-purpose", "reviewer"]

    def test_agents_json_and_the_default_type(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--agents JSON defines a type; a task without subagent_type is general-purpose (all five tools and
        TodoWrite)."""
        fake.script = _delegate()
        run = agentfsm(
            "-p",
            "go",
            "--agents",
            '{"doc": {"description": "Writes docs.", "prompt": "You write.", "tools": ["Write"]}}',
        )
        assert run.code == 0, run.stderr
        assert (
            "doc: Writes docs."
            in next(t for t in fake.messages_requests[0].body["tools"] if t["name"] == "task")["description"]
        )
        general = ["bash", "read_file", "write_file", "edit_file", "glob", "TodoWrite"]
        assert fake.messages_requests[1].tool_names == general

    def test_max_turns_caps_a_custom_type(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--max-turns 2 caps a custom type whose maxTurns is 30 (its maxTurns may only lower the run's): the
        subagent makes 2 calls, then answers that it stopped after 2 turns; the root's next call ends the run."""
        glob = {"pattern": "*.py"}
        fake.script = [
            tool_reply(tool_use("task", {"prompt": "Look", "subagent_type": "busy"}, id="toolu_task")),
            tool_reply(tool_use("glob", glob, id="toolu_g1")),
            tool_reply(tool_use("glob", glob, id="toolu_g2")),
            text_reply("Done."),
            tool_reply(tool_use("glob", glob, id="toolu_g3")),  # a third call of the subagent would get this
        ]
        agents = '{"busy": {"description": "Busy.", "prompt": "You look.", "maxTurns": 30}}'
        run = agentfsm("-p", "go", "--max-turns", "2", "--agents", agents, "--output-format", "json")
        assert run.code == 0, run.stderr
        root = fake.messages_requests[0].system
        calls = ["root" if r.system == root else "subagent" for r in fake.messages_requests]
        assert calls == ["root", "subagent", "subagent", "root"]
        result = fake.messages_requests[3].messages[-1]["content"][0]
        assert result["tool_use_id"] == "toolu_task"
        assert "Subagent stopped after 2 turns without a final answer." in str(result["content"])
        assert (run.json()["result"], run.json()["num_turns"]) == ("Done.", 2)

    def test_invalid_definition_is_one_line(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """A definition listing Task is refused in one line naming the file; nothing is sent."""
        (project / ".claude" / "agents").mkdir(parents=True)
        bad = project / ".claude" / "agents" / "boss.md"
        bad.write_text("---\nname: boss\ndescription: Delegates.\ntools: Read, Task\n---\nYou delegate.\n")
        run = agentfsm("-p", "go")
        assert (run.code, run.stdout) == (1, "")
        assert run.stderr == (
            f"agentfsm: {bad}: tools lists Task, but a subagent cannot delegate (depth stays 1); remove it\n"
        )
        assert fake.requests == []
