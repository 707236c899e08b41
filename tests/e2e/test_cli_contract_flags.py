"""The ``claude -p`` flags of issue 22, end to end through the installed CLI and the loopback fake: each flag's
effect is seen on the wire (the request body and headers), in the journal, or in the result."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fsm.core.records import message_uuid
from fsm.session.journal import Journal, default_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic, Status

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    found = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            found.append(content)
        else:
            found += [b["text"] for b in content if b.get("type") == "text" and message["role"] == "user"]
    return found


class TestModels:
    def test_aliases_resolve_and_are_priced(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--model opus sends Claude Code's id for it, and the run has a cost."""
        fake.script = [text_reply("ok")]
        run = agentfsm("-p", "hi", "--model", "opus", "--output-format", "json")
        assert run.code == 0, run.stderr
        assert fake.messages_requests[0].body["model"] == "claude-opus-4-8"
        assert run.json()["total_cost_usd"] > 0

    def test_one_m_suffix_sends_the_beta(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """sonnet[1m] is sonnet's id plus the 1M-context beta header; --betas adds its own."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi", "--model", "sonnet[1m]", "--betas", "files-api-2025-04-14").code == 0
        request = fake.messages_requests[0]
        assert request.body["model"] == "claude-sonnet-5"
        assert request.headers["anthropic-beta"] == "context-1m-2025-08-07,files-api-2025-04-14"

    def test_no_beta_header_unless_asked(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """Without --betas or [1m] no anthropic-beta header is sent, nor any thinking parameter."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi").code == 0
        request = fake.messages_requests[0]
        assert "anthropic-beta" not in request.headers and "thinking" not in request.body

    def test_fallback_after_overload(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """529 until the retries are spent: the same request goes to the fallback model, which answers; text
        mode says so in one stderr line, json mode keeps stderr empty."""
        fake.script = [Status(529), Status(529), text_reply("from haiku")]
        run = agentfsm("-p", "hi", "--max-retries", "1", "--fallback-model", "haiku")
        assert (run.code, run.stdout) == (0, "from haiku\n"), run.stderr
        assert [r.body["model"] for r in fake.messages_requests] == [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5",
            "claude-haiku-4-5-20251001",
        ]
        assert "falling back to claude-haiku-4-5-20251001" in run.stderr
        fake.script, fake.requests[:] = [Status(529), Status(529), text_reply("from haiku")], []
        run = agentfsm("-p", "hi", "--max-retries", "1", "--fallback-model", "haiku", "--output-format", "json")
        assert (run.code, run.json()["result"], run.stderr) == (0, "from haiku", "")

    def test_fallback_after_not_found(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A 404 is not retried: the fallback answers at once; without --fallback-model the run fails."""
        fake.script = [Status(404, "model: nope"), text_reply("ok")]
        run = agentfsm("-p", "hi", "--model", "nope", "--fallback-model", "claude-sonnet-4-5")
        assert (run.code, run.stdout) == (0, "ok\n")
        assert [r.body["model"] for r in fake.messages_requests] == ["nope", "claude-sonnet-4-5"]
        fake.script = [Status(404, "model: nope")]
        assert agentfsm("-p", "hi", "--model", "nope").code == 1


class TestThinking:
    def test_budget_on_a_budget_model(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--max-thinking-tokens is thinking.budget_tokens on a model that takes a budget; --effort is not sent."""
        fake.script = [text_reply("ok")]
        args = ("--model", "claude-sonnet-4-5", "--max-thinking-tokens", "5000", "--effort", "low")
        assert agentfsm("-p", "hi", *args).code == 0
        body = fake.messages_requests[0].body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 5000}
        assert "output_config" not in body

    def test_adaptive_and_effort(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """On an adaptive model: thinking adaptive, output_config.effort and the effort beta, as Claude Code."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi", "--model", "opus", "--thinking", "enabled", "--effort", "low").code == 0
        request = fake.messages_requests[0]
        assert request.body["thinking"] == {"type": "adaptive"}
        assert request.body["output_config"] == {"effort": "low"}
        assert request.headers["anthropic-beta"] == "effort-2025-11-24"

    def test_disabled(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--thinking disabled sends thinking disabled."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi", "--thinking", "disabled").code == 0
        assert fake.messages_requests[0].body["thinking"] == {"type": "disabled"}

    def test_thinking_blocks_go_back(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """A thinking block before a tool call is sent back unchanged (with its signature) in the next request."""
        (project / "a.txt").write_text("alpha\n")
        thought = {"type": "thinking", "thinking": "read it first", "signature": "sig-123"}
        fake.script = [tool_reply(thought, tool_use("read_file", {"path": "a.txt"})), text_reply("done")]
        run = agentfsm("-p", "read a.txt", "--max-thinking-tokens", "2000")
        assert run.code == 0, run.stderr
        assistant = fake.messages_requests[1].messages[1]
        assert assistant["role"] == "assistant" and assistant["content"][0] == thought


class TestPermissions:
    def _write_call(self, fake: FakeAnthropic) -> None:
        fake.script = [tool_reply(tool_use("bash", {"command": "echo x > out.txt"})), text_reply("end")] * 2

    @pytest.mark.skipif(not AS_ROOT, reason="checks the refusal as root; this process is not root")
    def test_skip_permissions_refused_as_root(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """As root without IS_SANDBOX=1: Claude Code's message, exit 1, nothing sent."""
        run = agentfsm("-p", "hi", "--dangerously-skip-permissions")
        assert (run.code, run.stderr) == (
            1,
            "agentfsm: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n",
        )
        assert fake.requests == []

    def test_skip_permissions_bypasses(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """The write that headless default mode denies runs under --dangerously-skip-permissions."""
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", IS_SANDBOX="1")
        self._write_call(fake)
        run = agentfsm("-p", "write", "--output-format", "json", env=env)
        assert run.json()["permission_denials"] and not (project / "out.txt").exists()
        run = agentfsm("-p", "write", "--dangerously-skip-permissions", "--output-format", "json", env=env)
        assert run.code == 0, run.stderr
        assert run.json()["permission_denials"] == [] and (project / "out.txt").read_text() == "x\n"

    def test_auto_mode_fails_closed(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--permission-mode auto runs as default: headless, the write that would ask is denied."""
        self._write_call(fake)
        run = agentfsm("-p", "write", "--permission-mode", "auto", "--output-format", "stream-json", "--verbose")
        assert run.code == 0, run.stderr
        lines = run.json_lines()
        assert lines[0]["permissionMode"] == "default"
        assert lines[-1]["permission_denials"] and not (project / "out.txt").exists()


class TestSessions:
    def _session(self, run: Any) -> str:
        return str(run.json()["session_id"])

    def test_no_session_persistence(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--no-session-persistence journals nothing."""
        fake.script = [text_reply("ok")] * 2
        db = project.parent / "j.sqlite"
        run = agentfsm("-p", "hi", "--no-session-persistence", "--session-db", str(db))
        assert run.code == 0 and not db.exists()
        assert agentfsm("-p", "hi", "--session-db", str(db)).code == 0 and db.exists()

    def test_fork_session(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--resume ID --fork-session: a new session id, the old history sent, the old session untouched."""
        fake.script = [text_reply("first answer"), text_reply("second answer")]
        first = self._session(agentfsm("-p", "one", "--output-format", "json"))
        run = agentfsm("-p", "two", "--resume", first, "--fork-session", "--output-format", "json")
        assert run.code == 0, run.stderr
        assert self._session(run) != first
        assert _user_texts(fake.messages_requests[1].messages) == ["one", "two"]
        with Journal(default_path(project)) as journal:
            assert len(journal.sessions()) == 2
            old = [r for r in journal.records(first) if r.reply is not None]
            assert len(old) == 1

    def test_resume_session_at(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--resume-session-at MSG goes on from that assistant message: the later turn is not sent."""
        fake.script = [text_reply("a1"), text_reply("a2"), text_reply("a3")]
        first = agentfsm("-p", "one", "--output-format", "stream-json", "--verbose").json_lines()
        session = first[-1]["session_id"]
        message_id = next(m["message"]["id"] for m in first if m["type"] == "assistant")
        assert agentfsm("-p", "two", "--resume", session).code == 0
        run = agentfsm("-p", "three", "--resume", session, "--resume-session-at", message_id)
        assert run.code == 0, run.stderr
        assert _user_texts(fake.messages_requests[2].messages) == ["one", "three"]
        bad = agentfsm("-p", "x", "--resume", session, "--resume-session-at", "msg_nope")
        assert bad.code == 1 and "has no assistant message 'msg_nope'" in bad.stderr

    def test_resume_session_at_takes_the_line_uuid(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """The assistant line's uuid is its transcript line's uuid and the journal's (computed again from the
        record); --resume-session-at takes it, as Claude Code does."""
        fake.script = [text_reply("a1"), text_reply("a2"), text_reply("a3")]
        first = agentfsm("-p", "one", "--output-format", "stream-json", "--verbose").json_lines()
        session = first[-1]["session_id"]
        line_uuid = next(m["uuid"] for m in first if m["type"] == "assistant")
        transcript = default_path(project).parent / f"{session}.jsonl"
        lines = [json.loads(line) for line in transcript.read_text().splitlines()]
        assert [line["uuid"] for line in lines if line["type"] == "assistant"] == [line_uuid]
        with Journal(default_path(project)) as journal:
            took = next(r for r in journal.records(session) if r.reply is not None)
            assert message_uuid(session, took, 0) == line_uuid
        assert agentfsm("-p", "two", "--resume", session).code == 0
        run = agentfsm("-p", "three", "--resume", session, "--resume-session-at", line_uuid)
        assert run.code == 0, run.stderr
        assert _user_texts(fake.messages_requests[2].messages) == ["one", "three"]

    def test_fork_without_resume_is_a_new_session(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--fork-session with nothing to resume runs as a new session, as Claude Code accepts it."""
        fake.script = [text_reply("ok")]
        assert agentfsm("-p", "hi", "--fork-session").stdout == "ok\n"

    def test_continue_with_no_session_starts_one(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """-c with no earlier session starts a new one, as Claude Code does."""
        fake.script = [text_reply("fresh")]
        run = agentfsm("-p", "hi", "-c")
        assert (run.code, run.stdout) == (0, "fresh\n")


class TestRunShape:
    def test_max_turns_above_the_cap(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--max-turns 50 runs with 30: the result's notes say so (json modes keep stderr for errors), and in text
        mode one --verbose line."""
        fake.script = [text_reply("ok"), text_reply("ok")]
        run = agentfsm("-p", "hi", "--max-turns", "50", "--output-format", "json", "--verbose")
        assert (run.code, run.stderr) == (0, "")
        note = "--max-turns 50 runs with 30, agentfsm's cap of model calls per agent per run"
        assert run.json()["notes"] == [note]
        text = agentfsm("-p", "hi", "--max-turns", "50", "--verbose")
        assert (text.code, text.stdout, text.stderr.count(note)) == (0, "ok\n", 1)

    def test_prompt_before_print(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """``agentfsm "hi" -p`` and ``agentfsm -p --model X "hi"`` run the prompt."""
        fake.script = [text_reply("one"), text_reply("two")]
        assert agentfsm("hello there", "-p").stdout == "one\n"
        assert agentfsm("-p", "--model", "haiku", "second").stdout == "two\n"
        assert [_user_texts(r.messages) for r in fake.messages_requests] == [["hello there"], ["second"]]

    def test_agent_runs_as_custom_agent(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """--agent NAME: the root's system prompt, tools and model are the custom agent's."""
        reviewer = {"description": "reviews", "prompt": "You review code.", "tools": ["Read"], "model": "haiku"}
        agents = {"reviewer": reviewer}
        fake.script = [text_reply("ok")]
        run = agentfsm("-p", "hi", "--agents", json.dumps(agents), "--agent", "reviewer")
        assert run.code == 0, run.stderr
        request = fake.messages_requests[0]
        assert (request.system, request.tool_names, request.body["model"]) == (
            "You review code.",
            ["read_file"],
            "claude-haiku-4-5-20251001",
        )
        unknown = agentfsm("-p", "hi", "--agent", "nobody")
        assert (unknown.code, unknown.stderr) == (
            1,
            "agentfsm: --agent 'nobody' not found. Available agents: none (define one in .claude/agents/NAME.md, "
            "or with --agents JSON)\n",
        )

    def test_bare_reads_no_context_files(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """CLAUDE.md reaches the model, except under --bare."""
        (project / "CLAUDE.md").write_text("Project rule: SENTINEL-CONTEXT\n")
        fake.script = [text_reply("ok"), text_reply("ok")]
        assert agentfsm("-p", "hi").code == 0
        assert agentfsm("-p", "hi", "--bare").code == 0
        seen = [json.dumps(r.body) for r in fake.messages_requests]
        assert "SENTINEL-CONTEXT" in seen[0] and "SENTINEL-CONTEXT" not in seen[1]

    def test_bare_runs_no_settings_hooks(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """A UserPromptSubmit command hook of the settings runs, except under --bare."""
        mark = project.parent / "hook-ran"
        hook = {"hooks": [{"type": "command", "command": f"touch {mark}"}]}
        settings = json.dumps({"hooks": {"UserPromptSubmit": [hook]}})
        fake.script = [text_reply("ok")] * 2
        assert agentfsm("-p", "hi", "--bare", "--settings", settings).code == 0
        assert not mark.exists()
        assert agentfsm("-p", "hi", "--settings", settings).code == 0
        assert mark.exists()

    def test_debug_logs_on_stderr(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """-d puts debug lines on stderr (the API requests among them, and our progress lines: the reply streams
        to show its text as it comes, so the SDK makes the request); stdout keeps the answer only."""
        fake.script = [text_reply("ok")] * 2
        run = agentfsm("-p", "hi", "-d")
        assert run.stdout == "ok\n"
        assert "agentfsm: anthropic._base_client: Sending HTTP Request: POST http://127.0.0.1:" in run.stderr
        assert "--replied_final--> stopping" in run.stderr
        assert agentfsm("-p", "hi").stderr == ""

    def test_slash_prompt_sent_as_is(self, agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
        """--disable-slash-commands: the project's skill /review is not loaded: the prompt reaches the model as typed,
        with no Skill tool and no skill in the system prompt; without the flag, /review is the skill's text."""
        review = project / ".claude" / "skills" / "review" / "SKILL.md"
        review.parent.mkdir(parents=True)
        review.write_text("---\nname: review\ndescription: Reviews.\n---\nReview $ARGUMENTS closely.\n")
        fake.script = [text_reply("ok"), text_reply("ok")]
        assert agentfsm("-p", "/review this", "--disable-slash-commands").code == 0
        assert agentfsm("-p", "/review this").code == 0
        off, on = fake.messages_requests
        assert _user_texts(off.messages) == ["/review this"]
        assert "Skill" not in off.tool_names and "Reviews." not in off.system
        assert "Skill" in on.tool_names and _user_texts(on.messages)[0].endswith("Review this closely.\n")


class TestJsonSchema:
    SCHEMA = json.dumps({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})

    def test_answer_checked_and_sent_back(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A final answer that does not match is sent back with the validator's message; the one that does is
        structured_output."""
        fake.script = [text_reply('{"nom": 3}'), text_reply('{"name": "Ada"}')]
        run = agentfsm("-p", "who", "--json-schema", self.SCHEMA, "--output-format", "json")
        assert run.code == 0, run.stderr
        result = run.json()
        assert (result["subtype"], result["structured_output"]) == ("success", {"name": "Ada"})
        first, second = fake.messages_requests
        assert "JSON Schema: " + self.SCHEMA in first.system
        assert _user_texts(second.messages)[-1] == (
            "Output does not match required schema: root: 'name' is a required property. "
            "Answer again with only the JSON value."
        )

    def test_no_match_is_an_error(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """After the retries, an answer that still does not match ends the run as an error, no structured_output."""
        fake.script = [text_reply("no json here")] * 4
        run = agentfsm("-p", "who", "--json-schema", self.SCHEMA, "--output-format", "json")
        assert run.code == 1
        result = run.json()
        assert (result["subtype"], result["is_error"], result["structured_output"]) == (
            "error_max_structured_output_retries",
            True,
            None,
        )
        assert len(fake.messages_requests) == 4

    def test_bad_schema(self, agentfsm: Runner, fake: FakeAnthropic) -> None:
        """A schema that is not JSON, or not a schema, is one line, exit 1, nothing sent."""
        run = agentfsm("-p", "who", "--json-schema", "{nope")
        assert (run.code, run.stderr) == (
            1,
            "agentfsm: --json-schema is not JSON (Expecting property name enclosed in double quotes at character 1)\n",
        )
        run = agentfsm("-p", "who", "--json-schema", '{"type": 5}')
        assert run.code == 1 and run.stderr.startswith("agentfsm: --json-schema is not a valid JSON Schema: 5 is not")
        assert fake.requests == []


def test_include_hook_events(agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
    """--include-hook-events: a hook_started and a hook_response line per command hook, in Claude Code's shape,
    with the command's output and exit code; none without the flag."""
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo out; echo err >&2"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "exit 3"}]}],
        }
    }
    fake.script = [tool_reply(tool_use("bash", {"command": "echo hi"})), text_reply("done")] * 3
    args = ("-p", "go", "--settings", json.dumps(settings), "--allowedTools", "Bash", "--output-format", "stream-json")
    lines = agentfsm(*args, "--verbose", "--include-hook-events").json_lines()
    hooks = [m for m in lines if m["type"] == "system" and m["subtype"].startswith("hook_")]
    assert [(m["subtype"], m["hook_name"], m["hook_event"]) for m in hooks] == [
        ("hook_started", "PreToolUse:Bash", "PreToolUse"),
        ("hook_response", "PreToolUse:Bash", "PreToolUse"),
        ("hook_started", "Stop", "Stop"),
        ("hook_response", "Stop", "Stop"),
    ]
    pre = hooks[1]
    assert (pre["stdout"], pre["stderr"], pre["output"], pre["exit_code"], pre["outcome"]) == (
        "out\n",
        "err\n",
        "out\nerr\n",
        0,
        "success",
    )
    assert (hooks[3]["exit_code"], hooks[3]["outcome"]) == (3, "error")
    assert hooks[0]["hook_id"] == pre["hook_id"] and pre["session_id"] == lines[-1]["session_id"]
    plain = agentfsm(*args, "--verbose").json_lines()
    assert not [m for m in plain if m["type"] == "system" and m["subtype"].startswith("hook_")]
    text = agentfsm("-p", "go", "--include-hook-events", "--settings", json.dumps(settings), "--allowedTools", "Bash")
    assert (text.code, text.stdout) == (0, "done\n")  # accepted without a stream, as Claude Code does


def test_replay_user_messages(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """--replay-user-messages writes each stream-json user message back (isReplay) before its turn's messages."""
    fake.script = [text_reply("a1"), text_reply("a2")] * 2
    lines = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n" for t in "xy")
    args = ("-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
    run = agentfsm(*args, "--replay-user-messages", "--no-transition-events", input=lines)
    assert run.code == 0, run.stderr
    shapes = [(m["type"], m.get("isReplay")) for m in run.json_lines() if m["type"] in ("user", "assistant", "result")]
    assert shapes == [
        ("user", True),
        ("assistant", None),
        ("result", None),
        ("user", True),
        ("assistant", None),
        ("result", None),
    ]
    replays = [m for m in run.json_lines() if m.get("isReplay")]
    assert [m["message"] for m in replays] == [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]
    plain = agentfsm(*args, input=lines)
    assert plain.code == 0 and not [m for m in plain.json_lines() if m.get("isReplay")]
    refused = agentfsm("-p", "hi", "--replay-user-messages")
    assert (refused.code, refused.stderr) == (
        1,
        "agentfsm: --replay-user-messages requires both --input-format=stream-json and --output-format=stream-json.\n",
    )


def test_user_prompt_submit_block_ends_the_run(agentfsm: Runner, fake: FakeAnthropic) -> None:
    """A UserPromptSubmit hook's exit 2 stops the prompt as Claude Code's does: no model call, a
    system/informational warning, a success result of 0 turns whose text is the block, exit 0; text mode prints it."""
    gate = {"hooks": [{"type": "command", "command": "echo 'no prompts today' >&2; exit 2"}]}
    settings = json.dumps({"hooks": {"UserPromptSubmit": [gate]}})
    words = (
        "UserPromptSubmit operation blocked by hook:\n[echo 'no prompts today' >&2; exit 2]: no prompts today\n\n\n"
        "Original prompt: hi"
    )
    run = agentfsm("-p", "hi", "--settings", settings, "--output-format", "stream-json", "--verbose")
    assert (run.code, run.stderr) == (0, "")
    lines = [m for m in run.json_lines() if m["type"] != "transition"]
    assert [(m["type"], m["subtype"]) for m in lines] == [
        ("system", "init"),
        ("system", "informational"),
        *[("result", "success")],
    ]
    warning, result = lines[1], lines[2]
    assert (warning["content"], warning["level"], warning["prevent_continuation"]) == (words, "warning", True)
    assert (result["is_error"], result["num_turns"], result["result"], result["stop_reason"]) == (False, 0, words, None)
    assert "terminal_reason" not in result and "api_error_status" not in result
    assert result["outcome"] == "prompt_blocked"
    text = agentfsm("-p", "hi", "--settings", settings)
    assert (text.code, text.stdout, text.stderr) == (0, words + "\n", "")
    assert fake.messages_requests == []


def test_set_permission_mode_before_initialize(agentfsm: Runner, fake: FakeAnthropic, project: Path) -> None:
    """A control request on the first line, with no initialize, is served (as Claude Code serves it): the mode
    applies to the turn after it, the answer names it and a system/status line follows the answer."""
    fake.script = [tool_reply(tool_use("write_file", {"path": "out.txt", "content": "hi"})), text_reply("done")]
    request = {"subtype": "set_permission_mode", "mode": "acceptEdits"}
    lines = json.dumps({"type": "control_request", "request_id": "req_1", "request": request}) + "\n"
    lines += json.dumps({"type": "user", "message": {"role": "user", "content": "write it"}}) + "\n"
    args = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--no-transition-events")
    run = agentfsm(*args, input=lines)
    assert (run.code, run.stderr) == (0, ""), run.stderr
    out = run.json_lines()
    assert [(m["type"], m.get("subtype")) for m in out[:3]] == [
        ("control_response", None),
        ("system", "status"),
        ("system", "init"),
    ]
    assert out[0]["response"] == {"subtype": "success", "request_id": "req_1", "response": {"mode": "acceptEdits"}}
    assert (out[1]["status"], out[1]["permissionMode"], out[1]["session_id"]) == (
        None,
        "acceptEdits",
        out[2]["session_id"],
    )
    assert out[2]["permissionMode"] == "acceptEdits"
    assert (project / "out.txt").read_text() == "hi" and out[-1]["permission_denials"] == []
