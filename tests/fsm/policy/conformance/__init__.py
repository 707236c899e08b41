"""The conformance corpus: bash commands and file edits judged by the real Claude Code, kept as data.

``template.py`` builds the throwaway workspace and home every case runs in, ``cases.py``,
``holdout_cases.py`` and ``holdout2_cases.py`` say the cases, ``record.py`` asks the real ``claude`` CLI for
its verdicts (against the loopback fake model, inside bubblewrap) and writes ``corpus.jsonl`` /
``holdout.jsonl`` / ``holdout2.jsonl``, ``stricter.txt`` lists where agentfsm asks or denies what Claude Code
allows, with the reason, and ``measure.py`` compares agentfsm's policy with the recorded verdicts (used by
``tests/fsm/policy/test_conformance.py`` for the main corpus; the hold-outs are measured, not asserted).
"""
