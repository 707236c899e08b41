"""What the batch's fork server (:mod:`fsm.batch.launch`) runs when it starts: it dies with the driver that started it
(``PR_SET_PDEATHSIG``: SIGKILL, so a driver killed with ``kill -9`` takes it along, and each agent forked from it,
which dies with its own parent, with it), then imports :data:`MODULES`, what an ``agentfsm -p`` run imports, so each
agent forked from it starts with them loaded. Importing this module is its whole job; only the fork server does."""

import ctypes
import importlib
import signal

MODULES = (
    "asyncio",
    "fsm.cli.app",
    "fsm.cli.diagram",
    "fsm.cli.headless",
    "fsm.cli.options",
    "fsm.cli.result",
    "fsm.cli.run_session",
    "fsm.cli.terminal",
    "fsm.core.agent",
    "fsm.model.anthropic",
    "fsm.model.wire",
    "fsm.session.journal",
    "fsm.session.restore",
    "fsm.session.transcript",
    "fsm.view.messages",
    "fsm.view.stream",
    "fsm.view.tasks",
    "genai_prices",  # a run imports it only when its price cache misses: the first tasks of a batch do
    "httpx2",  # the model's HTTP client, imported at the first call
)
"""The modules a stream-json ``agentfsm -p`` run imports (``python -X importtime``), the light ones left out."""

ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
for name in MODULES:
    importlib.import_module(name)
