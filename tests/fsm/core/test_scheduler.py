"""Tests for fsm.core.scheduler: the rule (which call or subagent moves next), and Agent.run() running a reply's
task calls at once, in threads, keeping every contract.

Concurrency is proved without timing: children whose model calls wait on a barrier can only finish when that
many of them are in a call at once.
"""

from __future__ import annotations

import _thread
import threading
import time
from typing import Any

import pytest
from attrs import define

from fsm import Agent, ModelError, Reply
from fsm.core.agent import INTERRUPTED
from fsm.core.records import AgentState
from fsm.core.reducer import PARENT_INTERRUPTED
from fsm.core.scheduler import deepest_busy, plan
from fsm.policy.hooks import Ask, HookEvent, Hooks
from fsm.policy.judge import Policy
from fsm.testing import text_reply, tool_reply, tool_use

NAMES = ["one", "two", "three", "four"]


def call(name: str, id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": {}}


BASH, TASK_A, TASK_B, READ, TASK_C = (
    call("bash", "b"),
    call("task", "A"),
    call("task", "B"),
    call("read_file", "r"),
    call("task", "C"),
)


@define
class Child:
    """A running subagent as the rule sees it: its data and whether it is busy."""

    data: AgentState
    busy: bool = True


def child(moves: int, *, busy: bool = True, outcome: Any = None) -> Child:
    return Child(AgentState("a1.x", transitions=moves, outcome=outcome), busy)


def parent(*pending: dict[str, Any], max_parallel: int = 4, unrunnable: tuple[str, ...] = ()) -> AgentState:
    return AgentState(
        "a1",
        state="executing_tools",
        pending=list(pending),
        max_parallel=max_parallel,
        unrunnable={i: "Error: cut" for i in unrunnable},
    )


class TestPlan:
    def test_the_docstrings_example_in_order(self) -> None:
        """In [bash, task A, task B, read_file, task C]: bash, then A and B together, then read_file, then C."""
        assert plan(parent(BASH, TASK_A, TASK_B, READ, TASK_C), [], True) == ("call", BASH)
        assert plan(parent(TASK_A, TASK_B, READ, TASK_C), [], True) == ("spawn", TASK_A)
        assert plan(parent(TASK_A, TASK_B, READ, TASK_C), [child(0)], True) == ("spawn", TASK_B)
        a, b = child(3), child(1)
        assert plan(parent(TASK_A, TASK_B, READ, TASK_C), [a, b], True) == ("child", b)  # read_file waits
        assert plan(parent(READ, TASK_C), [], True) == ("call", READ)
        assert plan(parent(TASK_C), [], True) == ("spawn", TASK_C)
        assert plan(parent(), [], True) == ("done", None)

    def test_a_forked_skill_call_spawns_like_a_task_call(self) -> None:
        """A Skill call of a skill in forks spawns (and starts beside running task subagents, as a task call does);
        any other Skill call is an ordinary call; forks spawn even without task, since only a root has any."""
        fork = {"type": "tool_use", "id": "f", "name": "Skill", "input": {"skill": "research"}}
        inline = {"type": "tool_use", "id": "i", "name": "Skill", "input": {"skill": "greet"}}
        assert plan(parent(fork, READ), [], True, {"research"}) == ("spawn", fork)
        assert plan(parent(TASK_A, fork), [child(0)], True, {"research"}) == ("spawn", fork)
        assert plan(parent(inline), [], True, {"research"}) == ("call", inline)
        assert plan(parent(fork), [], True) == ("call", fork)
        assert plan(parent(fork), [], False, {"research"}) == ("spawn", fork)
        assert plan(parent(fork, unrunnable=("f",)), [], True, {"research"}) == ("call", fork)

    def test_a_full_slot_table_waits(self) -> None:
        """No task call starts while max_parallel subagents run."""
        running = [child(0), child(0)]
        assert plan(parent(TASK_A, TASK_B, TASK_C, max_parallel=2), running, True) == ("child", running[0])

    def test_round_robin_the_least_moved_first_spawned_on_ties(self) -> None:
        """The subagent that has made the fewest transitions moves; on a tie the first spawned."""
        first, second, third = child(4), child(2), child(2)
        assert plan(parent(TASK_A, TASK_B, TASK_C), [first, second, third], True)[1] is second

    def test_an_idle_subagent_is_the_next_to_move(self) -> None:
        """An idle subagent that moved least is the step's target (the agent returns it)."""
        done, busy = child(2, busy=False), child(5)
        assert plan(parent(TASK_A, TASK_B), [busy, done], True) == ("child", done)

    def test_an_interrupted_subagent_ends_the_parents_run(self) -> None:
        """An idle subagent whose run ended interrupted makes the parent's next step finish the interruption."""
        stopped = child(2, busy=False, outcome="interrupted")
        assert plan(parent(TASK_A, TASK_B), [child(0), stopped], True) == ("interrupt", None)

    def test_task_calls_run_as_calls_when_the_agent_does_not_delegate(self) -> None:
        """Without delegation (a subagent, or no task tool) a task call is a call, answered by the agent itself."""
        assert plan(parent(TASK_A), [], False) == ("call", TASK_A)

    def test_an_unrunnable_task_is_answered_not_spawned(self) -> None:
        """A task call that cannot run (cut, or a bad input) is never spawned, first or next."""
        assert plan(parent(TASK_A, unrunnable=("A",)), [], True) == ("call", TASK_A)
        running = [child(0)]
        assert plan(parent(TASK_A, TASK_B, unrunnable=("B",)), running, True) == ("child", running[0])


class TestDeepestBusy:
    def test_follows_the_rule_down_to_the_subagent_that_moves(self, tmp_path):
        """The deepest busy agent is the subagent whose turn it is, else the agent itself."""
        model = Children(NAMES[:2], lambda name: None)
        agent = Agent(model, str(tmp_path))
        agent.send("go")
        assert deepest_busy(agent) is agent
        while len(agent.children) < 2:
            agent.step()
        assert deepest_busy(agent) is agent.children[0]
        agent.step()
        assert deepest_busy(agent) is agent.children[1]  # the first has moved once, the second not yet


class Children:
    """A model: the root delegates *names* in one reply, then sums up; each child's one call runs *child*."""

    def __init__(self, names: list[str], child: Any, *, child_tools: bool = False) -> None:
        self.names, self.child, self.child_tools = names, child, child_tools
        self.lock = threading.Lock()
        self.calls = 0

    def create(
        self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int
    ) -> Reply:
        with self.lock:
            self.calls += 1
        first = messages[0]["content"]
        if first in self.names:
            answered = sum(m["role"] == "assistant" for m in messages)
            if self.child_tools and answered == 0:
                return Reply.from_wire(tool_reply(tool_use("bash", {"command": f"rm -f {first}.txt"}, id=f"b_{first}")))
            self.child(first)
            return Reply.from_wire(text_reply(f"{first} done"))
        if len(messages) == 1:
            return Reply.from_wire(tool_reply(*(tool_use("task", {"prompt": n}, id=f"t_{n}") for n in self.names)))
        return Reply.from_wire(text_reply("all done"))


def results(agent: Agent) -> list[tuple[str, str]]:
    message = next(m for m in reversed(agent.messages) if m["role"] == "user" and isinstance(m["content"], list))
    return [(b["tool_use_id"], b["content"]) for b in message["content"] if b["type"] == "tool_result"]


class TestRunChildren:
    def test_four_children_are_in_their_model_calls_at_once(self, tmp_path):
        """Each child's call waits for the other three (a barrier), so the run ends only if all four overlap."""
        barrier = threading.Barrier(4, timeout=20)
        agent = Agent(Children(NAMES, lambda name: barrier.wait()), str(tmp_path))
        assert agent.run("go") == "all done"
        assert results(agent) == [(f"t_{n}", f"{n} done") for n in NAMES]

    def test_max_parallel_bounds_how_many_run(self, tmp_path):
        """With max_parallel 2, two children are in a call together (a barrier of 2), never three."""
        barrier, inside, most = threading.Barrier(2, timeout=20), [0], [0]
        lock = threading.Lock()

        def call(name: str) -> None:
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            barrier.wait()
            with lock:
                inside[0] -= 1

        agent = Agent(Children(NAMES, call), str(tmp_path), max_parallel=2)
        agent.run("go")
        assert most[0] == 2 and results(agent) == [(f"t_{n}", f"{n} done") for n in NAMES]

    def test_results_in_reply_order_and_one_ordered_stream(self, tmp_path):
        """The first child finishes last, one child's model fails: results still come in the reply's order,
        and listeners get every record once, one at a time, in seq order with no gap."""
        seen: list[int] = []
        busy = threading.Lock()

        def listener(record: Any) -> None:
            assert busy.acquire(blocking=False), "two records were handed over at once"
            seen.append(record.seq)
            time.sleep(0.001)
            busy.release()

        def call(name: str) -> None:
            if name == "three":
                raise ModelError("three failed")
            time.sleep({"one": 0.3, "two": 0.1, "four": 0.0}[name])

        agent = Agent(Children(NAMES, call), str(tmp_path))
        agent.subscribe(listener)
        agent.run("go")
        assert [i for i, _ in results(agent)] == [f"t_{n}" for n in NAMES]
        assert results(agent)[2][1] == "Error: the subagent's model call failed: three failed"
        assert seen == list(range(1, len(agent.history) + 1)) == [r.seq for r in agent.history]
        returned = [r.child for r in agent.history if r.trigger == "subagent_returned"]
        assert returned[-1].endswith(".1")  # the slowest, returned last

    def test_the_run_budget_is_exact_when_children_race(self, tmp_path):
        """max_model_calls 3 with four children racing for calls: exactly 3 calls are made, no overshoot."""
        model = Children(NAMES, lambda name: time.sleep(0.05))
        agent = Agent(model, str(tmp_path), max_model_calls=3)
        agent.run("go")
        assert model.calls == 3 and agent.run_calls == 3
        assert agent.outcome == "max_model_calls"
        assert sorted(c for _, c in results(agent)) == sorted(
            ["one done", "two done", *["Subagent stopped: the run's budget of 3 model calls is spent."] * 2]
        )

    def test_approvals_are_asked_one_at_a_time_naming_the_subagent(self, tmp_path):
        """Three children each ask about a destructive command: the approver is never entered twice at once,
        and each question names its subagent and call."""
        asked: list[tuple[str | None, str]] = []
        inside = threading.Lock()

        def approver(call: dict[str, Any], ask: Ask) -> bool:
            assert inside.acquire(blocking=False), "the approver was asked twice at once"
            asked.append((ask.agent, call["input"]["command"]))
            time.sleep(0.05)
            inside.release()
            return False

        names = NAMES[:3]
        agent = Agent(
            Children(names, lambda name: None, child_tools=True), str(tmp_path), approver=approver, permissions=Policy()
        )
        agent.run("go")
        assert sorted(asked) == [(f"{agent.agent_id}.{i}", f"rm -f {n}.txt") for i, n in enumerate(names, 1)]
        assert [c for _, c in results(agent)] == [f"{n} done" for n in names]

    def test_ctrl_c_interrupts_every_child_and_drops_late_steps(self, tmp_path):
        """Ctrl-C while the children wait in their calls: the parent and all four are interrupted at once,
        every task call is answered once, and a call that returns later records nothing."""
        release = threading.Event()
        arrived = threading.Barrier(4, timeout=20)

        def call(name: str) -> None:
            arrived.wait()
            if name == "one":
                _thread.interrupt_main()
            release.wait(20)

        agent = Agent(Children(NAMES, call), str(tmp_path))
        with pytest.raises(KeyboardInterrupt):
            agent.run("go")
        assert agent.state == "idle" and agent.outcome == "interrupted" and not agent.children
        assert results(agent) == [(f"t_{n}", INTERRUPTED) for n in NAMES]
        ended = [r for r in agent.history if r.trigger == "interrupted" and r.depth == 1]
        assert len(ended) == 4 and all(r.error == PARENT_INTERRUPTED and r.model_called for r in ended)
        count = len(agent.history)
        release.set()
        time.sleep(0.3)  # the four calls return now, in their threads: their transitions are dropped
        assert len(agent.history) == count and agent.state == "idle"

    def test_ctrl_c_counts_only_the_calls_made(self, tmp_path):
        """Ctrl-C while child "one" is in its model call and child "two", in its thread, has not started its call
        yet (its request is being measured): one's call counts, two's never starts, so the run's count is the
        model's (the root's call and one's), before and after two's thread goes on."""
        in_call, measuring, release = threading.Event(), threading.Event(), threading.Event()

        class Measuring:
            """A compactor that never compacts; measuring child two's request waits until Ctrl-C came."""

            threshold = 10**9

            def tokens(self, request: Any) -> int:
                if request.messages[0]["content"] == "two":
                    measuring.set()
                    in_call.wait(20)
                    _thread.interrupt_main()
                    release.wait(20)
                return 0

            def cheap(self, messages: Any) -> Any:
                raise AssertionError("never compacts")

            summary_request = summarized = cheap

        def call(name: str) -> None:
            in_call.set()
            release.wait(20)

        model = Children(["one", "two"], call)
        agent = Agent(model, str(tmp_path), compactor=Measuring())
        with pytest.raises(KeyboardInterrupt):
            agent.run("go")
        ended = {r.agent: r.model_called for r in agent.history if r.trigger == "interrupted" and r.depth == 1}
        assert ended == {f"{agent.agent_id}.1": True, f"{agent.agent_id}.2": False}
        assert agent.run_calls == model.calls == 2  # the root's and one's
        release.set()
        time.sleep(0.3)  # two's thread goes on now: its call never starts
        assert agent.run_calls == model.calls == 2

    def test_an_error_out_of_a_child_stops_the_others_then_is_raised(self, tmp_path):
        """A listener failing on one child's record: the other children stop after their step, then run()
        raises it; no thread is left stepping."""

        def fail(record: Any) -> None:
            if record.agent.endswith(".2") and record.trigger == "replied_final":
                raise RuntimeError("listener broke")

        agent = Agent(Children(NAMES, lambda name: time.sleep(0.05)), str(tmp_path))
        agent.subscribe(fail)
        with pytest.raises(RuntimeError, match="listener broke"):
            agent.run("go")
        assert not any(c._in_thread for c in agent.children)


class TestHooksFromThreads:
    def test_python_hooks_are_called_one_at_a_time_while_children_run_at_once(self, tmp_path):
        """Four children run at once (their model calls meet at a barrier) and each runs a tool call, yet a hook
        that counts who is inside it, with no lock of its own, never sees two callers at once."""
        barrier = threading.Barrier(4, timeout=20)
        inside, most, seen = [0], [0], []

        def hook(event: HookEvent) -> None:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            time.sleep(0.02)  # long enough that callers arriving together would overlap here
            seen.append((event.name, event.agent_id))
            inside[0] -= 1

        hooks = Hooks()
        for name in ("PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop"):
            hooks.on(name, hook)
        agent = Agent(Children(NAMES, lambda name: barrier.wait(), child_tools=True), str(tmp_path), hooks=hooks)
        assert agent.run("go") == "all done"
        children = [f"{agent.agent_id}.{i}" for i in range(1, 5)]
        assert most[0] == 1
        assert sorted(a for n, a in seen if n == "PreToolUse" and a != agent.agent_id) == children  # one bash each
        assert sum(n == "SubagentStop" for n, _ in seen) == 4

    def test_a_thread_safe_hook_is_entered_by_several_children_at_once(self, tmp_path):
        """A hook marked ``thread_safe`` is called without the lock: the four children's PreToolUse calls meet
        at a barrier inside it, which they could not pass one at a time."""
        barrier = threading.Barrier(4, timeout=20)

        class Meet:
            thread_safe = True

            def __call__(self, event: HookEvent) -> None:
                if event.depth == 1:
                    barrier.wait()

        hooks = Hooks()
        hooks.on("PreToolUse", Meet())
        agent = Agent(Children(NAMES, lambda name: None, child_tools=True), str(tmp_path), hooks=hooks)
        assert agent.run("go") == "all done"
        assert not any(d.by.startswith("hook") for d in agent.data.denials)
        assert not barrier.broken
