"""Tests for fsm.core.subagents and fsm.core.context: definitions, context files, and the agent using them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from fsm.core.agent import Agent
from fsm.core.context import MAX_CHARS, context_text, load_context
from fsm.core.subagents import (
    AgentDefinition,
    definitions_from_json,
    load_definitions,
    parse_definition,
    task_problem,
)
from fsm.errors import ConfigError
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use

REVIEWER = (
    "---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Glob\nmodel: haiku\nmaxTurns: 3\n---\n"
    "You review code carefully.\n"
)


class TestParseDefinition:
    def test_fields(self) -> None:
        """Frontmatter fields and the body become the definition; Claude Code's tool names map to ours."""
        d = parse_definition(REVIEWER, "r.md")
        assert d == AgentDefinition(
            "reviewer",
            "Reviews code.",
            "You review code carefully.",
            ("read_file", "glob"),
            "claude-haiku-4-5-20251001",
            3,
            "r.md",
        )

    def test_yaml_list_and_inherit(self) -> None:
        """tools may be a YAML list; model inherit (or none) keeps the parent's."""
        d = parse_definition("---\nname: a\ndescription: d\ntools: [bash, Edit]\nmodel: inherit\n---\nP", "a.md")
        assert (d.tools, d.model, d.max_turns) == (("bash", "edit_file"), None, None)

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("name: a\n", "a.md: no YAML frontmatter: the file must start with a '---' line"),
            ("---\nname: a\n", "a.md: the frontmatter has no closing '---' line"),
            ("---\nname: a: b\n---\nP", "a.md: the frontmatter is not valid YAML at line 2: mapping values"),
            (
                "---\nname: a\ndescription: d\ntools: Read, Task\n---\nP",
                "a.md: tools lists Task, but a subagent cannot delegate (depth stays 1); remove it",
            ),
            (
                "---\nname: a\ndescription: d\ntools: Agent\n---\nP",
                "a.md: tools lists Agent, but a subagent cannot delegate (depth stays 1); remove it",
            ),
            (
                "---\nname: a\ndescription: d\ntools: Grep\n---\nP",
                "a.md: unknown tool 'Grep' in tools (available: Read, Write, Edit, Bash, Glob)",
            ),
            ("---\nname: a\n---\nP", "a.md: description is missing; say when the subagent should be used"),
            ("---\nname: a\ndescription: d\n---\n", "a.md: the system prompt is empty; write it below the frontmatter"),
            ("---\nname: a\ndescription: d\nmaxTurns: 99\n---\nP", "a.md: maxTurns must be 1..30 (got 99)"),
            (
                "---\nname: general-purpose\ndescription: d\n---\nP",
                "a.md: general-purpose is the built-in subagent; pick another name",
            ),
        ],
    )
    def test_errors_are_one_line_naming_the_file(self, text: str, message: str) -> None:
        """Each bad definition is one ConfigError line that names the file."""
        with pytest.raises(ConfigError) as info:
            parse_definition(text, "a.md")
        assert str(info.value).startswith(message) and "\n" not in str(info.value)


class TestLoad:
    def test_project_wins_over_user(self, tmp_path: Path) -> None:
        """A project definition replaces the user's of the same name; others are kept."""
        home, ws = tmp_path / "home", tmp_path / "ws"
        (home / ".claude" / "agents").mkdir(parents=True)
        (ws / ".claude" / "agents").mkdir(parents=True)
        (home / ".claude" / "agents" / "a.md").write_text("---\nname: a\ndescription: user a\n---\nU")
        (home / ".claude" / "agents" / "b.md").write_text("---\nname: b\ndescription: user b\n---\nU")
        (ws / ".claude" / "agents" / "a.md").write_text("---\nname: a\ndescription: project a\n---\nP")
        found = load_definitions(ws, home=home)
        assert {n: d.description for n, d in found.items()} == {"a": "project a", "b": "user b"}

    def test_json(self) -> None:
        """--agents JSON takes Claude Code's shape."""
        found = definitions_from_json('{"rev": {"description": "d", "prompt": "P", "tools": ["Read"]}}')
        assert (found["rev"].prompt, found["rev"].tools) == ("P", ("read_file",))
        with pytest.raises(ConfigError, match=r"^agents JSON is not valid JSON"):
            definitions_from_json("{")


class TestContext:
    def test_files_in_order_with_headers(self, tmp_path: Path) -> None:
        """User file first, then CLAUDE.md, .claude/CLAUDE.md, AGENTS.md, each under a header naming it."""
        home, ws = tmp_path / "home", tmp_path / "ws"
        (home / ".claude").mkdir(parents=True)
        (ws / ".claude").mkdir(parents=True)
        (home / ".claude" / "CLAUDE.md").write_text("user rule")
        (ws / "CLAUDE.md").write_text("claude rule")
        (ws / ".claude" / "CLAUDE.md").write_text("dot rule")
        (ws / "AGENTS.md").write_text("agents rule")
        text = context_text(load_context(ws, home=home))
        order = [
            text.index(f"## Contents of {p}")
            for p in (home / ".claude" / "CLAUDE.md", ws / "CLAUDE.md", ws / ".claude" / "CLAUDE.md", ws / "AGENTS.md")
        ]
        assert order == sorted(order)
        assert text.index("user rule") < text.index("claude rule") < text.index("dot rule") < text.index("agents")

    def test_size_limit(self, tmp_path: Path) -> None:
        """A file longer than MAX_CHARS is cut there, and the cut is said."""
        (tmp_path / "CLAUDE.md").write_text("x" * (MAX_CHARS + 10) + "TAIL")
        files = load_context(tmp_path, home=tmp_path / "nohome")
        assert files[0].cut and len(files[0].text) == MAX_CHARS
        text = context_text(files)
        assert "TAIL" not in text and f"the file has {MAX_CHARS + 14:,} characters" in text

    def test_empty_and_twice_named_files(self, tmp_path: Path) -> None:
        """An empty file is left out; CLAUDE.md as a symlink to AGENTS.md is given once."""
        (tmp_path / "AGENTS.md").write_text("the rules")
        (tmp_path / "CLAUDE.md").symlink_to(tmp_path / "AGENTS.md")
        (tmp_path / ".claude").mkdir()
        (tmp_path / ".claude" / "CLAUDE.md").write_text("  \n")
        files = load_context(tmp_path, home=tmp_path / "nohome")
        assert [f.path.name for f in files] == ["CLAUDE.md"]

    def test_nothing(self, tmp_path: Path) -> None:
        """No files: no block."""
        assert context_text(load_context(tmp_path, home=tmp_path)) == ""


class TestAgentWithDefinitions:
    def test_child_gets_the_definition(self, tmp_path: Path) -> None:
        """subagent_type picks the definition: its tools, its prompt, its cap; context reaches both agents."""
        model = ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "look", "subagent_type": "reviewer"})),
                text_reply("fine"),
                text_reply("it is fine"),
            ]
        )
        agent = Agent(
            model,
            str(tmp_path),
            context="# Project context\nRULE-42",
            agents={"reviewer": parse_definition(REVIEWER, "r.md")},
        )
        assert agent.run("review") == "it is fine"
        root, child = model.requests[0], model.requests[1]
        assert "reviewer: Reviews code." in next(t for t in root.tools if t["name"] == "task")["description"]
        assert child.tool_names == ["read_file", "glob"]
        assert child.system.startswith("You review code carefully.")
        assert "RULE-42" in root.system and "RULE-42" in child.system
        spawned = next(r for r in agent.history if r.trigger == "subagent_spawned")
        assert spawned.child is not None

    def test_a_type_without_tools_gets_the_base_five(self, tmp_path: Path) -> None:
        """A definition without tools runs with the five base tools, never task."""
        model = ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "p", "subagent_type": "a"})),
                text_reply("child"),
                text_reply("done"),
            ]
        )
        definition = parse_definition("---\nname: a\ndescription: d\n---\nYou are a.", "a.md")
        Agent(model, str(tmp_path), agents={"a": definition}).run("go")
        assert model.requests[1].tool_names == ["bash", "read_file", "write_file", "edit_file", "glob"]

    def test_unknown_type_is_an_error_result(self, tmp_path: Path) -> None:
        """An unknown subagent_type spawns nothing and answers the call with the types there are."""
        model = ScriptedModel(
            [tool_reply(tool_use("task", {"prompt": "p", "subagent_type": "nope"})), text_reply("ok")]
        )
        agent = Agent(model, str(tmp_path))
        agent.run("go")
        result = model.requests[1].messages[-1]["content"][0]
        assert (result["content"], result["is_error"]) == (
            "Error: task: unknown subagent_type 'nope' (available: general-purpose)",
            True,
        )
        assert agent.data.spawned == 0


TYPES = {"reviewer": AgentDefinition("reviewer", "Reviews code.", "You review.")}


class TestTaskProblem:
    @pytest.mark.parametrize(
        ("task_input", "problem"),
        [
            ({}, "missing required parameter 'prompt'"),
            ({"prompt": "  \n"}, "'prompt' must not be blank; say what the subagent should do"),
            (
                {"prompt": "go", "subagent_type": "tester"},
                "unknown subagent_type 'tester' (available: general-purpose, reviewer)",
            ),
        ],
    )
    def test_why_a_task_call_cannot_spawn(self, task_input: object, problem: str) -> None:
        """A schema problem, a blank prompt or an unknown type is named in one line."""
        assert task_problem(task_input, TYPES) == problem

    @pytest.mark.parametrize("kind", [None, "general-purpose", "reviewer"])
    def test_a_good_call_has_none(self, kind: str | None) -> None:
        """A prompt with no type, the general-purpose one or a known custom type may spawn."""
        task_input = {"prompt": "review it"} if kind is None else {"prompt": "review it", "subagent_type": kind}
        assert task_problem(task_input, TYPES) is None


class TestQueuedQuestions:
    NAMES = ("alpha", "beta", "gamma")

    def _agent(self, tmp_path, approver, hooks=None):
        from fsm.testing import ScriptedByPrompt

        scripts = {
            name: [tool_reply(tool_use("bash", {"command": "sleep 0"})), text_reply(f"{name} slept")]
            for name in self.NAMES
        }
        scripts["go"] = [
            tool_reply(*(tool_use("task", {"prompt": n}, id=f"toolu_{n}") for n in self.NAMES)),
            text_reply("done"),
        ]
        return Agent(ScriptedByPrompt(scripts), str(tmp_path), approver=approver, hooks=hooks)

    def _arrivals(self):
        """A PreToolUse hook counting the calls that reached the chain, and an event set once all three have."""
        arrived, count = threading.Event(), []

        def hook(event):
            if event.tool_call["name"] != "bash":
                return
            count.append(1)
            if len(count) == len(self.NAMES):
                arrived.set()

        return hook, arrived

    def test_a_covers_the_questions_waiting_behind_it(self, tmp_path):
        """Three subagents running at once ask the same question: the first answer `a` (held until the other two
        are waiting for the approver) adds the rule, and the two waiting are allowed by it, not asked."""
        from fsm.policy.chain import Remember
        from fsm.policy.hooks import Hooks

        hook, arrived = self._arrivals()
        hooks = Hooks()
        hooks.on("PreToolUse", hook)
        asked = []

        def approver(call, ask):
            asked.append(ask.agent)
            assert arrived.wait(10)
            time.sleep(0.05)  # let the other two take their place in the approver's queue
            return Remember(ask.suggestions)

        agent = self._agent(tmp_path, approver, hooks)
        assert agent.run("go") == "done"
        assert len(asked) == 1 and asked[0].rsplit(".", 1)[-1] in {"1", "2", "3"}
        results = agent.messages[2]["content"]
        assert [b["content"] for b in results] == [f"{n} slept" for n in self.NAMES]

    def test_a_hooks_question_is_always_put(self, tmp_path):
        """A question a hook asks is put every time: a remembered rule does not answer it."""
        from fsm.policy.chain import Remember
        from fsm.policy.hooks import Ask, Hooks

        hooks = Hooks()
        hooks.on("PreToolUse", lambda event: Ask("the hook asks") if event.tool_call["name"] == "bash" else None)
        asked = []

        def approver(call, ask):
            asked.append(ask.agent)
            return Remember(("Bash(sleep:*)",))

        agent = self._agent(tmp_path, approver, hooks)
        assert agent.run("go") == "done"
        assert len(asked) == 3
