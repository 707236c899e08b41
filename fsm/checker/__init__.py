"""The model checker: every reachable configuration of a run, built from the machine's table, and the properties
proved on them (``agentfsm check``).

:mod:`~fsm.checker.space` is the configuration space and one step of the exact system, read from
``fsm.core.machine``'s table and ``fsm.core.guards``; :mod:`~fsm.checker.reduced` the reduced search (persistent
sets) that proves the defaults in seconds; :mod:`~fsm.checker.search` explores and proves. The checker sits above
``fsm.core``, which knows nothing of it.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fsm.checker.search import Bounds, Report, check, check_inductive, explore
else:  # each name loads on first use (PEP 562), so a command imports only what it uses
    import lazy_loader

    __getattr__, __dir__, _ = lazy_loader.attach(
        __name__,
        submod_attrs={
            "search": ["Bounds", "Report", "check", "check_inductive", "explore"],
        },
    )

__all__ = ["Bounds", "Report", "check", "check_inductive", "explore"]
