"""Run the debugger on a terminal over an agent with a scripted model: ``python debug_target.py SCENARIO WORKDIR``.

The pseudo-terminal tests in ``test_debugger.py`` spawn this script (``agentfsm debug`` itself needs a real
model). Each scenario queues its prompt, so the first ``step`` sends it.
"""

from __future__ import annotations

import sys
import time

from fsm.cli.debugger import Debugger
from fsm.core.agent import Agent
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _slow(request: object) -> dict:
    time.sleep(60)
    return text_reply("too late")


SCENARIOS = {
    # the parent delegates; the child runs bash, then answers; the parent answers
    "subagent": [
        tool_reply(tool_use("task", {"prompt": "create child.txt"}, id="toolu_task")),
        tool_reply(tool_use("bash", {"command": "touch child.txt"}, id="toolu_child_bash")),
        text_reply("child made child.txt"),
        text_reply("all done"),
    ],
    # two tools in one reply: bash creates a file, write_file writes one
    "tools": [
        tool_reply(
            tool_use("bash", {"command": "touch bash_ran.txt"}, id="toolu_bash"),
            tool_use("write_file", {"path": "written.txt", "content": "hi"}, id="toolu_write"),
        ),
        text_reply("done"),
    ],
    # a model call that takes a minute: for Ctrl-C
    "slow": [_slow],
}


def main() -> int:
    scenario, workdir = sys.argv[1], sys.argv[2]
    agent = Agent(
        ScriptedModel(SCENARIOS[scenario]),
        workdir,
        permissions=Policy(allow=(parse_rule("Bash(touch:*)"), parse_rule("Edit"))),
    )
    agent.send(f"scenario {scenario}")
    return Debugger(agent).run()


if __name__ == "__main__":
    sys.exit(main())
