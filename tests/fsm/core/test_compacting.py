"""Tests for compaction as states of the machine: the ``compacting`` rows of fsm.core.machine and what the driver
(fsm.core.agent) does on them, with a stand-in compactor (tests/fsm/core/compaction_double.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from fsm import Agent, Hooks, ModelError
from fsm.core.compacting import compact_instructions, is_compact_prompt, refused_window
from fsm.core.guards import MAX_COMPACTIONS, MAX_FAILED_COMPACTIONS
from fsm.policy.hooks import Deny
from fsm.testing import Request, ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.core.compaction_double import CLEARED, CharCompactor

BIG = "x" * 4000
"""A tool output of about 1,000 tokens."""


_files = itertools.count(1)


def big_read(tmp_path: Path) -> dict[str, Any]:
    """A read of a new file of BIG (a file read again unchanged is answered with a short note)."""
    name = f"big{next(_files)}.txt"
    (tmp_path / name).write_text(BIG)
    return tool_reply(tool_use("read_file", {"path": name}))


def too_long(sent: int = 5000, maximum: int = 4000) -> ModelError:
    return ModelError(f"prompt is too long: {sent} tokens > {maximum} maximum", status_code=400, kind="context_window")


def answering(*, summary: Any, work: Any) -> ScriptedModel:
    """A model that answers every summary request (no tools) with *summary* and every other with *work*: each a
    reply dict, an exception to raise, or a callable of the request."""

    def answer(request: Request) -> dict[str, Any]:
        item = summary if not request.tools else work
        item = item(request) if callable(item) else item
        if isinstance(item, BaseException):
            raise item
        return dict(item)

    return ScriptedModel([answer] * 200)


def edges(agent: Agent) -> list[tuple[str, str, str]]:
    return [(r.source, r.trigger, r.dest) for r in agent.history]


def summary_calls(model: ScriptedModel) -> list[Request]:
    return [r for r in model.requests if not r.tools]


class TestThePrompt:
    def test_compact_alone_or_with_instructions(self):
        """``/compact`` is the command alone or followed by whitespace and instructions; nothing else is."""
        assert [is_compact_prompt(p) for p in ("/compact", " /compact  keep the plan", "/compactor", "compact")] == [
            True,
            True,
            False,
            False,
        ]
        assert (compact_instructions("/compact"), compact_instructions("/compact  keep the plan ")) == (
            None,
            "keep the plan",
        )

    def test_the_refusal_names_the_window(self):
        """The API's "prompt is too long: N tokens > M maximum" gives (N, M)."""
        assert refused_window("400: prompt is too long: 210000 tokens > 200000 maximum") == (210000, 200000)
        assert refused_window("overloaded") is None


class TestProactive:
    def test_over_the_threshold_the_agent_compacts_before_the_call(self, tmp_path):
        """Past the threshold the agent goes to compacting (no call), summarises once, then makes the call."""
        script = [big_read(tmp_path), big_read(tmp_path), text_reply("a summary"), text_reply("done")]
        model = ScriptedModel(script)
        compactor = CharCompactor(threshold=1500, keep_last=5)
        agent = Agent(model, str(tmp_path), compactor=compactor)
        assert agent.run("read it twice") == "done"
        assert ("awaiting_model", "context_full", "compacting") in edges(agent)
        assert ("compacting", "summarized", "awaiting_model") in edges(agent)
        assert len(summary_calls(model)) == 1 and compactor.summaries == ["a summary"]
        last = model.requests[-1]
        assert last.messages == [{"role": "user", "content": "This session continues from a summary:\na summary"}]

    def test_the_cheap_pass_is_enough_without_a_summary_call(self, tmp_path):
        """When clearing old tool results brings the request under the threshold no summary call is made."""
        script = [big_read(tmp_path) for _ in range(3)] + [text_reply("done")]
        model = ScriptedModel(script)
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=2500, keep_last=1))
        assert agent.run("read") == "done"
        assert not summary_calls(model)
        compacted = [r for r in agent.history if r.trigger == "compacted"]
        assert compacted and compacted[0].compaction is not None
        assert compacted[0].compaction.cleared and compacted[0].compaction.post_tokens < 2500
        sent = model.requests[-1].messages
        assert any(b.get("content") == CLEARED for m in sent if isinstance(m["content"], list) for b in m["content"])

    def test_the_summary_call_counts_toward_the_budget_not_the_turns(self, tmp_path):
        """A summary call is a model call of the run (run_calls) but not one of the agent's turns."""
        script = [big_read(tmp_path), big_read(tmp_path), text_reply("a summary"), text_reply("done")]
        agent = Agent(ScriptedModel(script), str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
        agent.run("go")
        assert (agent.turn, agent.run_calls, agent.data.model_calls) == (3, 4, 4)

    def test_the_budget_of_calls_stops_after_the_summary(self, tmp_path):
        """With the budget spent by the summary call, the run stops (budget_spent) instead of calling again."""
        script = [big_read(tmp_path), big_read(tmp_path), text_reply("a summary"), text_reply("done")]
        compactor = CharCompactor(threshold=1500, keep_last=5)
        agent = Agent(ScriptedModel(script), str(tmp_path), compactor=compactor, max_model_calls=3)
        agent.run("go")
        assert agent.outcome == "max_model_calls" and agent.run_calls == 3
        assert ("compacting", "budget_spent", "stopping") in edges(agent)

    def test_the_history_is_kept_on_the_record(self, tmp_path):
        """The compaction's record carries the new history; the messages before it stay on earlier records."""
        script = [big_read(tmp_path), big_read(tmp_path), text_reply("a summary"), text_reply("done")]
        agent = Agent(ScriptedModel(script), str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
        agent.run("go")
        record = next(r for r in agent.history if r.trigger == "summarized")
        assert record.history == (agent.messages[0],)
        assert record.compaction is not None and record.compaction.replaced == 5
        assert record.compaction.pre_tokens > record.compaction.post_tokens
        everything = [m for r in agent.history for m in r.appended]
        assert any(BIG in str(m) for m in everything)


class TestReactive:
    def test_a_refused_request_is_compacted_and_sent_again(self, tmp_path):
        """'prompt is too long' leads to compacting; the call after it fits, and the run goes on."""
        model = ScriptedModel([big_read(tmp_path), too_long(), text_reply("a summary"), text_reply("done")])
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=None))
        assert agent.run("go") == "done"
        assert ("awaiting_model", "context_exceeded", "compacting") in edges(agent)
        assert (agent.turn, agent.run_calls) == (2, 4)  # the refused call and the summary count, but no turn

    def test_the_refused_window_bounds_later_requests(self, tmp_path):
        """Once the model named its window, the agent compacts before any request would pass nine tenths of it."""
        script = [big_read(tmp_path), too_long(5000, 1400), text_reply("s1")]
        script += [big_read(tmp_path), text_reply("s2"), text_reply("done")]
        model = ScriptedModel(script)
        compactor = CharCompactor(threshold=None)
        agent = Agent(model, str(tmp_path), compactor=compactor)
        assert agent.run("go") == "done"
        assert compactor.summaries == ["s1", "s2"]
        assert [r.trigger for r in agent.history].count("context_full") == 1

    def test_at_most_two_compactions_per_model_call(self, tmp_path):
        """A model that refuses every request after its first reply sees at most MAX_COMPACTIONS compactions
        before the run ends."""
        first = iter([text_reply("hello")])
        model = answering(summary=text_reply("s"), work=lambda _: next(first, too_long(5000, 10)))
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=None))
        assert agent.run("hi") == "hello"
        agent.run("go")
        assert agent.outcome == "context_window"
        starts = [r for r in agent.history if r.dest == "compacting"]
        assert len(starts) == MAX_COMPACTIONS
        assert edges(agent)[-2] == ("awaiting_model", "model_failed", "stopping")
        assert len(summary_calls(model)) == MAX_COMPACTIONS  # the second before the call: the window is known
        assert len(model.requests) - MAX_COMPACTIONS == 3  # hello, and two refused

    def test_a_refused_first_prompt_is_not_compacted(self, tmp_path):
        """With no reply yet there is nothing to compact: the refused call is the only one (Claude Code's too)."""
        model = answering(summary=text_reply("s"), work=too_long(5000, 10))
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=None))
        agent.run("go")
        assert (agent.outcome, len(model.requests)) == ("context_window", 1)
        assert "compacting" not in [r.dest for r in agent.history]

    def test_without_a_compactor_the_run_ends(self, tmp_path):
        """An agent that cannot compact ends the run with context_window, as before."""
        agent = Agent(ScriptedModel([too_long()]), str(tmp_path))
        agent.run("go")
        assert (agent.outcome, edges(agent)[1]) == ("context_window", ("awaiting_model", "model_failed", "stopping"))


class TestFailures:
    def test_three_failed_compactions_in_a_row_end_the_run(self, tmp_path):
        """Each failed summary call counts one more failure; the third ends the run with context_window."""
        model = answering(summary=ModelError("overloaded", kind="overloaded"), work=big_read(tmp_path))
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
        agent.run("go")
        assert agent.outcome == "context_window"
        assert agent.data.error is not None and "3 compactions in a row failed" in agent.data.error
        failed = [r for r in agent.history if r.trigger == "compaction_failed"]
        assert [r.dest for r in failed] == ["awaiting_model"] * (MAX_FAILED_COMPACTIONS - 1) + ["stopping"]
        assert all(r.model_called for r in failed) and agent.run_calls == agent.turn + MAX_FAILED_COMPACTIONS

    def test_a_good_compaction_ends_the_row(self, tmp_path):
        """A compaction that works resets the count of failures."""
        summaries = iter([ModelError("overloaded"), text_reply("s")])
        works = iter([big_read(tmp_path), big_read(tmp_path), text_reply("done")])
        model = answering(summary=lambda _: next(summaries), work=lambda _: next(works))
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
        assert agent.run("go") == "done"
        assert [r.trigger for r in agent.history if r.source == "compacting"] == ["compaction_failed", "summarized"]
        assert agent.data.failed_compactions == 0


class TestByHand:
    def test_compact_is_a_turn_of_its_own(self, tmp_path):
        """``/compact`` compacts from idle back to idle with one summary call and no turn."""
        model = ScriptedModel([text_reply("hello"), text_reply("the summary"), text_reply("again")])
        compactor = CharCompactor(threshold=None)
        agent = Agent(model, str(tmp_path), compactor=compactor)
        agent.run("hi")
        agent.run("/compact keep the greeting")
        assert edges(agent)[-2:] == [
            ("idle", "compact_requested", "compacting"),
            ("compacting", "summarized", "idle"),
        ]
        assert (agent.turn, agent.outcome, compactor.instructions) == (0, "end_turn", ["keep the greeting"])
        assert agent.run("and now?") == "again"
        assert model.requests[-1].messages[0]["content"].endswith("the summary")

    def test_a_subagent_prompt_is_no_command(self, tmp_path):
        """Only the root's prompt can be /compact: a task prompt of '/compact' is sent to the child as text."""
        model = ScriptedModel([tool_reply(tool_use("task", {"prompt": "/compact"})), text_reply("c"), text_reply("p")])
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=None))
        agent.run("go")
        assert "compact_requested" not in [r.trigger for r in agent.history]


class TestSubagents:
    def test_a_subagent_compacts_its_own_history(self, tmp_path):
        """A child over the threshold compacts its own messages; the parent's stay as they were."""
        task = tool_reply(tool_use("task", {"prompt": "read it"}))
        reads = [big_read(tmp_path), big_read(tmp_path)]
        model = ScriptedModel([task, *reads, text_reply("child summary"), text_reply("child done")])
        model.script.append(text_reply("parent done"))
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
        assert agent.run("delegate") == "parent done"
        child_compactions = [r for r in agent.history if r.trigger == "summarized"]
        assert [r.depth for r in child_compactions] == [1]
        assert "child done" in str(agent.messages[-2])


@pytest.mark.parametrize("state", ["compacting"])
def test_interrupting_a_compaction_leaves_the_agent_idle(tmp_path, state):
    """Ctrl-C during the summary call brings the agent to idle; the call counts toward the run."""
    model = ScriptedModel([big_read(tmp_path), big_read(tmp_path), KeyboardInterrupt()])
    agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5))
    with pytest.raises(KeyboardInterrupt):
        agent.run("go")
    assert (agent.state, agent.outcome, edges(agent)[-1][:2]) == ("idle", "interrupted", (state, "interrupted"))
    assert agent.run_calls == 3


class TestHooks:
    def test_a_precompact_block_goes_on_uncompacted(self, tmp_path):
        """A PreCompact Deny blocks the automatic compaction: the call goes ahead on the history as it was."""
        hooks = Hooks()
        seen: list[tuple[str | None, str | None]] = []

        def block(event):
            seen.append((event.trigger, event.custom_instructions))
            return Deny("keep everything")

        hooks.on("PreCompact", block)
        model = ScriptedModel([big_read(tmp_path), big_read(tmp_path), text_reply("done")])
        agent = Agent(model, str(tmp_path), compactor=CharCompactor(threshold=1500, keep_last=5), hooks=hooks)
        assert agent.run("go") == "done"
        assert ("compacting", "compaction_blocked", "awaiting_model") in edges(agent)
        assert not summary_calls(model) and seen[0] == ("auto", None)
        assert BIG in str(model.requests[-1].messages)

    def test_a_blocked_compact_leaves_the_history(self, tmp_path):
        """/compact blocked by a PreCompact hook ends its turn with the history unchanged."""
        hooks = Hooks()
        hooks.on("PreCompact", lambda event: Deny("no") if event.trigger == "manual" else None)
        agent = Agent(ScriptedModel([text_reply("hi")]), str(tmp_path), compactor=CharCompactor(None), hooks=hooks)
        agent.run("hello")
        before = list(agent.messages)
        agent.run("/compact")
        assert (edges(agent)[-1], agent.messages) == (("compacting", "compaction_blocked", "idle"), before)

    def test_precompact_text_joins_the_instructions_and_sessionstart_the_history(self, tmp_path):
        """A PreCompact hook's text is added to /compact's instructions; SessionStart (compact) adds context."""
        hooks = Hooks()
        hooks.on("PreCompact", lambda event: "keep the file names")
        hooks.on("SessionStart", lambda event: f"context after {event.source}")
        compactor = CharCompactor(threshold=None)
        model = ScriptedModel([text_reply("hi"), text_reply("summary"), text_reply("ok")])
        agent = Agent(model, str(tmp_path), compactor=compactor, hooks=hooks)
        agent.run("hello")
        agent.run("/compact be brief")
        assert compactor.instructions == ["be brief\n\nkeep the file names"]
        assert agent.messages[-1] == {"role": "user", "content": "context after compact"}

    def test_a_command_hook_blocks_with_exit_2(self, tmp_path):
        """A PreCompact command hook that exits 2 blocks; it reads trigger and custom_instructions on stdin."""
        from fsm.policy.command_hooks import CommandHook
        from fsm.policy.settings import HookCommand

        log = tmp_path / "input.json"
        spec = HookCommand("PreCompact", f"cat > {log}; echo no >&2; exit 2", "manual", 10.0, "test")
        hooks = Hooks()
        hooks.on("PreCompact", CommandHook(spec, project=tmp_path))
        agent = Agent(ScriptedModel([text_reply("hi")]), str(tmp_path), compactor=CharCompactor(None), hooks=hooks)
        agent.run("hello")
        agent.run("/compact keep it")
        assert edges(agent)[-1] == ("compacting", "compaction_blocked", "idle")
        sent = json.loads(log.read_text())
        assert (sent["hook_event_name"], sent["trigger"], sent["custom_instructions"]) == (
            "PreCompact",
            "manual",
            "keep it",
        )


class TestLibraryDefault:
    def test_a_library_agent_compacts_when_given_compaction_settings(self, tmp_path):
        """``Agent()`` compacts only when given ``compaction`` (or a ``compactor``): without, a refused request ends
        the run with ``context_window``; with ``CompactSettings()``, the threshold is Claude Code's for the model's
        window and the refusal is compacted away (as README and docs/compaction.md say)."""
        from fsm.compaction import CompactSettings

        plain = Agent(answering(summary=text_reply("s"), work=too_long()), str(tmp_path))
        assert plain.context_tokens() is None
        plain.run("go")
        assert plain.outcome == "context_window"

        calls: list[int] = []

        def work(request: Request) -> Any:
            calls.append(len(request.messages))
            return {1: text_reply("hello"), 2: too_long()}.get(len(calls), text_reply("done"))

        agent = Agent(answering(summary=text_reply("s"), work=work), str(tmp_path), compaction=CompactSettings())
        planned = agent.compaction_plan()
        assert agent.context_tokens() is not None and planned is not None
        assert planned.limit == 200_000 - 8_000 - 13_000  # the window less the reply's room less 13k
        assert agent.run("hi") == "hello"  # a refused first prompt is not compacted: nothing to compact
        assert agent.run("go") == "done"
        triggers = [r.trigger for r in agent.history]
        at = triggers.index("prompt", 1)
        assert triggers[at : at + 3] == ["prompt", "context_exceeded", "summarized"]
