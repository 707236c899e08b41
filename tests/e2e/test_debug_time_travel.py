"""`agentfsm debug`: its runs journalled like any run, and `--session ID --at SEQ --recorded` stepping on from
the middle of an old run, offline, in a new session that the debugger names and that exists once it steps."""

from __future__ import annotations

import re

import pexpect

from fsm import Agent
from fsm.session.journal import Journal, default_path, open_journal
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.e2e.conftest import AGENTFSM, base_env
from tests.e2e.fake_server import FakeAnthropic

PROMPT = r"\(afsm\) "


def debug(*args: str, cwd, **env: str) -> pexpect.spawn:
    """``agentfsm debug ARGS`` on a pseudo-terminal in *cwd*, at its first prompt."""
    child = pexpect.spawn(
        str(AGENTFSM),
        ["debug", *args, "--cwd", str(cwd)],
        cwd=str(cwd),
        env=base_env(**env),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 400),
    )
    child.expect(PROMPT)
    return child


def command(child: pexpect.spawn, line: str) -> str:
    """Send *line* at the prompt; what it printed up to the next prompt (the terminal's echo left out)."""
    child.sendline(line)
    child.expect(PROMPT)
    echo, _, shown = child.before.replace("\r\n", "\n").partition("\n")
    assert echo == line
    return shown


def quit_(child: pexpect.spawn) -> str:
    """Quit; what the debugger said on the way out (it exits 0)."""
    child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return child.before.replace("\r\n", "\n")


def sessions(workdir) -> list:
    with Journal(default_path(workdir)) as journal:
        return journal.sessions()


def recorded_session(workdir) -> str:
    script = [
        tool_reply(tool_use("task", {"prompt": "look"}, id="t1")),
        tool_reply(tool_use("glob", {"pattern": "*.txt"})),
        text_reply("only notes.txt"),
        text_reply("one file"),
    ]
    with open_journal(str(workdir)) as journal:
        agent = Agent(ScriptedModel(script), str(workdir))
        session = journal.start(agent)
        agent.run("look around")
    return session


def test_debug_forks_an_old_session_at_a_seq(tmp_path):
    """The debugger starts inside the subagent as it was after transition 5 and steps on with recorded replies."""
    (tmp_path / "notes.txt").write_text("n\n")
    session = recorded_session(tmp_path)
    child = pexpect.spawn(
        str(AGENTFSM),
        ["debug", "--session", session, "--at", "5", "--recorded", "--cwd", str(tmp_path)],
        cwd=str(tmp_path),
        env=base_env(),
        encoding="utf-8",
        timeout=20,
    )
    child.expect(PROMPT)
    assert f"  depth 1  agent {session}.1  executing_tools  turn 1/30  next: run glob '*.txt'" in child.before
    child.sendline("s")  # the fork is written with its first step
    child.expect(PROMPT)
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
    child = pexpect.spawn(
        str(AGENTFSM),
        ["debug", "--at", "3", "--cwd", str(tmp_path)],
        cwd=str(tmp_path),
        env=base_env(ANTHROPIC_API_KEY="x"),
        encoding="utf-8",
        timeout=20,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert child.before.strip() == "agentfsm: --at needs --session ID"


class TestSessions:
    def test_debug_prompt_is_journalled(self, tmp_path):
        """`agentfsm debug PROMPT` names its session, journals each step into it, and says so when it ends."""
        with FakeAnthropic() as fake:
            fake.script = [text_reply("hello there")]
            child = debug("say hi", cwd=tmp_path, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
            (session,) = re.findall(r"^Session (\S+): every step is journalled", child.before, re.M)
            assert sessions(tmp_path) == []  # written with its first step
            assert "The agent is idle: the run ended with outcome end_turn." in command(child, "c")
            said = quit_(child)
        assert f"Session {session}: 3 steps journalled; agentfsm sessions show {session}." in said
        (info,) = sessions(tmp_path)
        assert (info.id, info.prompt, info.transitions, info.outcome) == (session, "say hi", 3, "end_turn")

    def test_no_session_journals_nothing(self, tmp_path):
        """--no-session: the debugger names no session and the journal stays empty."""
        with FakeAnthropic() as fake:
            fake.script = [text_reply("hello there")]
            child = debug("say hi", "--no-session", cwd=tmp_path, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test")
            assert "ession" not in child.before
            command(child, "c")
            assert "ession" not in quit_(child)
        assert not default_path(tmp_path).exists()

    def test_a_fork_names_its_new_session_and_history_shows_what_it_restored(self, tmp_path):
        """A fork prints its new id, heads the > line with it, and history shows the restored transitions,
        a marker, then the fork's own steps."""
        (tmp_path / "notes.txt").write_text("n\n")
        origin = recorded_session(tmp_path)
        child = debug("--session", origin[:8], "--at", "5", "--recorded", cwd=tmp_path)
        (fork,) = re.findall(
            rf"^New session (\S+): a fork of session {origin} as it was after transition 5; ", child.before, re.M
        )
        assert fork != origin
        assert f"> session {fork}  depth 1  agent {origin}.1  executing_tools" in child.before
        where = command(child, "w")
        assert f"  session {fork} (a fork of {origin} at 5)" in where
        shown = command(child, "h")
        assert re.findall(r"^#(\d+) ", shown, re.M) == ["1", "2", "3", "4", "5"]
        assert (
            f"--- forked here: session {origin} after transition 5; the steps below are session {fork}'s ---"
            in shown.splitlines()
        )
        # the views see the restored reply too
        assert re.search(r"^    tool_use \S+ glob ", command(child, "p reply"), re.M)
        command(child, "s")
        lines = command(child, "h 2").splitlines()
        assert lines[0].startswith("#5 ") and lines[1].startswith("--- forked here") and lines[2].startswith("#6 ")
        said = quit_(child)
        assert f"Session {fork}: 1 step journalled; agentfsm -p --resume {fork} finishes its run." in said
        info = {s.id: s for s in sessions(tmp_path)}
        assert set(info) == {origin, fork} and (info[fork].forked_from, info[fork].forked_at) == (origin, 5)

    def test_a_fork_left_without_a_step_is_not_kept(self, tmp_path):
        """Forking and quitting at once leaves no session behind (and says so); --continue still finds the
        original."""
        origin = recorded_session(tmp_path)
        child = debug("--session", origin, "--at", "3", "--recorded", cwd=tmp_path)
        (fork,) = re.findall(r"^New session (\S+): a fork", child.before, re.M)
        assert f"No step was made, so session {fork} was not written to the journal." in quit_(child)
        assert [s.id for s in sessions(tmp_path)] == [origin]

    def test_no_session_refuses_a_fork(self, tmp_path):
        """--no-session with --session is one line: a fork is always journalled."""
        origin = recorded_session(tmp_path)
        child = pexpect.spawn(
            str(AGENTFSM),
            ["debug", "--session", origin, "--no-session", "--recorded", "--cwd", str(tmp_path)],
            cwd=str(tmp_path),
            env=base_env(),
            encoding="utf-8",
            timeout=20,
        )
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 1
        assert child.before.strip() == (
            "agentfsm: --no-session cannot be used with --session: time travel journals the fork it makes"
        )
