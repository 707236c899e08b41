"""Tests for fsm.session.replay: re-running a journalled session offline and reporting the first divergence."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

import pytest

from fsm import Agent, ConfigError, Hooks, ModelError
from fsm.cli.replay import command, configure
from fsm.core.records import AgentState
from fsm.policy.hooks import PromptBlock
from fsm.session.journal import Journal, default_path
from fsm.session.replay import ReplayReport, recorded_model, replay
from fsm.session.restore import resume
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tests.fsm.session.journal_support import delegation_script, open_policy, stop_hooks


def record(tmp_path: Path, script: list, *, prompts: tuple[str, ...] = ("go",), **options) -> tuple[Path, str]:
    """Run *script* journalled in ``tmp_path/ws`` by root agent (and so session) 5d1c9e2a."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    options = {"permissions": open_policy(), **options}
    agent = Agent(ScriptedModel(script), str(ws), data=AgentState("5d1c9e2a"), **options)
    with Journal(default_path(ws)) as journal:
        session = journal.start(agent)
        for prompt in prompts:
            with contextlib.suppress(KeyboardInterrupt):
                agent.run(prompt)
    return default_path(ws), session


def replayed(path: Path, session: str, scratch: Path, **options) -> ReplayReport:
    scratch.mkdir(exist_ok=True)
    with Journal(path) as journal:
        return replay(journal, session, workdir=str(scratch), **options)


class TestReplay:
    def test_a_session_replays_to_the_end(self, tmp_path):
        """The delegation run, subagent included, replays transition for transition."""
        path, session = record(tmp_path, delegation_script())
        report = replayed(path, session, tmp_path / "scratch")
        assert report.ok and (report.recorded, report.matched) == (18, 18)
        assert report.describe() == f"replayed session 5d1c9e2a in {tmp_path / 'scratch'}: 18 of 18 transitions match"
        assert (tmp_path / "scratch" / "notes.txt").read_text() == "n" * 50  # the tools really ran

    def test_a_blocked_prompt_replays_without_its_hook(self, tmp_path):
        """A prompt a UserPromptSubmit hook blocked is blocked again (the recorded words), and the run goes on."""
        hooks = Hooks()
        hooks.on("UserPromptSubmit", lambda e: PromptBlock("[gate]: no\n") if e.prompt == "one" else None)
        path, session = record(tmp_path, [text_reply("second")], prompts=("one", "two"), hooks=hooks)
        with Journal(path) as journal:
            assert [r.trigger for r in journal.records(session)][:2] == ["prompt_blocked", "prompt"]
            assert (
                resume(journal, session, ScriptedModel([]), workdir=str(tmp_path)).data.messages[0]["content"] == "two"
            )
        report = replayed(path, session, tmp_path / "scratch")
        assert report.ok and report.matched == report.recorded == 4

    def test_several_prompts_and_model_errors(self, tmp_path):
        """Every recorded prompt is sent again and recorded model errors are raised again."""
        script = [
            ModelError("overloaded"),
            text_reply("second"),
            tool_reply(tool_use("glob", {"pattern": "*"})),
            text_reply("third"),
        ]
        path, session = record(tmp_path, script, prompts=("one", "two", "three"))
        report = replayed(path, session, tmp_path / "scratch")
        assert report.ok and report.matched == report.recorded == 12

    def test_a_different_edge_is_a_state_divergence(self, tmp_path):
        """A Stop hook that pushed the recorded run on is missing in the replay: the edge differs there."""
        path, session = record(tmp_path, [text_reply("done?"), text_reply("done!")], hooks=stop_hooks(1))
        report = replayed(path, session, tmp_path / "scratch")
        assert report.describe() == (
            f"replayed session 5d1c9e2a in {tmp_path / 'scratch'}: diverged at seq 3 (state) after 2 matching "
            "transitions\n"
            "  recorded: #3 depth 0 5d1c9e2a: stopping --continue_forced--> awaiting_model (turn 1)\n"
            "  replayed: #3 depth 0 5d1c9e2a: stopping --stopped--> idle (turn 1)  [Stop: this run used 0 tool calls]"
            "  outcome end_turn"
        )
        assert replayed(path, session, tmp_path / "again", hooks=stop_hooks(1)).ok

    def test_tool_results_are_compared_on_request(self, tmp_path):
        """Tool results depend on the files, so only results=True compares them."""
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "a.txt").write_text("hello\n")
        script = [tool_reply(tool_use("read_file", {"path": "a.txt"}, id="r1")), text_reply("read it")]
        path, session = record(tmp_path, script)
        assert replayed(path, session, tmp_path / "scratch").ok
        report = replayed(path, session, tmp_path / "scratch", results=True)
        assert report.divergence is not None
        head, recorded, again = report.describe().splitlines()
        assert head == (
            f"replayed session 5d1c9e2a in {tmp_path / 'scratch'}: diverged at seq 3 (tool result) "
            "after 2 matching transitions"
        )
        edge = (
            '#3 depth 0 5d1c9e2a: executing_tools --tool_ran--> executing_tools (turn 1)  read_file {"path": "a.txt"}'
        )
        assert recorded == f"  recorded: {edge}  -> 'hello'  result 'hello'"
        assert again.startswith(f"  replayed: {edge}  -> 'Error: ")
        assert "  result 'Error: " in again

    def test_a_ctrl_c_during_a_model_call_is_replayed(self, tmp_path):
        """A Ctrl-C the recording took during a model call (the subagent's here) is raised again, and the
        replay goes on past it."""
        script = [tool_reply(tool_use("task", {"prompt": "sub"})), KeyboardInterrupt(), text_reply("later")]
        path, session = record(tmp_path, script, prompts=("one", "two"))
        report = replayed(path, session, tmp_path / "scratch")
        assert report.ok and report.interrupted_at is None and report.matched == report.recorded == 9

    def test_a_ctrl_c_during_a_tool_stops_the_replay_there(self, tmp_path):
        """A replay cannot press Ctrl-C during a tool, so it stops where the recording was interrupted."""
        ws = tmp_path / "ws"
        ws.mkdir()

        def ctrl_c(event):
            raise KeyboardInterrupt

        hooks = Hooks()
        hooks.on("PreToolUse", ctrl_c)
        path, session = record(tmp_path, [tool_reply(tool_use("glob", {"pattern": "*"}))], hooks=hooks)
        report = replayed(path, session, tmp_path / "scratch")
        assert report.ok and report.interrupted_at == 3
        assert report.describe() == (
            f"replayed session 5d1c9e2a in {tmp_path / 'scratch'}: 2 of 3 transitions "
            "match; the recording was interrupted at seq 3, where a replay stops"
        )

    def test_a_resumed_session_replays_with_its_in_flight_call_run(self, tmp_path):
        """The call answered as in flight on resume is run by the replay, and not counted as a divergence."""
        ws = tmp_path / "ws"
        ws.mkdir()
        agent = Agent(ScriptedModel(delegation_script()), str(ws), permissions=open_policy())
        with Journal(default_path(ws)) as journal:
            session = journal.start(agent)
            agent.send("go")
            for _ in range(2):
                agent.step()
        with Journal(default_path(ws)) as journal:
            again = resume(journal, session, ScriptedModel(delegation_script()[1:]))
            again.run()
        assert replayed(default_path(ws), session, tmp_path / "scratch", results=True).ok

    def test_unknown_session(self, tmp_path):
        """Replaying an unknown id is the journal's one-line ConfigError."""
        path, _ = record(tmp_path, [text_reply("hi")])
        with pytest.raises(ConfigError, match=r"^no session 'zz' in .*$"):
            replayed(path, "zz", tmp_path / "scratch")


class TestRecordedModel:
    def test_serves_replies_and_errors_in_order(self, tmp_path):
        """The recorded model serves each agent's replies and failures in the order they were asked for."""
        path, session = record(tmp_path, [ModelError("boom"), *delegation_script()], prompts=("a", "b"))
        with Journal(path) as journal:
            records = journal.records(session)
        model = recorded_model(records)
        assert isinstance(model.script[0], ModelError) and str(model.script[0]) == "boom"
        assert [r.text for r in model.script[1:]] == ["", "", "notes written", "", "all done"]


class TestCommand:
    def parse(self, *argv: str) -> argparse.Namespace:
        parser = argparse.ArgumentParser(prog="agentfsm replay")
        configure(parser)
        return parser.parse_args(list(argv))

    def test_match_exits_0_without_an_api_key(self, tmp_path, monkeypatch, capsys):
        """``agentfsm replay ID`` needs no API key, runs in a scratch directory, and exits 0 on a match."""
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        path, session = record(tmp_path, delegation_script())
        assert command(self.parse(session[:4], "--session-db", str(path))) == 0
        out = capsys.readouterr().out
        assert out.startswith("replayed session 5d1c9e2a in ") and out.endswith(": 18 of 18 transitions match\n")
        scratch = out.split(" in ", 1)[1].split(":", 1)[0]
        assert "agentfsm-replay-" in scratch and not Path(scratch).exists()

    def test_divergence_exits_1(self, tmp_path, capsys):
        """A divergence is printed and the exit status is 1; --workdir keeps the files."""
        path, session = record(tmp_path, [text_reply("done?"), text_reply("done!")], hooks=stop_hooks(1))
        (tmp_path / "keep").mkdir()
        assert command(self.parse(session, "--session-db", str(path), "--workdir", str(tmp_path / "keep"))) == 1
        assert "diverged at seq 3 (state)" in capsys.readouterr().out

    def test_no_journal(self, tmp_path):
        """Without a journal the command is a ConfigError."""
        with pytest.raises(ConfigError) as caught:
            command(self.parse("abc", "--cwd", str(tmp_path)))
        assert str(caught.value) == f"no session 'abc': {default_path(tmp_path)} does not exist yet"
