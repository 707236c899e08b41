"""The core layer: the machine's table, the records (and their one-line text), the reducer, the model boundary,
hooks, permissions, prompts, the agent.

Nothing here imports ``fsm.session``, ``fsm.view`` or ``fsm.cli``; ``tools`` sits below it.
"""
