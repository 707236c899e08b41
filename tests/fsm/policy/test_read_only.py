"""Tests for fsm.policy.read_only: the list docs/permissions.md gives is the list the code holds."""

from __future__ import annotations

import re
from pathlib import Path

from fsm.policy import read_only
from fsm.policy.commands import parse_command

DOCS = Path(__file__).resolve().parents[3] / "docs" / "permissions.md"


def documented_options() -> dict[str, set[str]]:
    """Program → the options the "What is read-only" table lists for it."""
    table: dict[str, set[str]] = {}
    for line in DOCS.read_text().split("### What is read-only", 1)[1].splitlines():
        cells = line.split(" | ")
        if not line.startswith("| `") or len(cells) != 2:
            continue
        options = set(re.findall(r"`(-[^`<]+)", cells[1]))
        for program in re.findall(r"`([^`]+)`", cells[0]):
            table[program] = {o.split("/")[0] for o in options} | {o for o in options if "/" not in o}
    return table


class TestTheDocumentedList:
    def test_every_option_that_makes_a_command_ask_is_documented(self) -> None:
        """Each program's options in _NOT_READ_ONLY_OPTIONS appear in docs/permissions.md's table."""
        documented = documented_options()
        for program, options in read_only._NOT_READ_ONLY_OPTIONS.items():
            listed = " ".join(documented.get(program, set()))
            missing = [o for o in options if o not in listed]
            assert not missing, f"docs/permissions.md does not list {program} {missing}"

    def test_every_read_only_command_is_documented(self) -> None:
        """Each name of the read-only list appears in the "What is read-only" section."""
        section = DOCS.read_text().split("### What is read-only", 1)[1].split("\n## ", 1)[0]
        missing = [name for name in read_only._READ_ONLY if f"`{name}" not in section and f"/{name}`" not in section]
        assert not missing


class TestReadOnly:
    def test_a_documented_option_makes_it_ask(self) -> None:
        """Every listed option, given, makes its program not read-only."""
        for program, options in read_only._NOT_READ_ONLY_OPTIONS.items():
            for option in options:
                line = f"{program} {'status ' if program == 'git' else ''}{option}=x a"
                (command,) = parse_command(line).commands
                assert not read_only.read_only(command), line
