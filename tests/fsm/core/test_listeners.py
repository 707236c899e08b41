"""Tests for fsm.core.listeners: one registry per agent tree, records in seq order, progress under the tree's lock."""

from __future__ import annotations

import threading
from pathlib import Path

import attrs

from fsm.core.agent import Agent
from fsm.core.listeners import Listeners
from fsm.core.progress import Progress
from fsm.core.records import Transition
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools.processes import ToolProcess

RECORD = Transition(1, "a1", None, 0, "idle", "prompt", "awaiting_model", 0)


def held_elsewhere(lock: threading.RLock) -> bool:
    """Whether another thread holding *lock* right now would have to wait for it."""
    free: list[bool] = []

    def probe() -> None:
        got = lock.acquire(blocking=False)
        if got:
            lock.release()
        free.append(got)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return not free[0]


class TestListeners:
    def test_subscribers_get_each_record_in_order_until_they_unsubscribe(self) -> None:
        """record() hands a record to every subscriber in the order they came; an unsubscribed one hears no more."""
        listeners, heard = Listeners(threading.RLock()), []
        listeners.subscribe(lambda r: heard.append(("first", r.seq)))
        stop = listeners.subscribe(lambda r: heard.append(("second", r.seq)))
        listeners.record(RECORD)
        stop()
        listeners.record(attrs.evolve(RECORD, seq=2))
        assert heard == [("first", 1), ("second", 1), ("first", 2)]

    def test_a_listener_may_unsubscribe_itself_while_told(self) -> None:
        """A listener that unsubscribes while it is told skips nobody after it."""
        listeners, heard = Listeners(threading.RLock()), []
        stop = listeners.subscribe(lambda r: (heard.append("once"), stop()))
        listeners.subscribe(lambda r: heard.append("always"))
        listeners.record(RECORD)
        listeners.record(RECORD)
        assert heard == ["once", "always", "always"]

    def test_seq_counts_from_where_it_starts(self) -> None:
        """seq numbers from first_seq on, one by one."""
        assert [next(Listeners(threading.RLock()).seq) for _ in range(2)] == [1, 1]
        seq = Listeners(threading.RLock(), first_seq=8).seq
        assert [next(seq), next(seq), next(seq)] == [8, 9, 10]

    def test_progress_is_told_under_the_trees_lock(self) -> None:
        """tell() builds the Progress and hands it on while holding the lock, so no other thread commits then."""
        lock = threading.RLock()
        listeners, heard = Listeners(lock), []
        listeners.watch_progress(lambda p: heard.append((p, held_elsewhere(lock))))
        listeners.tell("tool_call", "a1.2", 1, tool_call={"id": "t1"})
        listeners.tell_event("a1", 0, {"type": "message_start"})
        assert heard == [
            (Progress("tool_call", "a1.2", 1, tool_call={"id": "t1"}), True),
            (Progress("stream", "a1", 0, event={"type": "message_start"}), True),
        ]
        assert not held_elsewhere(lock)

    def test_process_listeners_hear_the_agent_and_the_call(self) -> None:
        """tell_processes() passes the agent's id, the tool_use id, the process and whether it runs."""
        listeners, heard = Listeners(threading.RLock()), []
        stop = listeners.watch_processes(lambda *told: heard.append(told))
        process = ToolProcess.started(12345, "tag")
        listeners.tell_processes("a1.1", "t9", process, True)
        stop()
        listeners.tell_processes("a1.1", "t9", process, False)
        assert heard == [("a1.1", "t9", process, True)]


class TestSharedByTheTree:
    def test_a_subagent_is_heard_through_its_roots_registry(self, tmp_path: Path) -> None:
        """One subscription on the root hears the subagent's transitions too, numbered 1..N without a gap."""
        script = [
            tool_reply(tool_use("task", {"prompt": "look"})),
            text_reply("looked"),
            text_reply("done"),
        ]
        agent = Agent(ScriptedModel(script), str(tmp_path))
        heard: list[Transition] = []
        agent.subscribe(heard.append)
        agent.send("go")
        while not agent.children:
            agent.step()
        assert agent.children[0]._listeners is agent._listeners
        agent.run()
        assert [r.seq for r in heard] == list(range(1, len(heard) + 1))
        assert {r.agent for r in heard} == {agent.agent_id, f"{agent.agent_id}.1"}
        assert heard == agent.history

    def test_restore_numbers_on_from_next_seq(self, tmp_path: Path) -> None:
        """A restored agent's next record is numbered next_seq."""
        data = Agent(ScriptedModel(), str(tmp_path)).data
        agent = Agent.restore(ScriptedModel([text_reply("hi")]), str(tmp_path), data, next_seq=41)
        agent.send("go")
        assert [agent.step().seq, agent.step().seq] == [41, 42]
