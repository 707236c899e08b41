"""A bash command line, parsed into the simple commands it runs (tree-sitter's bash grammar).

:func:`parse_command` walks the syntax tree through ``&&``, ``||``, ``;``, ``|``, subshells, ``{ }``,
``if``/``for``/``while``/``case``, functions and redirections, and returns every simple command with its
words after quote removal (``s""udo`` is ``sudo``, ``\\rm`` is ``rm``), wrappers seen through (``env``,
``command``, ``builtin``, ``nice``, ``time``, ``exec``, ``nohup``, ``timeout``, ``stdbuf``, ``/bin/``),
its redirections, and the directory a static ``cd`` before it left the shell in. Commands inside command
substitutions, ``bash -c STRING`` and ``eval`` are parsed too. What cannot be known before it runs is
flagged in :attr:`SimpleCommand.dynamic` (a substitution, a variable as the command, ``eval``,
``bash -c``, ``xargs``, ``find -exec``, an interpreter given code). A line the grammar cannot parse has
a :attr:`ParsedCommand.problem`. Nothing here decides a permission: that is ``fsm.policy.shell_rules``.
"""

from __future__ import annotations

import codecs
import glob
import os
import re
from collections.abc import Iterator
from functools import cache
from itertools import pairwise

import tree_sitter_bash
from attrs import evolve, field, frozen
from tree_sitter import Language, Node, Parser

__all__ = ["ParsedCommand", "Redirect", "SimpleCommand", "parse_command"]

_SYSTEM_DIRS = ("/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/")
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
_TRANSPARENT = frozenset({"time", "timeout", "nice", "nohup", "stdbuf"})
"""Wrappers a rule sees through, as Claude Code does: they change when or how long a command runs, not what."""
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

    @property
    def shown(self) -> bool:
        """Whether it is part of the command a rule matches: every redirection but a descriptor copy (``2>&1``)
        and ``/dev/null``, ``/dev/stdout``, ``/dev/stderr`` (harmless, and left out as Claude Code does)."""
        return self.target is not None and self.target not in _QUIET

    @property
    def writes(self) -> bool:
        """Whether it writes a file (``>``, ``>>``, ``&>``, ``>|``, …), rather than reading one or a descriptor."""
        return self.target is not None and ">" in self.op and self.op not in (">&", "<&")

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
        return _strip_transparent(self.written or self.argv)

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


class _Unparsed(Exception):
    pass


@frozen
class _Word:
    text: str
    static: bool = True
    substituted: str | None = None
    """What in the word runs code when it is expanded (a command substitution …), or None."""
    unknown: str | None = None
    """Why the word's value is not known before it runs (``$X`` is expanded …), or None for a literal."""
    glob: str | None = None
    """The word as a glob pattern (quoted parts escaped) when an unquoted ``*``, ``?`` or ``[`` makes it one."""


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
            raise _Unparsed(f"cannot parse {_clip(text)!r} as a shell command")
        self.statement(tree.root_node, (), depth)

    def statement(self, node: Node, redirects: tuple[Redirect, ...], depth: int) -> None:
        kind = node.type
        if kind in ("command", "declaration_command", "unset_command", "test_command", "variable_assignment"):
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
                    self.commands.append(SimpleCommand((), _text(node), redirects=redirects, cwd=self.cwd))
                    return
            for child in node.named_children:
                if child.type.endswith("redirect"):
                    continue
                if child.type in _STRUCTURE or child.type in (
                    "command",
                    "declaration_command",
                    "unset_command",
                    "test_command",
                    "variable_assignment",
                ):
                    self.statement(child, redirects, depth)
                elif child.type == "comment":
                    continue
                else:  # words: a for loop's list, a case subject or pattern, a function's name
                    self.word(child, depth)
        elif kind == "comment":
            return
        else:
            raise _Unparsed(f"{_clip(_text(node))!r} uses shell syntax we do not analyse ({kind})")

    def simple(self, node: Node, redirects: tuple[Redirect, ...], depth: int) -> None:
        words: list[_Word] = []
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
                words.append(_Word(_text(child), static=not _has(child, _EXPANSIONS)))
            elif node.type != "variable_assignment":
                words.append(self.word(child, depth))
        for target in targets:
            assignments.append(_text(target))
            if _has(target.child_by_field_name("name") or target, frozenset({"subscript"})):
                dynamic = dynamic or "an array subscript is evaluated when it runs"
            value = target.child_by_field_name("value")
            if value is not None:
                word = self.word(value, depth)
                dynamic = dynamic or word.substituted or word.unknown
        if node.type == "test_command":
            words = [_Word("[["), *words]
        elif node.type in ("declaration_command", "unset_command"):
            words = [_Word(node.children[0].type), *words]
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
        source = _text(parent if parent is not None and parent.type == "redirected_statement" else node)
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
        language = re.sub(r"[\d.]+$", "", command.name)
        feeds = any(r.op in _HEREDOC_OPS for r in own)
        if feeds and (command.name in _READS_CODE or language in _READS_CODE) and not command.dynamic:
            command = evolve(command, dynamic=f"a here-document or here-string feeds code to {command.name}")
        self.commands.append(command)
        self.follow_cd(command)

    def see_through(self, command: SimpleCommand, depth: int) -> SimpleCommand:
        """Remove wrappers; parse what ``bash -c``, ``eval`` and ``xargs`` will run; flag what is unknowable."""
        argv, wrappers = _unwrap(command.argv)
        if argv and argv[0].startswith(_SYSTEM_DIRS):
            argv = (argv[0].rsplit("/", 1)[-1], *argv[1:])
        command = evolve(command, argv=argv, wrappers=wrappers)
        name = command.name
        if name in _SHELLS:
            script = _option_value(argv, "-c")
            if script is not None:
                self.line(script, depth=depth + 1)
                return evolve(command, dynamic=f"{name} -c runs a string as a command")
            operands = _after_options(argv[1:], frozenset({"-o", "+o", "-O", "+O"}))
            if not operands or operands[0] == "-" or "-s" in argv or "-i" in argv:
                return evolve(command, dynamic=f"{name} runs commands read from its input")
        if name == "eval":
            self.line(" ".join(argv[1:]), depth=depth + 1)
            return evolve(command, dynamic="eval runs a string as a command")
        if name in ("source", "."):
            return evolve(command, dynamic=f"{name} runs a script in the shell")
        if name == "xargs":
            inner = _after_options(argv[1:], _XARGS_VALUED)
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
        language = re.sub(r"[\d.]+$", "", name)
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
        known = word.static and not word.substituted and not word.unknown and word.glob is None
        return Redirect(op, word.text if known else None)

    def word(self, node: Node, depth: int) -> _Word:
        """A word's text after quote removal; parses the commands of any substitution inside it."""
        substituted: str | None = None
        for sub in _descendants(node, _SUBSTITUTIONS):
            substituted = sub.type.replace("_", " ")
            inner = _Walker(self.home)
            inner.cwd = self.cwd
            for child in sub.named_children:
                inner.statement(child, (), depth + 1)
            self.commands.extend(inner.commands)
        if _has(node, frozenset({"arithmetic_expansion"})):
            return _Word(_text(node), static=False, substituted="arithmetic expansion")
        expanded = _Expanded(self.home)
        expanded.add(node, quoted=False)
        unknown = expanded.unknown
        if unknown is None and _BRACES.search(expanded.bare):
            unknown = f"brace expansion in {_clip(_text(node))!r} happens when it runs"
        glob_pattern = "".join(expanded.pattern) if expanded.globbed else None
        return _Word(expanded.text, unknown is None and substituted is None, substituted, unknown, glob_pattern)


_EXPANSIONS = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)


_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_CHARS = re.compile(r"[*?\[]")


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
        text = _text(node)
        if kind == "raw_string":
            self.literal(text[1:-1], quoted=True)
        elif kind == "ansi_c_string":
            try:
                self.literal(codecs.decode(text[2:-1], "unicode_escape"), quoted=True)
            except UnicodeDecodeError:
                self.literal(text, quoted=True)
                self.unknown = self.unknown or f"{_clip(text)!r} is not a string we can read"
        elif kind in ("string", "translated_string", "heredoc_body"):
            for child in node.named_children:
                if child.type == "string_content":
                    self.literal(re.sub(r'\\([$`"\\\n])', r"\1", _text(child)), quoted=True)
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
                self.unknown = self.unknown or f"{_clip(text)} is expanded when it runs"
        elif kind in _EXPANSIONS:
            self.literal(text, quoted=True)
            self.unknown = self.unknown or f"{_clip(text)} is expanded when it runs"
        elif kind == "brace_expression":
            self.literal(text, quoted=True)
            self.unknown = self.unknown or f"brace expansion in {_clip(text)!r} happens when it runs"
        elif kind == "word" and not quoted:
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
            if _has(node, _EXPANSIONS):
                self.unknown = self.unknown or f"{_clip(text)} is expanded when it runs"


_UNWRAP_VALUED = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "exec": frozenset({"-a"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "time": frozenset(),
    "nohup": frozenset(),
}
_XARGS_VALUED = frozenset(
    {
        "-I",
        "-i",
        "-L",
        "-l",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-e",
        "-a",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--arg-file",
        "--replace",
        "--max-lines",
    }
)


def _strip_transparent(words: tuple[str, ...]) -> tuple[str, ...]:
    """*words* without the leading wrappers a rule sees through, spelled exactly so (not ``/usr/bin/nice``)."""
    return _unwrap(words, only=_TRANSPARENT)[0]


def _unwrap(argv: tuple[str, ...], *, only: frozenset[str] | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """*argv* with leading wrappers (and their options) removed, and the wrappers removed.

    Args:
        only: remove only these wrappers, and only as written (no system directory in front).
    """
    wrappers: list[str] = []
    while argv:
        if only is not None:
            name = argv[0] if argv[0] in only else ""
        else:
            name = argv[0].rsplit("/", 1)[-1] if argv[0].startswith(_SYSTEM_DIRS) else argv[0]
        if name not in _UNWRAP_VALUED:
            break
        if name == "command" and any(a in ("-v", "-V") for a in argv[1:2]):
            break  # `command -v x` looks x up; it runs nothing
        rest = list(_after_options(argv[1:], _UNWRAP_VALUED[name]))
        if name == "env":
            while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0]):
                rest.pop(0)
        if name == "timeout" and rest:
            rest.pop(0)  # the duration
        if not rest:
            break
        wrappers.append(name)
        argv = tuple(rest)
    return argv, tuple(wrappers)


def _after_options(args: tuple[str, ...], valued: frozenset[str]) -> tuple[str, ...]:
    """*args* from the first word that is not an option (or an option's value) on."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            break
        i += 2 if arg in valued else 1
    return args[i:]


def _option_value(argv: tuple[str, ...], flag: str) -> str | None:
    """The word after *flag* (or a short-option cluster ending in it, like ``-ec``) before the script name."""
    for i, word in enumerate(argv[1:], start=1):
        if not word.startswith("-"):
            return None
        if (word == flag or (len(word) > 2 and word[1] != "-" and word.endswith(flag[1]))) and i + 1 < len(argv):
            return argv[i + 1]
    return None


def _descendants(node: Node, kinds: frozenset[str]) -> Iterator[Node]:
    """The outermost descendants of *node* (itself included) whose type is in *kinds*."""
    if node.type in kinds:
        yield node
        return
    for child in node.children:
        yield from _descendants(child, kinds)


def _has(node: Node, kinds: frozenset[str]) -> bool:
    return next(_descendants(node, kinds), None) is not None


def _text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
