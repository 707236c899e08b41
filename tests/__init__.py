"""The agentfsm test suite (a package, so test modules and the ``tools`` package never clash)."""
