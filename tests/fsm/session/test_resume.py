"""Tests for fsm.session.restore and the session flags: resume after a crash at every transition, the in-flight rule,
time travel into a fork, and ``--resume`` / ``--continue`` / ``--no-session`` / ``--session`` ``--at``."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsm import Agent, ConfigError, Hooks, ModelError, Reply, Transition
from fsm.core.reducer import PARENT_INTERRUPTED, made_model_call
from fsm.core.subagents import AgentDefinition
from fsm.policy.chain import deny_all
from fsm.session.journal import Journal, default_path
from fsm.session.restore import RESUMED_IN_FLIGHT, RESUMED_KILLED, RESUMED_NOTE, KilledOrphan, restore_at, resume
from fsm.skills import discover
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from fsm.view import describe_next
from tests.fsm.session.journal_support import (
    DrawnModel,
    LiveRecorder,
    delegation_script,
    open_policy,
    run_prompts,
    stop_hooks,
    without_timing,
)
from tests.suite import examples
from tools.processes import TAG_VAR, ToolProcess


class Killed(BaseException):
    """Stands in for SIGKILL inside a test process: nothing catches it, nothing after it runs."""


def _served(record: Transition) -> bool:
    """Whether the model answered (or raised) for this transition: a reply was served for it."""
    return made_model_call(record) and record.error != PARENT_INTERRUPTED


def model_calls(journal: Journal, session: str) -> int:
    """How many replies of the script a session has consumed."""
    return sum(_served(r) for r in journal.records(session))


def answered_once(messages: list[dict[str, Any]]) -> bool:
    """Every tool_use is answered exactly once, by id, in order, in the next message."""
    for i, message in enumerate(messages):
        calls = (
            [b["id"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
            if message["role"] == "assistant"
            else []
        )
        if calls:
            answers = [b["tool_use_id"] for b in messages[i + 1]["content"] if b.get("type") == "tool_result"]
            if answers != calls:
                return False
    return True


def interrupted_ids(messages: list[dict[str, Any]]) -> set[str]:
    return {
        b["tool_use_id"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result" and b["content"] == RESUMED_IN_FLIGHT
    }


def as_uninterrupted(messages: list[dict[str, Any]], baseline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """*messages* with each in-flight answer replaced by the baseline's answer to the same call."""
    answers = {
        b["tool_use_id"]: b
        for m in baseline
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    return [
        {
            **m,
            "content": [
                answers[b["tool_use_id"]] if b.get("content") == RESUMED_IN_FLIGHT else b for b in m["content"]
            ],
        }
        if isinstance(m["content"], list)
        else m
        for m in messages
    ]


def baseline(tmp_path: Path) -> tuple[Agent, list[str]]:
    ws = tmp_path / "base"
    ws.mkdir()
    agent = Agent(ScriptedModel(delegation_script()), str(ws), permissions=open_policy())
    agent.run("go")
    return agent, (ws / "log.txt").read_text().splitlines()


def crash(tmp_path: Path, name: str, *, after: int | None = None, in_tool: str | None = None) -> tuple[Path, str]:
    """Run the delegation script journalled in a new workspace and stop it dead after seq *after* or inside
    tool *in_tool* (it ran; its transition never happened)."""
    ws = tmp_path / name
    ws.mkdir()
    hooks = Hooks()
    if in_tool is not None:

        def die(event: Any) -> None:
            if event.tool_call["id"] == in_tool:
                raise Killed

        hooks.on("PostToolUse", die)
    agent = Agent(ScriptedModel(delegation_script()), str(ws), hooks=hooks, permissions=open_policy())
    journal = Journal(default_path(ws))
    session = journal.start(agent)
    agent.send("go")
    try:
        while after is None or not agent.history or agent.history[-1].seq < after:
            agent.step()
            if agent.state == "idle":
                break
    except Killed:
        pass
    return ws, session


def resume_and_finish(ws: Path, session: str) -> Agent:
    with Journal(default_path(ws)) as journal:
        agent = resume(journal, session, ScriptedModel(delegation_script()[model_calls(journal, session) :]))
        while agent.state != "idle":
            agent.step()
        return agent


TRANSITIONS = 18
"""How many transitions the uninterrupted delegation script makes."""
LOGGED = {"p1": "one", "c2": "child", "p3": "two"}
"""The line each bash call of the delegation script appends to log.txt."""


class TestResume:
    @pytest.mark.parametrize("after", range(1, TRANSITIONS + 1))
    def test_stopped_after_any_transition(self, tmp_path, after):
        """Stopped after any transition, a resumed run ends with the uninterrupted messages, at most one
        in-flight answer, every call answered once and no tool run twice."""
        base, base_log = baseline(tmp_path)
        assert len(base.history) == TRANSITIONS
        ws, session = crash(tmp_path, "ws", after=after)
        agent = resume_and_finish(ws, session)
        assert as_uninterrupted(agent.messages, base.messages) == base.messages
        assert answered_once(agent.messages)
        log = (ws / "log.txt").read_text().splitlines() if (ws / "log.txt").exists() else []
        assert len(log) == len(set(log)) and set(log) <= set(base_log)
        with Journal(default_path(ws)) as journal:
            records = journal.records(session)
            assert [r.seq for r in records] == list(range(1, len(records) + 1))
            child = journal.snapshot(session).agents[f"{agent.agent_id}.1"]
        skipped = [r.tool_call["id"] for r in records if RESUMED_NOTE in r.notes]
        assert len(skipped) <= 1
        assert sorted(log) == sorted(line for tool, line in LOGGED.items() if tool not in skipped)
        assert answered_once(child.messages)

    @pytest.mark.parametrize("tool", ["p1", "c1", "c2", "p3"])
    def test_killed_inside_a_tool(self, tmp_path, tool):
        """A tool that ran but was not journalled is answered as interrupted on resume, never run again."""
        base, base_log = baseline(tmp_path)
        ws, session = crash(tmp_path, "ws", in_tool=tool)
        agent = resume_and_finish(ws, session)
        with Journal(default_path(ws)) as journal:
            everyone = journal.snapshot(session).agents.values()
        assert {i for state in everyone for i in interrupted_ids(state.messages)} == {tool}
        assert as_uninterrupted(agent.messages, base.messages) == base.messages
        assert sorted((ws / "log.txt").read_text().splitlines()) == sorted(base_log)

    def test_in_flight_answer_is_an_error_with_a_note(self, tmp_path):
        """The in-flight call gets RESUMED_IN_FLIGHT as an error result, journalled with RESUMED_NOTE."""
        ws, session = crash(tmp_path, "ws", after=2)
        with Journal(default_path(ws)) as journal:
            agent = resume(journal, session, ScriptedModel())
            record = agent.history[-1]
            assert (record.seq, record.trigger, record.tool_call["id"], record.notes) == (
                3,
                "tool_ran",
                "p1",
                (RESUMED_NOTE,),
            )
            assert agent.data.results == [
                {"type": "tool_result", "tool_use_id": "p1", "content": RESUMED_IN_FLIGHT, "is_error": True}
            ]
            assert journal.records(session)[-1] == record
        assert RESUMED_IN_FLIGHT == (
            "Error: interrupted: the run stopped while this tool call was in flight, so it "
            "may have partly run; check its effects before trying it again"
        )

    def test_a_task_call_is_never_in_flight(self, tmp_path):
        """Stopped before a task call, the resumed run spawns the subagent instead of answering it."""
        ws, session = crash(tmp_path, "ws", after=3)
        with Journal(default_path(ws)) as journal:
            agent = resume(journal, session, ScriptedModel())
            assert agent.history == [] and describe_next(agent) == "spawn subagent"

    @pytest.mark.parametrize("how", ["task", "forked skill"])
    def test_a_custom_subagent_keeps_its_type_and_cap(self, tmp_path, how):
        """Resumed while a custom subagent runs (maxTurns 1 in a run of 5), the subagent is still of its type (its
        one tool) and still stops after one call: a resumed session never lifts a limit the live one had."""
        types = {"brief": AgentDefinition("brief", "Short.", "Be brief.", ("read_file",), None, 1)}
        (tmp_path / "x").write_text("x")
        skills = tmp_path / ".claude" / "skills" / "look"
        skills.mkdir(parents=True)
        (skills / "SKILL.md").write_text(
            "---\nname: look\ndescription: Look.\ncontext: fork\nagent: brief\n---\nLook around.\n"
        )
        call = (
            tool_use("task", {"prompt": "look", "subagent_type": "brief"}, id="t1")
            if how == "task"
            else tool_use("Skill", {"skill": "look"}, id="t1")
        )
        script = [
            tool_reply(call),
            tool_reply(tool_use("read_file", {"path": "x"}, id="r1")),
            text_reply("never asked for: the cap ends the subagent"),
        ]
        options = {"agents": types, "skills": discover(tmp_path, home=tmp_path / "home"), "permissions": open_policy()}
        agent = Agent(ScriptedModel(script), str(tmp_path), max_turns=5, **options)
        with Journal(default_path(tmp_path)) as journal:
            session = journal.start(agent)
            agent.send("go")
            while not agent.children:
                agent.step()
        with Journal(default_path(tmp_path)) as journal:
            model = ScriptedModel([script[1], text_reply("done")])  # without the cap the subagent would take "done"
            resumed = resume(journal, session, model, **options)
            child = resumed.children[0]
            assert (child.data.subagent_type, child.max_turns) == ("brief", 1)
            while resumed.state != "idle":
                resumed.step()
        assert [t["name"] for t in model.requests[0].tools] == ["read_file"]
        assert len(model.requests) == 2  # the subagent's one call, then the root's
        assert resumed.data.final_text == "done"

    def test_a_finished_session_takes_a_new_prompt(self, tmp_path):
        """Resuming an idle session and sending a prompt journals on into the same session, seq unbroken."""
        ws, session = crash(tmp_path, "ws")
        script = [tool_reply(tool_use("task", {"prompt": "more"}, id="p9")), text_reply("sub"), text_reply("again")]
        with Journal(default_path(ws)) as journal:
            agent = resume(journal, session, ScriptedModel(script))
            assert agent.state == "idle" and agent.history == []
            assert agent.run("once more") == "again"
            records = journal.records(session)
            assert [r.seq for r in records] == list(range(1, len(records) + 1)) and len(records) > TRANSITIONS
            assert {r.agent for r in records[TRANSITIONS:]} == {agent.agent_id, f"{agent.agent_id}.2"}
            (info,) = journal.sessions()
            assert (info.prompt, info.turns, info.outcome) == ("go", 5, "end_turn")


class TestTimeTravel:
    def test_restore_at_forks_and_leaves_the_original(self, tmp_path):
        """restore_at builds the agents as they were at SEQ into a new session; the original is unchanged."""
        ws, session = crash(tmp_path, "ws")
        with Journal(default_path(ws)) as journal:
            before = journal.records(session)
            agent = restore_at(journal, session, 6, ScriptedModel(delegation_script()[2:]), hooks=Hooks())
            fork = journal.session_of(agent)
            assert fork != session and agent.children and agent.children[0].state == "executing_tools"
            while agent.state != "idle":
                agent.step()
            assert journal.records(session) == before
            records = journal.records(fork)
            assert records[:6] == before[:6]
            assert [without_timing(r) for r in records] == [without_timing(r) for r in before]
            info = journal.find(fork)
            assert (info.forked_from, info.forked_at, info.prompt, info.transitions) == (session, 6, "go", 12)

    def test_seq_out_of_range(self, tmp_path):
        """A seq beyond the session is a one-line ConfigError naming the range."""
        ws, session = crash(tmp_path, "ws", after=4)
        with Journal(default_path(ws)) as journal, pytest.raises(ConfigError) as caught:
            restore_at(journal, session, 5, ScriptedModel())
        assert str(caught.value) == f"at must be 0..4 for session {session} (got 5)"


def assert_steps_on_alike(
    journal: Journal,
    session: str,
    agent: Agent,
    live: LiveRecorder,
    served: list[Reply | BaseException],
    seq: int,
    *,
    forced: int,
    prompts: list[str],
) -> None:
    """Restored at *seq* and fed the replies served after it, the agents make the live run's transitions."""
    again = restore_at(
        journal,
        session,
        seq,
        ScriptedModel(served[sum(_served(r) for r in live.records[:seq]) :]),
        hooks=stop_hooks(forced),
        approver=deny_all,
    )
    try:
        while again.state != "idle":
            again.step()
    except KeyboardInterrupt:
        pass
    sent = sum(r.trigger == "prompt" and r.depth == 0 for r in live.records[:seq])
    run_prompts(again, prompts[sent:])
    # a fork is written with its first step: one that made none (restored at the end) is not in the journal
    fork = journal.records(journal.session_of(again)) if again.history else journal.records(session, upto=seq)
    assert [without_timing(r) for r in fork] == [without_timing(r) for r in live.records], f"forked at {seq}"
    assert again.data == agent.data


@given(data=st.data(), max_turns=st.integers(1, 3), forced=st.integers(0, 1), at=st.floats(0, 1))
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_stepping_on_from_any_seq_repeats_the_run(data, max_turns, forced, at):
    """Restored at any seq and fed the same replies, the agents make the same transitions as the live run."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        drawn = DrawnModel(data.draw)
        agent = Agent(drawn, str(ws), max_turns, stop_hooks(forced), deny_all)
        with Journal(ws / "j.db") as journal:
            session = journal.start(agent)
            live = LiveRecorder(agent)
            agent.subscribe(live)
            prompts = ["first", "second"]
            run_prompts(agent, prompts)
            assert_steps_on_alike(
                journal,
                session,
                agent,
                live,
                drawn.served,
                round(at * len(live.records)),
                forced=forced,
                prompts=prompts,
            )


@pytest.mark.parametrize("max_turns", [1, 3])
def test_ctrl_c_in_a_childs_model_call_then_a_model_error_repeats_from_every_seq(tmp_path, max_turns):
    """The example Hypothesis once saved: two subagents, Ctrl-C in the first one's model call, then a model
    error on the next prompt; a fork from any seq makes the same transitions (it diverged before the
    interruption of several subagents was one transition per agent)."""
    tasks = [tool_use("task", {"prompt": f"subtask {i}"}, id=f"p_1_{i}") for i in range(2)]
    script: list[Any] = [tool_reply(*tasks), KeyboardInterrupt(), ModelError("drawn failure")]
    served = [item if isinstance(item, BaseException) else Reply.from_wire(item) for item in script]
    agent = Agent(ScriptedModel(script), str(tmp_path), max_turns, stop_hooks(0), deny_all)
    with Journal(tmp_path / "j.db") as journal:
        session = journal.start(agent)
        live = LiveRecorder(agent)
        agent.subscribe(live)
        run_prompts(agent, ["first", "second"])
        assert [r.trigger for r in live.records] == [
            "prompt",
            "replied_with_tools",
            "subagent_spawned",
            "subagent_spawned",
            "prompt",
            "prompt",
            "interrupted",
            "interrupted",
            "interrupted",
            "prompt",
            "model_failed",
            "stopped",
        ]
        for seq in range(len(live.records) + 1):
            assert_steps_on_alike(journal, session, agent, live, served, seq, forced=0, prompts=["first", "second"])


def test_an_edited_journal_is_refused(tmp_path):
    """A journal whose starting data was edited to turn=-97 is refused on resume, naming the field."""
    agent = Agent(ScriptedModel([text_reply("one")]), str(tmp_path))
    with Journal(default_path(tmp_path)) as journal:
        session = journal.start(agent)
        agent.run("first")
    with Journal(default_path(tmp_path)) as journal:
        with journal._transaction("edit") as db:
            initial = db.execute("SELECT initial FROM sessions WHERE id = ?", (session,)).fetchone()[0]
            db.execute(
                "UPDATE sessions SET initial = ? WHERE id = ?", (initial.replace('"turn":0', '"turn":-97'), session)
            )
        with pytest.raises(ConfigError, match=r"'turn' must be 0\.\.30 \(its max_turns\) \(got -97\)"):
            resume(journal, session, ScriptedModel())


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
class TestOrphans:
    def test_resume_kills_a_recorded_group_still_alive_first(self, tmp_path):
        """A call's processes journalled as started and never as gone, still alive, are killed by resume (on_kill
        is told, the row is closed); the answer's words are pinned (the e2e test sees them sent)."""
        ws, session = crash(tmp_path, "ws", after=2)  # p1 (bash) is next
        tag = "orphan-test-tag"
        orphan = subprocess.Popen(
            ["sleep", "3190"], env={"PATH": os.environ["PATH"], TAG_VAR: tag}, start_new_session=True
        )
        try:
            with Journal(default_path(ws)) as journal:
                agent = resume(journal, session, ScriptedModel())  # only to get a journalled agent back
                process = ToolProcess.started(orphan.pid, tag)
                agent._listeners.tell_processes(agent.agent_id, "p1", process, True)  # as bash would
            told: list[KilledOrphan] = []
            with Journal(default_path(ws)) as journal:
                assert [p.tool_use_id for p in journal.running_processes(session)] == ["p1"]
                agent = resume(journal, session, ScriptedModel(), on_kill=told.append)
                assert orphan.wait(timeout=5) == -9
                assert [(k.tool_use_id, k.pids) for k in told] == [("p1", (orphan.pid,))]
                assert journal.running_processes(session) == []
        finally:
            orphan.kill()
            orphan.wait()
        what = f"process group {orphan.pid}, 1 process"
        assert told[0].describe() == what
        assert RESUMED_KILLED.format(what=what) == (
            f"Error: interrupted: the run stopped while this tool call was in flight, and its command was still "
            f"running ({what}); it was killed when the run resumed. It may have partly run; check its effects "
            "before trying it again"
        )


def test_a_call_in_flight_at_a_crash_is_sent_again_and_counted_once(tmp_path):
    """A model call cut short by the process dying was never journalled: resume re-sends it; it counts once."""

    def die(request):
        raise Killed

    agent = Agent(ScriptedModel([die]), str(tmp_path))
    with Journal(default_path(tmp_path)) as journal:
        session = journal.start(agent)
        agent.send("x")
        agent.step()
        with pytest.raises(Killed):
            agent.step()
        again = ScriptedModel([text_reply("done")])
        resumed = resume(journal, session, again)
        assert resumed.run() == "done"
        assert (len(again.requests), resumed.run_calls, resumed.turn) == (1, 1, 1)
