"""Tests for fsm.cli.slash: the REPL's commands, none of which calls the model."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from fsm.cli.slash import COMMANDS, Done, Repl, dispatch, is_command
from fsm.compaction.tokens import messages_tokens
from fsm.compaction.window import window_for
from fsm.core.agent import Agent
from fsm.session.journal import SessionInfo
from fsm.testing import ScriptedModel, text_reply


class _Model(ScriptedModel):
    model = "claude-sonnet-4-5"


def _repl(tmp_path: Path, *, conversations: Any = None, expand: Any = None) -> tuple[Repl, io.StringIO]:
    out = io.StringIO()
    agent = Agent(_Model([text_reply("hi")]), str(tmp_path))
    return Repl(agent, out, "sess-1", conversations=conversations, expand=expand), out


def _said(repl: Repl, out: io.StringIO, text: str) -> tuple[Done, str]:
    out.seek(0)
    out.truncate()
    done = dispatch(repl, text)
    return done, out.getvalue()


class _Conversations:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path, self.made = tmp_path, 0

    def fresh(self) -> tuple[Agent, str | None]:
        self.made += 1
        return Agent(_Model([]), str(self.tmp_path)), f"new-{self.made}"

    def resume(self, session_id: str) -> tuple[Agent, str]:
        agent = Agent(_Model([]), str(self.tmp_path))
        agent.data.messages.append({"role": "user", "content": "old"})
        return agent, session_id + "-full"

    def recent(self) -> list[SessionInfo]:
        return []


def test_is_command() -> None:
    """`/name args` is a command; a path such as `/etc/hosts` and plain text are not."""
    assert is_command("/help") and is_command("/compact keep the tests") and is_command("/my-skill x")
    assert not is_command("/etc/hosts is odd") and not is_command("help") and not is_command("/")


class TestCommands:
    def test_help_lists_every_command(self, tmp_path: Path) -> None:
        """/help names each command with its summary."""
        repl, out = _repl(tmp_path)
        done, said = _said(repl, out, "/help")
        assert done == Done() and all(name in said for name in COMMANDS)

    def test_cost_and_status_read_the_session(self, tmp_path: Path) -> None:
        """/cost counts the replies the tally saw; /status adds the session, model, mode and the context figure."""
        repl, out = _repl(tmp_path)
        repl.agent.subscribe(repl.tally)
        repl.agent.run("hello")
        _, cost = _said(repl, out, "/cost")
        assert "Model calls:           1" in cost
        assert cost.startswith("Total cost:            $0.00 (costs may be inaccurate due to usage of unknown models)")
        _, status = _said(repl, out, "/status")
        assert "Session:               sess-1" in status and "Mode:                  default" in status
        assert "Model:                 " in status
        window = window_for("claude-sonnet-4-5", max_output=repl.agent.max_tokens)  # no compactor: the model's
        tokens = messages_tokens(repl.agent.messages)
        assert (
            f"Context:               {tokens:,} of {window.effective:,} tokens (0%; compaction at {window.threshold:,})"
            in (status)
        )
        assert len(repl.agent.model.requests) == 1  # type: ignore[attr-defined]  # the commands called nothing

    def test_model_shows_and_switches(self, tmp_path: Path) -> None:
        """/model shows the model; /model NAME resolves an alias and switches to it."""
        repl, out = _repl(tmp_path)
        assert "Model: claude-sonnet-4-5" in _said(repl, out, "/model")[1]
        assert _said(repl, out, "/model opus")[1].startswith("Model set to claude-opus")
        assert repl.agent.model.model.startswith("claude-opus")  # type: ignore[attr-defined]

    def test_permissions_allow_list_and_remove(self, tmp_path: Path) -> None:
        """/permissions allow adds a session rule the policy then applies; remove takes it away; a bad rule is one
        line."""
        repl, out = _repl(tmp_path)
        call = {"name": "bash", "input": {"command": "make build"}}
        policy = repl.agent.opts.permissions
        assert policy is not None and policy.decide(call, repl.agent.workspace).behavior == "ask"
        assert _said(repl, out, "/permissions allow Bash(make:*)")[1] == "Allowed for this session: Bash(make:*)\n"
        assert policy.decide(call, repl.agent.workspace).behavior == "allow"
        assert "Allow: Bash(make:*) (this session)" in _said(repl, out, "/permissions")[1]
        assert _said(repl, out, "/permissions remove Bash(make:*)")[1] == "Removed: Bash(make:*)\n"
        assert policy.decide(call, repl.agent.workspace).behavior == "ask"
        assert _said(repl, out, "/permissions allow Bash(")[1].startswith("/permissions: ")

    def test_compact_is_the_prompt_the_agent_compacts_on(self, tmp_path: Path) -> None:
        """/compact [instructions] hands the agent its /compact prompt."""
        repl, _ = _repl(tmp_path)
        assert dispatch(repl, "/compact keep the tests") == Done(prompt="/compact keep the tests")
        assert dispatch(repl, "/compact") == Done(prompt="/compact")

    def test_exit_and_its_aliases_quit(self, tmp_path: Path) -> None:
        """/exit and /quit quit."""
        repl, _ = _repl(tmp_path)
        assert dispatch(repl, "/exit").quit and dispatch(repl, "/quit").quit

    def test_unknown_goes_to_the_skills_seam_first(self, tmp_path: Path) -> None:
        """`/name args` asks the expand seam (skills, custom commands); what it returns is run; else one line."""
        seen: list[tuple[str, str]] = []

        def expand(name: str, args: str) -> str | None:
            seen.append((name, args))
            return f"Use the {name} skill on {args}" if name == "review" else None

        repl, out = _repl(tmp_path, expand=expand)
        assert dispatch(repl, "/review src/app.py") == Done(prompt="Use the review skill on src/app.py")
        assert _said(repl, out, "/bogus x")[1] == "Unknown command: /bogus (/help lists the commands)\n"
        assert seen == [("review", "src/app.py"), ("bogus", "x")]


class TestConversations:
    def test_clear_starts_a_new_session(self, tmp_path: Path) -> None:
        """/clear swaps in a fresh agent and session and tells the REPL (which subscribes its listeners)."""
        switched: list[Agent] = []
        repl, out = _repl(tmp_path, conversations=_Conversations(tmp_path))
        repl.on_switch = switched.append
        old = repl.agent
        assert _said(repl, out, "/clear")[1] == "(a new conversation: session new-1)\n"
        assert repl.agent is not old and switched == [repl.agent] and repl.session_id == "new-1"

    def test_resume_goes_on_with_a_session(self, tmp_path: Path) -> None:
        """/resume ID swaps in that session's agent; without an ID it lists the others (none here)."""
        repl, out = _repl(tmp_path, conversations=_Conversations(tmp_path))
        assert _said(repl, out, "/resume")[1] == "No other session in this project.\n"
        assert _said(repl, out, "/resume abc")[1] == "(resumed session abc-full: 1 messages)\n"
        assert repl.session_id == "abc-full"

    @pytest.mark.parametrize("command", ["/clear", "/resume"])
    def test_without_a_journal_they_say_so(self, tmp_path: Path, command: str) -> None:
        """Without the journal's side, /clear and /resume say they cannot, in one line."""
        repl, out = _repl(tmp_path)
        assert _said(repl, out, command)[1].count("\n") == 1
