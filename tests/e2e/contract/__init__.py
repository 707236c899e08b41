"""The CLI contract corpus: ``claude -p`` scenarios recorded from the real Claude Code, compared with agentfsm."""
