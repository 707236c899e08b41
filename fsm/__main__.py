"""``python -m fsm``: the same as the ``agentfsm`` command."""

from fsm.cli.app import entry

entry()
