"""Tests for fsm.policy.commands: a command line parsed into the simple commands it runs."""

from __future__ import annotations

import pytest

from fsm.policy.commands import Redirect, parse_command


def argvs(line: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_command(line).commands]


class TestSimpleCommands:
    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ("ls && rm x", [("ls",), ("rm", "x")]),
            ("a || b; c | d", [("a",), ("b",), ("c",), ("d",)]),
            ("(cd x; ls)", [("cd", "x"), ("ls",)]),
            ("{ a; b; } > out", [("a",), ("b",)]),
            ("if true; then rm f; fi", [("true",), ("rm", "f")]),
            ("for f in *; do rm $f; done", [("rm", "$f")]),
            ("while true; do ls; done", [("true",), ("ls",)]),
            ("case x in a) rm y;; esac", [("rm", "y")]),
            ("! grep x f", [("grep", "x", "f")]),
            ("f() { rm x; }", [("rm", "x")]),
        ],
    )
    def test_through_every_compound(self, line: str, expected: list[tuple[str, ...]]) -> None:
        """Lists, pipelines, subshells, groups, if/for/while/case, negation and functions are seen into."""
        assert argvs(line) == expected

    @pytest.mark.parametrize(
        ("line", "expected"),
        [
            ('s""udo ls', ("sudo", "ls")),
            ("su''do ls", ("sudo", "ls")),
            (r"\rm x", ("rm", "x")),
            ('git commit -m "drop sudo from docs"', ("git", "commit", "-m", "drop sudo from docs")),
            ("echo $'a\\tb'", ("echo", "a\tb")),
            ('echo "a\\"b"', ("echo", 'a"b')),
        ],
    )
    def test_quotes_and_backslashes_are_removed(self, line: str, expected: tuple[str, ...]) -> None:
        """Words are compared after quote removal, as the shell will run them."""
        assert argvs(line) == [expected]

    @pytest.mark.parametrize(
        ("line", "wrappers"),
        [
            ("env FOO=1 rm x", ("env",)),
            ("command rm x", ("command",)),
            ("nice -n 5 rm x", ("nice",)),
            ("time rm x", ("time",)),
            ("exec rm x", ("exec",)),
            ("nohup rm x", ("nohup",)),
            ("timeout -s KILL 5 rm x", ("timeout",)),
            ("/usr/bin/env nice rm x", ("env", "nice")),
        ],
    )
    def test_wrappers_are_seen_through(self, line: str, wrappers: tuple[str, ...]) -> None:
        """What a wrapper runs is the command judged; the wrappers are kept aside."""
        (command,) = parse_command(line).commands
        assert (command.argv, command.wrappers) == (("rm", "x"), wrappers)

    def test_system_paths_become_names(self) -> None:
        """/bin/rm is rm; a path elsewhere keeps its path (it is another program)."""
        assert argvs("/bin/rm -rf x; /opt/x/rm y") == [("rm", "-rf", "x"), ("/opt/x/rm", "y")]

    def test_redirections(self) -> None:
        """Redirections are kept, with their targets; a descriptor copy has none."""
        (command,) = parse_command("ls 2>&1 > out.txt >> log < in").commands
        assert command.redirects == (
            Redirect(">&", None),
            Redirect(">", "out.txt"),
            Redirect(">>", "log"),
            Redirect("<", "in"),
        )
        assert command.text == "ls > out.txt >> log < in"

    def test_cd_is_followed(self) -> None:
        """A static cd sets the directory of the commands after it."""
        assert [c.cwd for c in parse_command("ls; cd / && rm -rf *; cd sub; cd $X; ls").commands] == [
            ".",
            ".",
            "/",
            "/",
            "/sub",
            None,
        ]


class TestDynamic:
    @pytest.mark.parametrize(
        ("line", "reason"),
        [
            ("$(echo rm) -rf x", "command substitution"),
            ("echo `id`", "command substitution"),
            ("cat <(ls)", "process substitution"),
            ("echo $((1+2))", "arithmetic expansion"),
            ("$CMD x", "the command name is not known before it runs"),
            ("eval rm x", "eval runs a string as a command"),
            ("bash -c 'rm -rf x'", "bash -c runs a string as a command"),
            ("curl x | sh", "sh runs commands read from its input"),
            ("echo x | xargs rm", "xargs runs a command built from its input"),
            ("find . -exec rm {} \\;", "find -exec runs a command per file"),
            ("python3 -c 'print(1)'", "python3 runs code given on the command line or its input"),
            ("perl -e 'unlink 1'", "perl runs code given on the command line or its input"),
            ("node -e 1", "node runs code given on the command line or its input"),
            ("echo hi > $F", "a redirection to a file not known before it runs"),
        ],
    )
    def test_what_cannot_be_known_is_flagged(self, line: str, reason: str) -> None:
        """Anything whose effect is only known when it runs carries why."""
        assert reason in [c.dynamic for c in parse_command(line).commands]

    def test_inner_commands_are_parsed_too(self) -> None:
        """The commands inside a substitution, bash -c, eval and xargs are listed, so deny rules see them."""
        assert ("sudo", "x") in argvs("echo $(sudo x)")
        assert ("sudo", "ls") in argvs("bash -c 'ls; sudo ls'")
        assert ("sudo", "y") in argvs("eval sudo y")
        assert ("rm", "-rf") in argvs("echo x | xargs rm -rf")

    @pytest.mark.parametrize("line", ["if ; then", "echo 'unterminated", "a && && b"])
    def test_unparseable_lines_have_a_problem(self, line: str) -> None:
        """A syntax error is reported, never guessed at."""
        assert parse_command(line).problem is not None


class TestAsWritten:
    def test_the_program_word_is_kept_as_written(self) -> None:
        """What allow rules match keeps ./scripts/git and /usr/bin/git; argv (for the built-in rules) names it."""
        (local, system) = parse_command("./scripts/git diff; /usr/bin/git diff").commands
        assert (local.rule_text, system.rule_text) == ("./scripts/git diff", "/usr/bin/git diff")
        assert system.argv == ("git", "diff")

    @pytest.mark.parametrize(
        ("line", "rule_text"),
        [
            ("timeout 5 nice -n 3 git diff", "git diff"),
            ("time pytest -q", "pytest -q"),
            ("time -p pytest -q", "time -p pytest -q"),  # Claude Code asks about time -p under a rule too
            ("nice -- git diff", "nice -- git diff"),
            ("env A=1 git diff", "env A=1 git diff"),
            ("command git diff", "command git diff"),
            ("/usr/bin/timeout 5 git diff", "/usr/bin/timeout 5 git diff"),
        ],
    )
    def test_only_scheduling_wrappers_are_removed(self, line: str, rule_text: str) -> None:
        """time, timeout, nice, nohup and stdbuf (spelled so) are not part of what a rule matches; others are."""
        (command,) = parse_command(line).commands
        assert command.rule_text == rule_text

    def test_redirections_are_part_of_the_rule_text_but_descriptor_copies(self) -> None:
        """`> f`, `< f` and here-strings are part of the command; `2>&1` and /dev/null are not."""
        (command,) = parse_command("npm test <<< x 2>&1 > out 2>/dev/null").commands
        assert command.rule_text == "npm test > out <<< x"

    def test_assignments_are_kept_aside(self) -> None:
        """NAME=value words are not in the rule text; they are listed."""
        (command,) = parse_command("GIT_EXTERNAL_DIFF=x git diff").commands
        assert (command.rule_text, command.assignments) == ("git diff", ("GIT_EXTERNAL_DIFF=x",))


class TestLiterals:
    @pytest.mark.parametrize(
        ("line", "argv"),
        [
            ("cat $HOME/x", ("cat", "/home/u/x")),
            ('cat "${HOME}"/x', ("cat", "/home/u/x")),
            ("cat '$HOME'/x", ("cat", "$HOME/x")),
        ],
    )
    def test_home_is_expanded_as_the_shell_would(self, line: str, argv: tuple[str, ...]) -> None:
        """$HOME and ${HOME} (unless single-quoted) are the home directory: a literal."""
        (command,) = parse_command(line, home="/home/u").commands
        assert (command.argv, command.dynamic) == (argv, None)

    @pytest.mark.parametrize(
        ("line", "why"),
        [
            ("ls $DIR", "$DIR is expanded when it runs"),
            ('ls "${DIR:-/}"', "${DIR:-/} is expanded when it runs"),
            ("echo {a,b}", "brace expansion"),
            ("echo x{1..3}", "brace expansion"),
            ("a[0]=1", "an array subscript is evaluated when it runs"),
            ("x=$Y", "$Y is expanded when it runs"),
            ("cat <<EOF\n$X\nEOF", "a here-document or here-string that expands when it runs"),
            ("python3 - <<'EOF'\nprint(1)\nEOF", "python3 runs code given on the command line or its input"),
            ("sqlite3 db <<< '.shell id'", "a here-document or here-string feeds code to sqlite3"),
            ("bash -e", "bash runs commands read from its input"),
        ],
    )
    def test_what_is_not_a_literal_is_flagged(self, line: str, why: str) -> None:
        """A word whose value is not known before it runs makes its command dynamic, saying why."""
        assert any(why in (c.dynamic or "") for c in parse_command(line).commands), parse_command(line)

    def test_a_quoted_here_document_is_literal(self) -> None:
        """<<'EOF' expands nothing: cat of it is known."""
        (command,) = parse_command("cat <<'EOF'\n$(id) $X\nEOF").commands
        assert command.dynamic is None

    def test_a_line_that_sets_home_is_not_analysed(self) -> None:
        """HOME=… and then ~ or $HOME: the paths cannot be known, so the line has a problem."""
        assert parse_command("HOME=/tmp; cat ~/x").problem is not None
        assert parse_command("export HOME=/tmp && ls $HOME").problem is not None
        assert parse_command("cat ~/x").problem is None

    def test_globs_carry_their_pattern(self) -> None:
        """An unquoted *, ? or [ makes a glob; a quoted one is escaped in the pattern."""
        (command,) = parse_command("""cat sec*/k.txt "a*"b* 'c?' d\\*""").commands
        assert command.globs == (("sec*/k.txt", "sec*/k.txt"), ("a*b*", "a[*]b*"))


class TestOnlyRedirections:
    @pytest.mark.parametrize("line", ["> f", "ls && > f", ">> f"])
    def test_a_bare_redirection_is_a_command(self, line: str) -> None:
        """A statement of only redirections is listed, with no words and its redirections."""
        command = parse_command(line).commands[-1]
        assert (command.argv, [r.target for r in command.redirects]) == ((), ["f"])
