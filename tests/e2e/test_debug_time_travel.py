"""`agentfsm debug --session ID --at SEQ --recorded`: step on from the middle of an old run, offline."""

from __future__ import annotations

import pexpect

from fsm import Agent
from fsm.session.journal import Journal, default_path, open_journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env

PROMPT = r"\(afsm\) "


def recorded_session(workdir) -> str:
    script = [tool_reply(tool_use("task", {"prompt": "look"}, id="t1")),
              tool_reply(tool_use("glob", {"pattern": "*.txt"})), text_reply("only notes.txt"),
              text_reply("one file")]
    with open_journal(str(workdir)) as journal:
        agent = Agent(ScriptedModel(script), str(workdir))
        session = journal.start(agent)
        agent.run("look around")
    return session


def test_debug_forks_an_old_session_at_a_seq(tmp_path):
    """The debugger starts inside the subagent as it was after transition 5 and steps on with recorded replies."""
    (tmp_path / "notes.txt").write_text("n\n")
    session = recorded_session(tmp_path)
    child = pexpect.spawn(str(AGENTFSM), ["debug", "--session", session, "--at", "5", "--recorded",
                                          "--cwd", str(tmp_path)],
                          cwd=str(tmp_path), env=base_env(), encoding="utf-8", timeout=20)
    child.expect(PROMPT)
    assert f"> depth 1  agent {session}.1  executing_tools  turn 1/30  next: run glob '*.txt'" in child.before
    child.sendline("where")
    child.expect(PROMPT)
    assert f"depth 0  agent {session}  executing_tools" in child.before
    child.sendline("c")
    child.expect(PROMPT)
    assert "The agent is idle: the run ended with outcome end_turn." in child.before
    child.sendline("q")
    child.expect(pexpect.EOF)
    with Journal(default_path(tmp_path)) as journal:
        sessions = journal.sessions()
    assert len(sessions) == 2
    assert sum(1 for s in sessions if s.id == session) == 1  # the original is untouched; the fork is new


def test_at_without_session_is_one_line(tmp_path):
    """--at without --session is a usage error on one line."""
    child = pexpect.spawn(str(AGENTFSM), ["debug", "--at", "3", "--cwd", str(tmp_path)], cwd=str(tmp_path),
                          env=base_env(ANTHROPIC_API_KEY="x"), encoding="utf-8", timeout=20)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert child.before.strip() == "agentfsm: --at needs --session ID"
