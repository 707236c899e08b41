"""Tests for fsm.core.vocabulary: each typed name set is the table's (or the hooks'), and mypy holds code to it."""

from __future__ import annotations

import textwrap
from typing import get_args

import attrs
import pytest

from fsm.core import guards, machine, vocabulary
from fsm.core.records import AgentState, Transition
from fsm.policy import hooks


class TestPinnedToTheTable:
    def test_states_are_the_tables(self):
        """``State`` names exactly the table's states, in the table's order."""
        assert list(vocabulary.STATE_NAMES) == machine.STATES

    def test_triggers_are_the_tables(self):
        """``Trigger`` names exactly the triggers of the table's rows."""
        assert set(vocabulary.TRIGGER_NAMES) == machine.TRIGGERS

    def test_guards_are_the_tables_and_have_functions(self):
        """``GuardName`` names exactly the guards the rows ask, and each has its pure function."""
        assert set(vocabulary.GUARD_NAMES) == machine.GUARDS == set(guards.GUARD_FUNCTIONS)

    def test_hook_events_are_claude_codes(self):
        """``HookEventName`` names the eight events hooks fire, as Claude Code spells them."""
        assert vocabulary.HookEventName is hooks.HookEventName
        assert (
            hooks.EVENTS
            == get_args(hooks.HookEventName)
            == (
                "UserPromptSubmit",
                "PreToolUse",
                "PostToolUse",
                "Stop",
                "SubagentStart",
                "SubagentStop",
                "PreCompact",
                "SessionStart",
            )
        )

    def test_records_are_typed_with_it(self):
        """The records' name fields carry the vocabulary's types, so cattrs and mypy both check them."""
        fields = {f.name: f.type for r in (Transition, AgentState) for f in attrs.fields(attrs.resolve_types(r))}
        assert fields["source"] == fields["dest"] == fields["state"] == vocabulary.State
        assert fields["trigger"] == vocabulary.Trigger
        assert fields["outcome"] == vocabulary.Outcome | None


@pytest.mark.slow
def test_mypy_catches_a_misspelled_name(tmp_path):
    """A misspelled state, outcome or trigger is a type error (one mypy run over four misspellings)."""
    from mypy import api

    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent("""\
            from fsm.core.records import AgentState
            from fsm.core.reducer import Step


            def probe(data: AgentState) -> object:
                data.outcome = "max_turn"
                Step("tools_done", "executing_tool")
                Step("tools_don", "executing_tools")
                return data.state == "idel"
        """)
    )
    config = tmp_path / "mypy.ini"  # our modules followed, the libraries skipped: a second, not twenty
    config.write_text(
        "[mypy]\npython_version = 3.11\nfollow_imports = skip\n\n[mypy-fsm.*,tools.*]\nfollow_imports = silent\n"
    )
    out, _, status = api.run([str(probe), "--strict", f"--config-file={config}", f"--cache-dir={tmp_path / 'c'}"])
    errors = [line.split(": error: ", 1)[1] for line in out.splitlines() if ": error: " in line]
    assert status == 1
    assert [e.split(" (")[0].split(" has ")[0] for e in errors] == [
        "Incompatible types in assignment",
        'Argument 2 to "Step"',
        'Argument 1 to "Step"',
        "Non-overlapping equality check",
    ], out
