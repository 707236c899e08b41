"""The model checker: every reachable configuration of a run, built from the machine's table, and the properties
proved on them (``agentfsm check``).

:mod:`~fsm.checker.space` is the configuration space and one step of the exact system, read from
``fsm.core.machine``'s table and ``fsm.core.guards``; :mod:`~fsm.checker.reduced` the reduced search (persistent
sets) that proves the defaults in seconds; :mod:`~fsm.checker.search` explores and proves. The checker sits above
``fsm.core``, which knows nothing of it.
"""

from fsm.checker.search import Bounds, Report, check, check_inductive, explore

__all__ = ["Bounds", "Report", "check", "check_inductive", "explore"]
