"""Real Claude Agent SDK programs drive agentfsm through ``ClaudeAgentOptions(cli_path=...)``.

Each test is an SDK program as its users write them (``query()``, ``ClaudeSDKClient``, ``can_use_tool``, hooks,
``interrupt()``, ``set_permission_mode``), run against the ``agentfsm`` script of this venv and the loopback fake
model. The bash commands the model asks for are ``touch`` of sentinel files in the test's own project directory:
whether a sentinel exists is what says whether the command ran.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ProcessError,
    ResultError,
    ResultMessage,
    ToolPermissionContext,
    query,
)

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM
from tests.e2e.fake_server import FakeAnthropic


def _options(fake: FakeAnthropic, project: Path, **extra: Any) -> ClaudeAgentOptions:
    """The SDK options every test starts from: agentfsm as the CLI, the fake model, a throwaway home."""
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    env = {
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "test",
        "HOME": str(home),
    }
    return ClaudeAgentOptions(cli_path=str(AGENTFSM), cwd=str(project), env=env, **extra)


def _run(program: Callable[[], Awaitable[Any]]) -> Any:
    return anyio.run(program)


async def _results(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=options)]


def _result(messages: list[Any]) -> ResultMessage:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert len(results) == 1, messages
    return results[0]


def _tool_results(request: Any) -> list[dict[str, Any]]:
    """The tool_result blocks of a request's last message."""
    content = request.messages[-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def _result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _touch(name: str, call_id: str = "toolu_1") -> dict[str, Any]:
    return tool_reply(tool_use("bash", {"command": f"touch {name}"}, id=call_id))


class TestQueries:
    def test_query_one_shot(self, fake: FakeAnthropic, project: Path) -> None:
        """``query()`` starts agentfsm with the SDK's argv (no -p), initializes, and gets the answer and a success
        result; the SDK's default ``--system-prompt ""`` keeps our system prompt (Claude Code keeps a one-line
        identity: an empty system prompt is never sent)."""
        fake.script = [text_reply("hello from agentfsm")]
        messages = _run(lambda: _results("hi", _options(fake, project)))
        result = _result(messages)
        assert (result.subtype, result.is_error, result.result) == ("success", False, "hello from agentfsm")
        [sent] = fake.messages_requests[0].messages
        assert (sent["role"], [b["text"] for b in sent["content"]]) == ("user", ["hi"])
        assert fake.messages_requests[0].system.startswith("You are a coding agent working in")

    def test_client_multi_turn_is_one_session(self, fake: FakeAnthropic, project: Path) -> None:
        """Two prompts through one ``ClaudeSDKClient``: two results of one session, the second request carrying
        the first exchange."""
        fake.script = [text_reply("first answer"), text_reply("second answer")]

        async def program() -> list[ResultMessage]:
            results = []
            async with ClaudeSDKClient(_options(fake, project)) as client:
                for prompt in ("one", "two"):
                    await client.query(prompt)
                    results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
            return results

        results = _run(program)
        assert [r.result for r in results] == ["first answer", "second answer"]
        assert results[0].session_id == results[1].session_id
        second = fake.messages_requests[1].messages
        assert [m["role"] for m in second] == ["user", "assistant", "user"]
        assert "first answer" in str(second[1]["content"])

    def test_resume_goes_on_with_the_session(self, fake: FakeAnthropic, project: Path) -> None:
        """``resume=SESSION_ID`` (``--resume=ID``) goes on with the journalled session: its next request carries
        the first run's exchange, under the same session id."""
        fake.script = [text_reply("remembered"), text_reply("still here")]
        first = _result(_run(lambda: _results("remember this", _options(fake, project))))
        again = _result(_run(lambda: _results("and now?", _options(fake, project, resume=first.session_id))))
        assert (again.result, again.session_id) == ("still here", first.session_id)
        assert "remembered" in str(fake.messages_requests[1].messages)


class TestCanUseTool:
    def _program(self, fake: FakeAnthropic, project: Path, answer: Any, asked: list[Any]) -> ResultMessage:
        async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
            asked.append((name, dict(tool_input), context.tool_use_id))
            return answer

        async def prompts() -> Any:
            yield {"type": "user", "message": {"role": "user", "content": "make the file"}}

        async def program() -> list[Any]:
            options = _options(fake, project, can_use_tool=can_use_tool)
            return [m async for m in query(prompt=prompts(), options=options)]

        return _result(_run(program))

    def test_allow_runs_the_call(self, fake: FakeAnthropic, project: Path) -> None:
        """What would ask (``touch`` in default mode) is put to ``can_use_tool`` once; its allow runs the command."""
        fake.script = [_touch("allowed.txt"), text_reply("done")]
        asked: list[Any] = []
        result = self._program(fake, project, PermissionResultAllow(), asked)
        assert asked == [("Bash", {"command": "touch allowed.txt"}, "toolu_1")]
        assert (project / "allowed.txt").exists()
        assert result.subtype == "success" and result.permission_denials == []

    def test_deny_keeps_the_call_from_running(self, fake: FakeAnthropic, project: Path) -> None:
        """A deny's message is the model's tool_result and the command does not run."""
        fake.script = [_touch("denied.txt"), text_reply("ok, not doing it")]
        asked: list[Any] = []
        result = self._program(fake, project, PermissionResultDeny(message="not in this repo"), asked)
        assert len(asked) == 1
        assert not (project / "denied.txt").exists()
        [answer] = _tool_results(fake.messages_requests[1])
        assert answer["is_error"] is True and "not in this repo" in _result_text(answer)
        assert [d["tool_name"] for d in result.permission_denials or []] == ["Bash"]

    def test_allow_with_updated_input_runs_the_edited_command(self, fake: FakeAnthropic, project: Path) -> None:
        """``updatedInput`` is what runs: the edited command's sentinel appears, the asked one's does not."""
        fake.script = [_touch("asked.txt"), text_reply("done")]
        edited = PermissionResultAllow(updated_input={"command": "touch edited.txt"})
        self._program(fake, project, edited, [])
        assert (project / "edited.txt").exists()
        assert not (project / "asked.txt").exists()

    def test_updated_input_is_judged_by_the_deny_rules(self, fake: FakeAnthropic, project: Path) -> None:
        """An edit cannot smuggle in what a deny rule refuses: the edited command is checked again and not run."""
        fake.script = [_touch("asked.txt"), text_reply("done")]
        sneaky = PermissionResultAllow(updated_input={"command": "touch sneaky.txt"})

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
            return sneaky

        async def prompts() -> Any:
            yield {"type": "user", "message": {"role": "user", "content": "make the file"}}

        async def program() -> list[Any]:
            options = _options(fake, project, can_use_tool=can_use_tool, disallowed_tools=["Bash(touch sneaky.txt)"])
            return [m async for m in query(prompt=prompts(), options=options)]

        _run(program)
        assert not (project / "sneaky.txt").exists() and not (project / "asked.txt").exists()
        [answer] = _tool_results(fake.messages_requests[1])
        assert answer["is_error"] is True and "the input the approver gave" in _result_text(answer)


class TestHooks:
    def _hooked(
        self, fake: FakeAnthropic, project: Path, hook: Any, seen: list[Any], timeout: float | None = None
    ) -> None:
        async def recorded(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
            seen.append(data)
            return await hook(data, tool_use_id, context)

        options = _options(
            fake,
            project,
            permission_mode="bypassPermissions",  # without the hook, the command would run
            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[recorded], timeout=timeout)]},
        )
        _run(lambda: _results("make the file", options))

    def test_pre_tool_use_hook_denies_bash(self, fake: FakeAnthropic, project: Path) -> None:
        """An SDK PreToolUse hook that denies Bash is called with the command hook's input, and the command does
        not run: the sentinel stays absent and the model reads the hook's reason."""
        fake.script = [_touch("sentinel.txt"), text_reply("blocked")]

        async def deny(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no touching",
                }
            }

        seen: list[Any] = []
        self._hooked(fake, project, deny, seen)
        assert not (project / "sentinel.txt").exists()
        assert [(d["hook_event_name"], d["tool_name"], d["tool_input"]) for d in seen] == [
            ("PreToolUse", "Bash", {"command": "touch sentinel.txt"})
        ]
        assert seen[0]["session_id"] and seen[0]["cwd"] == str(project.resolve())
        [answer] = _tool_results(fake.messages_requests[1])
        assert "no touching" in _result_text(answer)

    def test_a_hook_that_fails_blocks_the_call(self, fake: FakeAnthropic, project: Path) -> None:
        """A PreToolUse callback that raises fails closed: the call is denied, the sentinel stays absent."""
        fake.script = [_touch("sentinel.txt"), text_reply("blocked")]

        async def broken(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
            raise RuntimeError("the hook broke")

        seen: list[Any] = []
        self._hooked(fake, project, broken, seen)
        assert len(seen) == 1
        assert not (project / "sentinel.txt").exists()
        [answer] = _tool_results(fake.messages_requests[1])
        assert answer["is_error"] is True and "the hook broke" in _result_text(answer)

    def test_a_hook_that_times_out_blocks_the_call(self, fake: FakeAnthropic, project: Path) -> None:
        """A PreToolUse callback slower than its matcher's timeout fails closed: denied, the sentinel stays absent."""
        fake.script = [_touch("sentinel.txt"), text_reply("blocked")]

        async def slow(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
            await anyio.sleep(20)
            return {}

        started = time.monotonic()
        self._hooked(fake, project, slow, [], timeout=1)
        assert time.monotonic() - started < 15
        assert not (project / "sentinel.txt").exists()
        [answer] = _tool_results(fake.messages_requests[1])
        assert answer["is_error"] is True and "no answer within 1s" in _result_text(answer)

    def test_a_hook_that_allows_lets_it_run(self, fake: FakeAnthropic, project: Path) -> None:
        """The same hook answering nothing: the command runs (the deny above is the hook's doing)."""
        fake.script = [_touch("sentinel.txt"), text_reply("made")]

        async def nothing(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
            return {}

        self._hooked(fake, project, nothing, [])
        assert (project / "sentinel.txt").exists()


class TestControl:
    def test_interrupt_during_a_slow_reply(self, fake: FakeAnthropic, project: Path) -> None:
        """``interrupt()`` while the model is answering ends the turn as Ctrl-C does: a result with
        terminal_reason ``aborted_streaming``; the session goes on and the next prompt is answered, the model
        seeing ``[Request interrupted by user]``."""
        release = threading.Event()

        def slow(body: dict[str, Any]) -> dict[str, Any]:
            release.wait(20)
            return text_reply("too late")

        fake.script = [slow, text_reply("second")]

        async def program() -> list[ResultMessage]:
            results = []
            async with ClaudeSDKClient(_options(fake, project)) as client:
                await client.query("take your time")
                while not fake.messages_requests:
                    await anyio.sleep(0.02)
                started = time.monotonic()
                await client.interrupt()
                results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
                assert time.monotonic() - started < 10
                release.set()
                await client.query("again")
                results += [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
            return results

        try:
            first, second = _run(program)
        finally:
            release.set()
        assert first.terminal_reason == "aborted_streaming"
        assert second.result == "second"
        assert "[Request interrupted by user]" in str(fake.messages_requests[1].messages)

    def test_interrupt_during_a_tool_call(self, fake: FakeAnthropic, project: Path) -> None:
        """``interrupt()`` while a command runs kills it (its later sentinel never appears) and ends the turn with
        ``aborted_tools``."""
        fake.script = [
            tool_reply(tool_use("bash", {"command": "touch started.txt; sleep 30; touch finished.txt"}, id="toolu_1")),
            text_reply("after"),
        ]

        async def program() -> ResultMessage:
            options = _options(fake, project, permission_mode="bypassPermissions")
            async with ClaudeSDKClient(options) as client:
                await client.query("run it")
                deadline = time.monotonic() + 20
                while not (project / "started.txt").exists() and time.monotonic() < deadline:
                    await anyio.sleep(0.02)
                await client.interrupt()
                [result] = [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
                return result

        started = time.monotonic()
        result = _run(program)
        assert time.monotonic() - started < 20
        assert result.terminal_reason == "aborted_tools"
        time.sleep(0.5)
        assert (project / "started.txt").exists() and not (project / "finished.txt").exists()
        assert len(fake.messages_requests) == 1

    def test_a_permission_answer_that_interrupts(self, fake: FakeAnthropic, project: Path) -> None:
        """``PermissionResultDeny(interrupt=True)``: the call does not run and the turn ends (``aborted_tools``)."""
        fake.script = [_touch("sentinel.txt"), text_reply("never asked")]

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
            return PermissionResultDeny(message="stop everything", interrupt=True)

        async def prompts() -> Any:
            yield {"type": "user", "message": {"role": "user", "content": "make the file"}}

        messages: list[Any] = []

        async def program() -> None:
            async for message in query(prompt=prompts(), options=_options(fake, project, can_use_tool=can_use_tool)):
                messages.append(message)

        with pytest.raises(ProcessError):  # an aborted turn is an error result: exit 1 at the end, as Claude Code's
            _run(program)
        result = _result(messages)
        assert (result.subtype, result.terminal_reason) == ("error_during_execution", "aborted_tools")
        assert not (project / "sentinel.txt").exists()
        assert len(fake.messages_requests) == 1

    def test_interrupt_while_can_use_tool_is_thinking(self, fake: FakeAnthropic, project: Path) -> None:
        """``interrupt()`` while agentfsm waits for ``can_use_tool``: the turn ends (``aborted_tools``), the
        question is cancelled (the SDK cancels the callback's task), and the call never runs."""
        fake.script = [_touch("sentinel.txt"), text_reply("next")]
        asked, cancelled = anyio.Event(), []

        async def can_use_tool(name: str, tool_input: dict[str, Any], context: ToolPermissionContext) -> Any:
            asked.set()
            try:
                await anyio.sleep(30)
            except anyio.get_cancelled_exc_class():
                cancelled.append(name)
                raise
            return PermissionResultAllow()

        async def program() -> ResultMessage:
            async with ClaudeSDKClient(_options(fake, project, can_use_tool=can_use_tool)) as client:
                await client.query("make the file")
                with anyio.fail_after(20):
                    await asked.wait()
                await client.interrupt()
                [result] = [m async for m in client.receive_response() if isinstance(m, ResultMessage)]
                with anyio.fail_after(10):
                    while not cancelled:
                        await anyio.sleep(0.02)
                return result

        result = _run(program)
        assert result.terminal_reason == "aborted_tools"
        assert cancelled == ["Bash"]
        assert not (project / "sentinel.txt").exists()

    def test_set_permission_mode(self, fake: FakeAnthropic, project: Path) -> None:
        """In default mode the headless ask is denied; after ``set_permission_mode("bypassPermissions")`` the
        same command runs."""
        fake.script = [_touch("one.txt"), text_reply("denied"), _touch("two.txt", "toolu_2"), text_reply("made")]

        async def program() -> None:
            async with ClaudeSDKClient(_options(fake, project)) as client:
                await client.query("first")
                _ = [m async for m in client.receive_response()]
                await client.set_permission_mode("bypassPermissions")
                await client.query("second")
                _ = [m async for m in client.receive_response()]

        _run(program)
        assert not (project / "one.txt").exists()
        assert (project / "two.txt").exists()

    def test_other_requests(self, fake: FakeAnthropic, project: Path) -> None:
        """``get_mcp_status`` lists no servers; ``get_context_usage`` counts the next request (the last one's 10
        tokens, plus the reply since) with automatic compaction on; ``set_model`` sends
        the next request with the new model; a request we do not serve (``rewind_files``) is an error response in
        Claude Code's words."""
        fake.script = [text_reply("one"), text_reply("two")]

        async def program() -> tuple[Any, Any, str]:
            async with ClaudeSDKClient(_options(fake, project)) as client:
                await client.query("first")
                _ = [m async for m in client.receive_response()]
                status = await client.get_mcp_status()
                usage = await client.get_context_usage()
                await client.set_model("claude-haiku-4-5")
                await client.query("second")
                _ = [m async for m in client.receive_response()]
                with pytest.raises(Exception, match="Unsupported control request subtype: rewind_files") as refused:
                    await client.rewind_files("nope")
                return status, usage, str(refused.value)

        status, usage, _ = _run(program)
        assert status == {"mcpServers": []}
        assert 10 < usage["totalTokens"] < 100 and usage["maxTokens"] > 0 and usage["isAutoCompactEnabled"]
        assert fake.messages_requests[1].body["model"] == "claude-haiku-4-5"

    def test_max_turns_50_is_accepted_and_the_cap_holds(self, fake: FakeAnthropic, project: Path) -> None:
        """``max_turns=50`` starts; the run still stops after 30 model calls."""
        fake.script = [tool_reply(tool_use("glob", {"pattern": "*.txt"}, id=f"toolu_{n}")) for n in range(40)]
        messages: list[Any] = []

        async def program() -> None:
            async for message in query(prompt="loop", options=_options(fake, project, max_turns=50)):
                messages.append(message)

        with pytest.raises(ResultError, match="stopped after 30 turns"):  # as for Claude Code: exit 1 after it
            _run(program)
        result = _result(messages)
        assert (result.subtype, result.num_turns) == ("error_max_turns", 30)
        assert len(fake.messages_requests) == 30

    def test_agents_from_initialize(self, fake: FakeAnthropic, project: Path) -> None:
        """A custom agent passed by the SDK (sent in ``initialize``) is a subagent type the model can delegate to."""
        fake.script = [
            tool_reply(tool_use("task", {"prompt": "look", "subagent_type": "reviewer"})),
            text_reply("looks fine"),
            text_reply("the reviewer says it looks fine"),
        ]
        reviewer = AgentDefinition(description="Reviews code", prompt="You are the reviewer.")
        result = _result(_run(lambda: _results("review it", _options(fake, project, agents={"reviewer": reviewer}))))
        assert result.result == "the reviewer says it looks fine"
        assert "You are the reviewer." in fake.messages_requests[1].system

    def test_sdk_mcp_servers(self, fake: FakeAnthropic, project: Path) -> None:
        """An in-process SDK MCP server (``create_sdk_mcp_server``, ``@tool``) is served over the control protocol:
        ``pending`` before the first query, connected by its connecting step before the first request, its tool
        there as ``mcp__calc__add``, its call answered by the SDK host (allowed by ``allowed_tools``);
        ``get_mcp_status`` then reports it connected with its tool, ``disabled`` after ``toggle_mcp_server(False)``
        and connected again after ``reconnect_mcp_server``."""
        from claude_agent_sdk import create_sdk_mcp_server, tool

        @tool("add", "Add two integers", {"a": int, "b": int})
        async def add(args: dict[str, Any]) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

        fake.script = [tool_reply(tool_use("mcp__calc__add", {"a": 2, "b": 40}, id="toolu_add")), text_reply("42")]
        server = create_sdk_mcp_server("calc", tools=[add])
        options = _options(fake, project, mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])

        async def program() -> tuple[Any, Any, list[Any], list[str]]:
            async with ClaudeSDKClient(options) as client:
                before = await client.get_mcp_status()
                await client.query("add them")
                messages = [m async for m in client.receive_response()]
                status = await client.get_mcp_status()
                await client.toggle_mcp_server("calc", False)
                toggled = [(await client.get_mcp_status())["mcpServers"][0]["status"]]
                await client.reconnect_mcp_server("calc")
                toggled.append((await client.get_mcp_status())["mcpServers"][0]["status"])
                return before, status, messages, toggled

        before, status, messages, toggled = _run(program)
        assert [(s["name"], s["status"]) for s in before["mcpServers"]] == [("calc", "pending")]
        assert toggled == ["disabled", "connected"]
        assert _result(messages).result == "42"
        assert "mcp__calc__add" in fake.messages_requests[0].tool_names
        [answer] = _tool_results(fake.messages_requests[1])
        assert _result_text(answer) == "42" and not answer.get("is_error")
        [calc] = status["mcpServers"]
        assert (calc["name"], calc["status"], [t["name"] for t in calc["tools"]]) == ("calc", "connected", ["add"])
