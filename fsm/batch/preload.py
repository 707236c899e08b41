"""What the batch's fork server (:mod:`fsm.batch.launch`) runs when it starts: it dies with the driver that started it
(``PR_SET_PDEATHSIG``: SIGKILL, so a driver killed with ``kill -9`` takes it along, and each agent forked from it,
which dies with its own parent, with it), then imports the modules an ``agentfsm -p`` run imports, so each agent
forked from it starts with them loaded. Importing this module is its whole job; only the fork server does."""

import ctypes
import signal

ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

import fsm.cli.app  # noqa: E402
import fsm.cli.headless  # noqa: E402
import fsm.cli.options  # noqa: E402
import fsm.cli.result  # noqa: E402
import fsm.cli.run_session  # noqa: E402
import fsm.core.agent  # noqa: E402
import fsm.model.anthropic  # noqa: E402
import fsm.session.journal  # noqa: E402
import fsm.session.restore  # noqa: E402, F401
