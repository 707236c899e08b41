"""Tests for fsm.core.agent: the driver's API, one transition per step, subagents, stop reasons and interrupts."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from fsm import Agent, AgentOptions, ConfigError, Hooks, MisuseError, ModelError, Policy
from fsm.core.agent import INTERRUPTED, INTERRUPTED_MARKER
from fsm.model.reply import CUT_CALL
from fsm.policy.chain import deny_unattended
from fsm.testing import ScriptedModel, text, text_reply, tool_reply, tool_use
from tools.reads import UNCHANGED


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


class TestOptions:
    def test_a_record_or_keywords_build_the_same_agent(self, tmp_path):
        """Agent(options=AgentOptions(...)) runs as Agent(...) with the same keywords does."""
        script = [tool_reply(tool_use("glob", {"pattern": "*"}))] * 3
        by_record = Agent(ScriptedModel(script), str(tmp_path), options=AgentOptions(max_turns=2, tools=["glob"]))
        by_keywords = Agent(ScriptedModel(script), str(tmp_path), max_turns=2, tools=["glob"])
        assert by_record.opts == attrs.evolve(by_keywords.opts, hooks=by_record.hooks, approver=by_record.approver)
        by_record.run("go")
        assert (by_record.outcome, by_record.turn, [t.name for t in by_record.tools]) == ("max_turns", 2, ["glob"])

    def test_keywords_beside_a_record_replace_its_fields(self, tmp_path):
        """A keyword given with options= wins over the record's field; the other fields stay the record's."""
        agent = Agent(ScriptedModel(), str(tmp_path), 5, options=AgentOptions(max_turns=9, max_tokens=100))
        assert (agent.opts.max_turns, agent.opts.max_tokens, agent.max_tokens) == (5, 100, 100)

    def test_the_old_positional_arguments_still_work(self, tmp_path):
        """Agent(model, workdir, max_turns, hooks, approver) is still accepted, as the CLI calls it."""
        hooks = Hooks()
        agent = Agent(ScriptedModel(), str(tmp_path), 4, hooks, deny_unattended)
        assert (agent.opts.max_turns, agent.hooks, agent.approver) == (4, hooks, deny_unattended)

    def test_opts_fill_in_every_default(self, tmp_path):
        """opts holds the hooks, approver and policy the agent made, its offered tools and max_parallel."""
        agent = Agent(ScriptedModel(), str(tmp_path))
        opts = agent.opts
        assert (opts.hooks, opts.approver, opts.permissions) == (agent.hooks, deny_unattended, Policy())
        assert opts.permissions is agent.permissions
        assert (opts.tools, opts.max_parallel) == (tuple(t.name for t in agent.tools), 4)
        assert agent.options() == attrs.asdict(opts, recurse=False)

    def test_another_agent_built_from_opts_shares_its_objects(self, tmp_path):
        """Agent(options=agent.opts) shares the hooks, approver and policy, as a subagent does."""
        agent = Agent(ScriptedModel(), str(tmp_path), permissions=Policy(mode="acceptEdits"))
        twin = Agent(ScriptedModel(), str(tmp_path), options=agent.opts)
        assert (twin.hooks, twin.approver, twin.permissions) == (agent.hooks, agent.approver, agent.permissions)
        assert twin.hooks is agent.hooks and twin.permissions is agent.permissions and twin.opts == agent.opts

    def test_each_agent_made_without_hooks_gets_its_own(self, tmp_path):
        """Two agents built from one record without hooks do not share a hook registry."""
        options = AgentOptions()
        first, second = (Agent(ScriptedModel(), str(tmp_path), options=options) for _ in range(2))
        assert first.hooks is not second.hooks and options.hooks is None

    def test_settings_are_read_only_except_the_approver(self, tmp_path):
        """hooks and permissions are views of opts; setting the approver changes opts and what subagents get."""
        agent = Agent(ScriptedModel([fan_out(1), text_reply("sub"), text_reply("done")]), str(tmp_path))
        with pytest.raises(AttributeError):
            agent.hooks = Hooks()

        def asked(call, ask):
            return True

        agent.approver = asked
        assert agent.opts.approver is asked
        agent.send("go")
        while not agent.children:
            agent.step()
        assert agent.children[0].approver is asked

    def test_a_bad_limit_leaves_the_limits_as_they_were(self, tmp_path):
        """set_limits refuses a bad value with the record's message and keeps the limits it had."""
        agent = Agent(ScriptedModel(), str(tmp_path), max_turns=4)
        with pytest.raises(ConfigError, match=r"^max_turns must be 1\.\.30 \(got 31\)$"):
            agent.set_limits(max_turns=31)
        agent.set_limits(max_model_calls=9)
        assert (agent.opts.max_turns, agent.opts.max_model_calls) == (4, 9)

    def test_restore_takes_the_datas_limits_unless_given_options(self, tmp_path):
        """A restored agent's later runs take the data's limits, or those of the options given."""
        data = Agent(ScriptedModel(), str(tmp_path), max_turns=3, max_model_calls=7).data
        assert Agent.restore(ScriptedModel(), str(tmp_path), data).opts.max_turns == 3
        restored = Agent.restore(ScriptedModel(), str(tmp_path), data, options=AgentOptions(max_turns=11))
        assert (restored.opts.max_turns, restored.opts.max_model_calls) == (11, 200)
        assert Agent.restore(ScriptedModel(), str(tmp_path), data, max_turns=5).opts.max_model_calls == 7


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
        assert agent.messages == [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": [text("4")]}]
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

    def test_any_exception_from_the_model_is_a_counted_model_failed(self, tmp_path):
        """A model raising anything (here ScriptExhaustedError) ends the run in model_failed; the call counts."""
        agent, model = make(tmp_path)
        agent.send("x")
        agent.step()
        record = agent.step()
        assert (record.trigger, record.dest, record.turn) == ("model_failed", "stopping", 1)
        assert agent.data.error.startswith("the model call raised ScriptExhaustedError: ScriptedModel was asked")
        agent.run()
        assert (agent.state, agent.outcome, agent.turn, len(model.requests)) == ("idle", "model_error", 1, 1)

    def test_retrying_after_an_exception_never_exceeds_max_turns(self, tmp_path):
        """A caller that keeps prompting after the model raised gets exactly max_turns calls per run."""
        agent, model = make(tmp_path, *[RuntimeError("boom")] * 5, max_turns=1)
        for _ in range(3):
            agent.run("again")
            assert agent.turn == 1
        assert len(model.requests) == 3

    def test_interrupt_during_a_model_call_counts_the_call(self, tmp_path):
        """Ctrl-C inside Model.create spends the turn and the run's budget: the call was made."""
        agent, model = make(tmp_path, KeyboardInterrupt())
        agent.send("x")
        agent.step()
        with pytest.raises(KeyboardInterrupt):
            agent.step()
        record = agent.history[-1]
        assert (record.trigger, record.model_called, record.turn) == ("interrupted", True, 1)
        assert (agent.turn, agent.run_calls, len(model.requests)) == (1, 1, 1)

    def test_interrupt_between_steps_spends_no_call(self, tmp_path):
        """interrupt() in awaiting_model before the call is made counts nothing."""
        agent, model = make(tmp_path)
        agent.send("x")
        agent.step()
        agent.interrupt()
        assert (agent.history[-1].model_called, agent.turn, agent.run_calls, len(model.requests)) == (False, 0, 0, 0)


class TestTools:
    def test_tools_run_one_per_step_and_answer_in_order(self, tmp_path):
        """Each tool_use is one tool_ran step; tools_done sends all results in one user message, in order."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(
                text("looking"),
                tool_use("read_file", {"path": "a.txt"}, id="t1"),
                tool_use("glob", {"pattern": "*.txt"}, id="t2"),
            ),
            text_reply("ok"),
        )
        agent.send("read")
        triggers = [agent.step().trigger for _ in range(7)]
        assert triggers == [
            "prompt",
            "replied_with_tools",
            "tool_ran",
            "tool_ran",
            "tools_done",
            "replied_final",
            "stopped",
        ]
        results = model.requests[1].messages[-1]
        assert results == {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "alpha"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "a.txt"},
            ],
        }

    def test_content_decides_not_stop_reason(self, tmp_path):
        """A tool_use under stop_reason end_turn still runs; tool_use stop_reason with no tool_use stops."""
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("glob", {"pattern": "*"}), stop_reason="end_turn"),
            text_reply("fine", stop_reason="tool_use"),
        )
        assert agent.run("x") == "fine"
        assert agent.outcome == "end_turn"
        assert len(model.requests) == 2
        assert answered_once(agent.messages)
        assert all(m["content"] for m in agent.messages)

    def test_unknown_tool_and_bad_input_are_error_results(self, tmp_path):
        """An unknown tool and wrong arguments each get an is_error tool_result, and the run goes on."""
        agent, model = make(
            tmp_path,
            tool_reply(
                tool_use("teleport", {}, id="u1"),
                tool_use("read_file", {"path": 7}, id="u2"),
                tool_use("bash", "ls", id="u3"),
            ),
            text_reply("sorry"),
        )
        agent.run("x")
        blocks = model.requests[1].messages[-1]["content"]
        assert [b["is_error"] for b in blocks] == [True, True, True]
        assert blocks[0]["content"].startswith("Error: unknown tool 'teleport' (available: bash, read_file")
        assert blocks[1]["content"] == "Error: read_file: 'path' must be string (got 7)"
        assert blocks[2]["content"] == (
            'Error: bash: input must be an object (got "ls"); call the tool again with an object input'
        )
        assert model.requests[1].messages[-2]["content"][2]["input"] == {}  # the API takes only objects back


class TestUnchangedReads:
    @staticmethod
    def _results(model: ScriptedModel) -> list[str]:
        """The text of every tool_result the model received, in order."""
        return [
            b["content"]
            for r in model.requests
            for b in (r.messages[-1]["content"] if isinstance(r.messages[-1]["content"], list) else [])
            if b.get("type") == "tool_result"
        ]

    def test_a_re_read_of_an_unchanged_file_is_a_note(self, tmp_path):
        """The agent's second read of an unchanged file sends Claude Code's note; after a change, the file."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r2")),
            tool_reply(tool_use("bash", {"command": "echo beta > a.txt"}, id="b1")),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r3")),
            text_reply("ok"),
            permissions=Policy(mode="bypassPermissions"),
        )
        agent.run("read")
        assert self._results(model) == ["alpha", UNCHANGED, "(no output)", "beta"]

    def test_read_dedup_off_sends_the_file_every_time(self, tmp_path):
        """With read_dedup=False both reads send the file."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r2")),
            text_reply("ok"),
            read_dedup=False,
        )
        agent.run("read")
        assert self._results(model) == ["alpha", "alpha"]

    def test_forget_reads_sends_the_file_again(self, tmp_path):
        """After forget_reads() (what compaction calls), the next read sends the file whole."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            text_reply("first"),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r2")),
            text_reply("second"),
        )
        agent.run("read")
        agent.forget_reads()
        agent.run("read again")
        assert self._results(model) == ["alpha", "alpha"]

    def test_a_result_no_longer_in_the_messages_is_not_referred_to(self, tmp_path):
        """If the earlier result left the messages (rewritten history), the file is sent again."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            text_reply("first"),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r2")),
            text_reply("second"),
        )
        agent.run("read")
        assert agent._result_text("r1") == "alpha"
        del agent.data.messages[1:]  # as a compaction that dropped the read would
        agent.run("read again")
        assert self._results(model) == ["alpha", "alpha"]

    def test_a_result_cleared_in_place_is_not_referred_to(self, tmp_path):
        """If a pass cleared the earlier result's text, keeping its id, the file is sent again."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            text_reply("first"),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r2")),
            text_reply("second"),
        )
        agent.run("read")
        block = agent.data.messages[2]["content"][0]
        assert block["tool_use_id"] == "r1"
        agent.data.messages[2] = {"role": "user", "content": [{**block, "content": "[cleared]"}]}
        agent.run("read again")
        assert self._results(model) == ["alpha", "alpha"]

    def test_a_subagent_has_its_own_memory(self, tmp_path):
        """A file the parent read is sent whole to a subagent (its context never held it), then a note to it."""
        (tmp_path / "a.txt").write_text("alpha\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")),
            tool_reply(tool_use("task", {"prompt": "read a.txt"}, id="k")),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="c1")),
            tool_reply(tool_use("read_file", {"path": "a.txt"}, id="c2")),
            text_reply("child done"),
            text_reply("ok"),
        )
        agent.run("read")
        assert self._results(model) == ["alpha", "alpha", UNCHANGED, "child done"]


class TestStopReasons:
    @pytest.mark.parametrize(
        ("stop_reason", "outcome"),
        [
            ("end_turn", "end_turn"),
            ("stop_sequence", "end_turn"),
            ("max_tokens", "max_tokens"),
            ("refusal", "refusal"),
            ("model_context_window_exceeded", "context_window"),
        ],
    )
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
        assert agent.data.error == "malformed reply: tool_use content[0] needs a string id (got null)"

    def test_empty_final_reply_appends_nothing(self, tmp_path):
        """An empty final reply adds no empty assistant message (the API would reject it next time)."""
        agent, _ = make(tmp_path, text_reply(""), text_reply("ok"))
        agent.run("x")
        agent.run("y")
        assert [m["role"] for m in agent.messages] == ["user", "user", "assistant"]


class TestTurnLimit:
    def test_parent_stops_at_max_turns(self, tmp_path):
        """A model that always calls a tool is stopped after max_turns calls, with every call answered."""
        agent, model = make(tmp_path, *[tool_reply(tool_use("glob", {"pattern": "*"})) for _ in range(5)], max_turns=3)
        agent.run("loop")
        assert agent.outcome == "max_turns"
        assert len(model.requests) == 3 and agent.turn == 3
        assert answered_once(agent.messages)
        assert agent.history[-2].trigger == "turn_limit"

    def test_child_reports_its_own_limit(self, tmp_path):
        """A subagent out of turns returns the fixed sentence with its limit, and the parent goes on."""
        looping = [tool_reply(tool_use("glob", {"pattern": "*"})) for _ in range(2)]
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "dig"}, id="k")),
            *looping,
            text_reply("parent done"),
            max_turns=2,
        )
        assert agent.run("x") == "parent done"
        result = model.requests[-1].messages[-1]["content"][0]
        assert result == {
            "type": "tool_result",
            "tool_use_id": "k",
            "content": "Subagent stopped after 2 turns without a final answer.",
        }

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
        """The child's first call holds exactly the prompt, the five base tools and its own TodoWrite."""
        (tmp_path / "README.md").write_text("uses pytest\n")
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "find the framework"}, id="k")),
            tool_reply(tool_use("read_file", {"path": "README.md"})),
            text_reply("pytest"),
            text_reply("It is pytest."),
        )
        assert agent.run("which framework?") == "It is pytest."
        parent_first, child_first, _, parent_second = model.requests
        assert parent_first.tool_names == [
            "bash", "read_file", "write_file", "edit_file", "glob", "task", "TaskOutput", "TaskStop", "TodoWrite"
        ]  # fmt: skip
        assert child_first.messages == [{"role": "user", "content": "find the framework"}]
        assert child_first.tool_names == ["bash", "read_file", "write_file", "edit_file", "glob", "TodoWrite"]
        assert child_first.system != parent_first.system
        assert parent_second.messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "k", "content": "pytest"}
        ]
        assert "uses pytest" not in str(agent.messages)

    def test_each_parent_step_moves_the_child_once(self, tmp_path):
        """While the child runs, every parent step returns one child transition at depth 1."""
        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("sub"), text_reply("top"))
        agent.send("x")
        records = [agent.step()]
        while agent.state != "idle":
            records.append(agent.step())
        path = [(r.depth, r.trigger) for r in records]
        assert path == [
            (0, "prompt"),
            (0, "replied_with_tools"),
            (0, "subagent_spawned"),
            (1, "prompt"),
            (1, "replied_final"),
            (1, "stopped"),
            (0, "subagent_returned"),
            (0, "tools_done"),
            (0, "replied_final"),
            (0, "stopped"),
        ]
        child_id = records[2].child
        assert {r.agent for r in records if r.depth == 1} == {child_id}
        assert all(r.parent == agent.agent_id for r in records if r.depth == 1)
        assert [r.seq for r in records] == list(range(1, 11))

    def test_children_visible_while_running(self, tmp_path):
        """agent.children holds the running child and is empty once it returned."""
        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("sub"), text_reply("top"))
        agent.send("x")
        for _ in range(3):
            agent.step()
        assert len(agent.children) == 1 and agent.children[0].depth == 1
        agent.run()
        assert agent.children == []

    def test_empty_child_answer_is_no_summary(self, tmp_path):
        """A child that ends with no text returns (no summary)."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply(""), text_reply("top"))
        agent.run("x")
        assert model.requests[-1].messages[-1]["content"][0]["content"] == "(no summary)"

    def test_child_model_error_is_error_result(self, tmp_path):
        """A model error inside the child becomes an Error tool_result for the parent."""
        agent, model = make(
            tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), ModelError("overloaded"), text_reply("top")
        )
        agent.run("x")
        block = model.requests[-1].messages[-1]["content"][0]
        assert block["is_error"] is True
        assert block["content"] == "Error: the subagent's model call failed: overloaded"

    def test_child_cannot_delegate(self, tmp_path):
        """A child's hallucinated task call gets an error result and spawns nothing."""
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "p"})),
            tool_reply(tool_use("task", {"prompt": "deeper"}, id="deep")),
            text_reply("sub"),
            text_reply("top"),
        )
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
        agent, model = make(
            tmp_path, tool_reply(tool_use("task", {"prompt": "p"})), text_reply("top"), tools=["bash", "glob"]
        )
        agent.run("x")
        assert model.requests[0].tool_names == ["bash", "glob"]
        assert "unknown tool 'task'" in model.requests[-1].messages[-1]["content"][0]["content"]

    def test_two_tasks_in_one_reply_run_in_order(self, tmp_path):
        """Several task calls in one reply run one after the other."""
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("task", {"prompt": "a"}, id="a"), tool_use("task", {"prompt": "b"}, id="b")),
            text_reply("A"),
            text_reply("B"),
            text_reply("top"),
        )
        agent.run("x")
        contents = [b["content"] for b in model.requests[-1].messages[-1]["content"]]
        assert contents == ["A", "B"]
        assert [r.child for r in agent.history if r.trigger == "subagent_spawned"] == [
            f"{agent.agent_id}.1",
            f"{agent.agent_id}.2",
        ]


class TestSkip:
    def test_skip_answers_without_running(self, tmp_path):
        """skip(text) answers the pending call with text; the tool never runs."""
        agent, _ = make(
            tmp_path, tool_reply(tool_use("write_file", {"path": "f.txt", "content": "x"})), text_reply("ok")
        )
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

        agent, _ = make(
            tmp_path,
            tool_reply(tool_use("glob", {"pattern": "*"}, id="g1"), tool_use("glob", {"pattern": "*"}, id="g2")),
            text_reply("after"),
        )
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
        assert agent.messages == [
            {"role": "user", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": INTERRUPTED_MARKER}]},
        ]

    def test_interrupt_inside_child_settles_both(self, tmp_path):
        """Ctrl-C during the child's model call idles the child and answers the parent's task call."""

        def interrupt(request):
            raise KeyboardInterrupt

        agent, _ = make(tmp_path, tool_reply(tool_use("task", {"prompt": "p"}, id="k")), interrupt)
        with pytest.raises(KeyboardInterrupt):
            agent.run("x")
        assert agent.state == "idle" and agent.children == []
        assert agent.messages[-1]["content"] == [
            {"type": "tool_result", "tool_use_id": "k", "content": INTERRUPTED, "is_error": True},
            {"type": "text", "text": INTERRUPTED_MARKER},
        ]
        child_records = [r for r in agent.history if r.depth == 1]
        assert child_records[-1].trigger == "interrupted"
        assert answered_once(agent.messages)

    def test_marker_before_the_next_prompt(self, tmp_path):
        """After Ctrl-C the next request holds the interruption marker between the two user prompts."""

        def interrupt(request):
            raise KeyboardInterrupt

        agent, model = make(tmp_path, interrupt, text_reply("ok"))
        with pytest.raises(KeyboardInterrupt):
            agent.run("first")
        agent.run("second")
        assert model.requests[1].messages == [
            {"role": "user", "content": "first"},
            {"role": "user", "content": [{"type": "text", "text": INTERRUPTED_MARKER}]},
            {"role": "user", "content": "second"},
        ]


class TestFaultyReplies:
    def test_cut_reply_runs_none_of_its_calls(self, tmp_path):
        """A reply stopped at max_tokens has each tool_use answered with the cut error, none run, and goes on."""
        cut = tool_reply(
            tool_use("write_file", {"path": "f.py", "content": "def f():\n return 1 +"}, id="w"),
            tool_use("task", {"prompt": "look"}, id="t"),
            stop_reason="max_tokens",
        )
        agent, model = make(tmp_path, cut, text_reply("redone smaller"))
        assert agent.run("write f.py") == "redone smaller"
        assert not (tmp_path / "f.py").exists() and agent.children == [] and agent.data.spawned == 0
        results = model.requests[1].messages[-1]["content"]
        assert results == [
            {"type": "tool_result", "tool_use_id": i, "content": CUT_CALL, "is_error": True} for i in ("w", "t")
        ]
        assert agent.outcome == "end_turn" and agent.turn == 2 and agent.data.unrunnable == {}

    def test_cut_reply_counts_against_the_turn_budget(self, tmp_path):
        """A cut reply is a turn like any other: with max_turns 1 the run stops at the limit."""
        cut = tool_reply(tool_use("bash", {"command": "echo hi"}, id="b"), stop_reason="max_tokens")
        agent, _ = make(tmp_path, cut, max_turns=1)
        agent.run("x")
        assert agent.outcome == "max_turns" and agent.data.model_calls == 1

    @pytest.mark.parametrize("bad", [None, "ls", [1, 2], 7])
    def test_input_that_is_not_an_object_is_answered_not_run(self, tmp_path, bad):
        """A tool_use input that is not an object gets an error result and the run goes on."""
        agent, model = make(tmp_path, tool_reply(tool_use("bash", bad, id="b")), text_reply("ok"))
        assert agent.run("x") == "ok"
        result = model.requests[1].messages[-1]["content"][0]
        assert result["is_error"] and result["content"].startswith("Error: bash: input must be an object (got ")
        assert model.requests[1].messages[-2]["content"][0]["input"] == {}

    def test_duplicate_ids_are_renamed_and_noted(self, tmp_path):
        """Repeated tool_use ids, within a reply and across replies, are made unique before they are kept."""
        agent, model = make(
            tmp_path,
            tool_reply(tool_use("glob", {"pattern": "*"}, id="x"), tool_use("glob", {"pattern": "*.py"}, id="x")),
            tool_reply(tool_use("glob", {"pattern": "*"}, id="x")),
            text_reply("done"),
        )
        agent.run("x")
        ids = [
            [b["id"] for b in m["content"] if b["type"] == "tool_use"]
            for m in model.requests[2].messages
            if m["role"] == "assistant"
        ]
        assert ids == [["x", "x_2"], ["x_3"]]
        assert answered_once(agent.messages)
        notes = [n for r in agent.history for n in r.notes if n.startswith("renamed")]
        assert notes == ["renamed duplicate tool_use id x to x_2", "renamed duplicate tool_use id x to x_3"]

    @pytest.mark.parametrize("prompt", ["   ", "\n\t"])
    def test_blank_task_prompt_is_an_error_result(self, tmp_path, prompt):
        """A task call whose prompt is only whitespace spawns nothing and is answered with an error."""
        agent, model = make(tmp_path, tool_reply(tool_use("task", {"prompt": prompt}, id="t")), text_reply("ok"))
        assert agent.run("x") == "ok" and agent.data.spawned == 0
        result = model.requests[1].messages[-1]["content"][0]
        assert result["is_error"] and result["content"].startswith("Error: task: 'prompt' must not be blank")

    def test_context_window_error_has_its_own_outcome(self, tmp_path):
        """A ModelError of kind context_window ends the run with outcome context_window."""
        agent, _ = make(tmp_path, ModelError("too long", status_code=400, kind="context_window"))
        agent.run("x")
        assert agent.outcome == "context_window" and agent.data.error == "too long"


def fan_out(k: int) -> dict:
    """A parent reply with *k* task calls."""
    return tool_reply(*[tool_use("task", {"prompt": f"sub {i}"}) for i in range(k)])


def delegating_model() -> ScriptedModel:
    """The parent asks for two tasks on every reply; every child calls glob forever."""

    def answer(request):
        if "task" in request.tool_names:
            return fan_out(2)
        return tool_reply(tool_use("glob", {"pattern": "*"}))

    return ScriptedModel([answer] * 10_000)


class TestRunBudget:
    def test_fan_out_stops_at_the_budget(self, tmp_path):
        """Parent and subagents together make exactly max_model_calls calls; the root ends max_model_calls."""
        model = delegating_model()
        agent = Agent(model, str(tmp_path), max_model_calls=25)
        agent.run("go")
        assert (len(model.requests), agent.run_calls, agent.outcome) == (25, 25, "max_model_calls")
        returned = [r for r in agent.history if r.trigger == "subagent_returned"]
        assert returned[-1].tool_result.text == "Subagent stopped: the run's budget of 25 model calls is spent."

    def test_a_child_spawned_with_the_budget_spent_stops_without_a_call(self, tmp_path):
        """A subagent started once the budget is spent takes budget_spent from idle and never calls the model."""
        model = ScriptedModel([fan_out(1)])
        agent = Agent(model, str(tmp_path), max_model_calls=1)
        agent.run("go")
        child = [r for r in agent.history if r.depth == 1]
        assert [(r.source, r.trigger) for r in child] == [("idle", "budget_spent"), ("stopping", "stopped")]
        assert (len(model.requests), agent.outcome) == (1, "max_model_calls")

    def test_the_root_prompt_starts_a_fresh_budget(self, tmp_path):
        """Each run of the root has its own budget."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}))] * 4)
        agent = Agent(model, str(tmp_path), max_model_calls=2)
        agent.run("one")
        assert (agent.run_calls, agent.outcome) == (2, "max_model_calls")
        agent.run("two")
        assert (agent.run_calls, len(model.requests)) == (2, 4)

    def test_stop_hook_cannot_force_past_the_budget(self, tmp_path):
        """A Stop hook asking for more once the budget is spent ends the run with outcome max_model_calls."""
        hooks = Hooks()
        hooks.on("Stop", lambda event: "go on")
        model = ScriptedModel([text_reply("a"), text_reply("b"), text_reply("c")])
        agent = Agent(model, str(tmp_path), hooks=hooks, max_model_calls=2)
        agent.run("x")
        assert (len(model.requests), agent.outcome) == (2, "max_model_calls")

    def test_pause_turn_with_the_budget_spent(self, tmp_path):
        """pause_turn on the run's last call takes budget_spent instead of calling again."""
        model = ScriptedModel([text_reply("", stop_reason="pause_turn")] * 3)
        agent = Agent(model, str(tmp_path), max_model_calls=2)
        agent.run("x")
        assert [r.trigger for r in agent.history][-3:] == ["paused", "budget_spent", "stopped"]
        assert (len(model.requests), agent.outcome) == (2, "max_model_calls")

    def test_max_model_calls_is_checked(self, tmp_path):
        """max_model_calls must be an integer >= 1."""
        for bad in (0, -1, True, "5"):
            with pytest.raises(ConfigError, match=r"^max_model_calls must be an integer >= 1 \(got "):
                Agent(ScriptedModel(), str(tmp_path), max_model_calls=bad)

    def test_set_limits_applies_to_the_next_run(self, tmp_path):
        """set_limits changes what the next prompt's run takes, not the run under way."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"}))] * 5)
        agent = Agent(model, str(tmp_path), max_turns=2)
        agent.send("x")
        agent.step()
        agent.set_limits(max_turns=1)
        agent.run()
        assert agent.turn == 2
        agent.run("y")
        assert (agent.turn, agent.max_turns, len(model.requests)) == (1, 1, 3)


class TestDepthIsAFact:
    def test_a_child_with_rewritten_data_and_tools_cannot_delegate(self, tmp_path):
        """Writing child.data.depth = 0 changes nothing: depth comes from parentage, tools are read-only."""
        script = [
            fan_out(1),
            tool_reply(tool_use("task", {"prompt": "deeper"})),
            text_reply("done"),
            text_reply("all done"),
        ]
        agent = Agent(ScriptedModel(script), str(tmp_path))
        agent.send("x")
        while not agent.children:
            agent.step()
        child = agent.children[0]
        child.data.depth = 0
        with pytest.raises(AttributeError):
            child.tools = agent.tools
        with pytest.raises(AttributeError):
            child.parent = None
        agent.run()
        assert child.depth == 1 and "task" not in [t.name for t in child.tools]
        assert max(r.depth for r in agent.history) == 1
        assert not [r for r in agent.history if r.trigger == "subagent_spawned" and r.depth == 1]


class TestStartingDataIsChecked:
    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"max_turns": 100}, "the agent's 'max_turns' must be 1..30 (got 100)"),
            ({"turn": -70}, "the agent's 'turn' must be 0..30 (its max_turns) (got -70)"),
            ({"turn": 31}, "the agent's 'turn' must be 0..30 (its max_turns) (got 31)"),
            (
                {"turn": 30, "state": "awaiting_model"},
                "the agent's 'turn' must be below max_turns (30) in awaiting_model (got 30)",
            ),
            ({"depth": 1}, "the agent's 'depth' must be 0, as its parentage says (got 1)"),
            (
                {"run_calls": 201},
                "the agent's 'run_calls' must be 0..200 (its max_model_calls 200, less 0 call(s) granted) (got 201)",
            ),
            ({"max_model_calls": 0}, "the agent's 'max_model_calls' must be an integer >= 1 (got 0)"),
            (
                {"state": "flying"},
                "the agent's 'state' must be one of idle, connecting, awaiting_model, compacting, executing_tools, "
                "awaiting_jobs, stopping (got 'flying')",
            ),
        ],
    )
    def test_bad_data_is_refused(self, tmp_path, changes, message):
        """Agent(data=...) refuses data outside the invariant, naming the field and the value."""
        from fsm.core.records import AgentState

        with pytest.raises(ConfigError) as info:
            Agent(ScriptedModel(), str(tmp_path), data=AgentState("a1", **changes))
        assert str(info.value) == message

    def test_restore_refuses_more_children_than_the_max_parallel_it_is_given(self, tmp_path):
        """Agent.restore(max_parallel=1), or options with max_parallel 1, refuses three running subagents the data
        allows (its max_parallel is 4), naming both values; max_parallel=3 takes them."""
        from fsm.core.options import AgentOptions
        from fsm.core.records import AgentState

        root = AgentState("a1", state="executing_tools", max_parallel=4, active=["a1.1", "a1.2", "a1.3"])
        three = [AgentState(f"a1.{n}", parent_id="a1", depth=1, inbox="go") for n in (1, 2, 3)]
        message = "the agent's 'max_parallel' is 1, so it may have at most 1 running subagent(s) (got 3)"
        for how in ({"max_parallel": 1}, {"options": AgentOptions(max_parallel=1)}):
            with pytest.raises(ConfigError) as info:
                Agent.restore(ScriptedModel(), str(tmp_path), root, children=three, **how)
            assert str(info.value) == message
        agent = Agent.restore(ScriptedModel(), str(tmp_path), root, children=three, max_parallel=3)
        assert len(agent.children) == 3 and agent.data.max_parallel == 3

    def test_restore_refuses_bad_children(self, tmp_path):
        """Restore refuses a child at depth 7, more running children than max_parallel, children the root's
        active list does not name, a child that has spawned, and a child allowed more turns than its parent."""
        from fsm.core.records import AgentState

        root = AgentState("a1", state="executing_tools", max_parallel=2, active=["a1.1", "a1.2"])
        three = [AgentState(f"a1.{n}", parent_id="a1", depth=1) for n in (1, 2, 3)]
        cases = [
            (
                [AgentState("a1.1", parent_id="a1", depth=7)],
                "subagent a1.1's 'depth' must be 1, as its parentage says (got 7)",
            ),
            (three, "the agent's 'max_parallel' is 2, so it may have at most 2 running subagent(s) (got 3)"),
            (three[1:], "the agent's 'active' must name its running subagents ['a1.2', 'a1.3'] (got ['a1.1', 'a1.2'])"),
            (
                [AgentState("a1.1", parent_id="a1", depth=1, spawned=1)],
                "subagent a1.1's 'spawned' must be 0 for a subagent (it never spawns; the root counts the run) (got 1)",
            ),
        ]
        for children, message in cases:
            with pytest.raises(ConfigError) as info:
                Agent.restore(ScriptedModel(), str(tmp_path), root, children=children)
            assert str(info.value) == message
        capped = AgentState("a1", state="executing_tools", max_turns=5, active=["a1.1"])
        for turns, refused in ((5, False), (6, True)):
            child = AgentState("a1.1", parent_id="a1", depth=1, max_turns=turns)
            if not refused:
                Agent.restore(ScriptedModel(), str(tmp_path), capped, children=[child])
                continue
            with pytest.raises(ConfigError) as info:
                Agent.restore(ScriptedModel(), str(tmp_path), capped, children=[child])
            assert str(info.value) == (
                "subagent a1.1's 'max_turns' must be 1..5 (a subagent's cap can lower its parent's, not raise it) "
                "(got 6)"
            )


class TestModelFailures:
    def test_malformed_usage_is_a_model_error(self, tmp_path):
        """A reply whose usage holds text ends the run with one clear model error, and the call counts."""
        reply = {**text_reply("hi"), "usage": {"input_tokens": "lots"}}
        agent = Agent(ScriptedModel([reply]), str(tmp_path))
        agent.run("x")
        assert agent.outcome == "model_error" and agent.turn == 1
        assert agent.data.error == 'malformed reply: usage.input_tokens must be a non-negative integer (got "lots")'

    def test_an_approver_that_raises_denies(self, tmp_path):
        """An approver raising answers the call with a denial; the run goes on."""

        def approver(call, ask):
            raise RuntimeError("no terminal")

        model = ScriptedModel(
            [tool_reply(tool_use("bash", {"command": "rm -f nothing.txt"}, id="r1")), text_reply("ok")]
        )
        agent = Agent(model, str(tmp_path), approver=approver)
        assert agent.run("x") == "ok"
        result = model.requests[1].messages[-1]["content"][0]
        assert result["is_error"] and result["content"] == (
            "Permission denied: the approver failed (RuntimeError: no terminal)"
        )
