"""The Skill tool on the real agent: loaded inline, forked as a subagent (depth stays 1), refused, allowed-tools
granted only from trusted sources, /name prompts, and the listing in the system prompt."""

from __future__ import annotations

from pathlib import Path

from fsm import Agent
from fsm.policy.judge import Policy
from fsm.skills import discover
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for name, extra, body in [
        ("greet", "allowed-tools: Bash(mkdir:*)\n", "Say hello to $ARGUMENTS.\n"),
        ("research", "context: fork\n", "Find out about $ARGUMENTS and report.\n"),
        ("manual", "disable-model-invocation: true\n", "Only by hand: $ARGUMENTS\n"),
    ]:
        path = ws / ".claude" / "skills" / name / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(f"---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n{body}")
    return ws


def agent(tmp_path: Path, *replies: object, trusted: bool = True, **options: object) -> tuple[Agent, ScriptedModel]:
    ws = workspace(tmp_path)
    model = ScriptedModel(replies)
    skills = discover(ws, home=tmp_path / "home", trusted=trusted)
    options.setdefault("permissions", Policy())
    return Agent(model, str(ws), skills=skills, **options), model  # type: ignore[arg-type]


class TestInline:
    def test_the_body_follows_the_result_and_allowed_tools_are_granted(self, tmp_path: Path) -> None:
        """Skill answers "Launching skill: greet"; the skill's text follows as a text block of the same message;
        its allowed-tools become session allow rules, so a later `mkdir` runs unasked."""
        a, model = agent(
            tmp_path,
            tool_reply(tool_use("Skill", {"skill": "greet", "args": "Bob"}, id="s")),
            tool_reply(tool_use("bash", {"command": "mkdir made"}, id="b")),
            text_reply("done"),
        )
        assert a.run("go") == "done"
        result = model.requests[1].messages[-1]["content"]
        assert result == [
            {"type": "tool_result", "tool_use_id": "s", "content": "Launching skill: greet"},
            {
                "type": "text",
                "text": f"Base directory for this skill: {a.workspace.root}/.claude/skills/greet\n\n"
                "Say hello to Bob.\n",
            },
        ]
        assert [r.text for r in a.permissions.session] == ["Bash(mkdir:*)"]
        assert (a.workspace.root / "made").is_dir()

    def test_an_untrusted_workspaces_skill_grants_nothing(self, tmp_path: Path) -> None:
        """In an untrusted workspace the skill loads, but its allowed-tools add no rule: the mkdir is asked
        (and denied, nobody being there)."""
        a, model = agent(
            tmp_path,
            tool_reply(tool_use("Skill", {"skill": "greet"})),
            tool_reply(tool_use("bash", {"command": "mkdir made"}, id="b")),
            text_reply("done"),
            trusted=False,
        )
        a.run("go")
        assert a.permissions.session == []
        assert model.requests[2].messages[-1]["content"][0]["is_error"] is True

    def test_refusals(self, tmp_path: Path) -> None:
        """A path for a name and a skill the model may not invoke are refused, nothing read, nothing granted."""
        a, model = agent(
            tmp_path,
            tool_reply(
                tool_use("Skill", {"skill": "../../etc/passwd"}, id="p"),
                tool_use("Skill", {"skill": "manual"}, id="m"),
            ),
            text_reply("ok"),
        )
        a.run("go")
        assert [(b["content"], b.get("is_error")) for b in model.requests[1].messages[-1]["content"]] == [
            ("Error: Unknown skill: ../../etc/passwd", True),
            ("Error: Skill manual cannot be used with Skill tool due to disable-model-invocation", True),
        ]

    def test_deny_rules_still_win(self, tmp_path: Path) -> None:
        """A deny rule beats a skill's allow rule."""
        from fsm.policy.rules import parse_rule

        ws = workspace(tmp_path)
        model = ScriptedModel(
            [
                tool_reply(tool_use("Skill", {"skill": "greet"})),
                tool_reply(tool_use("bash", {"command": "mkdir made"}, id="b")),
                text_reply("done"),
            ]
        )
        policy = Policy(deny=(parse_rule("Bash(mkdir:*)"),))
        a = Agent(model, str(ws), skills=discover(ws, home=tmp_path / "home"), permissions=policy)
        a.run("go")
        assert model.requests[2].messages[-1]["content"][0]["is_error"] is True
        assert not (ws / "made").exists()

    def test_a_grant_is_journalled_and_kept_by_resume(self, tmp_path: Path) -> None:
        """The skill's allow rules go on the journalled transition that invoked it (``granted``) and into the
        root's data, so the resumed session (``--resume``, ``--continue``) allows them again: its mkdir runs
        unasked, with nobody there to answer."""
        from fsm.session.journal import Journal, default_path
        from fsm.session.restore import resume

        ws = workspace(tmp_path)
        model = ScriptedModel([tool_reply(tool_use("Skill", {"skill": "greet"})), text_reply("loaded")])
        a = Agent(model, str(ws), skills=discover(ws, home=tmp_path / "home"), permissions=Policy())
        with Journal(default_path(ws)) as journal:
            session = journal.start(a)
            a.run("go")
        assert [r.granted for r in a.history if r.granted] == [("Bash(mkdir:*)",)]
        assert a.data.grants == ["Bash(mkdir:*)"]
        later = ScriptedModel([tool_reply(tool_use("bash", {"command": "mkdir made"})), text_reply("made")])
        with Journal(default_path(ws)) as journal:
            again = resume(journal, session, later, skills=discover(ws, home=tmp_path / "home"))
            assert [r.text for r in again.permissions.session] == ["Bash(mkdir:*)"]
            assert again.run("make it") == "made"
        assert (ws / "made").is_dir()
        assert later.requests[1].messages[-1]["content"][0].get("is_error") is None


class TestFork:
    def test_a_fork_skill_runs_as_a_subagent_whose_answer_comes_back(self, tmp_path: Path) -> None:
        """context: fork spawns a subagent (subagent_spawned, depth 1) with the skill's text as its prompt; its
        final text comes back in Claude Code's words, its messages never in the parent's context."""
        a, model = agent(
            tmp_path,
            tool_reply(tool_use("Skill", {"skill": "research", "args": "caching"}, id="f")),
            tool_reply(tool_use("Skill", {"skill": "research"}, id="again")),
            text_reply("caches are fast"),
            text_reply("done"),
        )
        assert a.run("go") == "done"
        child_first = model.requests[1]
        assert child_first.messages[0]["content"].endswith("Find out about caching and report.\n")
        refused = model.requests[2].messages[-1]["content"][0]
        assert refused["content"] == (
            "Error: research: this skill runs as a subagent (context: fork), and a subagent cannot start another; "
            "do the work yourself with the other tools"
        )
        assert [(r.trigger, r.depth) for r in a.history if r.trigger.startswith("subagent")] == [
            ("subagent_spawned", 0),
            ("subagent_returned", 0),
        ]
        assert max(r.depth for r in a.history) == 1
        assert model.requests[3].messages[-1]["content"] == [
            {
                "type": "tool_result",
                "tool_use_id": "f",
                "content": 'Skill "research" completed (forked execution).\n\nResult:\ncaches are fast',
            }
        ]

    def test_agent_picks_a_custom_type(self, tmp_path: Path) -> None:
        """A fork skill's agent: names the custom subagent type that runs it (its prompt, its tools)."""
        from fsm.core.subagents import parse_definition

        ws = workspace(tmp_path)
        path = ws / ".claude" / "skills" / "research" / "SKILL.md"
        path.write_text(path.read_text().replace("context: fork\n", "context: fork\nagent: scout\n"))
        scout = parse_definition("---\nname: scout\ndescription: d\ntools: Glob\n---\nYou are the scout.", "s.md")
        model = ScriptedModel([tool_reply(tool_use("Skill", {"skill": "research"})), text_reply("x"), text_reply("y")])
        Agent(model, str(ws), skills=discover(ws, home=tmp_path / "home"), agents={"scout": scout}).run("go")
        assert model.requests[1].system.startswith("You are the scout.")
        assert model.requests[1].tool_names == ["glob"]


class TestSlashAndListing:
    def test_a_slash_prompt_sends_the_skills_text(self, tmp_path: Path) -> None:
        """/manual args (model-invocation disabled, still the user's) sends the skill's text as the prompt."""
        a, model = agent(tmp_path, text_reply("ok"))
        a.run("/manual now")
        sent = model.requests[0].messages[0]["content"]
        assert sent.startswith("<command-message>manual</command-message>\n<command-name>/manual</command-name>")
        assert sent.endswith("Only by hand: now\n")

    def test_a_forked_skill_typed_runs_as_a_subagent(self, tmp_path: Path) -> None:
        """/research caching (context: fork) runs the skill's text as a subagent's prompt, as Claude Code does: the
        root calls no model, the prompt is kept as typed and the subagent's answer is the run's result, in a
        <local-command-stdout> message the next prompt's call sees. The user typed it: a deny rule for Skill does
        not stop it, and no tool hook fires (SubagentStart does, as for any subagent)."""
        from fsm import Hooks
        from fsm.policy.rules import parse_rule

        fired: list[str] = []
        hooks = Hooks()
        for event in ("PreToolUse", "PostToolUse", "SubagentStart"):
            hooks.on(event, lambda e, event=event: fired.append(event))
        a, model = agent(
            tmp_path,
            text_reply("caches are fast"),
            text_reply("ok"),
            hooks=hooks,
            permissions=Policy(deny=(parse_rule("Skill"),)),
        )
        assert a.run("/research caching") == "caches are fast"
        assert fired == ["SubagentStart"]
        assert model.requests[0].messages[0]["content"].endswith("Find out about caching and report.\n")
        assert [(r.trigger, r.dest) for r in a.history if r.depth == 0] == [
            ("skill_forked", "executing_tools"),
            ("subagent_spawned", "executing_tools"),
            ("subagent_returned", "executing_tools"),
            ("fork_returned", "idle"),
        ]
        assert (a.turn, a.outcome, a.data.model_calls) == (0, "end_turn", 0)
        a.run("thanks")
        assert model.requests[1].messages == [
            {"role": "user", "content": "/research caching"},
            {"role": "user", "content": "<local-command-stdout>\ncaches are fast\n</local-command-stdout>"},
            {"role": "user", "content": "thanks"},
        ]

    def test_a_typed_fork_is_journalled_resumed_and_replayed(self, tmp_path: Path) -> None:
        """A session with a typed forked /NAME resumes after it (its messages back) and replays from its journal
        without a divergence when the replay has the skill."""
        from fsm.session.journal import Journal, default_path
        from fsm.session.replay import replay
        from fsm.session.restore import resume

        ws = workspace(tmp_path)
        skills = discover(ws, home=tmp_path / "home")
        a = Agent(ScriptedModel([text_reply("caches are fast")]), str(ws), skills=skills)
        with Journal(default_path(ws)) as journal:
            session = journal.start(a)
            a.run("/research caching")
        with Journal(default_path(ws)) as journal:
            again = resume(journal, session, ScriptedModel([]), skills=skills)
            assert (again.state, again.data.messages) == ("idle", a.data.messages)
            assert journal.find(session).prompt == "/research caching"  # what `agentfsm sessions` lists
            report = replay(journal, session, workdir=str(ws), skills=skills)
        assert report.divergence is None, report.describe()
        assert report.matched == len(a.history)

    def test_compact_keeps_its_meaning(self, tmp_path: Path) -> None:
        """/compact compacts even when a skill is named compact."""
        from tests.fsm.core.compaction_double import CharCompactor

        ws = workspace(tmp_path)
        (ws / ".claude" / "commands").mkdir()
        (ws / ".claude" / "commands" / "compact.md").write_text("Not a compaction.\n")
        model = ScriptedModel([text_reply("ok"), text_reply("the summary")])
        a = Agent(model, str(ws), skills=discover(ws, home=tmp_path / "home"), compactor=CharCompactor(threshold=None))
        a.run("hi")
        a.run("/compact")
        assert a.history[-1].trigger != "prompt" and any(r.trigger == "compact_requested" for r in a.history)

    def test_the_listing_names_what_the_model_may_invoke(self, tmp_path: Path) -> None:
        """The system prompt lists greet and research (not manual); the Skill tool is offered, to subagents too."""
        a, _ = agent(tmp_path)
        assert "<name>greet</name>" in a.system and "<name>research</name>" in a.system
        assert "<name>manual</name>" not in a.system
        assert [t.name for t in a.tools][-2:] == ["TodoWrite", "Skill"]

    def test_no_skills_no_tool_no_listing(self, tmp_path: Path) -> None:
        """Without skills neither the Skill tool nor a listing is there."""
        a = Agent(ScriptedModel([]), str(tmp_path))
        assert "Skill" not in [t.name for t in a.tools] and "<available_skills>" not in a.system


def test_a_bad_input_is_one_error_inline_or_forked(tmp_path: Path) -> None:
    """An unknown key or a non-string is answered with one error line naming it, for a forked skill too."""
    a, model = agent(
        tmp_path,
        tool_reply(
            tool_use("Skill", {"skill": "greet", "extra": 1}, id="i"),
            tool_use("Skill", {"skill": "research", "args": 3}, id="f"),
            tool_use("Skill", {"skill": 7}, id="n"),
        ),
        text_reply("ok"),
    )
    a.run("go")
    assert [b["content"] for b in model.requests[1].messages[-1]["content"]] == [
        "Error: Skill: unknown parameter 'extra' (expected skill, args)",
        "Error: Skill: 'args' must be string (got 3)",
        "Error: Skill: 'skill' must be string (got 7)",
    ]
    assert not any(r.trigger == "subagent_spawned" for r in a.history)
