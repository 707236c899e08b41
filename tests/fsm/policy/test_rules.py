"""Tests for fsm.policy.rules: Claude Code's rule syntax, parse errors, and matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.policy.rules import RuleError, parse_rule, split_rules


class TestParseRule:
    @pytest.mark.parametrize(
        ("text", "tool", "specifier"),
        [
            ("Bash", "bash", None),
            ("Bash(*)", "bash", None),
            ("Bash(npm run:*)", "bash", "npm run:*"),
            ("Read(./.env)", "read_file", "./.env"),
            ("Edit(src/**)", "edit_file", "src/**"),
            ("Write", "write_file", None),
            ("Glob(*.py)", "glob", "*.py"),
            ("Task", "task", None),
            ("Agent", "task", None),
            ("read_file", "read_file", None),
            ("WebFetch(domain:x.com)", "WebFetch", "domain:x.com"),
            ("Bash(echo (a))", "bash", "echo (a)"),
        ],
    )
    def test_names_and_specifiers(self, text: str, tool: str, specifier: str | None) -> None:
        """Claude Code's names and ours map to our tools; other tools parse but are not known; (*) is bare."""
        rule = parse_rule(text)
        assert (rule.tool, rule.specifier) == (tool, specifier)
        assert rule.known == (tool != "WebFetch")

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", "rule '' is empty: write Tool or Tool(specifier), e.g. Bash(git diff:*)"),
            ("Bash(git diff:*", "rule 'Bash(git diff:*' has no closing ')'"),
            ("Bash(ls) x", "rule 'Bash(ls) x' has text after ')'"),
            ("Bash()", "rule 'Bash()' has an empty specifier: write Bash for every call, or Bash(...)"),
            ("Bash(a:*b)", "rule 'Bash(a:*b)' uses ':*' before the end; ':*' only ends a prefix, e.g. Bash(npm run:*)"),
            ("Bash(a))", "rule 'Bash(a))' has unbalanced parentheses"),
            ("9lives", "rule '9lives' must be Tool or Tool(specifier), e.g. Bash(git diff:*) or Read(./.env)"),
        ],
    )
    def test_errors_say_what_is_wrong(self, text: str, message: str) -> None:
        """A malformed rule raises RuleError naming the rule and the problem."""
        with pytest.raises(RuleError) as info:
            parse_rule(text)
        assert str(info.value) == message


class TestBashMatching:
    @pytest.mark.parametrize(
        ("rule", "command", "matches"),
        [
            ("Bash(npm run build)", "npm run build", True),
            ("Bash(npm run build)", "npm run build x", False),
            ("Bash(npm run:*)", "npm run", True),
            ("Bash(npm run:*)", "npm run test", True),
            ("Bash(npm run:*)", "npm runner", False),
            ("Bash(git * main)", "git push origin main", True),
            ("Bash(git * main)", "git push origin dev", False),
            ("Bash(ls *)", "ls", True),
            ("Bash(ls *)", "ls -la", True),
            ("Bash(ls *)", "lsof", False),
            ("Bash(ls*)", "lsof", True),
            ("Bash", "anything at all", True),
            ("Bash(npm  run:*)", "npm run x", True),
        ],
    )
    def test_exact_prefix_and_glob(self, rule: str, command: str, matches: bool) -> None:
        """Exact, prefix at a word boundary, glob with an optional lone trailing ' *'."""
        assert parse_rule(rule).matches_command(command) is matches


class TestPathMatching:
    @pytest.mark.parametrize(
        ("rule", "path", "matches"),
        [
            ("Read(./.env)", "/p/.env", True),
            ("Read(./.env)", "/p/sub/.env", False),
            ("Read(.env)", "/p/sub/.env", True),
            ("Edit(src/**)", "/p/src/a/b.py", True),
            ("Edit(src/**)", "/p/lib/src/a.py", False),
            ("Edit(/src/*.py)", "/p/src/a.py", True),
            ("Read(*.env)", "/p/a/b.env", True),
            ("Read(//etc/**)", "/etc/passwd", True),
            ("Read(//etc/**)", "/p/etc/x", False),
            ("Read(~/.ssh/**)", "/home/u/.ssh/id", True),
            ("Read(~/.ssh/**)", "/p/.ssh/id", False),
            ("Read(secrets/)", "/p/secrets/k", True),
            ("Read(./.env)", "/elsewhere/.env", False),
        ],
    )
    def test_gitignore_style(self, rule: str, path: str, matches: bool) -> None:
        """Paths match gitignore-style from the rule's anchor: the project, //root, or ~."""
        assert parse_rule(rule, base=Path("/p")).matches_path(path, home=Path("/home/u")) is matches

    def test_edit_covers_write(self) -> None:
        """An Edit rule is about write_file too; a Write rule only about write_file."""
        assert parse_rule("Edit").covers("write_file") and parse_rule("Edit").covers("edit_file")
        assert not parse_rule("Write").covers("edit_file")


class TestSplitRules:
    def test_commas_and_spaces_outside_parentheses(self) -> None:
        """The CLI's lists split on commas and spaces, never inside a rule's parentheses."""
        assert split_rules("Bash(git diff:*) Read,Edit(src/**),  Bash(npm run build)") == [
            "Bash(git diff:*)",
            "Read",
            "Edit(src/**)",
            "Bash(npm run build)",
        ]
