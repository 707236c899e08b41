"""``python -m fsm``: the same as the ``agentfsm`` command."""

import sys

from fsm.cli import main

sys.exit(main())
