"""Tests for fsm.view.drawn: the table's edges, the ones no run takes (asked of the checker), guards in words."""

from __future__ import annotations

from fsm.core.machine import TRANSITIONS, sources
from fsm.view import drawn
from fsm.view.drawn import CHILD, edges
from tests.fsm.view.diagram_support import table_edges, taken


class TestEdges:
    def test_rows_expand_per_source(self):
        """edges() has one entry per (row, source) and keeps each row's doc."""
        assert len(edges()) == sum(len(sources(r)) for r in TRANSITIONS)
        assert all(e.doc for e in edges())
        assert edges(CHILD)[0].source.startswith(CHILD)


class TestNeverTaken:
    def test_is_what_the_checker_never_takes(self):
        """never_taken() is exactly the table's edges that no move of the checker's exploration makes."""
        assert (
            drawn.never_taken()
            == {
                (prefix, e.source[len(prefix) :], e.trigger, e.dest[len(prefix) :])
                for prefix in ("", CHILD)
                for e in edges(prefix)
            }
            - taken()
        )

    def test_today(self):
        """Today: the subagent's spawn and return (it never spawns), /compact and a typed forked /NAME (the root's
        prompt only) and so the subagent's ends of a /compact (to idle: told apart by dest) and of a typed /NAME, its
        prompt_blocked (its prompt fires no UserPromptSubmit), the root's budget_spent from idle, every edge of the
        subagent's awaiting_jobs (a subagent starts no job) and of its connecting (it never connects: it reuses the
        root's MCP tools). (A typed /NAME's subagent, which has the run to itself, reaches its third failed compaction
        in a row within these bounds.)"""
        assert drawn.never_taken() == {
            ("", "idle", "budget_spent", "stopping"),
            (CHILD, "executing_tools", "subagent_spawned", "executing_tools"),
            (CHILD, "executing_tools", "subagent_returned", "executing_tools"),
            (CHILD, "idle", "compact_requested", "compacting"),
            (CHILD, "idle", "prompt_blocked", "idle"),
            *((CHILD, "compacting", t, "idle") for t in ("compaction_blocked", "compacted", "summarized")),
            (CHILD, "compacting", "compaction_failed", "idle"),
            (CHILD, "idle", "skill_forked", "executing_tools"),
            (CHILD, "executing_tools", "fork_returned", "idle"),
            (CHILD, "awaiting_model", "replied_final", "awaiting_jobs"),  # a subagent has no jobs: it never waits
            *((CHILD, "awaiting_jobs", t, "stopping") for t in ("budget_spent", "wait_ceiling")),
            (CHILD, "awaiting_jobs", "job_ended", "awaiting_model"),
            (CHILD, "awaiting_jobs", "interrupted", "idle"),
            (CHILD, "idle", "prompt", "connecting"),  # a subagent never connects
            (CHILD, "connecting", "connected", "awaiting_model"),
            (CHILD, "connecting", "budget_spent", "stopping"),
            (CHILD, "connecting", "interrupted", "idle"),
        }
        assert drawn.left_out() == [
            "the root's budget_spent from idle",
            "the subagent's budget_spent from awaiting_jobs",
            "the subagent's interrupted from awaiting_jobs",
            "the subagent's job_ended from awaiting_jobs",
            "the subagent's wait_ceiling from awaiting_jobs",
            "the subagent's replied_final from awaiting_model to awaiting_jobs",
            "the subagent's compacted from compacting to idle",
            "the subagent's compaction_blocked from compacting to idle",
            "the subagent's compaction_failed from compacting to idle",
            "the subagent's summarized from compacting to idle",
            "the subagent's budget_spent from connecting",
            "the subagent's connected from connecting",
            "the subagent's interrupted from connecting",
            "the subagent's fork_returned from executing_tools",
            "the subagent's subagent_returned from executing_tools",
            "the subagent's subagent_spawned from executing_tools",
            "the subagent's compact_requested from idle",
            "the subagent's prompt from idle to connecting",
            "the subagent's prompt_blocked from idle",
            "the subagent's skill_forked from idle",
        ]
        assert drawn.left_out("`")[0] == "the root's `budget_spent` from `idle`"

    def test_drawn_edges_are_the_rest(self):
        """drawn_edges() is edges() less never_taken(), in table order, per machine."""
        for prefix in ("", CHILD):
            assert [(e.source, e.dest, e.trigger) for e in drawn.drawn_edges(prefix)] == [
                (s, d, label) for s, d, label in table_edges(prefix)
            ]


class TestGuards:
    def test_every_guarded_drawn_row_once(self):
        """Each drawn transition with a guard is listed once, under its row's guard."""
        listed = [(trigger, guard) for who, guard in drawn.guards() for trigger, _ in who]
        expected = {(e.trigger, e.guard) for prefix in ("", CHILD) for e in drawn.drawn_edges(prefix) if e.guard}
        assert sorted(set(listed)) == sorted(expected)
        assert len(listed) == len(set(listed))

    def test_today(self):
        """Today's table in words; budget_spent, guarded two ways, is named with its sources (compaction's rows too)."""
        compacting = "compaction_blocked from compacting, compacted from compacting, summarized from compacting"
        assert [(drawn.named(who), guard) for who, guard in drawn.guards()] == [
            ("prompt from idle", "if must_connect, unless out_of_model_calls or out_of_budget_usd"),
            (
                f"prompt from idle, compact_requested, skill_forked, connected, {compacting}",
                "unless out_of_model_calls or out_of_budget_usd",
            ),
            ("budget_spent from idle, connecting, compacting, awaiting_jobs", "if out_of_model_calls"),
            ("budget_spent from idle, connecting, compacting, awaiting_jobs", "if out_of_budget_usd"),
            ("replied_final", "if has_jobs, unless out_of_turns or out_of_model_calls or out_of_budget_usd"),
            (
                "paused, tools_done, job_ended, continue_forced",
                "unless out_of_turns or out_of_model_calls or out_of_budget_usd",
            ),
            ("turn_limit", "if out_of_turns"),
            ("budget_spent from awaiting_model, executing_tools", "if out_of_model_calls, unless out_of_turns"),
            ("budget_spent from awaiting_model, executing_tools", "if out_of_budget_usd, unless out_of_turns"),
            ("context_full", "unless out_of_compactions"),
            (
                "context_exceeded",
                "unless out_of_compactions or out_of_turns or out_of_model_calls or out_of_budget_usd",
            ),
            (f"{compacting}, compaction_failed from compacting", "if by_hand"),
            ("compaction_failed from compacting", "if out_of_compaction_tries"),
            (
                "compaction_failed from compacting",
                "unless out_of_compaction_tries or out_of_model_calls or out_of_budget_usd",
            ),
            ("subagent_spawned", "if can_spawn"),
        ]
        assert drawn.named([("budget_spent", ["idle"])], "`") == "`budget_spent` from `idle`"
