"""The CLI finishes what was killed, keeps journals out of the workspace, and honours flags before ``run``.

Each test runs the installed ``agentfsm`` against the loopback fake server; journals go to the test's
``XDG_STATE_HOME`` (tests/conftest.py), which the subprocesses inherit.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from fsm.session.journal import Journal, default_path, legacy_path
from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import killed_after
from tests.e2e.fake_server import FakeAnthropic


def kill_mid_subagent(fake: FakeAnthropic, project: Path) -> str:
    """Run ``agentfsm -p`` until its subagent waits for the model, SIGKILL it; the session's id."""
    release = threading.Event()

    def hang(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return text_reply("too late")

    fake.script = [
        tool_reply(tool_use("task", {"prompt": "write the notes"}, id="p1")),
        tool_reply(tool_use("write_file", {"path": "notes.txt", "content": "n"}, id="c1")),
        hang,
    ]
    killed_after(fake, ["-p", "delegate the notes", "--permission-mode", "acceptEdits"], project, 3)
    release.set()
    with Journal(default_path(project)) as journal:
        (session,) = journal.sessions()
    assert session.state == "executing_tools" and (project / "notes.txt").exists()
    fake.requests.clear()
    return session.id


def test_continue_without_a_prompt_finishes_the_killed_run(fake, project, agentfsm):
    """``agentfsm -p --continue </dev/null`` finishes a run killed mid-subagent and prints its final answer."""
    session = kill_mid_subagent(fake, project)
    fake.script = [text_reply("notes written"), text_reply("all done")]
    run = agentfsm("-p", "--continue")  # stdin is /dev/null
    assert (run.code, run.stdout, run.stderr) == (0, "all done\n", "")
    with Journal(default_path(project)) as journal:
        info = journal.find(session)
    assert (info.state, info.outcome) == ("idle", "end_turn")
    again = agentfsm("run", "--continue")
    assert again.code == 1 and again.stderr == (
        f"agentfsm: nothing to finish: session {session} is not in the middle of a run; give a prompt to go on "
        f"(agentfsm -p PROMPT --resume {session})\n"
    )


def test_resume_with_a_prompt_reports_the_killed_run(fake, project, agentfsm):
    """With a new prompt the killed run's answer comes in ``resumed`` and the counts cover both runs."""
    session = kill_mid_subagent(fake, project)
    fake.script = [text_reply("notes written"), text_reply("all done"), text_reply("nothing else")]
    run = agentfsm("-p", "anything else?", "--resume", session, "--output-format", "json")
    assert run.code == 0, run.stderr
    result = run.json()
    assert result["resumed"] == {"outcome": "end_turn", "result": "all done"}
    assert (result["result"], result["model_calls"], result["num_turns"]) == ("nothing else", 3, 2)


def test_text_mode_prints_the_killed_runs_answer_first(fake, project, agentfsm):
    """In text mode the killed run's final text is printed before the new prompt's."""
    kill_mid_subagent(fake, project)
    fake.script = [text_reply("notes written"), text_reply("all done"), text_reply("nothing else")]
    run = agentfsm("-p", "anything else?", "--continue", "--verbose")
    assert run.code == 0 and run.stdout == "all done\nnothing else\n", run.stderr


def test_git_clean_loses_no_session(fake, project, agentfsm):
    """The journal lives outside the workspace: after git clean -fdx, sessions list still shows the session."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    fake.script = [text_reply("hello")]
    run = agentfsm("-p", "hi", "--output-format", "json")
    assert run.code == 0, run.stderr
    session = run.json()["session_id"]
    subprocess.run(["git", "clean", "-fdxq"], cwd=project, check=True)
    listing = agentfsm("sessions", "list")
    assert listing.code == 0 and listing.stdout.splitlines()[1].startswith(session), listing.stdout


def test_legacy_journal_is_read_and_the_move_is_told(project, agentfsm):
    """A journal left in WORKSPACE/.agentfsm is still listed, with one stderr line saying how to move it."""
    from fsm import Agent
    from fsm.testing import ScriptedModel

    with Journal(legacy_path(project)) as journal:
        agent = Agent(ScriptedModel(), str(project))
        session = journal.start(agent)
        agent.send("hi")
        agent.step()  # a session is written with its first step
    listing = agentfsm("sessions", "list")
    assert listing.code == 0 and listing.stdout.splitlines()[1].startswith(session)
    (line,) = listing.stderr.splitlines()
    assert line.startswith(f"agentfsm: this workspace's sessions are in {legacy_path(project)}")
    assert line.endswith(f"mv {legacy_path(project)} {default_path(project)}")


def test_flags_before_run_are_honoured(fake, project, agentfsm):
    """``agentfsm --max-turns 2 run x`` makes at most 2 model calls; --output-format before run is kept."""
    fake.script = [tool_reply(tool_use("glob", {"pattern": "*"}))] * 5
    run = agentfsm("--max-turns", "2", "--output-format", "json", "--no-session", "run", "x")
    assert run.code == 1 and len(fake.messages_requests) == 2
    assert json.loads(run.stdout)["terminal_reason"] == "max_turns"


def test_flags_that_do_not_apply_are_refused(agentfsm):
    """A run flag before a command that does not take it, an unknown option and a bare prompt are one line."""
    cases = {
        ("--max-turns", "2", "diagram"): "error: --max-turns does not apply to 'diagram'; put it after a "
        "command that takes it (agentfsm run PROMPT --max-turns …)\n",
        ("-p", "hi", "--allowedToolz", "Read"): "error: unknown option '--allowedToolz' (agentfsm --help lists them)\n",
    }
    for argv, expected in cases.items():
        run = agentfsm(*argv)
        assert (run.code, run.stderr) == (1, expected), argv
    bare = agentfsm("fix the bug")
    assert bare.code == 1 and bare.stderr.startswith(
        "error: 'fix the bug' is not a command; to run it as a prompt: agentfsm -p 'fix the bug'"
    )


def test_resume_with_fewer_parallel_slots_than_running_subagents_is_refused(fake, project, agentfsm):
    """A run killed with three subagents waiting on the model, resumed with ``--max-parallel 1``: one line naming
    both values, exit 1 (as for any session that cannot go on), nothing sent; ``--max-parallel 3`` finishes it."""
    release = threading.Event()

    def hang(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return text_reply("too late")

    fake.script = [tool_reply(*(tool_use("task", {"prompt": f"part {n}"}, id=f"p{n}") for n in (1, 2, 3)))]
    fake.script += [hang] * 3
    killed_after(fake, ["-p", "three parts"], project, 4)
    release.set()
    fake.requests.clear()
    run = agentfsm("-p", "--continue", "--max-parallel", "1")
    assert (run.code, run.stdout) == (1, ""), run.stderr
    assert run.stderr == (
        "agentfsm: the agent's 'max_parallel' is 1, so it may have at most 1 running subagent(s) (got 3)\n"
    )
    assert fake.requests == []
    fake.script = [text_reply("done")] * 3 + [text_reply("all three")]
    again = agentfsm("-p", "--continue", "--max-parallel", "3")
    assert (again.code, again.stdout) == (0, "all three\n"), again.stderr


def test_a_resumed_custom_subagent_keeps_its_type_and_its_cap(fake, project, agentfsm):
    """Killed while a custom subagent (tools: Read, maxTurns: 1, in a run of 5 turns) waits on the model, the run
    goes on under ``--continue`` with the same subagent: its request offers only read_file, and after that one call
    it stops and the root answers. Resumed with its definition gone: one line naming the type, nothing sent. Put back
    with maxTurns 30: the cap it started with holds."""
    brief = project / ".claude" / "agents" / "brief.md"
    brief.parent.mkdir(parents=True)
    brief.write_text("---\nname: brief\ndescription: Short.\ntools: Read\nmaxTurns: 1\n---\nBe brief.\n")
    (project / "x.txt").write_text("x")
    release = threading.Event()

    def hang(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return text_reply("too late")

    fake.script = [tool_reply(tool_use("task", {"prompt": "look", "subagent_type": "brief"}, id="p1")), hang]
    killed_after(fake, ["-p", "look briefly", "--max-turns", "5"], project, 2)
    release.set()
    fake.requests.clear()
    definition = brief.read_text()
    brief.unlink()
    gone = agentfsm("-p", "--continue")
    with Journal(default_path(project)) as journal:
        (session,) = journal.sessions()
    assert (gone.code, gone.stdout, fake.requests) == (1, "", [])
    assert gone.stderr == (
        f"agentfsm: subagent {session.id}.1 runs as type 'brief', which is not defined now; define it again "
        "(.claude/agents/brief.md) to go on\n"
    )
    brief.write_text(definition.replace("maxTurns: 1", "maxTurns: 30"))
    fake.script = [tool_reply(tool_use("read_file", {"path": "x.txt"}, id="c1")), text_reply("looked")]
    run = agentfsm("-p", "--continue")
    assert (run.code, run.stdout) == (0, "looked\n"), run.stderr
    child, root = fake.messages_requests
    assert child.tool_names == ["read_file"]
    assert "Subagent stopped after 1 turns without a final answer." in str(root.messages[-1]["content"])
