"""Skills and the todo list end to end: one headless run over a workspace with skills (the project's, an
--add-dir's, a command, a bad one), and one stream-json session whose user message is a /name prompt."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fsm.model.aliases import ALIASES
from fsm.skills.invoke import HEADER
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, killed_after
from tests.e2e.fake_server import FakeAnthropic

TODOS = [
    {"content": "Greet Alice", "status": "completed", "activeForm": "Greeting Alice"},
    {"content": "Report", "status": "in_progress", "activeForm": "Reporting"},
]


FORK_MODEL = "claude-fork-test-1"
"""The survey skill's model, an id no alias gives."""


def prompt_of(message: dict[str, Any]) -> str:
    """A user message's prompt: its text, or its first text block (a hook's context may follow)."""
    content = message["content"]
    return content if isinstance(content, str) else content[0]["text"]


def skill(root: Path, name: str, frontmatter: str, body: str) -> Path:
    path = root / ".claude" / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n{frontmatter}---\n{body}")
    return path


def workspace(project: Path, extra: Path) -> Path:
    greet = "argument-hint: [name]\nallowed-tools: Bash(mkdir:*)\nmodel: haiku\n"
    skill(project, "greet", greet, "Say hello to $ARGUMENTS.\n")
    skill(project, "survey", f"context: fork\nmodel: {FORK_MODEL}\n", "Survey $ARGUMENTS and report.\n")
    bad = skill(project, "broken", "colour: red\n", "x\n")
    skill(extra, "beside", "", "From beside.\n")
    (project / ".claude" / "commands").mkdir()
    (project / ".claude" / "commands" / "deploy.md").write_text("Deploy to $ARGUMENTS.\n")
    return bad


class TestHeadless:
    def test_listed_loaded_forked_and_todos_streamed(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path, tmp_path: Path
    ) -> None:
        """/greet Alice is the skill's text; the system prompt lists the skills (not their bodies); the model's
        Skill call of a fork skill runs a subagent; its TodoWrite is a tool_use on the stream; system/init names
        the skills and slash commands; the bad skill is one note of the result, and so is the untrusted folder's
        skill whose allowed-tools are ignored. The skills' models: /greet's (haiku) drives the root's turns of the
        run, the forked survey's subagent calls its own."""
        extra = tmp_path / "extra"
        bad = workspace(project, extra)
        fake.script = [
            tool_reply(
                tool_use("TodoWrite", {"todos": TODOS}, id="todo"),
                tool_use("Skill", {"skill": "survey", "args": "the repo"}, id="fork"),
            ),
            text_reply("surveyed"),
            text_reply("Hello, Alice."),
        ]
        run = agentfsm(
            "-p", "/greet Alice", "--add-dir", str(extra), "--output-format", "stream-json", "--verbose",
            "--no-transition-events",
        )  # fmt: skip
        assert run.code == 0, run.stderr
        first, child, last = fake.messages_requests
        sent = prompt_of(first.messages[0])
        assert sent.startswith("<command-message>greet</command-message>\n<command-name>/greet</command-name>")
        assert sent.endswith(
            f"Base directory for this skill: {project / '.claude/skills/greet'}\n\nSay hello to Alice.\n"
        )
        for name in ("greet", "survey", "beside"):
            assert f"<name>{name}</name>\n<description>The {name} skill.</description>" in first.system
        assert "<name>deploy</name>\n<description>Deploy to $ARGUMENTS.</description>" in first.system
        assert "Survey $ARGUMENTS" not in first.system  # names and descriptions only, never a body
        assert first.tool_names[-2:] == ["TodoWrite", "Skill"]
        assert prompt_of(child.messages[0]).endswith("Survey the repo and report.\n")
        assert [r.body["model"] for r in (first, child, last)] == [ALIASES["haiku"], FORK_MODEL, ALIASES["haiku"]]
        forked = last.messages[-1]["content"][1]
        assert (forked["tool_use_id"], forked["content"]) == (
            "fork",
            'Skill "survey" completed (forked execution).\n\nResult:\nsurveyed',
        )
        out = run.json_lines()
        init, result = out[0], out[-1]
        assert init["skills"] == ["greet", "survey", "beside"]
        assert init["slash_commands"] == ["greet", "survey", "beside", "deploy", "compact"]
        assert init["tools"][-2:] == ["TodoWrite", "Skill"]
        uses = [b for o in out if o["type"] == "assistant" for b in o["message"]["content"] if b["type"] == "tool_use"]
        assert uses[0] == {"type": "tool_use", "id": "todo", "name": "TodoWrite", "input": {"todos": TODOS}}
        assert result["result"] == "Hello, Alice."
        notes = result.get("notes", [])
        assert any(n.startswith(f"skill skipped: {bad}: unknown key 'colour'") for n in notes)
        assert "skill greet: its allowed-tools are ignored (this folder is not trusted)" in notes


class TestStreamJsonInput:
    def test_a_slash_command_line_is_the_skills_text(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path, tmp_path: Path
    ) -> None:
        """A stream-json user message "/deploy staging" sends the command's text, on the session's model; the
        model's Skill call of greet (model: haiku) loads it inline and the turns after call haiku; in text mode a
        bad skill is one warning line on stderr, --verbose names each skill loaded, and in a trusted folder no
        skill's allowed-tools are ignored. A second line "/survey the repo" (context: fork) runs the skill in a
        subagent on the skill's model, no turn of the session's: its answer is that turn's result."""
        workspace(project, tmp_path / "extra")
        fake.script = [
            tool_reply(tool_use("Skill", {"skill": "greet", "args": "Bob"})),
            text_reply("deployed"),
            text_reply("surveyed"),
        ]
        lines = [
            {"type": "user", "message": {"role": "user", "content": text}} for text in ("/deploy staging", "/survey it")
        ]
        run = agentfsm(
            "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
            "--no-transition-events", input="".join(json.dumps(line) + "\n" for line in lines),
        )  # fmt: skip
        assert run.code == 0, run.stderr
        first, after, forked = fake.messages_requests
        assert prompt_of(first.messages[0]).endswith("Deploy to staging.\n")
        assert first.body["model"] != ALIASES["haiku"] and after.body["model"] == ALIASES["haiku"]
        assert len(forked.messages) == 1  # the subagent's request: the skill's text, nothing of the session's
        survey = project / ".claude" / "skills" / "survey"
        assert prompt_of(forked.messages[0]) == f"{HEADER}{survey}\n\nSurvey it and report.\n"
        assert forked.body["model"] == FORK_MODEL
        results = [o for o in run.json_lines() if o["type"] == "result"]
        assert [(r["result"], r["num_turns"]) for r in results] == [("deployed", 2), ("surveyed", 0)]
        fake.script = [text_reply("hi")]
        fake.requests.clear()
        text = agentfsm("-p", "hi", "--verbose", "--trust")
        assert text.stderr.count("agentfsm: warning: skill skipped:") == 1 and "unknown key 'colour'" in text.stderr
        assert f"agentfsm: skill: greet from {project / '.claude/skills/greet/SKILL.md'}\n" in text.stderr
        assert "allowed-tools are ignored" not in text.stderr  # --trust: the project's rules may apply


class TestResumed:
    """A run killed after a skill chose a model goes on under ``--continue`` with that model (the journal holds it)."""

    @staticmethod
    def _hang(release: threading.Event) -> Any:
        def hang(body: dict[str, Any]) -> dict[str, Any]:
            release.wait(30)
            return text_reply("too late")

        return hang

    def test_an_inline_skills_model_drives_the_rest_of_the_run(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """The model's Skill call of greet (model: haiku), then a call on haiku during which the run is killed: the
        resumed call is on haiku too, and so is the next; a new prompt is on the session's model again."""
        workspace(project, project.parent / "extra")
        release = threading.Event()
        fake.script = [tool_reply(tool_use("Skill", {"skill": "greet", "args": "Bob"}, id="s1")), self._hang(release)]
        killed_after(fake, ["-p", "greet Bob"], project, 2)
        release.set()
        assert fake.messages_requests[1].body["model"] == ALIASES["haiku"]
        fake.requests.clear()
        fake.script = [tool_reply(tool_use("glob", {"pattern": "*"}, id="g1")), text_reply("greeted"), text_reply("hi")]
        run = agentfsm("-p", "--continue")
        assert (run.code, run.stdout) == (0, "greeted\n"), run.stderr
        again = agentfsm("-p", "hi", "--continue")
        assert again.code == 0, again.stderr
        models = [r.body["model"] for r in fake.messages_requests]
        assert models[:2] == [ALIASES["haiku"]] * 2 and models[2] != ALIASES["haiku"]

    def test_a_forked_skills_subagent_keeps_its_model(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """The model's Skill call of survey (context: fork, its own model); killed while the subagent waits on the
        model: resumed, the subagent calls the skill's model, and the root its own."""
        workspace(project, project.parent / "extra")
        release = threading.Event()
        fake.script = [tool_reply(tool_use("Skill", {"skill": "survey", "args": "it"}, id="s1")), self._hang(release)]
        killed_after(fake, ["-p", "survey it"], project, 2)
        release.set()
        assert fake.messages_requests[1].body["model"] == FORK_MODEL
        fake.requests.clear()
        fake.script = [text_reply("surveyed"), text_reply("done")]
        run = agentfsm("-p", "--continue")
        assert (run.code, run.stdout) == (0, "done\n"), run.stderr
        child, root = (r.body["model"] for r in fake.messages_requests)
        assert child == FORK_MODEL and root != FORK_MODEL
