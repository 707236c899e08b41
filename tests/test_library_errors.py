"""Library errors speak in library words: no ``raise`` in the library packages (core, model, policy, checker,
session) names a CLI flag (``--session-db``) or an ``agentfsm`` command; the CLI adds that wording when it prints.

The raise statements are read with ``ast`` (string constants and the literal parts of f-strings, the
exception's arguments included), so a message built inline is checked wherever it sits.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("fsm/compaction", "fsm/skills", "fsm/core", "fsm/model", "fsm/policy", "fsm/checker", "fsm/session")
CLI_WORDS = re.compile(r"--[A-Za-z]|\bagentfsm\b")
"""A flag (``--`` then a letter) or the command's name."""


def cli_wording(source: str, filename: str) -> list[str]:
    """``file:line: text`` for every string in a ``raise`` statement of *source* that uses CLI words."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not isinstance(node, ast.Raise):
            continue
        for part in ast.walk(node):
            if isinstance(part, ast.Constant) and isinstance(part.value, str) and CLI_WORDS.search(part.value):
                found.append(f"{filename}:{part.lineno}: {part.value!r}")
    return found


def _library_sources() -> list[Path]:
    return sorted(path for folder in LIBRARY for path in (ROOT / folder).rglob("*.py"))


class TestLibraryErrors:
    def test_no_cli_wording_in_library_raises(self):
        """No exception raised in a library package mentions a --flag or agentfsm."""
        problems = [
            line for path in _library_sources() for line in cli_wording(path.read_text(), str(path.relative_to(ROOT)))
        ]
        assert problems == []

    @pytest.mark.parametrize(
        "source",
        [
            'raise ValueError("pass --session-db with another path")\n',
            'def f(sid):\n    raise KeyError(f"see agentfsm sessions list for {sid}")\n',
            'raise JournalError(msg="x", hint="--resume it")\n',
        ],
    )
    def test_cli_wording_is_caught(self, source):
        """A flag or the command's name in a raised message, f-string or keyword argument is reported."""
        assert len(cli_wording(source, "probe.py")) == 1

    @pytest.mark.parametrize(
        "source",
        [
            'raise ValueError(f"max_turns must be 1..30 (got {n})")\n',
            'raise ValueError(f"{a} --{t}--> {b}")\n',
            'print("--verbose agentfsm")\n',
        ],
    )
    def test_library_words_pass(self, source):
        """Parameter names, edges drawn as --trigger--> and strings outside raise statements pass."""
        assert cli_wording(source, "probe.py") == []
