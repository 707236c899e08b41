"""Tests for fsm.policy.write_targets: the file words one simple command writes, before any resolving."""

from __future__ import annotations

import pytest

from fsm.policy.commands import parse_command
from fsm.policy.shell_rules import written_paths
from fsm.policy.write_targets import runs_code, write_targets


def words(command: str) -> list[str | None]:
    """The target words of every simple command of *command*, a git repository's config being `CFG`."""
    found: list[str | None] = []
    for simple in parse_command(command).commands:
        found += [t.word for t in write_targets(simple, git_config=lambda here: f"{here}/CFG")]
    return found


class TestWriteTargets:
    @pytest.mark.parametrize(
        ("command", "expected"),
        [
            ("echo x > a", ["a"]),
            ("echo x 2>&1 >> a", ["a"]),
            ("echo x > /dev/null", []),
            ("cat < a", []),
            ("tee -a a b", ["a", "b"]),
            ("cp -r s1 s2 dest", ["dest"]),
            ("cp -t dest s1", ["dest"]),
            ("cp -tdest s1", ["dest"]),
            ("cp --target-directory=dest s1", ["dest"]),
            ("mv s dest", ["dest", "s"]),
            ("ln -s src link", ["link", "src"]),
            ("install -d d1 d2", ["d1", "d2"]),
            ("sed -n p a", []),
            ("sed -i -e s/x/y/ a", ["a"]),
            ("sed -i s/x/y/ a", ["a"]),  # the first operand is the script, not a file
            ("awk -i inplace '{print}' a", ["a"]),
            ("chmod 600 a", ["a"]),  # the mode is no file
            ("tree -o t.txt", ["t.txt"]),
            ("find . -fprint f.txt", ["f.txt"]),
            ("touch -d yesterday a", ["a"]),
            ("dd if=a of=b", ["b"]),
            ("curl -fsSLo a https://example.invalid", ["a"]),
            ("git config a.b c", ["./CFG"]),
            ("git config --get a.b", []),
            ("git config --global a.b c", ["~/.gitconfig"]),
            ("git -C sub config --file f a.b c", ["./sub/f"]),  # git -C changes directory first
            ("git init repo", ["./repo/.git/config"]),
            ("git status", []),
            ("echo x > $F", [None]),
            ("rm $F", ["$F", None]),
        ],
    )
    def test_words(self, command: str, expected: list[str | None]):
        """Each program's written files, as words; None where the target is known only when it runs."""
        assert words(command) == expected


class TestRunsCode:
    @pytest.mark.parametrize(
        ("command", "expected"),
        [
            ("python3 -c 'print(1)'", True),
            ("python3 script.py", False),
            ("python3", True),
            ("node -e 1", True),
            ("awk '{print > \"f\"}' a", True),
            ("awk 1 a", False),
            ("$CMD a", True),
            ("ls", False),
        ],
    )
    def test_runs_code(self, command: str, expected: bool):
        """Interpreters given code on their command line or input, and unknown programs, run code."""
        (simple,) = parse_command(command).commands
        assert runs_code(simple) is expected


class TestWrittenPaths:
    @pytest.mark.parametrize(
        ("command", "expected"),
        [
            ("ln -s /usr/bin/python3 py", ["py"]),  # a link's source is not written now
            ("curl -o out.txt https://example.invalid", ["out.txt"]),
            ("echo x > $F", []),
            ("sed -i s/x/y/ a", ["a"]),
        ],
    )
    def test_the_paths_edit_rules_and_the_boundary_judge(self, command: str, expected: list[str]) -> None:
        """written_paths is write_targets' words, without link sources or targets known only when they run."""
        (simple,) = parse_command(command).commands
        assert written_paths(simple) == expected
