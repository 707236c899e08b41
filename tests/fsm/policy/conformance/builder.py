"""How the corpora are written down: :class:`Corpus` turns commands × modes × rules into case dicts.

A case: ``id`` (family and number, stable: append, never renumber), ``family``, ``tool`` (``Bash``,
``Write`` or ``Edit``), ``command`` (Bash) or ``path`` (relative to the workspace, or ``~/…``) with
``content`` (Write) or ``old`` / ``new`` (Edit), ``mode``, the rules ``allow`` / ``ask`` / ``deny`` (Claude
Code's syntax, as a ``--settings`` file holds them), ``safe`` (an everyday command a user expects to run: a
refusal counts as a safe command refused) and ``solo`` (it writes, so it gets its own run and workspace).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from attrs import Factory, define

__all__ = ["DEFAULT", "THREE", "Corpus"]

DEFAULT = ("default",)
THREE = ("default", "acceptEdits", "bypassPermissions")


@define
class Corpus:
    """The cases, in the order they were added."""

    cases: list[dict[str, Any]] = Factory(list)
    _counts: dict[str, int] = Factory(dict)

    def _add(self, family: str, case: dict[str, Any]) -> None:
        self._counts[family] = self._counts.get(family, 0) + 1
        self.cases.append({"id": f"{family}-{self._counts[family]:03d}", "family": family, **case})

    def bash(
        self,
        family: str,
        commands: Iterable[str],
        *,
        modes: Iterable[str] = DEFAULT,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        safe: bool = False,
        solo: bool = False,
    ) -> None:
        """One Bash case per command and mode."""
        for command in commands:
            for mode in modes:
                rules = {"allow": list(allow), "ask": list(ask), "deny": list(deny)}
                self._add(
                    family, {"tool": "Bash", "command": command, "mode": mode, **rules, "safe": safe, "solo": solo}
                )

    def write(
        self,
        family: str,
        paths: Iterable[str],
        *,
        modes: Iterable[str] = THREE,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        tool: str = "Write",
        old: str = "",
        new: str = "",
        safe: bool = False,
    ) -> None:
        """One Write (of ``x = 1``; or an Edit of *old* to *new*) per path and mode, each in its own run."""
        for path in paths:
            for mode in modes:
                body = {"content": "x = 1\n"} if tool == "Write" else {"old": old, "new": new}
                rules = {"allow": list(allow), "ask": [], "deny": list(deny)}
                self._add(
                    family, {"tool": tool, "path": path, **body, "mode": mode, **rules, "safe": safe, "solo": True}
                )
