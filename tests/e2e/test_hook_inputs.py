"""Hook input, the session transcript and subagent task events, end to end, beside the real Claude Code.

One scenario, run on the installed ``agentfsm`` and (when it is installed) on the real ``claude`` 2.1.x, both
against the loopback fake model: the model runs ``echo hi``, then a subagent that runs ``echo sub`` and answers,
then ends. A logging command hook on every event writes the JSON it reads to a file (the Stop hook also reads the
transcript it is told of), and a PostToolUse hook answers with ``additionalContext``. The tests compare, event by
event, the keys and value types each side's hooks read, how the context reaches the model in the next request,
and the ``system``/``task_*`` stream-json events; then what only we promise (a transcript under
``--no-session-persistence``, a resumed or forked transcript) and an Agent SDK program reading the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookMatcher,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    query,
)

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.policy.conformance.record import claude_binary

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop")
INTENDED = {"effort"}
"""Keys Claude Code's hook input has and ours has not (docs/permissions.md says why)."""
CONTEXT = "CTX-FROM-POST"
API_EXTRAS = {"container", "context_management", "stop_details"}
"""Keys of a transcript's assistant message that Claude Code fills in for newer API versions (null here)."""

_LOGGER = """
import json, os, sys
event = json.load(sys.stdin)
path = event.get("transcript_path")
if event["hook_event_name"] == "Stop":
    lines = open(path).read().splitlines() if path and os.path.exists(path) else []
    event["_transcript"] = [json.loads(line) for line in lines]
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
if event["hook_event_name"] == "PostToolUse":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": sys.argv[2]}}))
"""


def _settings(run: Path) -> Path:
    """A settings file: the logging hook on every event, echo allowed."""
    logger = run / "logger.py"
    logger.write_text(_LOGGER)
    command = f"{sys.executable} {logger} {run / 'hooks.jsonl'} {CONTEXT}"
    hooks = {e: [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}] for e in EVENTS}
    settings = run / "settings.json"
    settings.write_text(json.dumps({"hooks": hooks, "permissions": {"allow": ["Bash(echo:*)"]}}))
    return settings


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model, for either CLI: by the conversation so far (a subagent's starts with SUBTASK)."""
    tools = [t["name"] for t in body.get("tools", [])]
    claude = "Bash" in tools
    bash = "Bash" if claude else "bash"
    messages = body["messages"]
    first = messages[0]["content"]
    opening = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first if b.get("type") == "text")
    replies = sum(m["role"] == "assistant" for m in messages)
    if "SUBTASK" in opening and "MAINTASK" not in opening:
        if replies == 0:
            return tool_reply(tool_use(bash, _echo("sub", claude), id="toolu_sub1"))
        return text_reply("sub done")
    if replies == 0:
        return tool_reply(tool_use(bash, _echo("hi", claude), id="toolu_main1"))
    if replies == 1:
        task = {"description": "do sub", "prompt": "SUBTASK please", "subagent_type": "general-purpose"}
        return tool_reply(tool_use("Agent" if "Agent" in tools else "task", task, id="toolu_task1"))
    return text_reply("all done")


def _echo(word: str, claude: bool) -> dict[str, str]:
    return {"command": f"echo {word}", "description": f"echo {word}"} if claude else {"command": f"echo {word}"}


class Scenario:
    """One run of the scenario: the hook inputs by event, the stream-json lines, the model's requests."""

    def __init__(self, binary: str, tmp: Path, *extra: str) -> None:
        self.run = tmp / Path(binary).name
        self.home, self.project = self.run / "home", self.run / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir()
        settings = _settings(self.run)
        with FakeAnthropic(script=[_reply] * 12) as fake:
            env = base_env(
                ANTHROPIC_BASE_URL=fake.url,
                ANTHROPIC_API_KEY="sk-ant-fake",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                HOME=str(self.home),
            )
            env.pop("XDG_STATE_HOME", None)
            argv = [binary, "-p", "MAINTASK go", "--output-format", "stream-json", "--verbose"]
            done = subprocess.run(
                [*argv, "--settings", str(settings), *extra],
                cwd=self.project,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            self.requests = [r.body for r in fake.messages_requests]
        assert done.returncode == 0, done.stderr[-2000:]
        self.lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        log = self.run / "hooks.jsonl"
        self.inputs = [json.loads(line) for line in log.read_text().splitlines()]

    def event(self, name: str, *, sub: bool = False) -> dict[str, Any]:
        """The first input of hook event *name* (in the subagent, or outside it)."""
        return next(e for e in self.inputs if e["hook_event_name"] == name and ("agent_id" in e) == sub)

    def system(self, subtype: str) -> dict[str, Any]:
        return next(line for line in self.lines if line.get("type") == "system" and line.get("subtype") == subtype)


def _shape(value: Any) -> Any:
    """Keys and value types, recursively for objects (a list: its item types)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return ["list", sorted({type(v).__name__ for v in value})]
    return type(value).__name__


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    return Scenario(str(AGENTFSM), tmp_path_factory.mktemp("ours"))


@pytest.fixture(scope="module")
def theirs(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    binary = claude_binary()
    if binary is None:
        pytest.skip("the real claude CLI is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
    return Scenario(binary, tmp_path_factory.mktemp("theirs"))


class TestAgainstClaudeCode:
    @pytest.mark.parametrize(
        ("event", "sub"),
        [
            ("SessionStart", False),
            ("UserPromptSubmit", False),
            ("PreToolUse", False),
            ("PostToolUse", False),
            ("PreToolUse", True),
            ("PostToolUse", True),
            ("SubagentStart", True),
            ("SubagentStop", True),
            ("Stop", False),
        ],
    )
    def test_hook_input_keys_and_types(self, ours: Scenario, theirs: Scenario, event: str, sub: bool) -> None:
        """Each event's hook input has Claude Code's keys, each value of its type (but the intended differences)."""
        mine, real = (
            {k: v for k, v in side.event(event, sub=sub).items() if k != "_transcript"} for side in (ours, theirs)
        )
        real_shape = {k: v for k, v in _shape(real).items() if k not in INTENDED}
        mine_shape = _shape(mine)
        # objects on both sides, their keys the tool's: the model's input (our bash takes no description), and
        # the response, per tool in Claude Code (docs/permissions.md)
        for key in ("tool_input", "tool_response"):
            if key in real_shape:
                assert isinstance(mine.get(key), dict) and isinstance(real[key], dict)
                del mine_shape[key], real_shape[key]
        assert mine_shape == real_shape

    def test_hook_input_values(self, ours: Scenario, theirs: Scenario) -> None:
        """The values a script compares agree: one prompt_id across the run, the session id, what Stop reads."""
        for scenario in (ours, theirs):
            inputs = scenario.inputs
            assert inputs[0]["hook_event_name"] == "SessionStart" and inputs[0]["source"] == "startup"
            assert len({e.get("prompt_id") for e in inputs[1:]}) == 1 and "prompt_id" not in inputs[0]
            assert len({e["session_id"] for e in inputs}) == 1
            assert {e["transcript_path"] for e in inputs} == {inputs[0]["transcript_path"]}
            assert scenario.event("Stop")["last_assistant_message"] == "all done"
            assert scenario.event("SubagentStop", sub=True)["last_assistant_message"] == "sub done"
            assert scenario.event("PostToolUse")["duration_ms"] >= 0
            assert "permission_mode" not in scenario.event("SubagentStart", sub=True)
            assert scenario.event("SubagentStart", sub=True)["agent_type"] == "general-purpose"
            assert not any(e["hook_event_name"] == "UserPromptSubmit" and "agent_id" in e for e in inputs)

    def test_post_tool_use_context_is_a_block_of_its_own(self, ours: Scenario, theirs: Scenario) -> None:
        """additionalContext reaches the model as a system-reminder text block after the untouched tool_result."""
        for scenario, name in ((ours, "Bash"), (theirs, "Bash")):
            last = scenario.requests[1]["messages"][-1]["content"]
            assert [b["type"] for b in last] == ["tool_result", "text"]
            assert last[0]["content"] == "hi"
            assert last[1]["text"] == (
                f"<system-reminder>\nPostToolUse:{name} hook additional context: {CONTEXT}\n</system-reminder>"
            )

    @pytest.mark.parametrize("subtype", ["task_started", "task_progress", "task_updated", "task_notification"])
    def test_task_events(self, ours: Scenario, theirs: Scenario, subtype: str) -> None:
        """The subagent's task events have Claude Code's keys and value types; they name the task call."""
        mine, real = ours.system(subtype), theirs.system(subtype)
        assert _shape(mine) == _shape(real)
        if subtype != "task_updated":
            assert mine["tool_use_id"] == real["tool_use_id"] == "toolu_task1"
        if subtype == "task_started":
            said = ("description", "subagent_type", "task_type", "prompt")
            assert [mine[k] for k in said] == [real[k] for k in said]

    def test_task_events_come_in_claude_codes_order(self, ours: Scenario, theirs: Scenario) -> None:
        """started, progress, updated, notification; the task's id is the subagent's agent_id in hook input."""
        for scenario in (ours, theirs):
            subtypes = [line["subtype"] for line in scenario.lines if str(line.get("subtype", "")).startswith("task_")]
            assert subtypes == ["task_started", "task_progress", "task_updated", "task_notification"]
            assert scenario.system("task_started")["task_id"] == scenario.event("SubagentStart", sub=True)["agent_id"]

    def test_transcript_line_shape(self, ours: Scenario, theirs: Scenario) -> None:
        """The Stop hook reads the transcript: user and assistant lines with Claude Code's keys, chained by
        parentUuid, ours holding the final answer already (Claude Code writes its lines a moment later, so its
        Stop hook may not see the last one yet: only its lines' shape is compared)."""

        def messages(scenario: Scenario) -> list[dict[str, Any]]:
            lines = scenario.event("Stop")["_transcript"]
            return [line for line in lines if line.get("type") in ("user", "assistant")]

        lines = messages(ours)
        assert lines[-1]["type"] == "assistant"
        assert lines[-1]["message"]["content"] == [{"type": "text", "text": "all done"}]
        for scenario in (ours, theirs):
            assert {line["sessionId"] for line in messages(scenario)} == {scenario.event("Stop")["session_id"]}
        required = {"parentUuid", "isSidechain", "type", "message", "uuid", "timestamp", "cwd", "sessionId", "version"}
        for mine, real in zip(messages(ours), messages(theirs), strict=False):
            assert (mine["type"], required <= set(real)) == (real["type"], True)
            assert required <= set(mine)
            assert set(mine["message"]) == set(real["message"]) - API_EXTRAS
        chain = messages(ours)
        assert [line["parentUuid"] for line in chain[1:]] == [line["uuid"] for line in chain[:-1]]


class TestTranscript:
    def test_stop_hook_reads_the_last_answer_and_subagent_has_its_own(self, ours: Scenario) -> None:
        """The transcript was flushed before the Stop hook ran; the subagent's sits at agent_transcript_path."""
        stop = ours.event("Stop")
        final = [line for line in stop["_transcript"] if line["type"] == "assistant"][-1]
        assert final["message"]["content"][0]["text"] == stop["last_assistant_message"] == "all done"
        sub = Path(ours.event("SubagentStop", sub=True)["agent_transcript_path"])
        lines = [json.loads(line) for line in sub.read_text().splitlines()]
        assert [line["type"] for line in lines] == ["user", "assistant", "user", "assistant"]
        assert all(
            line["isSidechain"] and line["agentId"] == ours.event("SubagentStop", sub=True)["agent_id"]
            for line in lines
        )
        assert (os.stat(stop["transcript_path"]).st_mode & 0o777) == 0o600
        meta = json.loads(sub.with_name(sub.name.replace(".jsonl", ".meta.json")).read_text())
        assert meta == {
            "agentType": "general-purpose",
            "description": "do sub",
            "toolUseId": "toolu_task1",
            "spawnDepth": 1,
        }

    def test_no_session_persistence_still_gives_a_readable_transcript(self, tmp_path: Path) -> None:
        """Without persistence the hooks still read a transcript, and nothing of it is left after the run."""
        run = Scenario(str(AGENTFSM), tmp_path, "--no-session-persistence")
        stop = run.event("Stop")
        assert [line["type"] for line in stop["_transcript"]][-1] == "assistant"
        assert not Path(stop["transcript_path"]).exists()
        assert not (run.home / ".local" / "state" / "agentfsm").exists() or not list(
            (run.home / ".local" / "state" / "agentfsm").rglob("*.jsonl")
        )

    def test_resume_goes_on_in_the_file_and_fork_copies_it(self, tmp_path: Path) -> None:
        """--resume appends to the session's transcript (the chain unbroken); --fork-session starts a new file
        holding the history it copied."""
        home, project = tmp_path / "home", tmp_path / "project"
        home.mkdir()
        project.mkdir()
        with FakeAnthropic(script=[text_reply("one"), text_reply("two"), text_reply("three")]) as fake:
            env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))
            env.pop("XDG_STATE_HOME", None)

            def agentfsm(*args: str) -> dict[str, Any]:
                done = subprocess.run(
                    [str(AGENTFSM), *args, "--output-format", "json"],
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
                assert done.returncode == 0, done.stderr
                return json.loads(done.stdout)

            first = agentfsm("-p", "first")["session_id"]
            assert agentfsm("-p", "second", "--resume", first)["session_id"] == first
            forked = agentfsm("-p", "third", "--resume", first, "--fork-session")["session_id"]
        assert forked != first
        (directory,) = (home / ".local" / "state" / "agentfsm" / "projects").iterdir()

        def lines(session: str) -> list[dict[str, Any]]:
            return [json.loads(line) for line in (directory / f"{session}.jsonl").read_text().splitlines()]

        original = lines(first)
        assert [(line["type"], line["message"]["content"]) for line in original] == [
            ("user", "first"),
            ("assistant", [{"type": "text", "text": "one"}]),
            ("user", "second"),
            ("assistant", [{"type": "text", "text": "two"}]),
        ]
        assert [line["parentUuid"] for line in original] == [None] + [line["uuid"] for line in original[:-1]]
        copy = lines(forked)
        assert [line["message"]["content"] for line in copy][:4] == [line["message"]["content"] for line in original]
        assert copy[-1]["message"]["content"] == [{"type": "text", "text": "three"}]
        assert {line["sessionId"] for line in copy} == {forked}


class TestSessionStart:
    def test_startup_then_resume_each_with_its_context(self, tmp_path: Path) -> None:
        """A new session fires SessionStart with source startup, --continue with resume (Claude Code's input: no
        prompt_id, no permission_mode), each before UserPromptSubmit; its additionalContext follows that run's
        prompt; --include-hook-events names the hook ``SessionStart:startup``, as Claude Code does."""
        log, logger = tmp_path / "hooks.jsonl", tmp_path / "start.py"
        logger.write_text(
            "import json, sys\n"
            "event = json.load(sys.stdin)\n"
            f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')\n"
            "if event['hook_event_name'] == 'SessionStart':\n"
            "    out = {'hookEventName': 'SessionStart', 'additionalContext': 'CTX-' + event['source']}\n"
            "    print(json.dumps({'hookSpecificOutput': out}))\n"
        )
        hook = [{"hooks": [{"type": "command", "command": f"{sys.executable} {logger}"}]}]
        settings = tmp_path / "settings.json"
        settings.write_text(json.dumps({"hooks": {"SessionStart": hook, "UserPromptSubmit": hook}}))
        home, project = tmp_path / "home", tmp_path / "project"
        home.mkdir()
        project.mkdir()
        with FakeAnthropic(script=[text_reply("one"), text_reply("two")]) as fake:
            env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))
            outputs = []
            flags = ["--settings", str(settings), "--output-format", "stream-json", "--verbose"]
            flags.append("--include-hook-events")
            for extra in (["-p", "first"], ["-c", "-p", "second"]):
                done = subprocess.run(
                    [str(AGENTFSM), *extra, *flags],
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                )
                assert done.returncode == 0, done.stderr
                outputs.append([json.loads(line) for line in done.stdout.splitlines()])
            requests = [r.body["messages"] for r in fake.messages_requests]
        inputs = [json.loads(line) for line in log.read_text().splitlines()]
        assert [(e["hook_event_name"], e.get("source")) for e in inputs] == [
            ("SessionStart", "startup"),
            ("UserPromptSubmit", None),
            ("SessionStart", "resume"),
            ("UserPromptSubmit", None),
        ]
        starts = [e for e in inputs if e["hook_event_name"] == "SessionStart"]
        assert all(set(e) == {"session_id", "transcript_path", "cwd", "hook_event_name", "source"} for e in starts)
        assert starts[0]["session_id"] == starts[1]["session_id"]
        for messages, source in ((requests[0], "startup"), (requests[1], "resume")):
            assert messages[-1]["content"][-1]["text"] == (
                f"<system-reminder>\nSessionStart hook additional context: CTX-{source}\n</system-reminder>"
            )
        assert len(requests[1]) == 3  # the first run's context stays in its own prompt's message
        for lines, source in zip(outputs, ("startup", "resume"), strict=True):
            names = [line["hook_name"] for line in lines if line.get("subtype") == "hook_started"]
            assert names[0] == f"SessionStart:{source}"


class TestAgentSdk:
    def test_sdk_program_reads_task_events_and_its_stop_hook_the_transcript(
        self, fake: FakeAnthropic, project: Path
    ) -> None:
        """An SDK program gets TaskStarted/Progress/Notification messages, and its Stop hook callback reads the
        last answer from transcript_path."""
        fake.script = [_reply] * 6
        home = project.parent / "home"
        home.mkdir()
        seen: dict[str, Any] = {}

        async def on_stop(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
            lines = [json.loads(line) for line in Path(data["transcript_path"]).read_text().splitlines()]
            seen["from_transcript"] = [line for line in lines if line["type"] == "assistant"][-1]["message"]
            seen["last"] = data["last_assistant_message"]
            return {}

        options = ClaudeAgentOptions(
            cli_path=str(AGENTFSM),
            cwd=str(project),
            env={"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "test", "HOME": str(home)},
            allowed_tools=["Bash(echo:*)"],
            hooks={"Stop": [HookMatcher(hooks=[on_stop])]},
        )

        async def program() -> list[Any]:
            return [message async for message in query(prompt="MAINTASK go", options=options)]

        messages = anyio.run(program)
        started = [m for m in messages if isinstance(m, TaskStartedMessage)]
        progress = [m for m in messages if isinstance(m, TaskProgressMessage)]
        ended = [m for m in messages if isinstance(m, TaskNotificationMessage)]
        assert [(m.tool_use_id, m.description) for m in started] == [("toolu_task1", "do sub")]
        assert [(m.last_tool_name, m.usage["tool_uses"]) for m in progress] == [("Bash", 1)]
        assert [(m.status, m.task_id) for m in ended] == [("completed", started[0].task_id)]
        assert seen["last"] == "all done"
        assert seen["from_transcript"]["content"] == [{"type": "text", "text": "all done"}]
