"""``agentfsm -p`` end to end: the installed command, the real anthropic SDK, the fake server."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen

from fsm.testing import text_reply, tool_reply, tool_use
from tests.claude_parser import parse
from tests.e2e.conftest import AGENTFSM, Run, Runner, base_env
from tests.e2e.fake_server import FakeAnthropic, Recorded, Status

PROMPT = "Use a subtask to find what testing framework this project uses"
BASE = ["bash", "read_file", "write_file", "edit_file", "glob"]
ROOT = [*BASE, "task", "TaskOutput", "TaskStop", "TodoWrite"]
"""What a root offers by default: the five, task, the background jobs' tools and TodoWrite."""
CHILD = [*BASE, "TodoWrite"]
"""What a subagent offers by default: the five base tools and TodoWrite."""
RESULT_KEYS = [
    "type",
    "subtype",
    "is_error",
    "api_error_status",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "result",
    "stop_reason",
    "session_id",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "terminal_reason",
    "fast_mode_state",
    "uuid",
    "outcome",
    "model_calls",
    "subagents",
    "transitions",
    "context_tokens",
]

CLAUDE_INIT_KEYS = [  # system/init of the real claude -p 2.1.197 on the loopback fake, less memory_paths
    "type",
    "subtype",
    "cwd",
    "session_id",
    "tools",
    "mcp_servers",
    "model",
    "permissionMode",
    "slash_commands",
    "apiKeySource",
    "claude_code_version",
    "output_style",
    "agents",
    "skills",
    "plugins",
    "analytics_disabled",
    "product_feedback_disabled",
    "uuid",
]


def _with_usage(reply: dict[str, Any], **usage: int) -> dict[str, Any]:
    return {**reply, "usage": usage}


def _delegation(project: Path) -> list[Any]:
    """Parent delegates; the child globs, then answers; the parent relays (usage differs per reply)."""
    (project / "tests").mkdir()
    (project / "tests" / "test_app.py").write_text("import pytest\n")
    return [
        _with_usage(
            tool_reply(tool_use("task", {"prompt": "Which test framework?"}, id="toolu_task")),
            input_tokens=100,
            output_tokens=10,
            cache_read_input_tokens=7,
        ),
        _with_usage(
            tool_reply(tool_use("glob", {"pattern": "**/*.py"}, id="toolu_glob")), input_tokens=20, output_tokens=2
        ),
        _with_usage(
            text_reply("pytest (tests/test_app.py imports it)"),
            input_tokens=30,
            output_tokens=3,
            cache_creation_input_tokens=5,
        ),
        _with_usage(text_reply("This project uses pytest."), input_tokens=200, output_tokens=20),
    ]


def _text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@frozen
class Delegated:
    """One delegating ``--output-format json`` run: what the server saw and what the command printed."""

    requests: list[Recorded]
    run: Run


@pytest.fixture(scope="class")
def delegated(tmp_path_factory: pytest.TempPathFactory) -> Delegated:
    """The delegation script run once, shared by the tests that only read its results."""
    project = tmp_path_factory.mktemp("delegated")
    with FakeAnthropic(_delegation(project)) as server:
        done = subprocess.run(
            [str(AGENTFSM), "-p", PROMPT, "--output-format", "json"],
            cwd=project,
            env=base_env(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="test"),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return Delegated(server.messages_requests, Run(done.returncode, done.stdout, done.stderr))


class TestDelegation:
    def test_requests_carry_the_right_tools_and_messages(self, delegated: Delegated) -> None:
        """The parent offers six tools (and TodoWrite), the child five (and its own TodoWrite) and one user message;
        the child's answer returns."""
        assert (delegated.run.code, delegated.run.stderr) == (0, "")
        parent, child, child_2, parent_2 = delegated.requests
        assert parent.path == "/v1/messages"
        assert parent.tool_names == ROOT
        assert [(m["role"], _text_of(m)) for m in parent.messages] == [("user", PROMPT)]
        assert child.tool_names == CHILD
        assert [(m["role"], _text_of(m)) for m in child.messages] == [("user", "Which test framework?")]
        assert child.system != parent.system
        assert child_2.messages[-1]["content"][0]["content"] == "tests/test_app.py"
        answer = parent_2.messages[-1]["content"]
        assert [(b["type"], b["tool_use_id"], b["content"]) for b in answer] == [
            ("tool_result", "toolu_task", "pytest (tests/test_app.py imports it)")
        ]
        assert len(parent_2.messages) == 3  # the child's messages never enter the parent's context

    def test_json_result_fields(self, delegated: Delegated) -> None:
        """The result object has Claude Code's keys then ours: turns of the parent, calls, tokens and cost of all."""
        result = delegated.run.json()
        assert list(result) == RESULT_KEYS
        assert isinstance(result["session_id"], str) and result["session_id"]
        assert isinstance(result["duration_ms"], int) and result["duration_ms"] >= result["duration_api_ms"] >= 0
        assert result["total_cost_usd"] > 0
        assert result["modelUsage"]["claude-sonnet-4-5"]["costUSD"] == result["total_cost_usd"]
        assert result["context_tokens"] > 0  # the next request, as compaction counts it
        for key in ("session_id", "duration_ms", "duration_api_ms", "uuid", "total_cost_usd", "modelUsage"):
            del result[key]
        del result["context_tokens"]
        assert result == {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "api_error_status": None,
            "result": "This project uses pytest.",
            "stop_reason": "end_turn",
            "num_turns": 2,
            "model_calls": 4,
            "subagents": 1,
            "usage": {
                "input_tokens": 350,
                "output_tokens": 35,
                "cache_creation_input_tokens": 5,
                "cache_read_input_tokens": 7,
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            },
            "permission_denials": [],
            "terminal_reason": "completed",
            "fast_mode_state": "off",
            "outcome": "end_turn",
            "transitions": 13,
        }

    def test_stream_json_speaks_claude_codes_contract(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """system/init first; assistant/user messages of root and child (the child's tagged with the task's
        tool_use id), our transition events among them, the result last; all parsed as the Agent SDK does."""
        fake.script = _delegation(project)
        run = agentfsm("-p", PROMPT, "--output-format", "stream-json", "--verbose")
        assert run.code == 0
        lines = run.json_lines()
        parsed = [parse(line) for line in lines]
        assert [p.type if p else line["type"] for p, line in zip(parsed, lines, strict=True)] == [
            "system",
            "transition",
            "assistant",
            "transition",
            "transition",  # root: prompt, task call, spawn
            "system",  # task_started
            "user",
            "transition",
            "assistant",
            "transition",
            "system",  # task_progress
            "transition",  # child: prompt, glob call, glob
            "user",
            "transition",
            "assistant",
            "transition",
            "transition",  # child: results, answer, stop
            "transition",
            "system",
            "system",  # task_updated, task_notification
            "user",
            "transition",
            "assistant",
            "transition",
            "transition",  # root: return, relay
            "result",
        ]
        init, result = lines[0], lines[-1]
        assert (init["subtype"], init["cwd"], init["model"], init["permissionMode"]) == (
            "init",
            str(project),
            "claude-sonnet-4-5",
            "default",
        )
        assert init["tools"] == ["Bash", "Read", "Write", "Edit", "Glob", "Task", "TaskOutput", "TaskStop", "TodoWrite"]
        assert init["agents"] == ["general-purpose"] and init["agentfsm_version"]
        assert list(init)[: len(CLAUDE_INIT_KEYS)] == CLAUDE_INIT_KEYS and init["claude_code_version"] == "2.1.197"
        session = init["session_id"]
        messages = [(p, line) for p, line in zip(parsed, lines, strict=True) if p and p.type in ("assistant", "user")]
        assert {line["session_id"] for _, line in messages} == {session} == {result["session_id"]}
        assert [(p.type, p.fields["parent_tool_use_id"]) for p, _ in messages] == [
            ("assistant", None),
            ("user", "toolu_task"),
            ("assistant", "toolu_task"),
            ("user", "toolu_task"),
            ("assistant", "toolu_task"),
            ("user", None),
            ("assistant", None),
        ]
        first = messages[0][1]["message"]
        assert (first["id"].startswith("msg_fake_"), first["model"], first["stop_reason"], first["usage"]) == (
            True,
            "claude-sonnet-4-5",
            "tool_use",
            {"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 7},
        )
        assert messages[1][0].fields["content"] == "Which test framework?"
        assert messages[3][0].fields["content"][0] == {
            "type": "tool_result",
            "tool_use_id": "toolu_glob",
            "content": "tests/test_app.py",
        }
        assert messages[5][0].fields["content"][0]["content"] == "pytest (tests/test_app.py imports it)"
        events = [line for line in lines if line["type"] == "transition"]
        assert [e["seq"] for e in events] == list(range(1, 14))
        final = parse(result)
        assert final is not None and final.fields["terminal_reason"] == "completed"
        for key in ("total_cost_usd", "duration_api_ms", "permission_denials", "stop_reason"):
            assert key in result
        assert (result["stop_reason"], result["permission_denials"]) == ("end_turn", [])
        assert result["total_cost_usd"] > 0

    def test_partial_messages_add_stream_events(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--include-partial-messages adds the Agent SDK's StreamEvent lines: each reply's raw API events, root and
        child (tagged with the task's tool_use id), just before that reply's assistant message; the rest of the
        stream is as without the flag, and without it nothing streams."""
        script = _delegation(project)
        fake.script = script + script
        plain = agentfsm("-p", PROMPT, "--output-format", "stream-json")
        assert [r.body.get("stream") for r in fake.messages_requests] == [None] * 4
        run = agentfsm("-p", PROMPT, "--output-format", "stream-json", "--include-partial-messages")
        assert run.code == 0 and [r.body.get("stream") for r in fake.messages_requests[4:]] == [True] * 4
        lines = run.json_lines()
        parsed = [parse(line) for line in lines]
        assert "stream_event" not in {line["type"] for line in plain.json_lines()}
        assert [line["type"] for line in lines if line["type"] != "stream_event"] == [
            line["type"] for line in plain.json_lines()
        ]
        replies: list[list[dict[str, Any]]] = [[]]
        for p, line in zip(parsed, lines, strict=True):
            if line["type"] == "stream_event":
                assert p is not None and p.type == "stream_event"
                assert p.fields["session_id"] == lines[0]["session_id"] and p.fields["uuid"]
                replies[-1].append(line)
            elif line["type"] == "assistant":
                events = replies[-1]
                assert [e["event"]["type"] for e in events][:2] == ["message_start", "content_block_start"]
                assert events[-1]["event"] == {"type": "message_stop"} and events[-1] is lines[lines.index(line) - 1]
                assert {e["parent_tool_use_id"] for e in events} == {line["parent_tool_use_id"]}
                assert events[0]["event"]["message"]["id"] == line["message"]["id"]
                said = "".join(
                    e["event"]["delta"].get("text", "") for e in events if e["event"]["type"] == "content_block_delta"
                )
                assert said == "".join(b.get("text", "") for b in line["message"]["content"])
                replies.append([])
        assert [r[0]["parent_tool_use_id"] for r in replies[:-1]] == [None, "toolu_task", "toolu_task", None]
        assert replies[-1] == []
        usage = replies[0][-2]["event"]
        assert (usage["type"], usage["delta"]["stop_reason"], usage["usage"]) == (
            "message_delta",
            "tool_use",
            {"output_tokens": 10},
        )

    def test_partial_messages_need_stream_json(self, agentfsm: Runner) -> None:
        """--include-partial-messages without stream-json is a usage error, one line."""
        run = agentfsm("-p", "hi", "--include-partial-messages")
        assert (run.code, run.stdout, run.stderr) == (
            1,
            "",
            "agentfsm: --include-partial-messages needs --output-format stream-json\n",
        )

    def test_stream_json_transition_events(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """Our transition events: seq increases by one, subagent events name their parent; a flag drops them."""
        script = _delegation(project)
        fake.script = script + script
        run = agentfsm("-p", PROMPT, "--output-format", "stream-json")
        assert run.code == 0
        lines = run.json_lines()
        events = [e for e in lines if e["type"] == "transition"]
        result = lines[-1]
        assert result["type"] == "result" and result["transitions"] == len(events) == 13
        root = events[0]["agent"]
        assert result["session_id"] == root
        assert [(e["agent"] == root, e["trigger"]) for e in events] == [
            (True, "prompt"),
            (True, "replied_with_tools"),
            (True, "subagent_spawned"),
            (False, "prompt"),
            (False, "replied_with_tools"),
            (False, "tool_ran"),
            (False, "tools_done"),
            (False, "replied_final"),
            (False, "stopped"),
            (True, "subagent_returned"),
            (True, "tools_done"),
            (True, "replied_final"),
            (True, "stopped"),
        ]
        glob = events[5]
        assert (glob["parent"], glob["depth"], glob["source"], glob["dest"]) == (
            root,
            1,
            "executing_tools",
            "executing_tools",
        )
        assert glob["tool_call"] == {"id": "toolu_glob", "name": "glob", "input": {"pattern": "**/*.py"}}
        assert glob["tool_result"] == {"content": "tests/test_app.py", "is_error": False, "length": 17}
        assert events[2]["child"] == f"{root}.1"
        assert events[-2]["text"] == "This project uses pytest." and events[-2]["stop_reason"] == "end_turn"
        quiet = agentfsm("-p", PROMPT, "--output-format", "stream-json", "--no-transition-events")
        assert quiet.code == 0
        assert [line["subtype"] if line["type"] == "system" else line["type"] for line in quiet.json_lines()] == [
            "init",
            "assistant",
            "task_started",
            "user",
            "assistant",
            "task_progress",
            "user",
            "assistant",
            "task_updated",
            "task_notification",
            "user",
            "assistant",
            "result",
        ]


class TestOutcomes:
    def test_text_mode_prints_only_the_final_text_and_reads_stdin(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """``-p -`` takes the prompt from stdin; stdout holds the final text and nothing else."""
        fake.script = [text_reply("Hello from the fake.")]
        run = agentfsm("-p", "-", input="say hello\n")
        assert (run.code, run.stdout, run.stderr) == (0, "Hello from the fake.\n", "")
        assert _text_of(fake.messages_requests[0].messages[0]) == "say hello"

    def test_debug_shows_progress_verbose_does_not(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--debug fsm.cli prints one progress line per transition on stderr, without the libraries' debug chatter;
        --verbose alone prints nothing there (a run that got what it asked has nothing to add)."""
        fake.script = [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")]
        run = agentfsm("-p", "look", "--debug", "fsm.cli")
        assert (run.code, run.stdout) == (0, "done\n")
        progress = [line for line in run.stderr.splitlines() if line.startswith("#")]
        assert len(progress) == 6 and " stopping --stopped--> idle (turn 2)  " in progress[-1]
        assert "transitions.core" not in run.stderr and "httpx" not in run.stderr
        fake.script, fake.requests[:] = [tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")], []
        quiet = agentfsm("-p", "look", "--verbose")
        assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "done\n", "")

    def test_turn_limit(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """With --max-turns 2 and a model that always calls a tool, the run stops after two calls, exit 1."""
        fake.script = [tool_reply(tool_use("bash", {"command": "echo again"}))] * 5
        run = agentfsm("-p", "loop forever", "--max-turns", "2", "--output-format", "json")
        assert (run.code, run.stderr) == (1, "")
        result = run.json()
        assert (result["subtype"], result["is_error"], result["num_turns"], result["terminal_reason"]) == (
            "error_max_turns",
            True,
            2,
            "max_turns",
        )
        assert result["errors"] == [
            "stopped after 2 turns without a final answer; raise --max-turns (up to 30) or narrow the prompt"
        ]
        assert len(fake.messages_requests) == 2

    def test_overloaded_twice_then_success(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """Two 529s are retried by the SDK and the third answer finishes the run."""
        fake.script = [Status(529, "Overloaded"), Status(529, "Overloaded"), text_reply("made it")]
        run = agentfsm("-p", "hi")
        assert (run.code, run.stdout, run.stderr) == (0, "made it\n", "")
        assert len(fake.messages_requests) == 3

    def test_authentication_failure(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A 401 is not retried; the run ends with status 1 and one error naming ANTHROPIC_API_KEY, in the result
        (stderr stays empty in json mode); api_error_status 401, as Claude Code's."""
        fake.script = [Status(401, "invalid x-api-key")]
        run = agentfsm("-p", "hi", "--output-format", "json")
        assert (run.code, run.stderr) == (1, "")
        message = "authentication failed (401: invalid x-api-key); check ANTHROPIC_API_KEY"
        result = run.json()
        assert (result["subtype"], result["is_error"], result["api_error_status"], result["outcome"]) == (
            "success",
            True,
            401,
            "model_error",
        )
        assert result["result"] == message and result["errors"] == [message]
        assert len(fake.messages_requests) == 1

    def test_unreachable_server(self, agentfsm: Runner) -> None:
        """A closed port on 127.0.0.1 ends the run with status 1 and one ``Error:`` line on stdout about reaching
        the model (text mode: where claude -p prints it)."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        run = agentfsm(
            "-p", "hi", env=base_env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="test")
        )
        assert (run.code, run.stderr) == (1, "")
        assert run.stdout.startswith(f"Error: cannot reach the model at http://127.0.0.1:{port}")
        assert run.stdout.endswith("; check the network or ANTHROPIC_BASE_URL\n")
        assert run.stdout.count("\n") == 1


class TestPermissions:
    def test_headless_denials_reach_the_model(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """Unattended, a destructive command is denied for want of approval (naming the rule that would allow
        it) and sudo by the built-in deny rule."""
        (project / "notes.txt").write_text("keep me")
        fake.script = [
            tool_reply(
                tool_use("bash", {"command": "rm notes.txt"}, id="toolu_rm"),
                tool_use("bash", {"command": "sudo ls"}, id="toolu_sudo"),
            ),
            text_reply("I could not do it."),
        ]
        run = agentfsm("-p", "clean up", "--output-format", "json")
        assert (run.code, run.json()["result"]) == (0, "I could not do it.")
        assert [(d["tool_name"], d["tool_use_id"], d["tool_input"]) for d in run.json()["permission_denials"]] == [
            ("Bash", "toolu_rm", {"command": "rm notes.txt"}),
            ("Bash", "toolu_sudo", {"command": "sudo ls"}),
        ]
        assert parse(run.json()) is not None
        results = fake.messages_requests[1].messages[-1]["content"]
        assert [(b["tool_use_id"], b["content"], b["is_error"]) for b in results] == [
            (
                "toolu_rm",
                "Permission denied: `rm notes.txt` is destructive (rm deletes files); it needs approval "
                "and no one could be asked; to allow it, add Bash(rm notes.txt) to permissions.allow in "
                ".claude/settings.json"
                " of a trusted folder, or in ~/.claude/settings.json",
                True,
            ),
            ("toolu_sudo", "Permission denied: `sudo ls` is refused by Bash(sudo:*) (built-in)", True),
        ]
        assert (project / "notes.txt").read_text() == "keep me"

    def test_permission_mode_allow_runs_the_destructive_command(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """``--permission-mode allow`` (bypassPermissions) runs it, but the built-in deny rules still hold."""
        (project / "notes.txt").write_text("delete me")
        fake.script = [
            tool_reply(tool_use("bash", {"command": "rm notes.txt"}), tool_use("bash", {"command": "sudo ls"})),
            text_reply("done"),
        ]
        run = agentfsm("-p", "clean up", "--permission-mode", "allow")
        assert run.code == 0
        results = fake.messages_requests[1].messages[-1]["content"]
        assert [b["content"] for b in results] == [
            "(no output)",
            "Permission denied: `sudo ls` is refused by Bash(sudo:*) (built-in)",
        ]
        assert not (project / "notes.txt").exists()


class TestConfiguration:
    def test_dotenv_is_read_and_real_environment_wins(
        self, agentfsm: Runner, fake: FakeAnthropic, project: Path
    ) -> None:
        """A trusted ``.env`` supplies the key; MODEL_ID from the real environment beats the one in ``.env``."""
        (project / ".env").write_text("ANTHROPIC_API_KEY=key-from-dotenv\nMODEL_ID=model-from-dotenv\n")
        fake.script = [text_reply("ok")]
        run = agentfsm(
            "-p",
            "hi",
            "--disallowed-tools",
            "task",
            "--trust",
            env=base_env(ANTHROPIC_BASE_URL=fake.url, MODEL_ID="model-from-env"),
        )
        assert (run.code, run.stderr) == (0, "")
        request = fake.messages_requests[0]
        assert request.headers["authorization"] == "Bearer key-from-dotenv"
        assert request.body["model"] == "model-from-env"
        assert request.tool_names == [*BASE, "TaskOutput", "TaskStop", "TodoWrite"]

    def test_missing_api_key(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """No key anywhere: exit 1 and a line saying to set ANTHROPIC_API_KEY or try the demo."""
        run = agentfsm("-p", "hi", env=base_env(ANTHROPIC_BASE_URL=fake.url))
        assert (run.code, run.stdout, run.stderr) == (
            1,
            "",
            "agentfsm: No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'\n",
        )
        assert fake.requests == []

    def test_bad_flag_value(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """An out-of-range --max-turns is one line and exit 1; nothing is sent."""
        run = agentfsm("-p", "hi", "--max-turns", "0")
        assert (run.code, run.stdout, run.stderr) == (1, "", "error: --max-turns must be an integer >= 1 (got 0)\n")
        run = agentfsm("run", "hi", "--max-tokens", "lots")
        assert (run.code, run.stderr) == (1, "error: --max-tokens must be an integer >= 1 (got 'lots')\n")
        assert fake.requests == []

    def test_missing_cwd(self, agentfsm: Runner, fake: FakeAnthropic, tmp_path: Path) -> None:
        """A --cwd that does not exist is one line and exit 1."""
        missing = tmp_path / "nope"
        run = agentfsm("-p", "hi", "--cwd", str(missing))
        assert (run.code, run.stdout, run.stderr) == (1, "", f"agentfsm: --cwd {missing} is not a directory\n")

    def test_no_prompt_on_stdin(self, agentfsm: Runner) -> None:
        """``run`` without a prompt and with an empty stdin is a usage error."""
        run = agentfsm("run", input="")
        assert (run.code, run.stderr) == (1, "agentfsm: the prompt is empty; give a non-empty prompt\n")
