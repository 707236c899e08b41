"""MCP tools under the permission policy: Claude Code's rule names, ask by default, the modes, hidden tools."""

from __future__ import annotations

import pytest

from fsm.policy.judge import Policy
from fsm.policy.rules import RuleError, mcp_covers, parse_rule
from tools import Workspace


def _policy(mode: str = "default", **rules: list[str]) -> Policy:
    parsed = {kind: tuple(parse_rule(r) for r in texts) for kind, texts in rules.items()}
    return Policy(mode=mode, **parsed)


def _decide(policy: Policy, name: str, tmp_path: object) -> str:
    return policy.decide({"name": name, "input": {}}, Workspace(str(tmp_path))).behavior


class TestCovers:
    @pytest.mark.parametrize(
        ("rule", "tool", "covered"),
        [
            ("mcp__s", "mcp__s__t", True),
            ("mcp__s__*", "mcp__s__t", True),
            ("mcp__s__t", "mcp__s__t", True),
            ("mcp__s__t", "mcp__s__u", False),
            ("mcp__s", "mcp__other__t", False),
            ("mcp__s", "mcp__s2__t", False),
            ("mcp__*", "mcp__any__t", True),
            ("mcp__s", "bash", False),
        ],
    )
    def test_rule_names(self, rule: str, tool: str, covered: bool) -> None:
        """A server-level rule covers each tool of its server; a tool rule only that tool; mcp__* every one."""
        assert mcp_covers(rule, tool) is covered
        assert parse_rule(rule).covers(tool) is covered

    def test_a_star_only_ends_an_mcp_rule(self) -> None:
        """Bash* is refused: only an MCP rule ends its name with '*'."""
        with pytest.raises(RuleError, match="only an MCP rule ends its name with"):
            parse_rule("Bash*")


class TestDecide:
    def test_asks_by_default(self, tmp_path: object) -> None:
        """An MCP tool asks in default mode, and in acceptEdits."""
        assert _decide(_policy(), "mcp__s__t", tmp_path) == "ask"
        assert _decide(_policy("acceptEdits"), "mcp__s__t", tmp_path) == "ask"

    def test_modes(self, tmp_path: object) -> None:
        """plan denies an MCP tool; bypassPermissions allows it."""
        assert _decide(_policy("plan"), "mcp__s__t", tmp_path) == "deny"
        assert _decide(_policy("bypassPermissions"), "mcp__s__t", tmp_path) == "allow"

    def test_rules(self, tmp_path: object) -> None:
        """Allow rules allow (server or tool level), deny beats allow, ask rules ask even when allowed;
        mcp__* in allow allows nothing."""
        assert _decide(_policy(allow=["mcp__s"]), "mcp__s__t", tmp_path) == "allow"
        assert _decide(_policy(allow=["mcp__s__t"]), "mcp__s__u", tmp_path) == "ask"
        assert _decide(_policy(allow=["mcp__s"], deny=["mcp__s__t"]), "mcp__s__t", tmp_path) == "deny"
        assert _decide(_policy(allow=["mcp__s"], ask=["mcp__s__*"]), "mcp__s__t", tmp_path) == "ask"
        assert _decide(_policy(allow=["mcp__*"]), "mcp__s__t", tmp_path) == "ask"
        assert _decide(_policy("bypassPermissions", deny=["mcp__s"]), "mcp__s__t", tmp_path) == "deny"

    def test_bare_deny_hides(self) -> None:
        """A bare deny rule naming the tool, its server or every MCP tool takes it away."""
        assert _policy(deny=["mcp__s"]).hides("mcp__s__t")
        assert _policy(deny=["mcp__*"]).hides("mcp__s__t")
        assert not _policy(deny=["mcp__s__u"]).hides("mcp__s__t")
