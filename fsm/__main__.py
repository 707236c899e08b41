"""``python -m fsm``: the same as the ``agentfsm`` command."""

import sys

from fsm.cli.app import main

sys.exit(main())
