"""Tests for fsm.policy.judge's bash judgement (issue 21, items 4 and 5): rules mean exactly what they say, and
whatever the policy does not fully understand asks.

Nothing here runs a command: every test asks the policy for its verdict only (tests/e2e/test_rule_attacks.py
runs a few of them for real, against sentinels).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm import Policy
from fsm.policy.rules import parse_rule
from tools import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("k")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x")
    (root / "README.md").write_text("x")
    (root / "important.txt").write_text("x")
    return Workspace(root)


def bash(policy: Policy, ws: Workspace, command: str):
    return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws)


def rules(*texts: str, base: Path | None = None):
    return tuple(parse_rule(t, base=base) for t in texts)


class TestRulesMatchTheCommandAsWritten:
    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(git diff:*)", "./scripts/git diff"),
            ("Bash(git diff:*)", "/opt/x/git diff"),
            ("Bash(git push:*)", "/usr/bin/git push"),
            ("Bash(git diff:*)", "scripts/git diff HEAD"),
            ("Bash(npm test)", "./node_modules/.bin/npm test"),
        ],
    )
    def test_the_program_word_itself_not_its_base_name(self, ws: Workspace, rule: str, command: str) -> None:
        """A rule naming `git` does not match another program called git, wherever it lies."""
        verdict = bash(Policy(allow=rules(rule)), ws, command)
        assert verdict.behavior == "ask", verdict

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(git diff:*)", "GIT_EXTERNAL_DIFF=./x git diff"),
            ("Bash(ls:*)", "PATH=scripts:/usr/bin ls"),
            ("Bash(npm test)", "NODE_OPTIONS=--require=./x.js npm test"),
            ("Bash(pytest:*)", "PYTHONPATH=. pytest -q"),
        ],
    )
    def test_a_leading_assignment_makes_no_rule_match(self, ws: Workspace, rule: str, command: str) -> None:
        """NAME=value before a command changes what it runs: no allow rule matches it, and none is offered."""
        verdict = bash(Policy(allow=rules(rule)), ws, command)
        assert (verdict.behavior, verdict.suggestions) == ("ask", ()), verdict

    @pytest.mark.parametrize(
        "command",
        ["npm test > f", "npm test >> log.txt", "npm test < input.txt", "npm test <<< x", "npm test &> out"],
    )
    def test_a_redirection_is_part_of_the_command(self, ws: Workspace, command: str) -> None:
        """Bash(npm test) does not match `npm test > f`, nor any other redirection to or from a file."""
        verdict = bash(Policy(allow=rules("Bash(npm test)")), ws, command)
        assert verdict.behavior == "ask", verdict

    @pytest.mark.parametrize("command", ["npm test 2>&1", "npm test > /dev/null", "npm test 2>/dev/null >&2"])
    def test_descriptor_copies_and_dev_null_are_not(self, ws: Workspace, command: str) -> None:
        """`2>&1` and `/dev/null` change no file: Bash(npm test) still matches, as in Claude Code."""
        assert bash(Policy(allow=rules("Bash(npm test)")), ws, command).behavior == "allow"

    def test_an_exact_rule_naming_the_redirection_matches_it(self, ws: Workspace) -> None:
        """Bash(npm test > out.txt) matches exactly that command."""
        assert bash(Policy(allow=rules("Bash(npm test > out.txt)")), ws, "npm test > out.txt").behavior == "allow"

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(npm test > ~/.bashrc)", "npm test > ~/.bashrc"),
            ("Bash(npm test:*)", "npm test > ~/.bashrc"),
            ("Bash(cp README.md /tmp/x)", "cp README.md /tmp/x"),
            ("Bash(mv important.txt ../x)", "mv important.txt ../x"),
            ("Bash(echo:*)", "echo x >> ../outside.txt"),
        ],
    )
    def test_no_rule_waives_the_outside_workspace_check(self, ws: Workspace, rule: str, command: str) -> None:
        """Even an exact rule does not let a command write or move files outside the workspace."""
        verdict = bash(Policy(allow=rules(rule)), ws, command)
        assert (verdict.behavior, verdict.suggestions) == ("ask", ()), verdict
        assert "outside" in verdict.reason

    @pytest.mark.parametrize(
        "command", ["timeout 60 npm test", "nice -n 5 npm test", "time npm test", "nohup npm test"]
    )
    def test_scheduling_wrappers_are_seen_through(self, ws: Workspace, command: str) -> None:
        """time, timeout, nice, nohup and stdbuf change when a command runs, not what: Claude Code strips them."""
        assert bash(Policy(allow=rules("Bash(npm test)")), ws, command).behavior == "allow"

    @pytest.mark.parametrize("command", ["env npm test", "command npm test", "/usr/bin/nice npm test", "exec npm test"])
    def test_other_wrappers_are_part_of_the_command(self, ws: Workspace, command: str) -> None:
        """env, command, exec (or a wrapper spelled with its path) are words of the command: a rule must name them."""
        assert bash(Policy(allow=rules("Bash(npm test)")), ws, command).behavior == "ask"

    @pytest.mark.parametrize(
        "command",
        [
            "/opt/x/git push",
            "GIT_DIR=x git push",
            "env git push",
            "timeout 5 git push",
            "git push > log",
            "git push 2>&1",
        ],
    )
    def test_deny_rules_see_through_everything(self, ws: Workspace, command: str) -> None:
        """A deny rule matches however the command is spelled: path, assignments, wrappers or redirections."""
        assert bash(Policy(deny=rules("Bash(git push:*)")), ws, command).behavior == "deny"

    @pytest.mark.parametrize("command", ["GIT_DIR=x git push", "/opt/x/git push origin", "git push > log"])
    def test_ask_rules_see_through_everything(self, ws: Workspace, command: str) -> None:
        """An ask rule matches the command seen through, so a spelling cannot skip its question."""
        policy = Policy(mode="bypassPermissions", ask=rules("Bash(git push:*)"))
        verdict = bash(policy, ws, command)
        assert (verdict.behavior, verdict.forced) == ("ask", True), verdict

    def test_the_suggested_rule_is_the_command_as_written(self, ws: Workspace) -> None:
        """An ask offers the rule that would match the command as written."""
        assert bash(Policy(), ws, "./scripts/build.sh -q").suggestions == ("Bash(./scripts/build.sh:*)",)
        assert bash(Policy(), ws, "/usr/bin/make all").suggestions == ("Bash(/usr/bin/make all:*)",)


class TestFailClosed:
    @pytest.mark.parametrize(
        ("command", "why"),
        [
            ("npm test $ARGS", "$ARGS is expanded when it runs"),
            ('npm test "${FLAGS}"', "${FLAGS} is expanded when it runs"),
            ("npm test ${x:-$(id)}", "command substitution"),
            ("npm test $((1+2))", "arithmetic expansion"),
            ("npm test <(cat x)", "process substitution"),
            ("npm test {a,b}", "brace expansion"),
            ("a[1]=x", "array subscript"),
            ("npm test ${arr[1]}", "is expanded when it runs"),
            ("cat <<EOF\n$SECRET\nEOF", "here-document"),
            ("node <<'EOF'\nconsole.log(1)\nEOF", "node"),
            ("python3 -q <<< 'print(1)'", "python3"),
            ("bash -x <<'EOF'\nls\nEOF", "bash"),
            ("echo 'unterminated", "cannot parse"),
        ],
    )
    def test_what_is_not_a_literal_asks_with_the_reason(self, ws: Workspace, command: str, why: str) -> None:
        """Expansions, substitutions, subscripts, a here-document into an interpreter or a parse error ask, even
        under a rule for the program, saying why; no rule is offered."""
        policy = Policy(
            allow=rules("Bash(npm test:*)", "Bash(cat:*)", "Bash(node:*)", "Bash(python3:*)", "Bash(bash:*)")
        )
        verdict = bash(policy, ws, command)
        assert (verdict.behavior, verdict.suggestions) == ("ask", ()), verdict
        assert why in verdict.reason

    @pytest.mark.parametrize("command", ["echo $PATH", "ls $DIR", "cat $F", "echo `id`"])
    def test_expansions_are_not_read_only(self, ws: Workspace, command: str) -> None:
        """A built-in read-only command with an expansion asks: its words are not known."""
        assert bash(Policy(), ws, command).behavior == "ask"

    @pytest.mark.parametrize("mode", ["plan", "dontAsk"])
    def test_not_understood_is_not_read_only_in_plan_mode(self, ws: Workspace, mode: str) -> None:
        """Plan mode denies an expansion it cannot check; dontAsk asks (the chain then denies)."""
        verdict = bash(Policy(mode=mode), ws, "echo $PATH")
        assert verdict.behavior == ("deny" if mode == "plan" else "ask")

    @pytest.mark.parametrize(
        "command",
        [
            "cat $HOME/.ssh/id_rsa",
            'cat "${HOME}"/.ssh/id_rsa',
            "cat ${HOME}/.ssh/id_rsa",
            "cat ~/.ssh/id_rsa",
            "head -1 < $HOME/.bashrc",
        ],
    )
    def test_home_is_resolved_as_the_shell_would(self, ws: Workspace, command: str) -> None:
        """$HOME, ${HOME} and ~ lead outside the workspace: reading there asks."""
        verdict = bash(Policy(), ws, command)
        assert (verdict.behavior, "outside" in verdict.reason) == ("ask", True), verdict

    def test_home_read_deny_rules_hold_through_home(self, ws: Workspace) -> None:
        """Read(~/.ssh/**) denies `cat $HOME/.ssh/id_rsa` as it denies `cat ~/.ssh/id_rsa`."""
        policy = Policy(deny=rules("Read(~/.ssh/**)"))
        assert bash(policy, ws, "cat $HOME/.ssh/id_rsa").behavior == "deny"
        assert bash(policy, ws, 'cat "${HOME}/.ssh/id_rsa"').behavior == "deny"

    def test_a_line_that_changes_home_is_not_analysed(self, ws: Workspace) -> None:
        """HOME=… before ~ or $HOME makes the paths unknowable: it asks."""
        verdict = bash(Policy(), ws, "HOME=/etc; cat ~/passwd")
        assert (verdict.behavior, "HOME" in verdict.reason) == ("ask", True)

    @pytest.mark.parametrize("command", ["cat sec*/key.txt", "cat s?crets/*", "cat [s]ecrets/key.txt", "head sec*/k*"])
    def test_a_glob_is_checked_against_what_it_matches(self, ws: Workspace, command: str) -> None:
        """`cat sec*/key.txt` reads secrets/key.txt: Read(./secrets/**) refuses it."""
        policy = Policy(deny=rules("Read(./secrets/**)", base=ws.root))
        verdict = bash(policy, ws, command)
        assert verdict.behavior == "deny", verdict
        assert "Read(./secrets/**)" in verdict.reason

    @pytest.mark.parametrize("command", ["cat ../*", "ls /etc/*", "cat ~/.ss*/id_rsa", "cat */../../*", "wc -l *"])
    def test_a_glob_reaching_outside_asks(self, ws: Workspace, command: str) -> None:
        """A glob that starts or lands outside the workspace asks; one that stays inside is read-only."""
        verdict = bash(Policy(), ws, command)
        expected = "allow" if command == "wc -l *" else "ask"
        assert verdict.behavior == expected, verdict

    def test_a_glob_reaching_outside_asks_under_a_rule(self, ws: Workspace) -> None:
        """Bash(pytest:*) does not run `pytest ../*`: the rule names words, not what a glob finds outside."""
        policy = Policy(allow=rules("Bash(pytest:*)"))
        assert bash(policy, ws, "pytest tests/*.py").behavior == "allow"
        verdict = bash(policy, ws, "pytest ../*")
        assert (verdict.behavior, "glob" in verdict.reason) == ("ask", True)

    def test_quoted_wildcards_are_literal(self, ws: Workspace) -> None:
        """A quoted * is not a glob: `find . -name '*.py'` stays read-only."""
        assert bash(Policy(), ws, "find . -name '*.py'").behavior == "allow"

    @pytest.mark.parametrize(
        "command",
        ["diff --from-file=/etc/passwd x", "realpath --relative-to=../.. x", "git blame --contents=~/.netrc x"],
    )
    def test_an_option_value_path_outside_asks(self, ws: Workspace, command: str) -> None:
        """--opt=PATH is a path too: outside the workspace, a read-only command asks."""
        assert bash(Policy(), ws, command).behavior == "ask"

    def test_an_option_value_path_under_a_read_deny_rule_is_denied(self, ws: Workspace) -> None:
        """--opt=PATH is checked against Read deny rules."""
        policy = Policy(deny=rules("Read(./secrets/**)", base=ws.root))
        assert bash(policy, ws, "diff --from-file=./secrets/key.txt README.md").behavior == "deny"


class TestNotReadOnly:
    @pytest.mark.parametrize(
        "command",
        [
            "[[ 'a[$(id)]' -eq 0 ]]",
            "[[ x -eq 0 ]]",
            "test -v 'a[$(id)]'",
            "[ -v 'a[$(id)]' ]",
            "printf -v 'a[$(id)]' x",
            "printf -v PATH %s scripts",
            "printf -v line %s x",
            "hostname -F /etc/hostname",
            "date --file=/etc/shadow",
            "date -f ~/.ssh/id_rsa",
            "wc --files0-from=list",
            "du --files0-from=list",
            "sort --files0-from=list",
            "find . -files0-from list",
            "git --output=x diff",
            "git diff --output=x",
            "git -c core.pager=sh log",
            "git -C /tmp status",
            "git --git-dir=/tmp/x log",
            "git -p log",
            "git log --ext-diff",
            "git show --textconv HEAD",
            "git diff -O/etc/passwd",
            "git diff --no-index ~/.bashrc README.md",
            "sort -T /tmp x",
            "file -C -m x",
            "tree -R -H . -o x",
            "rg --pre ./x y",
            "PATH=scripts:/usr/bin",
            "GIT_DIR=/tmp/x",
            "x=1 ls",
        ],
    )
    def test_these_ask(self, ws: Workspace, command: str) -> None:
        """Options and built-ins that evaluate code, write, set the environment or read unchecked files ask."""
        verdict = bash(Policy(), ws, command)
        assert verdict.behavior == "ask", verdict

    @pytest.mark.parametrize("command", ["[[ 'a[$(id)]' -eq 0 ]]", "test -v 'a[$(id)]'", "printf -v 'a[$(id)]' x"])
    def test_plan_mode_refuses_them(self, ws: Workspace, command: str) -> None:
        """In plan mode a subscripted test or printf -v is not read-only: it is denied."""
        assert bash(Policy(mode="plan"), ws, command).behavior == "deny"

    @pytest.mark.parametrize(
        "command",
        [
            "ls",
            "git status",
            "git --no-pager log -3",
            "cat README.md",
            "grep -r foo src",
            "[[ -f README.md ]] && cat README.md",
            "test 1 -eq 1",
            "hostname -s",
            "git diff --no-index README.md src/a.py",
            "date +%F",
            "x=1",
            "ls src/*.py",
            "echo $HOME",
        ],
    )
    def test_everyday_commands_stay_read_only(self, ws: Workspace, command: str) -> None:
        """Safe everyday commands are still allowed without a question."""
        assert bash(Policy(), ws, command).behavior == "allow"

    def test_npm_test_under_its_rule(self, ws: Workspace) -> None:
        """`npm test` under Bash(npm test) runs as before."""
        assert bash(Policy(allow=rules("Bash(npm test)")), ws, "npm test").behavior == "allow"


class TestOnlyRedirections:
    @pytest.mark.parametrize("mode", ["default", "acceptEdits", "dontAsk"])
    @pytest.mark.parametrize("command", ["> important.txt", "ls && > important.txt", ": > important.txt"])
    def test_truncating_an_existing_file_asks(self, ws: Workspace, mode: str, command: str) -> None:
        """A line that only empties a file is destructive: it asks in every mode that asks."""
        verdict = bash(Policy(mode=mode), ws, command)
        assert (verdict.behavior, "empties" in verdict.reason) == ("ask", True), verdict

    @pytest.mark.parametrize("command", ["> ../x", "ls && > ~/.bashrc", ">> /tmp/x"])
    def test_outside_asks_and_no_rule_allows_it(self, ws: Workspace, command: str) -> None:
        """A bare redirection outside the workspace asks, even under Bash."""
        verdict = bash(Policy(allow=rules("Bash")), ws, command)
        assert (verdict.behavior, "outside" in verdict.reason) == ("ask", True), verdict

    def test_plan_mode_denies_it(self, ws: Workspace) -> None:
        """Plan mode denies a bare redirection: it writes."""
        assert bash(Policy(mode="plan"), ws, "> new.txt").behavior == "deny"

    def test_a_new_file_inside_asks(self, ws: Workspace) -> None:
        """Creating a file inside with a bare redirection asks in default mode, naming the exact rule."""
        verdict = bash(Policy(), ws, "> new.txt")
        assert (verdict.behavior, verdict.suggestions) == ("ask", ("Bash(> new.txt)",))


class TestCalibratedOnClaudeCode:
    """Cases where the recorded Claude Code verdicts (tests/fsm/policy/conformance) showed today's policy looser."""

    @pytest.mark.parametrize(
        "command", ["(git diff)", "{ git diff; }", "if true; then git diff; fi", "for x in a; do ls; done"]
    )
    def test_compound_commands_ask(self, ws: Workspace, command: str) -> None:
        """A subshell, group, if or loop is never allowed whole, even when each part would be."""
        verdict = bash(Policy(allow=rules("Bash(git diff:*)")), ws, command)
        assert (verdict.behavior, verdict.suggestions) == ("ask", ()), verdict
        assert bash(Policy(mode="plan"), ws, command).behavior == "deny"

    def test_an_allow_rule_matches_the_spacing_as_typed(self, ws: Workspace) -> None:
        """`npm  test` (two spaces) is not what Bash(npm test) says."""
        assert bash(Policy(allow=rules("Bash(npm test)")), ws, "npm  test").behavior == "ask"

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(cat:*)", "cat ~/.ssh/id_rsa"),
            ("Bash(cat:*)", "cat $HOME/notes.txt"),
            ("Bash(git diff:*)", "git diff --no-index ~/.ssh/id_rsa README.md"),
            ("Bash(cat ../x)", "cat ../x"),
        ],
    )
    def test_a_rule_does_not_waive_reading_outside(self, ws: Workspace, rule: str, command: str) -> None:
        """A rule names the program, not where it reads: a read-only command reading outside still asks."""
        verdict = bash(Policy(allow=rules(rule)), ws, command)
        assert (verdict.behavior, "outside" in verdict.reason) == ("ask", True), verdict

    def test_a_read_rule_allows_reading_outside(self, ws: Workspace, tmp_path: Path) -> None:
        """Read(//path) lets a read-only command read that path."""
        (tmp_path / "notes.txt").write_text("n")
        policy = Policy(allow=rules(f"Read(/{tmp_path}/notes.txt)"))
        assert bash(policy, ws, f"cat {tmp_path}/notes.txt").behavior == "allow"
        assert bash(policy, ws, f"cat {tmp_path}/other.txt").behavior == "ask"

    @pytest.mark.parametrize(
        "command", ["ls secrets", "grep -r k secrets", "cd secrets && cat key.txt", "cat secrets/*"]
    )
    def test_read_deny_rules_cover_a_directory_they_deny_the_contents_of(self, ws: Workspace, command: str) -> None:
        """Read(./secrets/**) denies listing or searching secrets/, as Claude Code does."""
        policy = Policy(deny=rules("Read(./secrets/**)", base=ws.root))
        assert bash(policy, ws, command).behavior == "deny"
        assert bash(policy, ws, "ls src").behavior == "allow"

    @pytest.mark.parametrize(
        "command",
        [
            "echo x > src/a.py",
            "echo x >> src/a.py",
            "sed -i s/a/b/ src/a.py",
            "cp README.md src/a.py",
            "touch src/new.py",
            "rm src/a.py",
            "mv src/a.py src/b.py",
            "tee src/a.py < README.md",
        ],
    )
    @pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
    def test_edit_deny_rules_hold_for_bash_writes(self, ws: Workspace, mode: str, command: str) -> None:
        """Edit(./src/**) denies a redirection, sed -i, cp, touch, rm, mv or tee into src/, in every mode."""
        policy = Policy(mode=mode, deny=rules("Edit(./src/**)", base=ws.root))
        verdict = bash(policy, ws, command)
        assert (verdict.behavior, "Edit(./src/**)" in verdict.reason) == ("deny", True), verdict

    def test_edit_ask_rules_hold_for_bash_writes(self, ws: Workspace) -> None:
        """Edit ask rules ask for a bash write too, even in bypassPermissions."""
        policy = Policy(mode="bypassPermissions", ask=rules("Edit(./src/**)", base=ws.root))
        verdict = bash(policy, ws, "echo x > src/a.py")
        assert (verdict.behavior, verdict.forced) == ("ask", True)

    @pytest.mark.parametrize(
        ("command", "default", "accept_edits"),
        [
            ("echo hi > out.txt", "ask", "allow"),
            ("ls > out.txt 2>&1", "ask", "allow"),
            ("echo hi >> README.md", "ask", "allow"),
            ("> out.txt", "ask", "ask"),
            ("echo hi > ~/out.txt", "ask", "ask"),
            ("echo x >> .git/config", "ask", "ask"),
            ("echo x > .bashrc", "ask", "ask"),
            ("mkdir -p build", "ask", "allow"),
            ("touch build.txt", "ask", "allow"),
            ("cp README.md copy.md", "ask", "allow"),
            ("mkdir .vscode", "ask", "ask"),
            ("cp ~/.ssh/id_rsa k", "ask", "ask"),
        ],
    )
    def test_writes_inside_are_edits(self, ws: Workspace, command: str, default: str, accept_edits: str) -> None:
        """A redirection, mkdir, touch or cp inside the workspace asks by default and is an edit in acceptEdits;
        outside, protected or with no command it asks in both."""
        got = (bash(Policy(), ws, command).behavior, bash(Policy(mode="acceptEdits"), ws, command).behavior)
        assert got == (default, accept_edits)

    def test_a_prefix_rule_does_not_cover_a_write(self, ws: Workspace) -> None:
        """Bash(echo:*) runs echo; `echo hi > out.txt` still asks in default mode (it writes a file)."""
        verdict = bash(Policy(allow=rules("Bash(echo:*)")), ws, "echo hi > out.txt")
        assert (verdict.behavior, verdict.suggestions) == ("ask", ("Bash(echo hi > out.txt)",))

    @pytest.mark.parametrize("command", ["cat <<EOF\nhello\nEOF", "/bin/ls", "/usr/bin/cat README.md"])
    def test_not_read_only_as_claude_code_says(self, ws: Workspace, command: str) -> None:
        """A here-document, or a program spelled with its path, is not a built-in read-only command."""
        assert bash(Policy(), ws, command).behavior == "ask"

    @pytest.mark.parametrize("command", ["LC_ALL=C ls", "LANG=C.UTF-8 git status", "git branch", "git branch -a -v"])
    def test_safe_everyday_forms(self, ws: Workspace, command: str) -> None:
        """A locale before a read-only command, and listing branches, run without a question."""
        assert bash(Policy(), ws, command).behavior == "allow"

    @pytest.mark.parametrize(
        "command", ["LC_ALL=/tmp/x ls", "git branch evil", "git branch -D main", "git branch -m x"]
    )
    def test_their_unsafe_neighbours_ask(self, ws: Workspace, command: str) -> None:
        """A locale that is a path, or a branch command that changes branches, asks."""
        assert bash(Policy(), ws, command).behavior == "ask"

    def test_a_rule_naming_inline_code_allows_it(self, ws: Workspace) -> None:
        """Bash(python3 -c *) says inline code may run; Bash(python3:*) does not say so."""
        command = "python3 -c 'print(1)'"
        assert bash(Policy(allow=rules("Bash(python3 -c *)")), ws, command).behavior == "allow"
        assert bash(Policy(allow=rules("Bash(python3 -c:*)")), ws, command).behavior == "allow"
        assert bash(Policy(allow=rules("Bash(python3:*)")), ws, command).behavior == "ask"


class TestHoles:
    """Holes found by trying the judge as an attacker would, after the corpus was clean."""

    @pytest.mark.parametrize("command", ["ls >& ~/x", "ls >& ../x"])
    def test_an_ampersand_redirection_to_a_file_writes(self, ws: Workspace, command: str) -> None:
        """`>& file` writes the file (stdout and stderr): outside the workspace it asks."""
        verdict = bash(Policy(), ws, command)
        assert (verdict.behavior, "outside" in verdict.reason) == ("ask", True), verdict

    @pytest.mark.parametrize("command", ["rg --ignore-file /etc/shadow x", "grep -f /etc/shadow README.md"])
    def test_an_option_value_given_apart_is_a_path(self, ws: Workspace, command: str) -> None:
        """A value given as the next word is checked as a path, whichever word is the pattern."""
        assert bash(Policy(), ws, command).behavior == "ask"

    @pytest.mark.parametrize("command", ["ls .*", "cat .?"])
    def test_a_glob_that_may_match_dot_dot_asks(self, ws: Workspace, command: str) -> None:
        """`.*` matches `..` in bash before 5.2: it may read the parent directory."""
        assert bash(Policy(), ws, command).behavior == "ask"

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(git diff:*)", "git diff --output=/tmp/x"),
            ("Bash(rm:*)", "rm -rf ~/x"),
            ("Bash(touch:*)", "touch ~/x"),
            ("Bash(mkdir:*)", "mkdir ~/x"),
            ("Bash(chmod:*)", "chmod 777 ~/.ssh"),
            ("Bash(dd:*)", "dd if=README.md of=../y"),
            ("Bash(truncate:*)", "truncate -s0 ~/x"),
            ("Bash(sort:*)", "sort -o ~/x README.md"),
        ],
    )
    def test_no_rule_writes_outside_through_an_operand_or_option(self, ws: Workspace, rule: str, command: str) -> None:
        """Deleting, creating, changing or writing files outside the workspace asks, whatever rule names the program."""
        verdict = bash(Policy(allow=rules(rule)), ws, command)
        assert (verdict.behavior, verdict.suggestions) == ("ask", ()), verdict

    def test_inside_they_stay_allowed(self, ws: Workspace) -> None:
        """The same rules allow the same commands inside the workspace."""
        assert bash(Policy(allow=rules("Bash(rm:*)")), ws, "rm -rf build").behavior == "allow"
        assert bash(Policy(allow=rules("Bash(git diff:*)")), ws, "git diff --output=d.txt").behavior == "allow"


class TestHoldOutFamilies:
    """The families the blind hold-out corpus found looser than Claude Code (after the first merges)."""

    @pytest.mark.parametrize(
        ("allow", "command", "why"),
        [
            (("Bash(git diff:*)",), "$'git' diff", "not known"),
            (("Bash(git diff:*)",), "git $'diff' --output=PWNED", "ANSI-C quoting"),
            (("Bash(git diff:*)",), "git diff$'\\n'touch PWNED", "ANSI-C quoting"),
            ((), "echo $'\\x41'", "ANSI-C quoting"),
            ((), "cat ~+/README.md", "tilde expansion ~+"),
            ((), "cat ~-/README.md", "tilde expansion ~-"),
            ((), "cat ~root/x", "tilde expansion ~root"),
            (("Bash(git diff:*)", "Bash(env:*)"), "env -S 'touch PWNED'", "env -S"),
            (("Bash(git diff:*)", "Bash(env:*)"), "env --split-string='git diff'", "env -S"),
        ],
    )
    def test_what_is_decoded_or_split_when_it_runs_asks(
        self, ws: Workspace, allow: tuple[str, ...], command: str, why: str
    ) -> None:
        verdict = bash(Policy(allow=rules(*allow)), ws, command)
        assert verdict.behavior == "ask" and why in verdict.reason, verdict

    @pytest.mark.parametrize("command", ["nice -n1 git diff", "nice --adjustment=1 git diff", "nice -5 git diff"])
    def test_a_wrapper_option_in_an_unknown_form_is_not_seen_through(self, ws: Workspace, command: str) -> None:
        assert bash(Policy(allow=rules("Bash(git diff:*)")), ws, command).behavior == "ask"

    @pytest.mark.parametrize("command", ["nice -n 5 git diff", "stdbuf -o0 git diff", "timeout -s KILL 5 git diff"])
    def test_the_usual_wrapper_forms_still_are(self, ws: Workspace, command: str) -> None:
        assert bash(Policy(allow=rules("Bash(git diff:*)")), ws, command).behavior == "allow"

    def test_command_v_asks_as_in_claude_code(self, ws: Workspace) -> None:
        assert bash(Policy(), ws, "command -v git").behavior == "ask"

    def test_home_alone_is_still_the_home_directory(self, ws: Workspace) -> None:
        verdict = bash(Policy(), ws, "cat ~/notes.txt")
        assert verdict.behavior == "ask" and "outside the workspace" in verdict.reason, verdict
