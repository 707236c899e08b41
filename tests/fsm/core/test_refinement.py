"""The code refines the table: the real Agent, driven through every choice the checker explores, reaches exactly the
checker's configurations, move for move (several subagents included: a move of subagent ``i``, ``@i …`` or ``return
i``, is ``step(child=…)``, which is how threads and the debugger move one of them).

For each configuration the checker reaches (breadth-first, exact budget), the real agent is rebuilt from a copy of its
data with ``Agent.restore``, made to take each choice (a ScriptedModel-like model answers as the choice says, real tools
run in a temp dir, a Stop hook forces a turn or not, a UserPromptSubmit hook blocks the prompt or not, the prompt is
``/NAME`` of a ``context: fork`` skill or not, Ctrl-C comes inside the model call or between steps), and the
transitions it makes and the configuration it reaches are compared with the checker's.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest

from fsm import Agent, Hooks, ModelError, Reply
from fsm.checker.search import Bounds, Config, Node, explore, initial, moves
from fsm.policy.chain import allow_all
from fsm.policy.hooks import PromptBlock
from fsm.skills import discover
from fsm.skills.invoke import TYPED
from fsm.testing import text_reply, tool_reply, tool_use


class ChoiceModel:
    """Answers the next call as the test says (``next``): final, tools, pause, error or interrupt."""

    def __init__(self) -> None:
        self.next: tuple[str, tuple[str, ...]] = ("final", ())
        self.calls = 0

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        self.calls += 1
        choice, kinds = self.next
        if choice == "error":
            raise ModelError("chosen failure")
        if choice == "interrupt":
            raise KeyboardInterrupt
        if choice == "pause":
            return Reply.from_wire(text_reply("", stop_reason="pause_turn"))
        if choice == "final":
            return Reply.from_wire(text_reply("done"))
        blocks = [
            tool_use("task", {"prompt": "sub"}) if k == "task" else tool_use("glob", {"pattern": "*"}) for k in kinds
        ]
        return Reply.from_wire(tool_reply(*blocks))


def kind(call: dict[str, Any]) -> str:
    return "typed" if call["id"].startswith(TYPED) else "task" if call["name"] == "task" else "tool"


def node(agent: Agent) -> Node:
    data = agent.data
    kinds = tuple(kind(c) for c in data.pending)
    if not kinds and any(str(b.get("tool_use_id", "")).startswith(TYPED) for b in data.results):
        kinds = ("answered",)  # a typed /NAME's call answered: fork_returned ends the run
    counts = (data.compactions, data.failed_compactions, data.manual_compaction and data.state == "compacting")
    counts = (0, 0, False) if data.state == "idle" else counts  # as the checker keeps them (nothing reads them)
    return (data.state, data.turn, kinds, data.inbox is not None, tuple(node(c) for c in agent.children), counts)


def abstract(agent: Agent, b: Bounds) -> Config:
    return node(agent), b.max_model_calls - agent.run_calls


class Driver:
    def __init__(self, workdir: Path, b: Bounds) -> None:
        self.workdir, self.b = workdir, b
        self.model = ChoiceModel()
        self.force = self.block = False
        self.hooks = Hooks()
        for event in ("Stop", "SubagentStop"):
            self.hooks.on(event, lambda e: "go on" if self.force else None)
        self.hooks.on("UserPromptSubmit", lambda e: PromptBlock("no prompts today") if self.block else None)
        skill = workdir / ".claude" / "skills" / "research" / "SKILL.md"  # the choice "fork" types /research
        skill.parent.mkdir(parents=True, exist_ok=True)
        skill.write_text("---\nname: research\ndescription: Researches.\ncontext: fork\n---\nFind out.\n")
        self.skills = discover(workdir, home=workdir / "home")

    def fresh(self) -> Agent:
        agent = Agent(
            self.model,
            str(self.workdir),
            self.b.max_turns,
            self.hooks,
            allow_all,
            max_model_calls=self.b.max_model_calls,
            max_parallel=self.b.max_parallel,
            skills=self.skills,
        )
        agent.send("go")
        return agent

    def rebuild(self, saved: tuple[Any, list[Any]]) -> Agent:
        root, children = copy.deepcopy(saved)
        return Agent.restore(
            self.model,
            str(self.workdir),
            root,
            children=children,
            hooks=self.hooks,
            approver=allow_all,
            max_turns=self.b.max_turns,
            max_model_calls=self.b.max_model_calls,
            max_parallel=self.b.max_parallel,
            skills=self.skills,
        )

    def take(self, agent: Agent, choice: str) -> tuple[tuple[tuple[int, str, str, str], ...], Agent]:
        made: list[tuple[int, str, str, str]] = []
        agent.subscribe(lambda r: made.append((r.depth, r.source, r.trigger, r.dest)))
        child: str | None = None
        if choice.startswith(("@", "return ")):  # a subagent's move (any may go next), or its return
            index, _, rest = choice.removeprefix("@").removeprefix("return ").partition(" ")
            child, choice = agent.children[int(index)].agent_id, rest or "return"
        mover = agent if child is None else agent.children[[c.agent_id for c in agent.children].index(child)]
        self.force, self.block = choice == "force", choice == "blocked"
        if choice == "fork":  # the root's prompt is /NAME of a context: fork skill
            mover.data.inbox = "/research x"
        if choice.startswith("tools "):
            self.model.next = ("tools", tuple(choice[6:].split("+")))
        else:
            self.model.next = (choice, ())
        if choice == "interrupt" and mover.state != "awaiting_model":
            agent.interrupt()
        else:
            with contextlib.suppress(KeyboardInterrupt):  # the agent settled itself before re-raising
                agent.step(child=child)
        return tuple(made), agent

    def own(self, agent: Agent) -> tuple[tuple[tuple[int, str, str, str], ...], Agent]:
        """The agent steps as it chooses itself (no subagent named), a model call answering with a final reply."""
        made: list[tuple[int, str, str, str]] = []
        agent.subscribe(lambda r: made.append((r.depth, r.source, r.trigger, r.dest)))
        self.force = self.block = False
        self.model.next = ("final", ())
        agent.step()
        return tuple(made), agent


def save(agent: Agent) -> tuple[Any, list[Any]]:
    return copy.deepcopy((agent.data, [c.data for c in agent.children]))


@pytest.mark.parametrize(
    ("max_turns", "k", "budget", "parallel"),
    [
        (2, 2, 3, 4),
        (3, 1, 5, 4),
        (2, 1, 2, 4),
        # max_parallel binds: a reply of two task calls starts one subagent, the second waits for it to return
        (2, 2, 3, 1),
    ],
)
def test_the_agent_reaches_what_the_checker_reaches(tmp_path, max_turns, k, budget, parallel):
    """Every configuration and every move of the checker is the real agent's, and nothing else is."""
    # the agent here has no USD budget, no compactor (tests/fsm/core/test_compacting.py drives compaction) and no
    # background jobs (tests/fsm/core/test_background.py drives them; fsm/checker/jobs.py proves them) and no MCP
    # servers (tests/fsm/core/test_connecting.py drives connecting)
    b = Bounds(
        max_turns, k, budget, parallel, exact_budget=True, budget_usd=False, compaction=False, jobs=False, servers=False
    )
    driver = Driver(tmp_path, b)
    start = driver.fresh()
    assert abstract(start, b) == initial(b)
    saved = {initial(b): save(start)}
    queue = [initial(b)]
    seen = {initial(b)}
    while queue:
        config = queue.pop()
        expected = {(made, after) for _, made, after in moves(config, b)}
        got = set()
        for choice in {c for c, _, _ in moves(config, b)}:
            made, agent = driver.take(driver.rebuild(saved[config]), choice)
            after = abstract(agent, b)
            got.add((made, after))
            if after not in saved:
                saved[after] = save(agent)
        assert got == expected, config
        if config[0][0] == "executing_tools" and config[0][4]:
            # what the agent picks itself (step a subagent, or start the next) is one of the checker's moves: where
            # max_parallel binds, it steps a subagent rather than start another
            made, agent = driver.own(driver.rebuild(saved[config]))
            assert (made, abstract(agent, b)) in got, config
        for _, after in got:
            if after not in seen:
                seen.add(after)
                queue.append(after)
    assert seen == set(explore(b)[0])
    # where max_parallel binds, the agent and the checker both stop at it (k task calls would start k subagents)
    assert max(len(children) for (_, _, _, _, children, _), _ in seen) == min(parallel, k)
