"""Tests for fsm.core.listeners: one registry per agent tree, records in seq order, progress under the tree's lock."""

from __future__ import annotations

import threading

import attrs

from fsm.core.listeners import Listeners
from fsm.core.progress import Progress
from fsm.core.records import Transition
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
