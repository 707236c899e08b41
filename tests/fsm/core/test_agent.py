"""Tests for fsm.core.agent: the driver's API, one transition per step, subagents, stop reasons and interrupts."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fsm import Agent, ConfigError, Hooks, MisuseError, ModelError, ScriptExhaustedError
from fsm.core.agent import INTERRUPTED
from fsm.testing import ScriptedModel, text, text_reply, tool_reply, tool_use


def make(tmp_path: Path, *replies, **options) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies)
    return Agent(model=model, workdir=str(tmp_path), **options), model


def answered_once(messages: list[dict]) -> bool:
    """Every tool_use is answered by exactly one tool_result, in order, in the next user message."""
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        ids = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not ids:
            continue
        if i + 1 >= len(messages):
            return False
        nxt = messages[i + 1]
        results = [b["tool_use_id"] for b in nxt["content"] if isinstance(b, dict) and b["type"] == "tool_result"]
        if nxt["role"] != "user" or results != ids:
            return False
    return True


class TestConstruction:
    @pytest.mark.parametrize("turns", [0, 31, 45, -1, True, 2.5])
    def test_max_turns_out_of_range_rejected(self, tmp_path, turns):
        """max_turns outside 1..30 raises ConfigError naming the value."""
        with pytest.raises(ConfigError, match=rf"^max_turns must be 1\.\.30 \(got {turns!r}\)$"):
            Agent(model=ScriptedModel(), workdir=str(tmp_path), max_turns=turns)

    def test_missing_workdir_rejected(self, tmp_path):
        """A workdir that does not exist raises ConfigError saying what to do."""
        with pytest.raises(ConfigError, match="is not a directory; create it or pick another"):
            Agent(model=ScriptedModel(), workdir=str(tmp_path / "nope"))

    def test_unknown_tool_name_rejected(self, tmp_path):
        """A tool list naming an unregistered tool raises ConfigError listing what exists."""
        with pytest.raises(ConfigError, match=r"unknown tool\(s\) grep \(available: bash"):
            Agent(model=ScriptedModel(), workdir=str(tmp_path), tools=["bash", "grep"])

    def test_repr_tells_state(self, tmp_path):
        """repr shows id, depth, state and turn at a glance."""
        agent, _ = make(tmp_path)
        assert repr(agent) == f"<Agent {agent.agent_id} depth=0 state=idle turn=0/30>"


class TestSendAndStep:
    def test_step_idle_without_prompt_is_misuse(self, tmp_path):
        """Stepping an idle agent with nothing queued raises MisuseError, not a hang."""
        agent, _ = make(tmp_path)
        with pytest.raises(MisuseError, match="no prompt is queued; call send"):
            agent.step()

    def test_send_only_from_idle(self, tmp_path):
        """send() while a run is under way raises MisuseError naming the state."""
        agent, _ = make(tmp_path, text_reply("hi"))
        agent.send("hello")
        agent.step()
        with pytest.raises(MisuseError, match="send\\(\\) needs an idle agent, but it is awaiting_model"):
            agent.send("again")

    def test_send_rejects_empty_prompt(self, tmp_path):
        """An empty prompt is a ValueError."""
        agent, _ = make(tmp_path)
        with pytest.raises(ValueError, match="prompt must be a non-empty string"):
            agent.send("  ")

    def test_each_step_is_one_transition(self, tmp_path):
        """A plain question takes three steps: prompt, replied_final, stopped."""
        agent, _ = make(tmp_path, text_reply("4"))
        agent.send("2+2?")
        triggers = [agent.step().trigger for _ in range(3)]
        assert triggers == ["prompt", "replied_final", "stopped"]
        assert agent.state == "idle" and agent.outcome == "end_turn"
        assert agent.messages == [{"role": "user", "content": "2+2?"},
                                  {"role": "assistant", "content": [text("4")]}]
        assert [r.seq for r in agent.history] == [1, 2, 3]

    def test_run_returns_final_text(self, tmp_path):
        """run(prompt) steps until idle and returns the reply's text."""
        agent, _ = make(tmp_path, text_reply("done"))
        assert agent.run("go") == "done"

    def test_history_kept_across_runs(self, tmp_path):
        """A second run sends the first exchange too."""
        agent, model = make(tmp_path, text_reply("one"), text_reply("two"))
        agent.run("first")
        agent.run("second")
        assert [m["role"] for m in model.requests[1].messages] == ["user", "assistant", "user"]

    def test_listeners_get_every_record(self, tmp_path):
        """subscribe() hands each Transition to the listener; the returned function unsubscribes."""
        agent, _ = make(tmp_path, text_reply("a"), text_reply("b"))
        seen = []
        stop = agent.subscribe(seen.append)
        agent.run("x")
        stop()
        agent.run("y")
        assert [r.trigger for r in seen] == ["prompt", "replied_final", "stopped"]

    def test_script_exhausted_propagates_and_leaves_state(self, tmp_path):
        """Running past the script raises ScriptExhaustedError and changes nothing."""
        agent, _ = make(tmp_path)
        agent.send("x")
        agent.step()
        before = copy.deepcopy(agent.data)
        with pytest.raises(ScriptExhaustedError, match="asked for reply #1 but its script holds 0"):
            agent.step()
        assert agent.data == before


class TestTools:
    def test_tools_run_one_per_step_and_answer_in_order(self, tmp_path):
        """Each tool_use is one tool_ran step; tools_done sends all results in one user message, in order."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(text("looking"), tool_use("read_file", {"path": "a.txt"}, id="t1"),
                       tool_use("glob", {"pattern": "*.txt"}, id="t2")),
            text_reply("ok"),
        )
        agent.send("read")
        triggers = [agent.step().trigger for _ in range(7)]
        assert triggers == ["prompt", "replied_with_tools", "tool_ran", "tool_ran", "tools_done",
                            "replied_final", "stopped"]
        results = model.requests[1].messages[-1]
        assert results == {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "alpha"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "a.txt"},
        ]}

    def test_content_decides_not_stop_reason(self, tmp_path):
        """A tool_use under stop_reason end_turn still runs; tool_use stop_reason with no tool_use stops."""
        agent, model = make(tmp_path, tool_reply(tool_use("glob", {"pattern": "*"}), stop_reason="end_turn"),
                            text_reply("fine", stop_reason="tool_use"))
        assert agent.run("x") == "fine"
        assert agent.outcome == "end_turn"
        assert len(model.requests) == 2
        assert answered_once(agent.messages)
        assert all(m["content"] for m in agent.messages)

    def test_unknown_tool_and_bad_input_are_error_results(self, tmp_path):
        """An unknown tool and wrong arguments each get an is_error tool_result, and the run goes on."""
        agent, model = make(tmp_path, tool_reply(tool_use("teleport", {}, id="u1"),
                                                 tool_use("read_file", {"path": 7}, id="u2"),
                                                 tool_use("bash", "ls", id="u3")),
                            text_reply("sorry"))
        agent.run("x")
        blocks = model.requests[1].messages[-1]["content"]
        assert [b["is_error"] for b in blocks] == [True, True, True]
        assert blocks[0]["content"].startswith("Error: unknown tool 'teleport' (available: bash, read_file")
        assert blocks[1]["content"] == "Error: read_file: 'path' must be string (got 7)"
        assert blocks[2]["content"] == "Error: bash: input must be an object (got str)"


class TestStopReasons:
    @pytest.mark.parametrize(("stop_reason", "outcome"), [
        ("end_turn", "end_turn"), ("stop_sequence", "end_turn"), ("max_tokens", "max_tokens"),
        ("refusal", "refusal"), ("model_context_window_exceeded", "max_tokens")])
    def test_final_stop_reasons(self, tmp_path, stop_reason, outcome):
        """Each final stop reason ends the run with its outcome."""
        agent, _ = make(tmp_path, text_reply("t", stop_reason=stop_reason))
        agent.run("x")
        assert agent.outcome == outcome

    def test_pause_turn_calls_again_with_reply_appended(self, tmp_path):
        """pause_turn keeps the reply and calls the model again; each call is a turn."""
        paused = {"content": [text("thinking…")], "stop_reason": "pause_turn"}
        agent, model = make(tmp_path, paused, text_reply("done"))
        agent.send("x")
        assert [agent.step().trigger for _ in range(4)] == ["prompt", "paused", "replied_final", "stopped"]
        assert model.requests[1].messages[-1] == {"role": "assistant", "content": [text("thinking…")]}
        assert agent.turn == 2

    def test_model_error_stops_with_message_and_consistent_messages(self, tmp_path):
        """A ModelError ends the run with outcome model_error, the message kept, and no partial message."""
        agent, _ = make(tmp_path, ModelError("the model API answered 500: boom"))
        agent.run("x")
        assert agent.outcome == "model_error"
        assert agent.data.error == "the model API answered 500: boom"
        assert agent.messages == [{"role": "user", "content": "x"}]
        assert agent.history[-2].trigger == "model_failed"

    def test_malformed_reply_is_model_error(self, tmp_path):
        """A reply without a content list is a model_error, not a crash."""
        agent, _ = make(tmp_path, {"stop_reason": "end_turn"})
        agent.run("x")
        assert agent.outcome == "model_error"
        assert agent.data.error.startswith("malformed reply: expected an object with a content list")

    def test_tool_use_without_id_is_model_error(self, tmp_path):
        """A tool_use block with no id cannot be answered, so the reply is refused as malformed."""
        agent, _ = make(tmp_path, {"content": [{"type": "tool_use", "name": "bash", "input": {}}]})
        agent.run("x")
        assert agent.data.error == "malformed reply: tool_use content[0] needs an id, a name and an input"

    def test_empty_final_reply_appends_nothing(self, tmp_path):
        """An empty final reply adds no empty assistant message (the API would reject it next time)."""
        agent, _ = make(tmp_path, text_reply(""), text_reply("ok"))
        agent.run("x")
        agent.run("y")
        assert [m["role"] for m in agent.messages] == ["user", "user", "assistant"]


class TestTurnLimit:
    def test_parent_stops_at_max_turns(self, tmp_path):
        """A model that always calls a tool is stopped after max_turns calls, with every call answered."""
        agent, model = make(tmp_path, *[tool_reply(tool_use("glob", {"pattern": "*"})) for _ in range(5)],
                            max_turns=3)
        agent.run("loop")
        assert agent.outcome == "max_turns"
        assert len(model.requests) == 3 and agent.turn == 3
        assert answered_once(agent.messages)
        assert agent.history[-2].trigger == "turn_limit"

    def test_child_reports_its_own_limit(self, tmp_path):
        """A subagent out of turns returns the fixed sentence with its limit, and the parent goes on."""
        looping = [tool_reply(tool_use("glob", {"pattern": "*"})) for _ in range(2)]
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "dig"}, id="k")), *looping,
                            text_reply("parent done"), max_turns=2)
        assert agent.run("x") == "parent done"
        result = model.requests[-1].messages[-1]["content"][0]
        assert result == {"type": "tool_result", "tool_use_id": "k",
                          "content": "Subagent stopped after 2 turns without a final answer."}

    def test_forced_continuation_costs_a_turn_and_is_bounded(self, tmp_path):
        """A Stop hook that always asks for more is obeyed until the turn limit."""
        hooks = Hooks()
        hooks.on("Stop", lambda event: "keep going")
        agent, model = make(tmp_path, *[text_reply(f"r{i}") for i in range(3)], hooks=hooks, max_turns=3)
        agent.run("x")
        assert len(model.requests) == 3
        assert agent.outcome == "max_turns"
        assert model.requests[1].messages[-1] == {"role": "user", "content": "keep going"}


class TestSubagent:
    def test_child_gets_fresh_context_and_base_tools(self, tmp_path):
        """The child's first call holds exactly the prompt and the five base tools."""
        (tmp_path / "README.md").write_text("uses pytest\n")
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "find the framework"}, id="k")),
                            tool_reply(tool_use("read_file", {"path": "README.md"})), text_reply("pytest"),
                            text_reply("It is pytest."))
        assert agent.run("which framework?") == "It is pytest."
        parent_first, child_first, _, parent_second = model.requests
        assert parent_first.tool_names == ["bash", "read_file", "write_file", "edit_file", "glob", "task"]
        assert child_first.messages == [{"role": "user", "content": "find the framework"}]
        assert child_first.tool_names == ["bash", "read_file", "write_file", "edit_file", "glob"]
        assert child_first.system != parent_first.system
        assert parent_second.messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "k", "content": "pytest"}]
        assert "uses pytest" not in str(agent.messages)

    def test_each_parent_step_moves_the_child_once(self, tmp_path):
        """While the child runs, every parent step returns one child transition at depth 1."""
        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("sub"),
                        text_reply("top"))
        agent.send("x")
        records = [agent.step()]
        while agent.state != "idle":
            records.append(agent.step())
        path = [(r.depth, r.trigger) for r in records]
        assert path == [(0, "prompt"), (0, "replied_with_tools"), (0, "subagent_spawned"),
                        (1, "prompt"), (1, "replied_final"), (1, "stopped"),
                        (0, "subagent_returned"), (0, "tools_done"), (0, "replied_final"), (0, "stopped")]
        child_id = records[2].child
        assert {r.agent for r in records if r.depth == 1} == {child_id}
        assert all(r.parent == agent.agent_id for r in records if r.depth == 1)
        assert [r.seq for r in records] == list(range(1, 11))

    def test_children_visible_while_running(self, tmp_path):
        """agent.children holds the running child and is empty once it returned."""
        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("sub"),
                        text_reply("top"))
        agent.send("x")
        for _ in range(3):
            agent.step()
        assert len(agent.children) == 1 and agent.children[0].depth == 1
        agent.run()
        assert agent.children == []

    def test_empty_child_answer_is_no_summary(self, tmp_path):
        """A child that ends with no text returns (no summary)."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply(""),
                            text_reply("top"))
        agent.run("x")
        assert model.requests[-1].messages[-1]["content"][0]["content"] == "(no summary)"

    def test_child_model_error_is_error_result(self, tmp_path):
        """A model error inside the child becomes an Error tool_result for the parent."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), ModelError("overloaded"),
                            text_reply("top"))
        agent.run("x")
        block = model.requests[-1].messages[-1]["content"][0]
        assert block["is_error"] is True
        assert block["content"] == "Error: the subagent's model call failed: overloaded"

    def test_child_cannot_delegate(self, tmp_path):
        """A child's hallucinated task call gets an error result and spawns nothing."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})),
                            tool_reply(tool_use("task", {"prompt": "deeper"}, id="deep")), text_reply("sub"),
                            text_reply("top"))
        depths = []
        agent.subscribe(lambda r: depths.append(r.depth))
        agent.run("x")
        assert max(depths) == 1
        block = model.requests[2].messages[-1]["content"][0]
        assert block["tool_use_id"] == "deep" and block["is_error"] is True
        assert block["content"].startswith("Error: a subagent cannot delegate")

    def test_task_with_empty_prompt_is_error(self, tmp_path):
        """task needs a non-empty prompt; otherwise nothing is spawned."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": ""})), text_reply("top"))
        agent.run("x")
        assert not any(r.trigger == "subagent_spawned" for r in agent.history)
        assert model.requests[-1].messages[-1]["content"][0]["content"] == "Error: task: 'prompt' must not be empty"

    def test_task_disallowed_is_unknown(self, tmp_path):
        """Without task in the toolset, a task call is an unknown tool."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("top"),
                            tools=["bash", "glob"])
        agent.run("x")
        assert model.requests[0].tool_names == ["bash", "glob"]
        assert "unknown tool 'task'" in model.requests[-1].messages[-1]["content"][0]["content"]

    def test_two_tasks_in_one_reply_run_in_order(self, tmp_path):
        """Several task calls in one reply run one after the other."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "a"}, id="a"),
                                                 tool_use("task", {"prompt": "b"}, id="b")),
                            text_reply("A"), text_reply("B"), text_reply("top"))
        agent.run("x")
        contents = [b["content"] for b in model.requests[-1].messages[-1]["content"]]
        assert contents == ["A", "B"]
        assert [r.child for r in agent.history if r.trigger == "subagent_spawned"] == [
            f"{agent.agent_id}.1", f"{agent.agent_id}.2"]


class TestSkip:
    def test_skip_answers_without_running(self, tmp_path):
        """skip(text) answers the pending call with text; the tool never runs."""
        agent, _ = make(tmp_path, tool_reply(tool_use("write_file", {"path": "f.txt", "content": "x"})),
                            text_reply("ok"))
        agent.send("x")
        agent.step()
        agent.step()
        record = agent.skip("pretend it was written")
        assert record.trigger == "tool_ran" and record.tool_result.text == "pretend it was written"
        agent.run()
        assert not (tmp_path / "f.txt").exists()

    def test_skip_without_pending_is_misuse(self, tmp_path):
        """skip on an idle agent raises MisuseError."""
        agent, _ = make(tmp_path)
        with pytest.raises(MisuseError, match="skip needs a pending tool call"):
            agent.skip("x")


class TestInterrupt:
    def test_interrupt_during_tool_answers_pending_and_idles(self, tmp_path):
        """Ctrl-C while a tool runs leaves the agent idle, outcome interrupted, every tool_use answered."""

        agent, _ = make(tmp_path, tool_reply(tool_use("glob", {"pattern": "*"}, id="g1"),
                                             tool_use("glob", {"pattern": "*"}, id="g2")), text_reply("after"))
        calls = []

        def ctrl_c_on_second_call(event):
            calls.append(event.tool_call["id"])
            if len(calls) == 2:
                raise KeyboardInterrupt

        agent.hooks.on("PreToolUse", ctrl_c_on_second_call)
        agent.send("x")
        with pytest.raises(KeyboardInterrupt):
            agent.run()
        assert agent.state == "idle" and agent.outcome == "interrupted"
        assert answered_once(agent.messages)
        last = agent.messages[-1]["content"]
        assert last[0]["tool_use_id"] == "g1" and "is_error" not in last[0]
        assert last[1] == {"type": "tool_result", "tool_use_id": "g2", "content": INTERRUPTED, "is_error": True}
        assert agent.run("go on") == "after"

    def test_interrupt_during_model_call(self, tmp_path):
        """Ctrl-C while waiting for the model leaves idle with the prompt kept and no reply."""

        def interrupt(request):
            raise KeyboardInterrupt

        agent, _ = make(tmp_path, interrupt)
        with pytest.raises(KeyboardInterrupt):
            agent.run("x")
        assert agent.state == "idle" and agent.outcome == "interrupted"
        assert agent.messages == [{"role": "user", "content": "x"}]

    def test_interrupt_inside_child_settles_both(self, tmp_path):
        """Ctrl-C during the child's model call idles the child and answers the parent's task call."""

        def interrupt(request):
            raise KeyboardInterrupt

        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"}, id="k")), interrupt)
        with pytest.raises(KeyboardInterrupt):
            agent.run("x")
        assert agent.state == "idle" and agent.children == []
        assert agent.messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "k", "content": INTERRUPTED, "is_error": True}]
        child_records = [r for r in agent.history if r.depth == 1]
        assert child_records[-1].trigger == "interrupted"
