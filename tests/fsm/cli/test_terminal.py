"""Tests for fsm.cli.terminal: the approval prompt and the retry notice, on the terminal's stderr."""

from __future__ import annotations

import io

import pytest

from fsm.cli.terminal import print_retry, terminal_approver
from fsm.policy.chain import Remember
from fsm.policy.hooks import Ask


class TestTerminalApprover:
    @pytest.mark.parametrize(
        ("answer", "allowed"),
        [
            ("y\n", True),
            ("yes\n", True),
            (" YES \n", True),
            ("n\n", False),
            ("\n", False),
            ("sure\n", False),
            ("", False),
        ],
    )
    def test_only_y_or_yes_allow(self, answer: str, allowed: bool) -> None:
        """Only y/yes (any case) allow; anything else, or end of input, denies."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO(answer), stderr=err)
        assert approve({"name": "bash", "input": {"command": "rm x"}}, Ask("destructive command: rm x")) is allowed
        assert err.getvalue().startswith(
            "\n[Permission] bash needs approval: destructive command: rm x\n  $ rm x\nAllow? [y/N/a] "
        )

    def test_a_remembers_the_offered_rule(self) -> None:
        """``a`` allows and hands back the offered rule for the session, saying which it added."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO("a\n"), stderr=err)
        ask = Ask("`pytest -k x` is not a built-in read-only command", ("Bash(pytest:*)",))
        assert approve({"name": "bash", "input": {"command": "pytest -k x"}}, ask) == Remember(("Bash(pytest:*)",))
        assert err.getvalue().endswith("Allow? [y/N/a] [Permission] added for this session: Bash(pytest:*)\n")

    def test_a_without_a_rule_allows_once(self) -> None:
        """When no rule can cover the call, ``a`` allows it once and says so."""
        err = io.StringIO()
        approve = terminal_approver(stdin=io.StringIO("a\n"), stderr=err)
        assert approve({"name": "bash", "input": {"command": "eval x"}}, Ask("eval")) is True
        assert err.getvalue().endswith("no rule can cover this call; allowed once\n")


def test_print_retry(capsys: pytest.CaptureFixture[str]) -> None:
    """A retry notice is one agentfsm line on stderr, stdout untouched."""
    print_retry("the model is overloaded; retrying in 2 s (1 of 2)")
    assert capsys.readouterr() == ("", "agentfsm: the model is overloaded; retrying in 2 s (1 of 2)\n")
