"""One word of a bash command after expansion and quote removal, as far as it is known before it runs.

``$HOME`` and ``${HOME}`` expand to the home directory (they are literals); quotes and backslashes are removed;
an unquoted ``*``, ``?`` or ``[`` makes the word a glob, whose pattern keeps quoted parts escaped. Any other
parameter expansion, a substitution, arithmetic, brace expansion, ANSI-C quoting (``$'…'``) or a tilde prefix other
than ``~`` alone (``~+``, ``~user``) leaves the word not a literal, saying why.
The parser (``fsm.policy.commands``) calls :func:`expand` on each word of the tree-sitter syntax tree.
"""

from __future__ import annotations

import codecs
import glob
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from attrs import frozen

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["EXPANSIONS", "Word", "clip", "descendants", "expand", "has", "text_of"]

_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_ARITHMETIC = frozenset({"arithmetic_expansion"})
_SPECIAL = re.compile(r"[\\*?\[{]")
"""What makes a plain word need a closer look: a backslash, a glob or brace character."""


@frozen
class Word:
    """One word of a command, as far as it is known before it runs."""

    text: str
    """The word after expansion (``$HOME``, ``${HOME}``) and quote removal."""
    static: bool = True
    """Whether nothing in it is expanded when it runs."""
    substituted: str | None = None
    """What in the word runs code when it is expanded (a command substitution …), or None."""
    unknown: str | None = None
    """Why the word's value is not known before it runs (``$X`` is expanded …), or None for a literal."""
    glob: str | None = None
    """The word as a glob pattern (quoted parts escaped) when an unquoted ``*``, ``?`` or ``[`` makes it one."""


EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)


_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_CHARS = re.compile(r"[*?\[]")
_TILDE = re.compile(r"~[^/:]+")
"""A tilde prefix that is not the home directory alone: ``~+``, ``~-``, ``~user``."""


class _Expanded:
    """A word's text after expansion and quote removal, as far as it is known before it runs: ``$HOME`` and
    ``${HOME}`` become the home directory; any other expansion leaves :attr:`unknown` set."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.parts: list[str] = []
        self.pattern: list[str] = []
        """The word as a glob pattern: quoted parts escaped."""
        self.bare = ""
        """The unquoted literal parts, for spotting brace expansion."""
        self.globbed = False
        self.unknown: str | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def literal(self, text: str, *, quoted: bool) -> None:
        self.parts.append(text)
        self.pattern.append(glob.escape(text) if quoted else text)

    def add(self, node: Node, *, quoted: bool) -> None:
        kind = node.type
        text = text_of(node)
        if kind == "raw_string":
            self.literal(text[1:-1], quoted=True)
        elif kind == "ansi_c_string":  # $'…': escapes decoded when it runs; Claude Code asks about it too
            try:
                self.literal(codecs.decode(text[2:-1], "unicode_escape"), quoted=True)
            except UnicodeDecodeError:
                self.literal(text, quoted=True)
            self.unknown = self.unknown or f"ANSI-C quoting {clip(text)} is decoded when it runs"
        elif kind in ("string", "translated_string", "heredoc_body"):
            for child in node.named_children:
                if child.type == "string_content":
                    self.literal(re.sub(r'\\([$`"\\\n])', r"\1", text_of(child)), quoted=True)
                else:
                    self.add(child, quoted=True)
            if not node.named_children and kind == "heredoc_body":
                self.literal(text, quoted=True)
        elif kind == "concatenation":
            for child in node.children:
                self.add(child, quoted=quoted)
        elif kind in ("simple_expansion", "expansion"):
            if text in ("$HOME", "${HOME}"):
                self.literal(self.home, quoted=True)
            else:
                self.literal(text, quoted=True)
                self.unknown = self.unknown or f"{clip(text)} is expanded when it runs"
        elif kind in EXPANSIONS:
            self.literal(text, quoted=True)
            self.unknown = self.unknown or f"{clip(text)} is expanded when it runs"
        elif kind == "brace_expression":
            self.literal(text, quoted=True)
            self.unknown = self.unknown or f"brace expansion in {clip(text)!r} happens when it runs"
        elif kind == "word" and not quoted:
            if not self.parts and _TILDE.match(text):
                self.unknown = self.unknown or f"tilde expansion {clip(text)} happens when it runs"
            unescaped = re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.DOTALL)
            self.parts.append(unescaped)
            # a backslash-escaped character is literal; the rest may glob
            pieces = re.split(r"(\\.)", text.replace("\\\n", ""), flags=re.DOTALL)
            for piece in pieces:
                if piece.startswith("\\") and len(piece) == 2:
                    self.pattern.append(glob.escape(piece[1]))
                else:
                    self.pattern.append(piece)
                    self.bare += piece
                    self.globbed = self.globbed or _GLOB_CHARS.search(piece) is not None
        else:
            self.literal(text, quoted=True)
            if has(node, EXPANSIONS):
                self.unknown = self.unknown or f"{clip(text)} is expanded when it runs"


def expand(node: Node, *, home: str) -> Word:
    """The word *node* after expansion and quote removal, as far as it is known before it runs (a substitution
    inside it is the caller's to parse)."""
    if node.type == "word":
        text = text_of(node)
        tilde = _TILDE.match(text)
        if tilde is not None:  # ~+ ($PWD), ~- ($OLDPWD), ~user: only ~ and ~/… are the home directory
            return Word(text, static=False, unknown=f"tilde expansion {clip(tilde.group(0))} happens when it runs")
        if not _SPECIAL.search(text):  # the common case: a plain word
            return Word(text)
    if has(node, _ARITHMETIC):
        return Word(text_of(node), static=False, substituted="arithmetic expansion")
    expanded = _Expanded(home)
    expanded.add(node, quoted=False)
    unknown = expanded.unknown
    if unknown is None and _BRACES.search(expanded.bare):
        unknown = f"brace expansion in {clip(text_of(node))!r} happens when it runs"
    if unknown is None and has(node, _SUBSTITUTIONS):
        unknown = "a substitution is expanded when it runs"
    pattern = "".join(expanded.pattern) if expanded.globbed else None
    return Word(expanded.text, unknown is None, None, unknown, pattern)


def descendants(node: Node, kinds: frozenset[str]) -> Iterator[Node]:
    """The outermost descendants of *node* (itself included) whose type is in *kinds*."""
    if node.type in kinds:
        yield node
        return
    for child in node.children:
        yield from descendants(child, kinds)


def has(node: Node, kinds: frozenset[str]) -> bool:
    return next(descendants(node, kinds), None) is not None


def text_of(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
