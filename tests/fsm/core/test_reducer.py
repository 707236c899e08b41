"""``fsm.core.reducer`` on its own: the compaction counters after each trigger, results filed in the reply's order
whatever order the answers come in, and the data a subagent starts with (written from the reducer's mutation run,
docs/mutation.md)."""

from __future__ import annotations

from typing import Any

import pytest

from fsm.core.guards import MAX_FAILED_COMPACTIONS
from fsm.core.records import AgentState
from fsm.core.reducer import Step, child_state, compaction_counts, reduce, reply_order
from fsm.model.reply import Reply
from fsm.testing import text_reply, tool_reply, tool_use
from tools import ToolOutput


class TestCompactionCounts:
    """``(compactions since the last reply, failed compactions in a row, by hand)`` after each trigger."""

    @pytest.mark.parametrize(
        ("trigger", "source", "after"),
        [
            ("prompt", "idle", (0, 0, False)),  # a new run starts at zero
            ("skill_forked", "idle", (0, 0, False)),
            ("compact_requested", "idle", (1, 0, True)),  # /compact: one compaction under way, by hand
            ("context_full", "awaiting_model", (3, 1, False)),  # one more since the last reply
            ("context_exceeded", "awaiting_model", (3, 1, False)),
            ("compacted", "compacting", (2, 0, True)),  # a good one ends the row of failures
            ("summarized", "compacting", (2, 0, True)),
            ("compaction_failed", "compacting", (2, 2, True)),  # one more failure in a row
            ("replied_with_tools", "awaiting_model", (0, 1, True)),  # a reply came
            ("replied_final", "awaiting_model", (0, 1, True)),
            ("model_failed", "awaiting_model", (2, 1, True)),  # no reply: nothing changes
            ("interrupted", "awaiting_model", (2, 1, True)),
            ("tools_done", "executing_tools", (2, 1, True)),
            ("continue_forced", "stopping", (2, 1, True)),  # a forced turn is no reply
        ],
    )
    def test_each_trigger(self, trigger, source, after):
        assert compaction_counts(trigger, source, (2, 1, True)) == after

    def test_failures_are_counted_up_to_the_limit(self):
        at_limit = (1, MAX_FAILED_COMPACTIONS, False)
        assert compaction_counts("compaction_failed", "compacting", at_limit) == at_limit

    def test_a_new_run_forgets_the_last_ones_compactions(self):
        """Through ``reduce``: a run that compacted by hand and failed twice leaves nothing to the next prompt."""
        s = AgentState("a", compactions=2, failed_compactions=2, manual_compaction=True)
        reduce(s, Step("prompt", "idle", appended=({"role": "user", "content": "go"},)))
        assert (s.compactions, s.failed_compactions, s.manual_compaction) == (0, 0, False)


def _replied(s: AgentState, *calls: dict[str, Any], text: str | None = None) -> None:
    """*s* in executing_tools with a reply holding *calls* (after *text*, when given)."""
    wire = tool_reply(*calls)
    if text is not None:
        wire["content"].insert(0, {"type": "text", "text": text})
    reply = Reply.from_wire(wire)
    assistant = {"role": "assistant", "content": list(reply.content)}
    reduce(s, Step("replied_with_tools", "awaiting_model", reply=reply, appended=(assistant,)))


def _answer(s: AgentState, call: dict[str, Any], *, trigger: str = "tool_ran", **fields: Any) -> None:
    reduce(s, Step(trigger, "executing_tools", tool_call=call, tool_result=ToolOutput(f"ran {call['id']}"), **fields))


def _ids(s: AgentState) -> list[str]:
    return [b.get("tool_use_id", b.get("text", "")) for b in s.results]


A, B, C = (tool_use("bash", {"command": f"echo {n}"}, id=n) for n in ("a", "b", "c"))


class TestResultsInTheReplysOrder:
    def test_answered_in_order(self):
        s = AgentState("a")
        _replied(s, A, B)
        _answer(s, A)
        _answer(s, B)
        assert (_ids(s), s.pending, s.tool_calls, s.run_tool_calls) == (["a", "b"], [], 2, 2)

    def test_subagents_returning_out_of_order(self):
        """Three subagents running: the last returns first, then the first (its call pending first, its sibling still
        running), then the second; each result goes in its place."""
        s = AgentState("a")
        _replied(s, A, B, C)
        for n, call in enumerate((A, B, C), 1):
            reduce(s, Step("subagent_spawned", "executing_tools", tool_call=call, child=f"a.{n}"))
        _answer(s, C, trigger="subagent_returned", child="a.3")
        assert ([c["id"] for c in s.pending], _ids(s), s.active) == (["a", "b"], ["c"], ["a.1", "a.2"])
        _answer(s, A, trigger="subagent_returned", child="a.1")
        assert ([c["id"] for c in s.pending], _ids(s), s.active) == (["b"], ["a", "c"], ["a.2"])
        _answer(s, B, trigger="subagent_returned", child="a.2")
        assert (s.pending, _ids(s), s.active, s.spawned, s.tool_calls) == ([], ["a", "b", "c"], [], 3, 3)

    def test_a_hooks_context_stays_after_every_result(self):
        """A PostToolUse hook's context is a text block after the results; a result that comes later goes before it,
        in its place, even answered in order."""
        s = AgentState("a")
        _replied(s, A, B, C)
        _answer(s, A, context="note on a")
        _answer(s, B)
        assert _ids(s) == ["a", "b", "note on a"]
        _answer(s, C)
        assert _ids(s) == ["a", "b", "c", "note on a"]

    def test_the_order_is_the_last_replys(self):
        """After an earlier reply's calls were answered, the order is the latest reply's, by its tool_use blocks
        only (its text before them is no call)."""
        s = AgentState("a")
        _replied(s, A)
        _answer(s, A)
        reduce(s, Step("tools_done", "executing_tools", appended=({"role": "user", "content": s.results},)))
        _replied(s, C, B, text="two more")
        assert reply_order(s) == {"c": 0, "b": 1}
        reduce(s, Step("subagent_spawned", "executing_tools", tool_call=C, child="a.1"))
        reduce(s, Step("subagent_spawned", "executing_tools", tool_call=B, child="a.2"))
        _answer(s, B, trigger="subagent_returned", child="a.2")
        _answer(s, C, trigger="subagent_returned", child="a.1")
        assert _ids(s) == ["c", "b"]

    def test_no_order_without_a_reply_last(self):
        s = AgentState("a", messages=[{"role": "user", "content": [{"type": "tool_use", "id": "x"}]}])
        assert reply_order(s) == {}
        assert reply_order(AgentState("a")) == {}


class TestChildState:
    PARENT = AgentState("r", max_turns=5, max_model_calls=9, max_budget_usd=2.5, spawned=1)
    CALL = tool_use("task", {"prompt": "look"}, id="t1")

    def test_a_task_call(self):
        assert child_state(self.PARENT, self.CALL, "r.2") == AgentState(
            "r.2",
            parent_id="r",
            depth=1,
            max_turns=5,
            max_model_calls=9,
            max_budget_usd=2.5,
            inbox="look",
            parent_tool_use_id="t1",
        )

    @pytest.mark.parametrize(("limit", "turns"), [(None, 5), (2, 2), (30, 5)])
    def test_a_custom_type_can_only_lower_the_cap(self, limit, turns):
        child = child_state(self.PARENT, self.CALL, "r.2", subagent_type="brief", max_turns=limit)
        assert (child.subagent_type, child.max_turns) == ("brief", turns)

    def test_a_forked_skill_has_its_own_prompt(self):
        skill = tool_use("Skill", {"skill": "look"}, id="s1")
        assert child_state(self.PARENT, skill, "r.2", prompt="Look around.").inbox == "Look around."


def test_a_final_reply_is_the_agents_answer_but_a_summary_is_not():
    s = AgentState("a")
    reduce(s, Step("replied_final", "awaiting_model", reply=Reply.from_wire(text_reply("the answer"))))
    reduce(s, Step("summarized", "compacting", reply=Reply.from_wire(text_reply("a summary")), model_called=True))
    assert s.final_text == "the answer"


def _usage(tokens: int) -> dict[str, Any]:
    return {"input_tokens": tokens, "output_tokens": 1}


class TestReduce:
    """Each trigger's change to the data, on a root (``run`` is the agent itself when not given) and on a subagent,
    whose tree counters go to the root's data."""

    def test_every_transition_counts_and_calls_add_up(self):
        s = AgentState("a", inbox="go")
        reduce(s, Step("prompt", "idle", run_limits=(5, 9), max_budget_usd=2.0))
        first = Reply.from_wire({**tool_reply(A), "usage": _usage(10)})
        reduce(s, Step("replied_with_tools", "awaiting_model", reply=first, cost_usd=0.5))
        _answer(s, A)
        reduce(s, Step("tools_done", "executing_tools"))
        assert s.results == []  # sent: the next reply's start afresh
        reduce(
            s, Step("replied_final", "awaiting_model", reply=Reply.from_wire({**text_reply("ok"), "usage": _usage(7)}))
        )
        assert (s.transitions, s.turn, s.model_calls, s.run_calls, s.run_tool_calls) == (5, 2, 2, 2, 1)
        assert (s.usage.input_tokens, s.usage.output_tokens) == (17, 2)
        assert (s.max_turns, s.max_model_calls, s.max_budget_usd, s.run_cost_usd) == (5, 9, 2.0, None)  # no price
        assert (s.inbox, s.final_text, s.results) == (None, "ok", [])

    def test_the_run_counters_are_the_roots(self):
        """A subagent's call, tool call, cost and denial count on the root's data; its own keep the agent's."""
        root = AgentState("r", max_budget_usd=1.0, state="executing_tools")
        child = AgentState("r.1", parent_id="r", depth=1)
        reply = Reply.from_wire(tool_reply(A))
        reduce(child, Step("replied_with_tools", "awaiting_model", reply=reply, cost_usd=0.25), root)
        denial = object()
        _answer_with(child, root, A, denial=denial)
        assert (root.run_calls, root.run_cost_usd, root.run_tool_calls, root.denials) == (1, 0.25, 1, [denial])
        assert (child.run_calls, child.model_calls, child.turn, child.denials) == (0, 1, 1, [denial])
        assert (root.transitions, child.transitions) == (0, 2)

    def test_a_run_starts_afresh(self):
        """The root's prompt resets the run; a subagent's prompt leaves the root's counters alone."""
        s = AgentState("a", inbox="go", turn=3, outcome="max_turns", error="e", final_text="t", stop_forced=True)
        s.run_calls, s.run_cost_usd, s.run_tool_calls = 4, None, 6
        reduce(s, Step("prompt", "idle", instructions=None))
        assert (s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced) == (None, 0, None, None, "", False)
        assert (s.run_calls, s.run_cost_usd, s.run_tool_calls) == (0, 0.0, 0)
        root = AgentState("r", run_calls=4)
        child = AgentState("r.1", parent_id="r", depth=1, inbox="look")
        reduce(child, Step("prompt", "idle"), root)
        assert (root.run_calls, child.inbox) == (4, None)

    def test_compact_requested_keeps_its_instructions(self):
        s = AgentState("a", inbox="/compact keep the tests")
        reduce(s, Step("compact_requested", "idle", instructions="keep the tests"))
        assert (s.compaction_instructions, s.compactions, s.manual_compaction) == ("keep the tests", 1, True)

    def test_a_typed_fork_holds_its_call(self):
        call = tool_use("Skill", {"skill": "look"}, id="forked-command-look")
        s = AgentState("a", inbox="/look", results=[{"type": "text", "text": "old"}], unrunnable={"x": "y"})
        reduce(s, Step("skill_forked", "idle", tool_call=call))
        assert (s.pending, s.results, s.unrunnable, s.inbox) == ([call], [], {}, None)
        reduce(s, Step("subagent_spawned", "executing_tools", tool_call=call, child="a.1"))
        _answer(s, call, trigger="subagent_returned", child="a.1")
        reduce(s, Step("fork_returned", "executing_tools", tool_result=ToolOutput("looked"), outcome="end_turn"))
        assert (s.results, s.outcome, s.error, s.final_text, s.active) == ([], "end_turn", None, "looked", [])

    def test_a_blocked_prompt(self):
        s = AgentState("a", inbox="no", turn=2, final_text="before", stop_forced=True, run_calls=3, run_tool_calls=1)
        s.run_cost_usd = None
        reduce(s, Step("prompt_blocked", "idle", outcome="prompt_blocked", error="blocked by hook"))
        assert (s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced) == (
            None,
            0,
            "prompt_blocked",
            "blocked by hook",
            "",
            False,
        )
        assert (s.run_calls, s.run_cost_usd, s.run_tool_calls, s.transitions) == (0, 0.0, 0, 1)

    def test_a_subagent_started_with_the_budget_spent(self):
        s = AgentState("r.1", parent_id="r", depth=1, inbox="look", turn=1, final_text="x", stop_forced=True)
        reduce(s, Step("budget_spent", "idle", outcome="max_model_calls"), AgentState("r"))
        assert (s.inbox, s.turn, s.outcome, s.error, s.final_text, s.stop_forced) == (
            None,
            0,
            "max_model_calls",
            None,
            "",
            False,
        )

    @pytest.mark.parametrize("trigger", ["replied_final", "turn_limit", "model_failed", "budget_spent"])
    def test_an_ending_edge_keeps_its_outcome(self, trigger):
        s = AgentState("a", results=[{"type": "text", "text": "x"}])
        reduce(s, Step(trigger, "executing_tools", outcome="max_turns", error="why"))
        assert (s.outcome, s.error, s.results) == ("max_turns", "why", [])

    @pytest.mark.parametrize("trigger", ["compacted", "summarized", "compaction_failed", "compaction_blocked"])
    def test_a_compaction_keeps_its_outcome_and_an_error_only_with_one(self, trigger):
        s = AgentState("a", outcome="end_turn", error="old")
        reduce(s, Step(trigger, "compacting", error="ignored"))
        assert (s.outcome, s.error) == (None, None)
        reduce(s, Step(trigger, "compacting", outcome="context_window", error="too long"))
        assert (s.outcome, s.error) == ("context_window", "too long")

    def test_a_compaction_replaces_the_history_and_a_refusal_names_the_window(self):
        s = AgentState("a", messages=[{"role": "user", "content": "old"}])
        summary = ({"role": "user", "content": "summary"},)
        reduce(s, Step("summarized", "compacting", history=summary, appended=({"role": "user", "content": "go"},)))
        assert s.messages == [{"role": "user", "content": "summary"}, {"role": "user", "content": "go"}]
        reduce(s, Step("context_exceeded", "awaiting_model", window=1000))
        reduce(s, Step("compacted", "compacting"))
        assert (s.context_window, s.model_calls, s.turn) == (1000, 1, 0)  # a refused call counts, as no turn

    def test_a_tool_result_with_a_hooks_context_and_a_todo_list(self):
        todo = {"todos": [{"content": "x", "status": "pending", "activeForm": "Doing x"}]}
        call = tool_use("TodoWrite", todo, id="t")
        s = AgentState("a")
        _replied(s, call)
        reduce(s, Step("tool_ran", "executing_tools", tool_call=call, tool_result=ToolOutput("ok"), context="note"))
        assert s.todos == todo["todos"]
        assert [b["type"] for b in s.results] == ["tool_result", "text"]
        failed = tool_use("TodoWrite", {"todos": []}, id="u")
        _replied(s, failed)
        reduce(s, Step("tool_ran", "executing_tools", tool_call=failed, tool_result=ToolOutput("bad", is_error=True)))
        assert s.todos == todo["todos"]  # a failed write leaves the list as it was

    def test_jobs_grants_and_notifications_are_the_roots(self):
        root = AgentState("r")
        child = AgentState("r.1", parent_id="r", depth=1)
        reduce(
            child, Step("tool_ran", "executing_tools", tool_call=A, tool_result=ToolOutput("started"), job="j1"), root
        )
        reduce(root, Step("tools_done", "executing_tools", job="j2", granted=("Bash(ls:*)", "Read")))
        reduce(root, Step("tools_done", "executing_tools", granted=("Read", "Edit")))
        assert (root.jobs, root.grants, child.jobs, child.grants) == (
            ["j1", "j2"],
            ["Bash(ls:*)", "Read", "Edit"],
            [],
            [],
        )
        reduce(root, Step("replied_final", "awaiting_model", outcome="end_turn"))
        assert root.outcome == "end_turn"
        reduce(root, Step("job_ended", "awaiting_jobs", notified=("j1",)))
        assert (root.jobs, root.outcome, root.error) == (["j2"], None, None)  # the run goes on

    def test_a_wait_that_runs_out_and_a_forced_turn(self):
        s = AgentState("a", outcome="end_turn")
        reduce(s, Step("continue_forced", "stopping"))
        assert (s.outcome, s.stop_forced) == (None, True)
        reduce(s, Step("wait_ceiling", "awaiting_jobs", outcome="wait_ceiling", error="no job ended"))
        assert (s.outcome, s.error) == ("wait_ceiling", "no job ended")

    def test_stopped_keeps_the_outcome_unless_it_changes_it(self):
        s = AgentState("a", outcome="end_turn", error="kept")
        reduce(s, Step("stopped", "stopping", outcome="end_turn"))
        assert (s.outcome, s.error) == ("end_turn", "kept")
        reduce(s, Step("stopped", "stopping", outcome="refusal"))
        assert (s.outcome, s.error) == ("refusal", None)

    def test_interrupted_drops_what_was_pending(self):
        s = AgentState("a")
        _replied(s, A, B)
        reduce(s, Step("subagent_spawned", "executing_tools", tool_call=A, child="a.1"))
        reduce(s, Step("interrupted", "executing_tools", error="interrupted by the user"))
        assert (s.pending, s.results, s.outcome, s.error, s.unrunnable, s.active) == (
            [],
            [],
            "interrupted",
            "interrupted by the user",
            {},
            [],
        )


def _answer_with(s: AgentState, run: AgentState, call: dict[str, Any], **fields: Any) -> None:
    reduce(s, Step("tool_ran", "executing_tools", tool_call=call, tool_result=ToolOutput("ran"), **fields), run)


def test_a_skills_model_lasts_the_run_or_the_subagents_life():
    """An inline skill's model is the root's until its next run (a typed /NAME's from its prompt on); a forked skill's
    subagent keeps its own through its prompt."""
    root = AgentState("r", inbox="go")
    reduce(root, Step("prompt", "idle", skill_model="claude-haiku"))
    assert root.model == "claude-haiku"
    _replied(root, A)
    reduce(root, Step("tool_ran", "executing_tools", tool_call=A, tool_result=ToolOutput("ok"), skill_model="opus"))
    assert root.model == "opus"
    reduce(root, Step("subagent_spawned", "executing_tools", tool_call=B, child="r.1", skill_model="fork-model"))
    assert root.model == "opus"
    reduce(root, Step("compact_requested", "idle"))
    assert root.model is None
    child = child_state(root, tool_use("Skill", {"skill": "s"}, id="s"), "r.1", prompt="Do it.", model="fork-model")
    reduce(child, Step("prompt", "idle"), root)
    assert (child.model, root.model) == ("fork-model", None)
