"""A bash command line, parsed into the simple commands it runs (tree-sitter's bash grammar).

:func:`parse_command` walks the syntax tree through ``&&``, ``||``, ``;``, ``|``, subshells, ``{ }``,
``if``/``for``/``while``/``case``, functions and redirections (a statement of only redirections, ``> f``, is a
command with no words), and returns every simple command with its words after quote removal (``s""udo`` is
``sudo``, ``\\rm`` is ``rm``) twice: as written (:attr:`SimpleCommand.written`, what allow rules match, see
:attr:`SimpleCommand.rule_text`) and seen through (:attr:`SimpleCommand.argv`: wrappers ``env``, ``command``,
``nice``, ``time``, ``timeout`` … removed, ``/bin/rm`` named ``rm``, for the built-in rules), with its
``NAME=value`` words, redirections, globs and the directory a static ``cd`` before it left the shell in.
``$HOME`` and ``${HOME}`` are expanded (they are literals); any other expansion, substitution, arithmetic, brace
expansion or array subscript is not a literal. Commands inside command substitutions, ``bash -c STRING`` and
``eval`` are parsed too. What cannot be known before it runs is flagged in :attr:`SimpleCommand.dynamic` (a word
that is not a literal, a variable as the command, ``eval``, ``bash -c``, ``xargs``, ``find -exec``, an
interpreter given code, a here-document into one). A line the grammar cannot parse has a
:attr:`ParsedCommand.problem`; one with a compound command says which in :attr:`ParsedCommand.compound`.
Nothing here decides a permission: that is ``fsm.policy.shell_rules`` and ``fsm.policy.judge``.
"""

from __future__ import annotations

import os
import re
from functools import cache, lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

from attrs import evolve, field, frozen

from fsm.policy.shell_words import EXPANSIONS, Word, clip, descendants, expand, has, text_of
from fsm.policy.wrappers import (
    SYSTEM_DIRS,
    XARGS_VALUED,
    after_options,
    option_value,
    strip_transparent,
    unwrap,
)

if TYPE_CHECKING:  # tree-sitter and its grammar load with the first command parsed, not with the policy
    from tree_sitter import Node, Parser

__all__ = ["ParsedCommand", "Redirect", "SimpleCommand", "parse_command"]

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_INLINE_CODE = {
    "python": ("-c",),
    "perl": ("-e", "-E"),
    "node": ("-e", "-p", "--eval", "--print"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "osascript": ("-e",),
    "awk": ("system(",),
}
_STRUCTURE = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "compound_statement",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "case_statement",
        "case_item",
        "do_group",
        "negated_command",
        "function_definition",
        "redirected_statement",
    }
)
_SIMPLE = frozenset(
    {"command", "declaration_command", "unset_command", "test_command", "variable_assignment", "variable_assignments"}
)
"""Nodes that are one simple command (``variable_assignments``: a line of two or more ``NAME=value``)."""
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_COMPOUNDS = {
    "subshell": "a subshell ( )",
    "compound_statement": "a { } group",
    "if_statement": "an if",
    "while_statement": "a while or until loop",
    "for_statement": "a for loop",
    "case_statement": "a case",
    "function_definition": "a function definition",
}
_MAX_DEPTH = 8
_READS_CODE = frozenset(
    {
        *_SHELLS,
        *_INLINE_CODE,
        "deno",
        "bun",
        "Rscript",
        "R",
        "julia",
        "tclsh",
        "irb",
        "sqlite3",
        "psql",
        "mysql",
        "gdb",
        "ed",
        "ex",
        "vi",
        "vim",
        "nvim",
    }
)
"""Programs that run what a here-document or here-string feeds them."""
_HEREDOC_OPS = ("<<", "<<-", "<<<")


@frozen
class Redirect:
    """One redirection of a simple command."""

    op: str
    """The operator as written: ``>``, ``>>``, ``<``, ``&>``, ``>|``, ``>&``, ``<<``, ``<<<`` …"""
    target: str | None
    """The file, after quote removal; None for a file descriptor (``2>&1``) or a target not known statically
    (a here-document's is ``""``)."""
    glob: str | None = None
    """A target that is a glob (``> .gi?/config``, which bash expands when it matches one file): the word after
    quote removal; *target* is then None."""

    @property
    def shown(self) -> bool:
        """Whether it is part of the command a rule matches: every redirection but a descriptor copy (``2>&1``)
        and ``/dev/null``, ``/dev/stdout``, ``/dev/stderr`` (harmless, and left out as Claude Code does)."""
        return self.target is not None and self.target not in _QUIET

    @property
    def writes(self) -> bool:
        """Whether it writes a file (``>``, ``>>``, ``&>``, ``>|``, ``>& file`` …), rather than reading one or
        copying a descriptor (``2>&1``, whose target is None)."""
        return self.target is not None and ">" in self.op

    @property
    def truncates(self) -> bool:
        """Whether it empties the file first (``>``, not ``>>``)."""
        return self.writes and ">>" not in self.op


@frozen
class SimpleCommand:
    """One simple command of a command line, as the shell will run it."""

    argv: tuple[str, ...]
    """The words after quote removal, wrappers removed; a system path (``/bin/rm``) is its name (``rm``)."""
    source: str
    """The command as written."""
    written: tuple[str, ...] = ()
    """The words after quote removal and nothing else: wrappers kept, the program word as written
    (``./scripts/git``, ``/usr/bin/git``). What allow rules match (see :attr:`rule_text`)."""
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[str, ...] = ()
    """``NAME=VALUE`` words before the command."""
    wrappers: tuple[str, ...] = ()
    """Wrappers seen through, in order (``env``, ``nice`` …)."""
    dynamic: str | None = None
    """Why what it runs cannot be known before it runs, or None."""
    cwd: str | None = field(default=".")
    """The directory it runs in, relative to the start (``.``) or absolute (``~`` for home), after the static
    ``cd`` commands before it; None when a ``cd`` went somewhere not known statically."""
    globs: tuple[tuple[str, str], ...] = ()
    """``(word, pattern)`` for each word the shell expands as a glob (an unquoted ``*``, ``?`` or ``[``); the
    pattern has the word's quoted parts escaped."""
    inline: str | None = None
    """The option that gives an interpreter its code on the command line (``-c`` of ``python3 -c CODE``), when
    that is what makes it :attr:`dynamic`: a rule naming the option (``Bash(python3 -c:*)``) allows it."""
    spaced: bool = True
    """Whether its words are written apart by single spaces: Claude Code matches an allow rule against the
    command as typed, so ``npm  test`` is not ``Bash(npm test)``."""

    @property
    def name(self) -> str:
        """The program's base name (``rm`` for ``/opt/x/rm``); empty for a bare assignment."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def text(self) -> str:
        """The command as the built-in rules see it: :attr:`argv` joined by single spaces, then its redirections
        (but ``2>&1`` and ``/dev/null``). Deny and ask rules match this as well as :attr:`rule_text`."""
        return " ".join((*self.argv, *self._shown()))

    @property
    def rule_text(self) -> str:
        """The command as allow rules match it, Claude Code's way: the words as written (the program word
        itself, never its base name), only the wrappers ``time``, ``timeout``, ``nice``, ``nohup`` and
        ``stdbuf`` removed, then every redirection but ``2>&1`` and ``/dev/null``."""
        return " ".join((*self.rule_words, *self._shown()))

    @property
    def rule_words(self) -> tuple[str, ...]:
        """:attr:`written` without the leading wrappers a rule sees through (see :attr:`rule_text`)."""
        return strip_transparent(self.written or self.argv)

    def pattern(self, word: str) -> str | None:
        """The glob pattern *word* is expanded as, or None when it is not a glob."""
        return next((p for w, p in self.globs if w == word), None)

    def _shown(self) -> list[str]:
        return [f"{r.op} {r.target}".rstrip() for r in self.redirects if r.shown]


@frozen
class ParsedCommand:
    """A command line: its simple commands in order, or why it could not be parsed."""

    commands: tuple[SimpleCommand, ...]
    problem: str | None = None
    """Set when the line cannot be parsed (a syntax error, or syntax we do not analyse)."""
    compound: str | None = None
    """The first compound command in the line (``a subshell ( )``, ``a { } group``, ``an if`` …), or None. Its
    parts are listed, so deny rules see them, but no rule allows the whole (Claude Code asks for them too)."""


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse_command(command: str, *, home: str | None = None) -> ParsedCommand:
    """Parse *command* (a bash command line) into its simple commands.

    Args:
        home: what ``$HOME`` and ``${HOME}`` expand to (the user's home when not given); a line that assigns
            ``HOME`` itself is not analysed.
    """
    home = home if home is not None else os.path.expanduser("~")
    if _REASSIGNS_HOME.search(command) and ("~" in command or "HOME}" in command or "$HOME" in command):
        return ParsedCommand((), "it changes HOME and names paths under it, which cannot be checked before it runs")
    walker = _Walker(home)
    try:
        walker.line(command, depth=0)
    except _Unparsed as exc:
        return ParsedCommand(tuple(walker.commands), str(exc), walker.compound)
    return ParsedCommand(tuple(walker.commands), compound=walker.compound)


@lru_cache(maxsize=512)
def _language(name: str) -> str:
    """A program's name without its version (``python3.11`` → ``python``)."""
    return re.sub(r"[\d.]+$", "", name)


class _Unparsed(Exception):
    pass


_REASSIGNS_HOME = re.compile(r"(?<![\w${])HOME\b(?!})")
_QUIET = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})


class _Walker:
    """Collects simple commands from a syntax tree, tracking the directory static ``cd`` commands leave."""

    def __init__(self, home: str) -> None:
        self.commands: list[SimpleCommand] = []
        self.cwd: str | None = "."
        self.home = home
        self.compound: str | None = None

    def line(self, text: str, *, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Unparsed("nested too deeply to analyse")
        tree = _parser().parse(text.encode())
        if tree.root_node.has_error:
            raise _Unparsed(f"cannot parse {clip(text)!r} as a shell command")
        self.statement(tree.root_node, (), depth)

    def statement(self, node: Node, redirects: tuple[Redirect, ...], depth: int) -> None:
        kind = node.type
        if kind in _SIMPLE:
            self.simple(node, redirects, depth)
        elif kind in _STRUCTURE:
            self.compound = self.compound or _COMPOUNDS.get(kind)
            if kind == "redirected_statement":
                redirects = (
                    *redirects,
                    *(self.redirect(c, depth) for c in node.children if c.type.endswith("redirect")),
                )
                if all(c.type.endswith("redirect") or c.type == "comment" for c in node.named_children):
                    # only redirections (`> f`): nothing runs, but every file is opened
                    self.commands.append(SimpleCommand((), text_of(node), redirects=redirects, cwd=self.cwd))
                    return
            for child in node.named_children:
                if child.type.endswith("redirect"):
                    continue
                if child.type in _STRUCTURE or child.type in _SIMPLE:
                    self.statement(child, redirects, depth)
                elif child.type == "comment":
                    continue
                else:  # words: a for loop's list, a case subject or pattern, a function's name
                    self.word(child, depth)
        elif kind == "comment":
            return
        else:
            raise _Unparsed(f"{clip(text_of(node))!r} uses shell syntax we do not analyse ({kind})")

    def simple(self, node: Node, redirects: tuple[Redirect, ...], depth: int) -> None:
        words: list[Word] = []
        assignments: list[str] = []
        own = list(redirects)
        dynamic: str | None = None
        targets = [node] if node.type == "variable_assignment" else []
        for child in node.named_children:
            if child.type == "variable_assignment":
                targets.append(child)
            elif child.type.endswith("redirect"):
                own.append(self.redirect(child, depth))
            elif child.type == "command_name":
                words.append(self.word(child.named_children[0] if child.named_children else child, depth))
            elif node.type == "test_command":
                words.append(Word(text_of(child), static=not has(child, EXPANSIONS)))
            elif node.type != "variable_assignment":
                words.append(self.word(child, depth))
        for target in targets:
            assignments.append(text_of(target))
            if has(target.child_by_field_name("name") or target, frozenset({"subscript"})):
                dynamic = dynamic or "an array subscript is evaluated when it runs"
            value = target.child_by_field_name("value")
            if value is not None:
                word = self.word(value, depth)
                dynamic = dynamic or word.substituted or word.unknown
        if node.type == "test_command":
            words = [Word("[["), *words]
        elif node.type in ("declaration_command", "unset_command"):
            words = [Word(node.children[0].type), *words]
        dynamic = dynamic or next((w.substituted for w in words if w.substituted), None)
        if words and not words[0].static:
            dynamic = dynamic or "the command name is not known before it runs"
        dynamic = dynamic or next((w.unknown for w in words if w.unknown), None)
        if any(r.target is None and r.op in _HEREDOC_OPS for r in own):
            dynamic = dynamic or "a here-document or here-string that expands when it runs"
        if any(r.target is None and r.op not in (">&", "<&") for r in own):
            dynamic = dynamic or "a redirection to a file not known before it runs"
        if node.type == "test_command" and not all(w.static for w in words):
            dynamic = dynamic or "a test that expands variables"
        if words and not words[0].static:
            dynamic = dynamic or "the command name is not known before it runs"
        argv = tuple(w.text for w in words)
        parent = node.parent
        source = text_of(parent if parent is not None and parent.type == "redirected_statement" else node)
        globs = tuple((w.text, w.glob) for w in words if w.glob is not None)
        raw = node.text or b""
        spots = [c for c in node.named_children if not c.type.endswith("redirect")]
        spaced = all(
            raw[a.end_byte - node.start_byte : b.start_byte - node.start_byte] == b" " for a, b in pairwise(spots)
        )
        command = SimpleCommand(
            argv, source, argv, tuple(own), tuple(assignments), cwd=self.cwd, globs=globs, spaced=spaced
        )
        command = self.see_through(command, depth)
        if dynamic and not command.dynamic:
            command = evolve(command, dynamic=dynamic)
        language = _language(command.name)
        feeds = any(r.op in _HEREDOC_OPS for r in own)
        if feeds and (command.name in _READS_CODE or language in _READS_CODE) and not command.dynamic:
            command = evolve(command, dynamic=f"a here-document or here-string feeds code to {command.name}")
        self.commands.append(command)
        self.follow_cd(command)

    def see_through(self, command: SimpleCommand, depth: int) -> SimpleCommand:
        """Remove wrappers; parse what ``bash -c``, ``eval`` and ``xargs`` will run; flag what is unknowable."""
        split = _env_split_string(command.argv)
        if split is not None:
            self.line(split, depth=depth + 1)
            return evolve(command, dynamic="env -S splits a string into a command line when it runs")
        argv, wrappers = unwrap(command.argv)
        if argv and argv[0].startswith(SYSTEM_DIRS):
            argv = (argv[0].rsplit("/", 1)[-1], *argv[1:])
        command = evolve(command, argv=argv, wrappers=wrappers)
        name = command.name
        if name in _SHELLS:
            script = option_value(argv, "-c")
            if script is not None:
                self.line(script, depth=depth + 1)
                return evolve(command, dynamic=f"{name} -c runs a string as a command")
            operands = after_options(argv[1:], frozenset({"-o", "+o", "-O", "+O"}))
            if not operands or operands[0] == "-" or "-s" in argv or "-i" in argv:
                return evolve(command, dynamic=f"{name} runs commands read from its input")
        if name == "eval":
            self.line(" ".join(argv[1:]), depth=depth + 1)
            return evolve(command, dynamic="eval runs a string as a command")
        if name in ("source", "."):
            return evolve(command, dynamic=f"{name} runs a script in the shell")
        if name == "xargs":
            inner = after_options(argv[1:], XARGS_VALUED)
            self.commands.append(
                evolve(command, argv=inner, source=command.source, dynamic="xargs runs a command built from its input")
            )
            return evolve(command, dynamic="xargs runs a command built from its input")
        if name == "find":
            for flag in ("-exec", "-execdir", "-ok", "-okdir"):
                if flag in argv:
                    start = argv.index(flag) + 1
                    inner = argv[start:]
                    end = next((i for i, w in enumerate(inner) if w in (";", "+")), len(inner))
                    self.commands.append(
                        evolve(command, argv=tuple(inner[:end]), dynamic=f"find {flag} runs a command per file")
                    )
                    return evolve(command, dynamic=f"find {flag} runs a command per file")
        language = _language(name)
        flags = _INLINE_CODE.get(language, ())
        if any(word in flags or (language == "awk" and "system(" in word) for word in argv[1:]) or (
            language in ("python", "perl", "node", "ruby") and (len(argv) == 1 or argv[1] == "-")
        ):
            inline = argv[1] if len(argv) > 1 and argv[1] in flags else None
            return evolve(command, dynamic=f"{name} runs code given on the command line or its input", inline=inline)
        return command

    def follow_cd(self, command: SimpleCommand) -> None:
        if command.name not in ("cd", "pushd", "popd"):
            return
        if command.dynamic or command.name == "popd":
            self.cwd = None
            return
        args = [a for a in command.argv[1:] if not a.startswith("-") or a == "-"]
        target = args[0] if args else "~"
        if target == "-" or self.cwd is None or "$" in target or "`" in target:
            self.cwd = None
        elif target.startswith(("/", "~")):
            self.cwd = target
        else:
            self.cwd = target if self.cwd == "." else f"{self.cwd.rstrip('/')}/{target}"

    def redirect(self, node: Node, depth: int) -> Redirect:
        op = next((c.type for c in node.children if not c.is_named), "")
        if node.type == "heredoc_redirect":
            bodies = [self.word(c, depth) for c in node.named_children if c.type == "heredoc_body"]
            return Redirect(op or "<<", None if any(b.substituted or b.unknown for b in bodies) else "")
        destination = node.child_by_field_name("destination")
        if destination is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            destination = named[-1] if named else None
        if destination is None:
            return Redirect(op, None)
        word = self.word(destination, depth)
        if op in (">&", "<&") and (destination.type == "number" or word.text == "-"):
            return Redirect(op, None)
        plain = word.static and not word.substituted and not word.unknown
        if plain and word.glob is not None:
            return Redirect(op, None, glob=word.text)
        return Redirect(op, word.text if plain else None)

    def word(self, node: Node, depth: int) -> Word:
        """A word's text after expansion and quote removal; parses the commands of any substitution inside it."""
        substituted: str | None = None
        for sub in descendants(node, _SUBSTITUTIONS):
            substituted = sub.type.replace("_", " ")
            inner = _Walker(self.home)
            inner.cwd = self.cwd
            for child in sub.named_children:
                inner.statement(child, (), depth + 1)
            self.commands.extend(inner.commands)
        word = expand(node, home=self.home)
        if substituted is None or word.substituted:
            return word
        return evolve(word, static=False, substituted=substituted)


def _env_split_string(argv: tuple[str, ...]) -> str | None:
    """The string ``env -S STRING`` / ``--split-string=STRING`` splits into a command line, or None."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "env":
        return None
    for i, word in enumerate(argv[1:], start=1):
        if not word.startswith("-") or word == "--":
            return None
        if word.startswith("--split-string"):
            return word.partition("=")[2] or (argv[i + 1] if i + 1 < len(argv) else "")
        if not word.startswith("--") and "S" in word[1:]:
            rest = word[word.index("S", 1) + 1 :]
            return rest or (argv[i + 1] if i + 1 < len(argv) else "")
    return None
