"""What the CLI's unit tests share: a run's flags parsed as ``agentfsm run`` has them."""

from __future__ import annotations

import argparse

from fsm.cli.flags import add_agent_flags, add_output_flags, add_session_flags


def parse(*argv: str) -> argparse.Namespace:
    """The namespace of a run's flags (the output, agent and session flags, as ``agentfsm run`` has them)."""
    parser = argparse.ArgumentParser()
    add_output_flags(parser)
    add_agent_flags(parser)
    add_session_flags(parser)
    return parser.parse_args(list(argv))
