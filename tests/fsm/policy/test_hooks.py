"""Tests for fsm.policy.hooks: every callback runs, the strictest PreToolUse decision wins, and the default hooks."""

from __future__ import annotations

import threading

import pytest

from fsm import Agent, Allow, Ask, Deny, HookEvent, Hooks, Notice, default_hooks
from fsm.policy.hooks import PreToolVerdict, large_output_hook, log_hook
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.policy.hook_support import finishes_while_held
from tools import ToolOutput, Workspace


def event(tmp_path, name="PreToolUse", **fields) -> HookEvent:
    return HookEvent(name, "a", 0, Workspace(tmp_path), **fields)


class TestPreToolUse:
    def test_every_hook_runs_and_the_strictest_wins(self, tmp_path):
        """No decision stops the chain: all run, and Deny beats Ask beats Allow, whatever the order."""
        hooks, ran = Hooks(), []
        hooks.on("PreToolUse", lambda e: ran.append(1) or Allow())
        hooks.on("PreToolUse", lambda e: ran.append(2) or Notice("two"))

        def strict(e):
            ran.append(3)
            return Deny("no")

        hooks.on("PreToolUse", strict)
        hooks.on("PreToolUse", lambda e: ran.append(4) or Ask("maybe"))
        assert hooks.pre_tool_use(event(tmp_path)) == PreToolVerdict(Deny("no"), "strict", ("two",))
        assert ran == [1, 2, 3, 4]

    def test_ask_beats_allow(self, tmp_path):
        """An Ask after an Allow still asks."""
        hooks = Hooks()
        hooks.on("PreToolUse", lambda e: Allow("fine"))
        hooks.on("PreToolUse", lambda e: Ask("sure?"))
        assert hooks.pre_tool_use(event(tmp_path)).decision == Ask("sure?")

    def test_a_raising_hook_denies(self, tmp_path):
        """A PreToolUse hook that raises blocks the call (fail closed), naming the hook, and later hooks run."""
        hooks, ran = Hooks(), []

        def broken(e):
            raise RuntimeError("oops")

        hooks.on("PreToolUse", broken)
        hooks.on("PreToolUse", lambda e: ran.append(1))
        verdict = hooks.pre_tool_use(event(tmp_path))
        assert verdict.decision == Deny(
            "Permission denied: PreToolUse hook broken failed (oops), so the call is blocked"
        )
        assert (verdict.by, ran) == ("broken", [1])

    def test_a_plain_string_denies(self, tmp_path):
        """A string from a PreToolUse hook is a Deny with that reason (the reference harness's convention)."""
        hooks = Hooks()
        hooks.on("PreToolUse", lambda e: "no network here")
        assert hooks.pre_tool_use(event(tmp_path)).decision == Deny("no network here")


class TestOtherEvents:
    def test_decorator_form(self, tmp_path):
        """on(event) without a callback returns a decorator."""
        hooks = Hooks()

        @hooks.on("Stop")
        def more(e):
            return "one more"

        assert hooks.fire(event(tmp_path, "Stop")) == ("one more", [])

    def test_strings_are_joined(self, tmp_path):
        """Every callback runs; their strings are joined."""
        hooks = Hooks()
        hooks.on("Stop", lambda e: "a")
        hooks.on("Stop", lambda e: Notice("n"))
        hooks.on("Stop", lambda e: "b")
        assert hooks.fire(event(tmp_path, "Stop")) == ("a\n\nb", ["n"])

    def test_unknown_event(self):
        """Registering for an event that does not exist is a ValueError listing the events."""
        with pytest.raises(ValueError, match="unknown hook event 'Start' \\(expected one of UserPromptSubmit"):
            Hooks().on("Start", lambda e: None)

    def test_failing_callback_becomes_notice(self, tmp_path):
        """Outside PreToolUse, a callback that raises is reported as a notice and the next one runs."""
        hooks = Hooks()

        def broken(e):
            raise RuntimeError("oops")

        hooks.on("Stop", broken)
        hooks.on("Stop", lambda e: "later")
        assert hooks.fire(event(tmp_path, "Stop")) == ("later", ["Stop hook broken failed: oops"])


class TestThreads:
    def test_python_callbacks_hold_the_registry_lock(self, tmp_path):
        """While one thread is inside a Python callback, another thread's callback waits for it."""
        hooks, entered, release, order = Hooks(), threading.Event(), threading.Event(), []

        def slow(e):
            entered.set()
            release.wait(10)
            order.append("slow")

        hooks.on("Stop", slow)
        hooks.on("SubagentStop", lambda e: order.append("other"))
        first = threading.Thread(target=hooks.fire, args=(event(tmp_path, "Stop"),))
        first.start()
        assert entered.wait(10)
        second = threading.Thread(target=hooks.fire, args=(event(tmp_path, "SubagentStop"),))
        second.start()
        second.join(0.2)
        assert second.is_alive() and order == []  # waiting for the lock
        release.set()
        first.join(10)
        second.join(10)
        assert order == ["slow", "other"]

    def test_a_thread_safe_callback_skips_the_lock(self, tmp_path):
        """A callback marked thread_safe when registered runs while another thread holds the lock."""
        hooks = Hooks()

        class Free:
            thread_safe = True

            def __call__(self, e):
                return Notice("ran")

        hooks.on("SubagentStop", Free())
        finished_meanwhile, answers = finishes_while_held(
            hooks, tmp_path, lambda: hooks.fire(event(tmp_path, "SubagentStop"))
        )
        assert finished_meanwhile and answers == [(None, ["ran"])]

    def test_a_callback_may_fire_hooks_itself(self, tmp_path):
        """The lock is re-entrant: a callback that fires the registry's hooks does not deadlock."""
        hooks = Hooks()
        hooks.on("SubagentStop", lambda e: "inner")
        hooks.on("Stop", lambda e: hooks.fire(event(tmp_path, "SubagentStop"))[0])
        assert hooks.fire(event(tmp_path, "Stop")) == ("inner", [])


class TestDefaultHooks:
    def test_registered_in_reference_order(self):
        """Large output on PostToolUse; summary on Stop; no PreToolUse log (the console shows each call; the policy is
        not a hook)."""
        hooks = default_hooks()
        assert hooks.callbacks("PreToolUse") == []
        assert large_output_hook in hooks.callbacks("PostToolUse")
        assert len(hooks.callbacks("Stop")) == 1

    def test_log_hook_text(self, tmp_path):
        """The log notice shows the tool name and its first two input values, cut at 60 chars."""
        call = tool_use("write_file", {"path": "a.py", "content": "x" * 100})
        assert log_hook(event(tmp_path, tool_call=call)) == Notice(f"write_file(a.py, {'x' * 100})"[: 11 + 60] + ")")

    def test_large_output_warns_above_100k(self, tmp_path):
        """Outputs above 100,000 chars get a notice; smaller ones none."""
        call = tool_use("bash", {"command": "x"})
        big = event(tmp_path, "PostToolUse", tool_call=call, output=ToolOutput("y" * 100_001))
        assert large_output_hook(big) == Notice("Large output: bash returned 100,001 chars")
        small = event(tmp_path, "PostToolUse", tool_call=call, output=ToolOutput("y" * 100_000))
        assert large_output_hook(small) is None

    def test_run_shows_hook_lines_as_notes(self, tmp_path):
        """A run records the log hook's (when added) and the summary's notices on its transitions."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*.md"})), text_reply("none")])
        hooks = default_hooks()
        hooks.on("PreToolUse", log_hook)
        agent = Agent(model=model, workdir=str(tmp_path), hooks=hooks)
        agent.run("x")
        notes = [n for r in agent.history for n in r.notes]
        assert notes == ["glob(*.md)", "Stop: this run used 1 tool call"]

    def test_summary_counts_this_run_with_its_subagents(self, tmp_path):
        """The Stop summary counts the run's tool calls, the task call and the subagent's included, not earlier
        runs', in grammatical English."""
        model = ScriptedModel(
            [
                tool_reply(tool_use("glob", {"pattern": "*.md"}), tool_use("task", {"prompt": "p"})),
                tool_reply(tool_use("glob", {"pattern": "*.py"})),
                text_reply("child"),
                text_reply("done"),
                tool_reply(tool_use("glob", {"pattern": "*"})),
                text_reply("again"),
            ]
        )
        agent = Agent(model=model, workdir=str(tmp_path))

        def summaries() -> list[str]:
            return [n for r in agent.history for n in r.notes if n.startswith("Stop:")]

        agent.run("first")
        assert summaries() == ["Stop: this run used 3 tool calls"]
        agent.run("second")
        assert summaries() == ["Stop: this run used 3 tool calls", "Stop: this run used 1 tool call"]


class TestEventsInAgent:
    def test_all_events_fire(self, tmp_path):
        """A run with a subagent fires each of the six events, with depth telling parent from child (a subagent's
        prompt fires no UserPromptSubmit, as in Claude Code)."""
        hooks, seen = Hooks(), []
        for name in ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStart", "SubagentStop"):
            hooks.on(name, lambda e: seen.append((e.name, e.depth)))
        model = ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "p"})),
                tool_reply(tool_use("glob", {"pattern": "*"})),
                text_reply("sub"),
                text_reply("top"),
            ]
        )
        Agent(model=model, workdir=str(tmp_path), hooks=hooks).run("x")
        assert seen == [
            ("UserPromptSubmit", 0),
            ("PreToolUse", 0),
            ("SubagentStart", 1),
            ("PreToolUse", 1),
            ("PostToolUse", 1),
            ("SubagentStop", 1),
            ("PostToolUse", 0),
            ("Stop", 0),
        ]

    def test_prompt_hook_adds_context(self, tmp_path):
        """A UserPromptSubmit string is added to the user message."""
        hooks = Hooks()
        hooks.on("UserPromptSubmit", lambda e: "today is Sunday")
        model = ScriptedModel([text_reply("ok")])
        Agent(model=model, workdir=str(tmp_path), hooks=hooks).run("hi")
        assert model.requests[0].messages[0]["content"] == [
            {"type": "text", "text": "hi"},
            {"type": "text", "text": "today is Sunday"},
        ]

    def test_stop_hook_active_survives_a_restore(self, tmp_path):
        """stop_hook_active is the agent's data: an agent rebuilt after a forced turn still tells the Stop hook."""
        seen: list[bool] = []
        hooks = Hooks()
        hooks.on("Stop", lambda e: seen.append(e.stop_hook_active) or (None if e.stop_hook_active else "again"))
        model = ScriptedModel([text_reply("first"), text_reply("second"), text_reply("third"), text_reply("fourth")])
        agent = Agent(model=model, workdir=str(tmp_path), hooks=hooks)
        agent.send("go")
        while not agent.history or agent.history[-1].trigger != "continue_forced":
            agent.step()
        rebuilt = Agent.restore(model, str(tmp_path), agent.data, next_seq=len(agent.history) + 1, hooks=hooks)
        rebuilt.run()
        assert seen == [False, True] and rebuilt.data.final_text == "second" and rebuilt.state == "idle"
        rebuilt.run("next")  # a new prompt is a new run: the hook is not active in it
        assert seen[2] is False

    def test_subagent_stop_can_force_child_to_continue(self, tmp_path):
        """A SubagentStop string sends the child one more turn before it returns."""
        hooks, asked = Hooks(), []
        hooks.on("SubagentStop", lambda e: None if asked else asked.append(1) or "double-check")
        model = ScriptedModel(
            [
                tool_reply(tool_use("task", {"prompt": "p"})),
                text_reply("first"),
                text_reply("checked"),
                text_reply("top"),
            ]
        )
        Agent(model=model, workdir=str(tmp_path), hooks=hooks).run("x")
        assert model.requests[2].messages[-1] == {"role": "user", "content": "double-check"}
        assert model.requests[3].messages[-1]["content"][0]["content"] == "checked"

    def test_post_tool_use_text_reaches_the_model(self, tmp_path):
        """A PostToolUse string reaches the model as a context block after the result, which is left alone."""
        hooks = Hooks()
        hooks.on("PostToolUse", lambda e: "remember to run the tests")
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*.md"}, id="g")), text_reply("ok")])
        Agent(model=model, workdir=str(tmp_path), hooks=hooks).run("x")
        assert model.requests[1].messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "g", "content": "(no matches)"},
            {
                "type": "text",
                "text": "<system-reminder>\nPostToolUse:Glob hook additional context: remember to run the tests\n"
                "</system-reminder>",
            },
        ]
