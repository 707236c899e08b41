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
        assert (_ids(s), s.pending, s.tool_calls) == (["a", "b"], [], 2)

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
