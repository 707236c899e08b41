"""Tests that kill the mutants the mutation run (``python -m tests.mutation.run``, docs/mutation.md) found surviving
in the permission policy: each one fails on a mutant that changes what the policy allows, asks or denies.

``TestNamedMutants`` holds the six the audit of issue 29 named, each of which let through what is denied or asked
today; the other classes follow the modules. Nothing here runs a command: every test asks for a verdict only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsm.policy.chain import Edited, Permit, Remember, allow_all, deny_all, permit
from fsm.policy.commands import parse_command
from fsm.policy.hooks import (
    EVENTS,
    Allow,
    Ask,
    Deny,
    HookContext,
    HookEvent,
    Hooks,
    Notice,
    PreToolVerdict,
    blocked_prompt_message,
    large_output_hook,
    log_hook,
)
from fsm.policy.judge import Policy, Verdict
from fsm.policy.protected import Hit, Places, bash_writes, file_writes
from fsm.policy.read_only import read_only
from fsm.policy.rules import RuleError, claude_name, parse_rule, split_rules
from fsm.policy.settings import PermissionSettings, Settings
from tools import ToolOutput, Workspace
from tools.sandbox import Sandbox


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x")
    (root / "README.md").write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    return Workspace(root)


def bash(policy: Policy, ws: Workspace, command: str) -> str:
    return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws).behavior


def rules(*texts: str, base: Path | None = None) -> tuple:
    return tuple(parse_rule(t, base=base) for t in texts)


class TestNamedMutants:
    """The six surviving mutants of issue 29, each of which turned an ask or a deny into an allow."""

    @pytest.mark.parametrize(
        "command",
        ["env FOO=1 ls", "env LD_PRELOAD=./x.so cat README.md", "env -u HOME ls", "env PATH=src ls src"],
    )
    def test_an_env_wrapper_with_assignments_is_not_read_only(self, ws: Workspace, command: str) -> None:
        """`env VAR=… cmd` changes what cmd runs: it asks in default mode, and plan mode refuses it."""
        assert bash(Policy(), ws, command) == "ask"
        assert bash(Policy(mode="plan"), ws, command) == "deny"

    @pytest.mark.parametrize(
        "command",
        [
            "grep -f ../outside.txt README.md",
            "grep -f /etc/shadow README.md",
            "grep -e x -f ~/.ssh/id_rsa README.md",
            "grep --file=../outside.txt x README.md",
        ],
    )
    def test_grep_reading_patterns_from_a_file_outside_asks(self, ws: Workspace, command: str) -> None:
        """`grep -f FILE` reads FILE: outside the workspace it asks, even with grep allowed by a rule."""
        assert bash(Policy(), ws, command) == "ask"
        assert bash(Policy(allow=rules("Bash(grep:*)")), ws, command) == "ask"

    @pytest.mark.parametrize(
        "command",
        [
            "git reset --hard HEAD~1",
            "git reset --merge",
            "git reset --keep HEAD~1",
            "git -C . reset --hard",
            "git clean -fdx",
            "git push --force origin main",
            "git push origin :main",
            "git push --force-with-lease",
            "git push --mirror",
            "git checkout -- src/a.py",
            "git branch -D main",
            "git stash drop",
            "git rm src/a.py",
            "git restore src/a.py",
            "git reflog expire --all",
        ],
    )
    def test_destructive_git_asks_under_a_broad_git_rule(self, ws: Workspace, command: str) -> None:
        """`Bash(git:*)` allows git, but not git that discards work or history: that still asks."""
        assert bash(Policy(allow=rules("Bash(git:*)")), ws, command) == "ask"
        assert bash(Policy(allow=rules("Bash(git:*)"), mode="acceptEdits"), ws, command) == "ask"

    def test_a_glob_deny_rule_matches_the_pattern(self, ws: Workspace) -> None:
        """`Glob(**/*.env)` denies a glob call with that pattern, in every mode; other patterns run."""
        for mode in ("default", "bypassPermissions"):
            policy = Policy(mode=mode, deny=rules("Glob(**/*.env)"))
            verdict = policy.decide({"name": "glob", "input": {"pattern": "**/*.env"}}, ws)
            assert (verdict.behavior, verdict.rule) == ("deny", "Glob(**/*.env)")
            assert policy.decide({"name": "glob", "input": {"pattern": "*.py"}}, ws).behavior == "allow"

    def test_a_task_ask_rule_asks(self, ws: Workspace) -> None:
        """A bare `Task` ask rule asks before every subagent, forced (a hook's allow does not skip it)."""
        policy = Policy(ask=rules("Task"))
        verdict = policy.decide({"name": "task", "input": {"prompt": "go"}}, ws)
        assert (verdict.behavior, verdict.forced, verdict.rule) == ("ask", True, "Task")
        assert "task matches ask rule Task" in verdict.reason
        assert Policy(ask=rules("Agent")).decide({"name": "task", "input": {"prompt": "go"}}, ws).behavior == "ask"

    @pytest.mark.parametrize("others", [(), (None,), (Allow(),), (None, Allow())])
    @pytest.mark.parametrize("first", [True, False])
    def test_a_pretooluse_hooks_ask_is_kept(self, ws: Workspace, others: tuple, first: bool) -> None:
        """A PreToolUse hook's Ask reaches the approver even when other hooks (before or after it) allow or say
        nothing, and a call the policy would allow is then refused when the approver says no."""
        hooks = Hooks()
        answers = [Ask("check this"), *others] if first else [*others, Ask("check this")]
        for answer in answers:
            hooks.on("PreToolUse", lambda e, a=answer: a)
        call = {"name": "read_file", "id": "t1", "input": {"path": "README.md"}}
        verdict = hooks.pre_tool_use(HookEvent("PreToolUse", "root", 0, ws, tool_call=call))
        assert isinstance(verdict.decision, Ask)
        asked: list[Ask] = []

        def approver(tool_call: dict, ask: Ask) -> bool:
            asked.append(ask)
            return False

        event = HookEvent("PreToolUse", "root", 0, ws, tool_call=call)
        result = permit(call, event, hooks=hooks, policy=Policy(), approver=approver, workspace=ws)
        assert result.denial is not None and [a.reason.startswith("check this") for a in asked] == [True]
        allowed = permit(call, event, hooks=hooks, policy=Policy(), approver=allow_all, workspace=ws)
        assert allowed.denial is None

    def test_a_pretooluse_deny_beats_an_ask(self, ws: Workspace) -> None:
        """Of a hook's Ask and another's Deny, the Deny wins whatever the order."""
        for order in ((Ask("a"), Deny("no")), (Deny("no"), Ask("a"))):
            hooks = Hooks()
            for answer in order:
                hooks.on("PreToolUse", lambda e, a=answer: a)
            call = {"name": "read_file", "id": "t1", "input": {"path": "README.md"}}
            verdict = hooks.pre_tool_use(HookEvent("PreToolUse", "root", 0, ws, tool_call=call))
            assert verdict.decision == Deny("no")


class TestReadOnly:
    """fsm.policy.read_only: what runs unasked, and each detail that makes a command ask."""

    @pytest.mark.parametrize(
        "command",
        [
            "cat < README.md",  # an input redirection writes nothing
            "ls > /dev/null",
            "ls 2>&1",
            "a=b=c",  # a bare assignment to a lowercase variable, whatever its value
            "[ 1 -eq 1 ]",
            "test \"'1'\" -eq \"'2'\"",  # quotes around a number still make a number
            "test -v \"'a'\"",
            "printf -- -v",  # after --, -v is printed, not an option
            "printf '%s\\n' hi",
            "sort --numeric-sort README.md",  # a long option holding the letter o is not -o
            "git log",
            "ls --color=..=x",  # an option's value is the text after its first =
            "grep --label=x=/y z README.md",
        ],
    )
    def test_runs_unasked(self, ws: Workspace, command: str) -> None:
        """A read-only command runs without asking, in default and plan mode."""
        assert bash(Policy(), ws, command) == "allow"
        assert bash(Policy(mode="plan"), ws, command) == "allow"

    @pytest.mark.parametrize(
        "command",
        [
            "cat <<-EOF\nx\nEOF",
            "test 'X1' -eq 1",
            "test 1 -eq X1",
            "[ x -eq 1 ]",
            '"[" x -eq 1 ]',  # the program [ spelled so that the parser does not read a test expression
            "printf -v x -- y",
            "grep --exclude-from=src/../../outside.txt x README.md",
            "test 1 -eq 1 -a -v 'a[$(id)]'",  # -v anywhere, not only first
            "test -R 'a[$(id)]'",
            "test -v 'a[$(id)]' = x",
            "test -v Xa",
            "printf -v x 1",
            "printf -vx 1",
            "printf -v x",
            "printf -v",
            "sort -ofile README.md",
            "rg --ignore-file=.. x",
            "rg --ignore-file=~ x",
        ],
    )
    def test_asks(self, ws: Workspace, command: str) -> None:
        """A command that may write, evaluate code or read outside is not read-only: it asks."""
        assert bash(Policy(), ws, command) == "ask"

    def test_a_subcommand_is_not_a_file(self, ws: Workspace) -> None:
        """git's subcommand is not read as a path: a Read deny rule naming a file called `log` leaves `git log`."""
        policy = Policy(deny=rules("Read(./log)", base=ws.root))
        assert bash(policy, ws, "git log") == "allow"
        assert bash(policy, ws, "cat log") == "deny"

    def test_a_redirection_that_writes_is_not_read_only_unless_the_caller_judges_it(self) -> None:
        """read_only sees a redirection that writes a file, unless told its caller judges the writes."""
        command = parse_command("ls > out.txt", home="/h").commands[0]
        assert (read_only(command), read_only(command, writes=True)) == (False, True)

    def test_plan_mode_refuses_a_redirection_that_writes(self, ws: Workspace) -> None:
        """A read-only program writing a file by redirection is not read-only: plan mode refuses it."""
        assert bash(Policy(mode="plan"), ws, "ls > out.txt") == "deny"

    def test_an_option_value_without_a_slash_is_not_a_file(self, ws: Workspace) -> None:
        """`--color=auto` names no file: a Read deny rule on a file called `auto` leaves it."""
        assert bash(Policy(deny=rules("Read(./auto)", base=ws.root)), ws, "ls --color=auto") == "allow"

    def test_a_line_of_assignments_in_plan_mode(self, ws: Workspace) -> None:
        """Plan mode runs a line that only sets a lowercase variable, and refuses one that sets PATH."""
        assert bash(Policy(mode="plan"), ws, "a=1") == "allow"
        assert bash(Policy(mode="plan"), ws, "PATH=/tmp") == "deny"


_GIT_LOST = "git reset --hard discards changes"
_PUSHED = "git push --force rewrites or deletes remote history"
_BRANCH = "git branch -D deletes a branch"
_CHECKOUT = "git checkout -- discards changes"


class TestShellRules:
    """fsm.policy.shell_rules: what is refused, what is destructive and why, and which rule allows it."""

    @pytest.mark.parametrize(
        ("command", "why"),
        [
            *((f"{p} a", f"{p} deletes files") for p in ("rm", "rmdir", "unlink", "shred", "srm", "wipe")),
            ("truncate -s0 README.md", "truncate empties files"),
            ("dd if=README.md of=b", "dd of= overwrites a file"),
            ("dd if=x of=/dev/null", "dd of= overwrites a file"),
            ("find . -delete", "find -delete deletes files"),
            ("sed -i s/a/b/ README.md", "sed -i rewrites files in place"),
            ("gsed --in-place s/a/b/ README.md", "gsed -i rewrites files in place"),
            ("perl -i x.pl README.md", "perl -i rewrites files in place"),
            ("chmod -R 644 src", "chmod -R changes a whole tree"),
            ("chown --recursive me src", "chown -R changes a whole tree"),
            ("chgrp -R me src", "chgrp -R changes a whole tree"),
            *((f"git {s} x", f"git {s} discards files or changes") for s in ("clean", "rm", "restore")),
            *((f"git reset {o}", _GIT_LOST) for o in ("--hard", "--merge", "--keep")),
            ("git -C . reset --hard", _GIT_LOST),
            ("git --no-pager reset --hard", _GIT_LOST),
            ("git checkout -- src/a.py", _CHECKOUT),
            ("git checkout .", _CHECKOUT),
            ("git checkout -f main", _CHECKOUT),
            ("git checkout --force main", _CHECKOUT),
            *(
                (f"git push {o}", _PUSHED)
                for o in (
                    "-f",
                    "--force",
                    "--force-with-lease",
                    "--force-if-includes",
                    "--mirror",
                    "--delete origin x",
                    "-d origin x",
                    "--prune",
                    "origin +main",
                    "origin :main",
                )
            ),
            ("git -c core.x=y push -f", _PUSHED),
            ("git stash drop", "git stash drop deletes stashed changes"),
            ("git stash clear", "git stash clear deletes stashed changes"),
            ("git stash drop 1", "git stash drop deletes stashed changes"),
            *((f"git branch {o} x", _BRANCH) for o in ("-D", "-d", "--delete", "-M", "--force", "-f")),
            *(
                (f"git {s}", f"git {s} can rewrite or drop history")
                for s in ("filter-branch", "filter-repo", "update-ref", "reflog", "gc", "prune")
            ),
            ("echo hi > README.md", "> README.md empties an existing file"),
            ("echo hi >| README.md", ">| README.md empties an existing file"),
        ],
    )
    def test_destructive_asks_saying_why(self, ws: Workspace, command: str, why: str) -> None:
        """A destructive command asks, says what it destroys, and offers the rule naming it exactly."""
        verdict = Policy().decide({"name": "bash", "input": {"command": command}}, ws)
        expected = ("ask", f"`{command}` is destructive ({why})", (f"Bash({command})",))
        assert (verdict.behavior, verdict.reason, verdict.suggestions) == expected

    def test_every_redirection_is_looked_at(self, ws: Workspace) -> None:
        """A truncating redirection after a harmless one still empties the file."""
        verdict = Policy().decide({"name": "bash", "input": {"command": "echo hi 2>/dev/null > README.md"}}, ws)
        reason = "`echo hi 2>/dev/null > README.md` is destructive (> README.md empties an existing file)"
        assert (verdict.behavior, verdict.reason) == ("ask", reason)

    @pytest.mark.parametrize(
        ("command", "why"),
        [
            ("mv README.md ../x", "mv moves files out of the workspace"),
            ("mv ../x README.md", "mv moves files out of the workspace"),
            ("echo hi > ../x", "> ../x writes outside the workspace"),
            ("cp README.md ../x", "cp ../x writes outside the workspace"),
            ("rm -r /tmp/x", "rm /tmp/x writes outside the workspace"),
        ],
    )
    def test_writing_outside_asks_and_no_rule_allows_it(self, ws: Workspace, command: str, why: str) -> None:
        """A command that writes or moves files outside the workspace asks, and no Bash rule, even an exact one,
        allows it."""
        for allow in ((), rules(f"Bash({command})", "Bash(mv:*)", "Bash(echo:*)", "Bash(cp:*)", "Bash(rm:*)")):
            verdict = Policy(allow=allow).decide({"name": "bash", "input": {"command": command}}, ws)
            reason = f"`{command}` is destructive ({why}); no Bash rule allows writing outside it"
            assert (verdict.behavior, verdict.reason, verdict.suggestions) == ("ask", reason, ())

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(rm:*)", "rm a"),
            ("Bash(rmdir:*)", "rmdir src"),
            ("Bash(truncate:*)", "truncate -s0 README.md"),
            ("Bash(dd:*)", "dd if=README.md of=b"),
            ("Bash(git clean:*)", "git clean -fdx"),
            ("Bash(git rm:*)", "git rm src/a.py"),
            ("Bash(git reset --hard:*)", "git reset --hard HEAD"),
            ("Bash(git stash drop:*)", "git stash drop"),
            ("Bash(git stash clear)", "git stash clear"),
            ("Bash(sed -i s/a/b/ README.md)", "sed -i s/a/b/ README.md"),
        ],
    )
    def test_a_rule_naming_the_destruction_allows_it(self, ws: Workspace, rule: str, command: str) -> None:
        """A rule whose fixed start names the destructive program (or subcommand), or the whole command, allows it."""
        assert bash(Policy(allow=rules(rule)), ws, command) == "allow"

    @pytest.mark.parametrize(
        ("rule", "command"),
        [
            ("Bash(find:*)", "find . -delete"),
            ("Bash(sed:*)", "sed -i s/a/b/ README.md"),
            ("Bash(chmod:*)", "chmod -R 644 src"),
            ("Bash(git reset:*)", "git reset --hard"),
            ("Bash(git push:*)", "git push --force"),
            ("Bash(git checkout:*)", "git checkout -- src/a.py"),
            ("Bash(git branch:*)", "git branch -D x"),
            ("Bash(git stash:*)", "git stash drop"),
            ("Bash(git gc:*)", "git gc"),
            ("Bash(echo:*)", "echo hi > README.md"),
        ],
    )
    def test_a_broad_rule_does_not_allow_the_destruction(self, ws: Workspace, rule: str, command: str) -> None:
        """A rule naming only the program (or a shorter prefix than the destruction) still asks."""
        assert bash(Policy(allow=rules(rule)), ws, command) == "ask"

    @pytest.mark.parametrize(
        "command",
        [
            "git checkout main",
            "git push origin main",
            "git stash list",
            "git stash",
            "git reset HEAD",
            "git branch x",
            "sed s/a/b/ README.md",
            "chmod 644 README.md",
            "dd if=README.md",
            "mv README.md b",
            "perl x.pl",
            "git --version",
            "ln -s ../outside.txt link",  # a link's target is not written
        ],
    )
    def test_the_harmless_neighbours_are_not_destructive(self, ws: Workspace, command: str) -> None:
        """The same programs without the destructive option ask only because they are not read-only, and a rule
        naming the program allows them."""
        verdict = Policy().decide({"name": "bash", "input": {"command": command}}, ws)
        assert (verdict.behavior, verdict.reason) == ("ask", f"`{command}` is not a built-in read-only command")
        assert bash(Policy(allow=rules(f"Bash({command.split()[0]}:*)")), ws, command) == "allow"

    @pytest.mark.parametrize(
        ("command", "rule"),
        [
            *(
                (f"{p} x", f"Bash({p}:*) (built-in)")
                for p in ("sudo", "shutdown", "reboot", "halt", "poweroff", "mkfs")
            ),
            ("mkfs.ext4 /dev/sda", "Bash(mkfs.*) (built-in)"),
            *(
                (f"rm {o} {t}", "built-in: rm -r of / or ~")
                for o, t in (
                    ("-rf", "/"),
                    ("-r", "~"),
                    ("-R", "$HOME"),
                    ("--recursive", "${HOME}/"),
                    ("-rf", "$HOME/x/.."),
                    ("-rf", "${HOME}"),
                    ("-rf", "/*"),
                    ("-rf", "~/*"),
                    ("-rf", "/."),
                    ("-rf", "~/."),
                    ("-rf", "//"),
                    ("-fr", "/usr/.."),
                    ("-rf", "/usr/../*"),
                )
            ),
            ("dd if=x of=/dev/sda", "built-in: dd onto a device"),
            ("echo x > /dev/sda", "built-in: a redirection onto a device"),
        ],
    )
    def test_refused_in_every_mode(self, ws: Workspace, command: str, rule: str) -> None:
        """The built-in refusals deny in every mode, whatever rule allows, naming what refused."""
        for mode in ("default", "bypassPermissions"):
            verdict = Policy(mode=mode, allow=rules("Bash(rm:*)", "Bash(dd:*)", "Bash(echo:*)")).decide(
                {"name": "bash", "input": {"command": command}}, ws
            )
            assert (verdict.behavior, verdict.reason, verdict.rule) == (
                "deny",
                f"`{command}` is refused by {rule}",
                rule,
            )

    @pytest.mark.parametrize("star", ["*", ".*", "./*"])
    def test_rm_of_everything_after_cd_to_root_is_refused(self, ws: Workspace, star: str) -> None:
        """`cd / && rm -rf *` (or `.*`, `./*`) deletes the root: refused."""
        verdict = Policy(mode="bypassPermissions").decide(
            {"name": "bash", "input": {"command": f"cd / && rm -rf {star}"}}, ws
        )
        assert (verdict.behavior, verdict.rule) == ("deny", "built-in: rm -r of / or ~")

    @pytest.mark.parametrize(
        "command",
        [
            "echo x > /dev/null",
            "echo x > /dev/stderr",
            "echo x > /dev/fd/1",
            "echo x 2> /dev/tty",
            "rm -f ~/x",
            "rm -rf ~/x",
            "rm -r src",
            "rm -rf /tmp/x",
            "rm -x /",
            "rm -rf X",
            "rm -r XX/",
            "dd if=/dev/zero of=/dev/null",
        ],
    )
    def test_not_refused(self, ws: Workspace, command: str) -> None:
        """Safe devices, a recursive rm of something else, and a non-recursive rm are not built-in refusals."""
        verdict = Policy(mode="bypassPermissions").decide({"name": "bash", "input": {"command": command}}, ws)
        assert verdict.behavior == "allow", verdict

    def test_git_config_writes_the_repositorys_config(self, ws: Workspace) -> None:
        """`git config` writes .git/config: an Edit deny rule naming that file refuses it, even with git config
        allowed."""
        policy = Policy(allow=rules("Bash(git config:*)"), deny=rules("Edit(./.git/config)", base=ws.root))
        verdict = policy.decide({"name": "bash", "input": {"command": "git config core.pager x"}}, ws)
        assert verdict.behavior == "deny"
        assert verdict.reason == "`git config core.pager x` writes ./.git/config, denied by rule Edit(./.git/config)"


def chain(
    ws: Workspace, call: dict, *, answers: tuple = (), policy: Policy | None = None, approver=allow_all
) -> Permit:
    """*call* through the whole chain, with a PreToolUse hook per answer (each named ``hook0``, ``hook1`` …)."""
    hooks = Hooks()
    for i, answer in enumerate(answers):
        callback = lambda e, a=answer: a  # noqa: E731
        callback.__name__ = f"hook{i}"
        hooks.on("PreToolUse", callback)
    event = HookEvent("PreToolUse", "root", 0, ws, tool_call=call)
    return permit(call, event, hooks=hooks, policy=policy or Policy(), approver=approver, workspace=ws)


def read(path: str) -> dict:
    return {"name": "read_file", "id": "t1", "input": {"path": path}}


class TestChain:
    """``fsm.policy.chain.permit``: who refused, what the model is told, the hooks' notes kept on every path, and
    whether the call may leave the workspace."""

    def test_every_refusal_keeps_the_hooks_notes_and_names_who_refused(self, ws: Workspace) -> None:
        """A hook's deny, a deny rule, dontAsk, the user's no and an approver's Deny each keep the notes."""
        note = Notice("seen")
        hooked = chain(ws, read("README.md"), answers=(note, Deny("no reading")))
        assert (hooked.notes, hooked.denial.by, hooked.denial.reason) == (("seen",), "hook hook1", "no reading")
        ruled = chain(ws, read("README.md"), answers=(note,), policy=Policy(deny=rules("Read")))
        assert (ruled.notes, ruled.denial.by) == (("seen",), "Read")
        outside = read("../outside.txt")
        dont = chain(ws, outside, answers=(note,), policy=Policy(mode="dontAsk"))
        assert (dont.notes, dont.denial.by) == (("seen",), "dontAsk mode")
        assert dont.denial.reason.startswith("Permission denied: read_file ../outside.txt (a read outside")
        user = chain(ws, outside, answers=(note,), approver=lambda c, a: False)
        assert (user.notes, user.denial.by, user.denial.reason) == (("seen",), "user", "Permission denied by user")
        approver = chain(ws, outside, answers=(note,), approver=lambda c, a: Deny("not now"))
        assert (approver.notes, approver.denial.by, approver.denial.reason) == (("seen",), "approver", "not now")

    def test_a_failing_approver_denies_saying_why(self, ws: Workspace) -> None:
        def broken(call: dict, ask: Ask) -> bool:
            raise ValueError("boom")

        result = chain(ws, read("../outside.txt"), approver=broken)
        assert result.denial is not None and result.denial.by == "approver"
        assert result.denial.reason == "Permission denied: the approver failed (ValueError: boom)"

    @pytest.mark.parametrize(
        "answer", [True, Remember(("Read(//tmp/**)",)), Edited({"path": "../outside.txt"})], ids=repr
    )
    def test_an_approved_call_outside_runs_unconfined_with_the_notes(self, ws: Workspace, answer: object) -> None:
        """What the approver allows knowing it leaves the workspace runs unconfined; the notes are kept."""
        result = chain(ws, read("../outside.txt"), answers=(Notice("seen"),), approver=lambda c, a: answer)
        assert result.denial is None and result.unconfined is True
        assert result.notes[0] == "seen"
        inside = chain(ws, read("README.md"), answers=(Ask("sure?"),), approver=lambda c, a: answer)
        assert inside.denial is None and inside.unconfined is (isinstance(answer, Edited))

    def test_a_call_allowed_outside_runs_unconfined(self, ws: Workspace) -> None:
        result = chain(ws, read("../outside.txt"), answers=(Notice("seen"),), policy=Policy(mode="bypassPermissions"))
        assert (result.denial, result.unconfined, result.notes) == (None, True, ("seen",))
        assert chain(ws, read("README.md")).unconfined is False

    def test_remember_adds_the_rules_for_the_session_from_the_workspace(self, ws: Workspace) -> None:
        """A remembered rule is the session's, and its relative paths start at the workspace (not the cwd)."""
        policy = Policy()
        result = chain(ws, read("../outside.txt"), policy=policy, approver=lambda c, a: Remember(("Read(./src/**)",)))
        assert result.denial is None
        assert [(r.text, r.source, r.base) for r in policy.session] == [("Read(./src/**)", "session", ws.root)]

    def test_an_edited_input_is_judged_again_and_noted(self, ws: Workspace) -> None:
        """The approver's input is what runs: a deny rule refuses it (named, the notes kept), else it runs with a
        note saying so."""
        policy = Policy(deny=rules("Read(//etc/**)"))
        edited = Edited({"path": "/etc/passwd"})
        notes = (Notice("seen"),)
        result = chain(ws, read("../outside.txt"), answers=notes, policy=policy, approver=lambda c, a: edited)
        assert result.denial is not None and result.denial.by == "Read(//etc/**)" and result.notes == ("seen",)
        assert result.denial.reason.endswith("(the input the approver gave)")
        ok = chain(ws, read("../outside.txt"), answers=(Notice("seen"),), approver=lambda c, a: Edited({"path": "x"}))
        assert ok.notes == ("seen", "read_file: run with the input the approver gave") and ok.input == {"path": "x"}

    def test_a_hooks_question_names_the_hook_and_offers_the_rules_suggestions(self, ws: Workspace) -> None:
        """A hook's Ask names the hook; it offers the rules' suggestions when the rules would ask too, none when
        they would allow; only a question of the rules alone is ``by_rules``."""
        asked: list[Ask] = []

        def approver(call: dict, ask: Ask) -> bool:
            asked.append(ask)
            return True

        chain(ws, read("../outside.txt"), answers=(Ask("careful"),), approver=approver)
        chain(ws, read("README.md"), answers=(Ask(""),), approver=approver)
        chain(ws, read("../outside.txt"), approver=approver)
        outside = f"Read(//{(ws.root.parent / 'outside.txt').as_posix().lstrip('/')})"
        assert [(a.reason, a.suggestions, a.by_rules) for a in asked] == [
            ("careful (hook hook0)", (outside,), False),
            ("hook hook0 asks (hook hook0)", (), False),
            ("read_file ../outside.txt (a read outside the workspace)", (outside,), True),
        ]

    def test_the_rules_a_refusal_suggests_are_all_named(self, ws: Workspace) -> None:
        reason = deny_all({}, Ask("x", ("Bash(a:*)", "Bash(b:*)"))).reason
        assert "add Bash(a:*), Bash(b:*) to permissions.allow" in reason


def call(name: str, **tool_input: object) -> dict:
    return {"name": name, "id": "t", "input": tool_input}


class TestJudgeFiles:
    """``Policy.decide`` on the file tools and the others: the whole verdict, not only its behaviour (the chain
    treats any behaviour other than ask or deny as an allow)."""

    def test_file_deny_and_ask_rules_match_the_path_as_written_and_as_resolved(self, ws: Workspace) -> None:
        """A link to a file a rule names is that file; a rule naming the link holds for it too."""
        (ws.root / "link").symlink_to(ws.root / "README.md")
        for kind in ("deny", "ask"):
            for rule, path in (("Read(./README.md)", "link"), ("Read(./link)", "link")):
                policy = Policy(**{kind: rules(rule, base=ws.root)})
                verdict = policy.decide(call("read_file", path=path), ws)
                assert (verdict.behavior, verdict.rule) == (kind, rule), (kind, rule)
                assert policy.decide(call("read_file", path="src/a.py"), ws).behavior == "allow"

    def test_the_whole_verdict_of_a_file_rule(self, ws: Workspace) -> None:
        deny = Policy(deny=rules("Read(./README.md)", base=ws.root)).decide(call("read_file", path="README.md"), ws)
        assert deny == Verdict("deny", "read_file README.md is denied by rule Read(./README.md)", "Read(./README.md)")
        ask = Policy(ask=rules("Read(./README.md)", base=ws.root)).decide(call("read_file", path="README.md"), ws)
        assert ask == Verdict(
            "ask", "read_file README.md matches ask rule Read(./README.md)", "Read(./README.md)", forced=True
        )
        outside = ws.root.parent / "outside.txt"
        far = Policy(ask=rules(f"Read(/{outside})")).decide(call("read_file", path=str(outside)), ws)
        assert (far.behavior, far.forced, far.outside) == ("ask", True, True)

    def test_a_path_with_a_nul_byte_is_judged_as_written(self, ws: Workspace) -> None:
        """No file can have it (resolving it fails), so the path as written is what the rules see."""
        policy = Policy(deny=rules("Read(./a*)", base=ws.root))
        assert policy.decide(call("read_file", path="a\0b"), ws) == Verdict(
            "deny", "read_file a\x00b is denied by rule Read(./a*)", "Read(./a*)"
        )

    def test_an_ask_rule_is_about_its_own_tool(self, ws: Workspace) -> None:
        policy = Policy(ask=rules("Edit(./README.md)", base=ws.root))
        assert policy.decide(call("read_file", path="README.md"), ws) == Verdict("allow")
        assert policy.decide(call("write_file", path="README.md", content="x"), ws).behavior == "ask"

    def test_the_modes_name_themselves(self, ws: Workspace) -> None:
        plan = Policy(mode="plan").decide(call("write_file", path="x.txt", content="x"), ws)
        assert plan == Verdict("deny", "write_file x.txt: plan mode makes no edits", "plan mode")
        bypass = Policy(mode="bypassPermissions").decide(call("read_file", path="../outside.txt"), ws)
        assert bypass == Verdict("allow", rule="bypassPermissions mode", outside=True)

    def test_a_bare_read_rule_allows_inside_only(self, ws: Workspace) -> None:
        """`Read` allows every read inside the workspace (naming itself), none outside: outside needs a path rule."""
        policy = Policy(allow=rules("Read"))
        assert policy.decide(call("read_file", path="README.md"), ws) == Verdict("allow", rule="Read")
        assert policy.decide(call("read_file", path="../outside.txt"), ws).behavior == "ask"
        outside = ws.root.parent / "outside.txt"
        named = Policy(allow=rules(f"Read(/{outside})")).decide(call("read_file", path="../outside.txt"), ws)
        assert named == Verdict("allow", rule=f"Read(/{outside})", outside=True)

    def test_what_a_file_question_says_and_suggests(self, ws: Workspace) -> None:
        """The question names the tool, edit or read, inside or outside, and the rule that would allow it."""
        policy = Policy()
        edit = policy.decide(call("write_file", path="src/b.py", content="x"), ws)
        assert edit == Verdict(
            "ask", "write_file src/b.py (an edit inside the workspace)", suggestions=("Edit(./src/b.py)",)
        )
        read = policy.decide(call("read_file", path="/Xnowhere/f"), ws)
        assert read == Verdict(
            "ask",
            "read_file /Xnowhere/f (a read outside the workspace)",
            suggestions=("Read(//Xnowhere/f)",),
            outside=True,
        )

    def test_an_mcp_tool_asks_and_is_named(self, ws: Workspace) -> None:
        verdict = Policy().decide(call("mcp__s__t"), ws)
        assert verdict == Verdict(
            "ask", "mcp__s__t is an MCP tool: it asks unless a rule allows it", suggestions=("mcp__s__t",)
        )

    def test_other_tools_rules_name_the_call(self, ws: Workspace) -> None:
        """A tool rule with a specifier matches only a glob's pattern; its verdict says which rule."""
        assert Policy(deny=rules("Task(x*)")).decide(call("task", prompt="go", pattern="xy"), ws) == Verdict("allow")
        verdict = Policy(deny=rules("Glob(*.env)")).decide(call("glob", pattern="*.env"), ws)
        assert verdict == Verdict("deny", "glob is denied by rule Glob(*.env)", "Glob(*.env)")

    def test_hidden_tools(self) -> None:
        """A bare deny rule hides its tool (a bare Edit hides write_file too); a rule with a specifier hides none."""
        assert Policy(deny=rules("Bash", "Edit(src/**)")).hidden_tools() == {"bash"}
        assert Policy(deny=rules("Edit")).hidden_tools() == {"edit_file", "write_file"}

    @pytest.mark.parametrize("command", ["nice touch x", "FOO=1 touch x", "/usr/bin/touch x", "chmod +x src/a.py"])
    def test_accept_edits_accepts_only_plain_editors(self, ws: Workspace, command: str) -> None:
        """acceptEdits takes mkdir, touch and cp spelled so, with no wrapper or assignment, as edits."""
        assert bash(Policy(mode="acceptEdits"), ws, "touch x") == "allow"
        assert bash(Policy(mode="acceptEdits"), ws, command) == "ask"


class TestJudgeBash:
    """``Policy.decide`` on bash commands: whole verdicts of deny rules, unparsable lines, the sandbox, writes."""

    def verdict(self, policy: Policy, ws: Workspace, command: str) -> Verdict:
        return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws)

    def test_a_deny_rules_verdict_names_the_rule_and_what_it_refused(self, ws: Workspace) -> None:
        deny = rules("Bash(curl:*)", "Read(./README.md)", "Write(./o.txt)", base=ws.root)
        policy = Policy(deny=deny)
        assert self.verdict(policy, ws, "curl x") == Verdict(
            "deny", "`curl x` is denied by rule Bash(curl:*)", "Bash(curl:*)"
        )
        assert self.verdict(policy, ws, "cat README.md > out.txt") == Verdict(
            "deny", "`cat README.md > out.txt` reads README.md, denied by rule Read(./README.md)", "Read(./README.md)"
        )
        assert self.verdict(policy, ws, "cat READ*") == Verdict(
            "deny",
            f"`cat READ*` reads READ* (as {ws.root / 'README.md'}), denied by rule Read(./README.md)",
            "Read(./README.md)",
        )
        assert self.verdict(policy, ws, "echo x > o.txt") == Verdict(
            "deny", "`echo x > o.txt` writes o.txt, denied by rule Write(./o.txt)", "Write(./o.txt)"
        )
        # a Read rule judges what a read-only command reads: another program's arguments are not files it reads
        assert self.verdict(policy, ws, "python README.md").behavior == "ask"

    def test_an_unparsable_line(self, ws: Workspace) -> None:
        """It asks; plan mode refuses it and bypassPermissions allows it, each naming itself."""
        problem = "cannot parse 'ls <> x' as a shell command"
        assert self.verdict(Policy(), ws, "ls <> x") == Verdict(
            "ask", f"{problem}, so it cannot be checked before it runs"
        )
        assert self.verdict(Policy(mode="plan"), ws, "ls <> x") == Verdict(
            "deny", f"{problem}; plan mode runs only commands known to be read-only", "plan mode"
        )
        assert self.verdict(Policy(mode="bypassPermissions"), ws, "ls <> x") == Verdict(
            "allow", rule="bypassPermissions mode"
        )

    @pytest.mark.parametrize(
        "command",
        [
            "cd /tmp",
            "echo hi",
            "printf x",
            "true",
            "false",
            ":",
            "pwd",
            "test -n x",
            "[ -n x ]",
            '"[" -n x ]',
            "[[ -n x ]]",
        ],
    )
    def test_what_runs_anywhere_runs_after_cd_out_even_in_plan_mode(self, ws: Workspace, command: str) -> None:
        """These read no file, so they are harmless whatever the directory; `ls` there is not."""
        assert self.verdict(Policy(mode="plan"), ws, f"cd / && {command}").behavior == "allow"
        assert self.verdict(Policy(mode="plan"), ws, "cd / && ls").behavior == "deny"

    @pytest.mark.parametrize("command", ["PATH=/tmp LD_PRELOAD=x.so && ls", "PATH=/tmp HOME=/ ; cat README.md"])
    def test_two_assignments_on_a_line_are_judged(self, ws: Workspace, command: str) -> None:
        """Two or more `NAME=value` with no command (tree-sitter's `variable_assignments`) were dropped by the
        parser, so `PATH=/tmp LD_PRELOAD=x.so && ls` was allowed while `PATH=/tmp && ls` asked."""
        assert self.verdict(Policy(), ws, command).behavior == "ask"
        assert self.verdict(Policy(mode="plan"), ws, command).behavior == "deny"
        assert self.verdict(Policy(), ws, "a=1 b=2 && ls").behavior == "allow"

    def test_a_line_of_assignments_names_what_it_sets(self, ws: Workspace) -> None:
        verdict = self.verdict(Policy(), ws, "PATH=/tmp LD_PRELOAD=a=b")
        assert verdict == Verdict(
            "ask", "`PATH=/tmp LD_PRELOAD=a=b` sets PATH, LD_PRELOAD, which can change what the commands after it run"
        )

    def test_a_redirection_with_no_command(self, ws: Workspace) -> None:
        verdict = self.verdict(Policy(), ws, "> a.txt")
        assert verdict == Verdict("ask", "`> a.txt` writes a.txt with no command", suggestions=("Bash(> a.txt)",))
        assert self.verdict(Policy(), ws, "echo x > a.txt").reason == "`echo x > a.txt` writes a.txt"

    def test_an_edit_rule_allows_a_redirection_into_its_file(self, ws: Workspace) -> None:
        assert (
            self.verdict(Policy(allow=rules("Edit(./a.txt)", base=ws.root)), ws, "echo x > a.txt").behavior == "allow"
        )
        assert self.verdict(Policy(allow=rules("Edit(./b.txt)", base=ws.root)), ws, "echo x > a.txt").behavior == "ask"

    def test_the_sandbox_allows_bash_but_not_what_an_ask_rule_names(self, ws: Workspace) -> None:
        """autoAllowBashIfSandboxed: bash runs unasked in the sandbox, naming it, except where an ask rule matches
        a simple command (seen through a wrapper too); plan mode still refuses what writes."""
        boxed = Workspace(ws.root, sandbox=Sandbox())
        assert self.verdict(Policy(), boxed, "python x.py") == Verdict(
            "allow", rule="sandbox (autoAllowBashIfSandboxed)"
        )
        assert self.verdict(Policy(), ws, "python x.py").behavior == "ask"
        asking = Policy(ask=rules("Bash(python:*)"))
        for command in ("nice python x.py", "ls; python x.py", "FOO=1 python x.py", "/usr/bin/python x.py"):
            assert self.verdict(asking, boxed, command) == Verdict(
                "ask", f"`{command}` matches ask rule Bash(python:*)", "Bash(python:*)", forced=True
            )
        assert self.verdict(asking, boxed, "ls").behavior == "allow"
        assert self.verdict(Policy(mode="plan"), boxed, "python x.py").rule == "plan mode"

    def test_a_rule_naming_inline_code_allows_it_only_as_written(self, ws: Workspace) -> None:
        """`Bash(python3 -c *)` allows the inline code; with `FOO=1` before it the code still cannot be checked."""
        policy = Policy(allow=rules("Bash(python3 -c *)"))
        assert self.verdict(policy, ws, "python3 -c 'print(1)'").behavior == "allow"
        command = "FOO=1 python3 -c 'print(1)'"
        assert self.verdict(policy, ws, command).reason == (
            f"`{command}` cannot be checked before it runs (python3 runs code given on the command line or its input)"
        )

    def test_plan_mode_refuses_a_glob_that_reaches_outside(self, ws: Workspace, tmp_path: Path) -> None:
        """`cat *` reads what a link in the workspace leads to: plan mode refuses it (it is not only a question)."""
        (tmp_path / "elsewhere").mkdir()
        (ws.root / "out").symlink_to(tmp_path / "elsewhere")
        assert self.verdict(Policy(mode="plan"), ws, "cat src/*").behavior == "allow"
        assert self.verdict(Policy(mode="plan"), ws, "cat *").behavior == "deny"
        assert self.verdict(Policy(mode="plan"), ws, "cat out/*").behavior == "deny"

    def test_a_heredoc_with_no_command_says_what_it_opens(self, ws: Workspace) -> None:
        verdict = self.verdict(Policy(), ws, "< README.md <<EOF\nhi\nEOF")
        assert verdict == Verdict("ask", "`< README.md` opens ?, README.md", suggestions=("Bash(<< < README.md)",))

    def test_home_is_expanded_to_where_it_leads(
        self, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`$HOME` in a command is the home resolved, as a deny rule naming the real directory spells it."""
        real = tmp_path / "real-home"
        real.mkdir()
        (tmp_path / "home-link").symlink_to(real)
        monkeypatch.setenv("HOME", str(tmp_path / "home-link"))
        policy = Policy(deny=rules(f"Bash(cat {real}/secret)"))
        assert self.verdict(policy, ws, "cat $HOME/secret").behavior == "deny"

    def test_the_whole_verdict_of_an_ask_rule_on_bash(self, ws: Workspace) -> None:
        """An ask rule names the simple command it matched; a Write rule asks about a redirection into its file."""
        assert self.verdict(Policy(ask=rules("Bash(python:*)")), ws, "ls && python x.py") == Verdict(
            "ask", "`python x.py` matches ask rule Bash(python:*)", "Bash(python:*)", forced=True
        )
        assert self.verdict(Policy(ask=rules("Write(./o.txt)", base=ws.root)), ws, "echo x > o.txt") == Verdict(
            "ask", "`echo x > o.txt` matches ask rule Write(./o.txt)", "Write(./o.txt)", forced=True
        )

    def test_plan_mode_refuses_a_compound_command_saying_why(self, ws: Workspace) -> None:
        assert self.verdict(Policy(mode="plan"), ws, "(ls)") == Verdict(
            "deny",
            "`(ls)` uses a subshell ( ), which no rule allows as a whole; plan mode runs only commands known to be "
            "read-only",
            "plan mode",
        )


class TestPolicyRecord:
    """What a journal records of the policy and reads back, settings, modes, and MCP tools a deny rule hides: a
    rule lost on the way back would allow what it denied."""

    def test_a_policy_survives_its_journal(self, ws: Workspace) -> None:
        policy = Policy(
            mode="acceptEdits",
            allow=rules("Bash(ls:*)"),
            ask=rules("Bash(python:*)"),
            deny=rules("Read(./secret)", base=ws.root),
            directories=(ws.root / "src",),
        )
        policy.remember(parse_rule("Bash(make:*)"))
        data = policy.to_json()
        assert data == {
            "mode": "acceptEdits",
            "allow": ["Bash(ls:*)", "Bash(make:*)"],
            "ask": ["Bash(python:*)"],
            "deny": ["Read(./secret)"],
            "directories": [str(ws.root / "src")],
        }
        back = Policy.from_json(data, base=ws.root)
        assert (back.mode, back.directories) == ("acceptEdits", (ws.root / "src",))
        assert [(r.text, r.source, r.base) for r in (*back.allow, *back.ask, *back.deny)] == [
            ("Bash(ls:*)", "journal", ws.root),
            ("Bash(make:*)", "journal", ws.root),
            ("Bash(python:*)", "journal", ws.root),
            ("Read(./secret)", "journal", ws.root),
        ]
        assert [r.source for r in Policy.from_json(data, base=ws.root, source="x").deny] == ["x"]
        assert Policy.from_json({}, base=ws.root) == Policy()

    def test_a_policy_from_settings(self, ws: Workspace) -> None:
        perms = PermissionSettings(
            allow=rules("Bash(ls:*)"),
            ask=rules("Bash(python:*)"),
            deny=rules("Bash(curl:*)"),
            default_mode="plan",
            additional_directories=(ws.root / "src",),
        )
        policy = Policy.from_settings(Settings(permissions=perms))
        assert (policy.mode, policy.allow, policy.ask, policy.deny, policy.directories) == (
            "plan",
            perms.allow,
            perms.ask,
            perms.deny,
            perms.additional_directories,
        )
        assert Policy.from_settings(Settings(permissions=perms), mode="default").mode == "default"
        assert Policy.from_settings(Settings()).mode == "default"

    def test_set_mode(self) -> None:
        policy = Policy()
        policy.set_mode("plan")
        assert policy.mode == "plan"
        with pytest.raises(ValueError) as raised:
            policy.set_mode("nope")
        assert (
            str(raised.value)
            == "mode must be one of default, acceptEdits, plan, dontAsk, bypassPermissions (got 'nope')"
        )
        assert policy.mode == "plan"

    def test_a_bare_mcp_deny_rule_hides_the_tool(self) -> None:
        assert Policy(deny=rules("mcp__s")).hides("mcp__s__t")
        assert not Policy(deny=rules("mcp__s__other")).hides("mcp__s__t")
        assert not Policy(deny=rules("Bash")).hides("bash")
        assert not Policy(deny=rules("mcp__s__t(x)")).hides("mcp__s__t")
        assert not Policy(allow=rules("mcp__s")).hides("mcp__s__t")

    def test_mcp_rules_and_modes(self, ws: Workspace) -> None:
        tool = call("mcp__s__t")
        assert Policy(deny=rules("mcp__s")).decide(tool, ws) == Verdict(
            "deny", "mcp__s__t is denied by rule mcp__s", "mcp__s"
        )
        assert Policy(ask=rules("mcp__s__t"), mode="bypassPermissions").decide(tool, ws) == Verdict(
            "ask", "mcp__s__t matches ask rule mcp__s__t", "mcp__s__t", forced=True
        )
        assert Policy(mode="plan").decide(tool, ws) == Verdict(
            "deny", "mcp__s__t: plan mode runs no MCP tool", "plan mode"
        )
        assert Policy(mode="bypassPermissions").decide(tool, ws) == Verdict("allow", rule="bypassPermissions mode")
        assert Policy(allow=rules("mcp__s")).decide(tool, ws) == Verdict("allow", rule="mcp__s")
        assert Policy(allow=rules("mcp__*")).decide(tool, ws).behavior == "ask"
        assert Policy(allow=rules("mcp__other")).decide(tool, ws).behavior == "ask"


class TestRules:
    """``fsm.policy.rules``: which tools an MCP rule covers, where a path rule is anchored, what does not parse."""

    @pytest.mark.parametrize(
        ("rule", "tool", "covered"),
        [
            ("mcp__*", "mcp__s__t", True),
            ("mcp__*", "bash", False),
            ("mcp__s", "mcp__s__t", True),
            ("mcp__s", "mcp__s__t__u", True),
            ("mcp__s__*", "mcp__s__t", True),
            ("mcp__s__t", "mcp__s__t", True),
            ("mcp__s__t", "mcp__s__u", False),
            ("mcp__s", "mcp__other__t", False),
            ("mcp__s", "bash", False),
        ],
    )
    def test_what_an_mcp_rule_covers(self, rule: str, tool: str, covered: bool) -> None:
        assert parse_rule(rule).covers(tool) is covered
        assert Policy(deny=rules(rule)).hides(tool) is covered

    def test_claude_name(self) -> None:
        assert (claude_name("bash"), claude_name("mcp__s__t"), claude_name("Skill")) == ("Bash", "mcp__s__t", "Skill")

    @pytest.mark.parametrize(
        ("spec", "anchor"),
        [
            ("//etc/x", ("/", "/etc/x")),
            ("~", ("HOME", "/**")),
            ("~/", ("HOME", "/**")),
            ("~/a", ("HOME", "/a")),
            ("~/.ssh/**", ("HOME", "/.ssh/**")),
            ("./src", ("BASE", "/src")),
            ("src/*.py", ("BASE", "src/*.py")),
            ("~x", ("BASE", "~x")),
        ],
    )
    def test_where_a_path_rule_is_anchored(self, tmp_path: Path, spec: str, anchor: tuple[str, str]) -> None:
        places = {"/": Path("/"), "HOME": tmp_path / "home", "BASE": tmp_path / "base"}
        rule = parse_rule(f"Read({spec})", base=tmp_path / "base")
        assert rule.anchor(home=tmp_path / "home") == (places[anchor[0]], anchor[1])
        if anchor[0] == "HOME":
            assert rule.anchor() == (Path.home(), anchor[1])

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (7, "rule 7 must be a string"),
            ("Read x(y)", "rule 'Read x(y)' must be Tool or Tool(specifier), e.g. Bash(git diff:*) or Read(./.env)"),
            ("Read(x) y", "rule 'Read(x) y' has text after ')'"),
            ("Bash*", "rule 'Bash*': only an MCP rule ends its name with '*' (mcp__server__*)"),
            ("Read(a\0b)", "rule 'Read(a\\x00b)' holds a NUL byte"),
        ],
    )
    def test_what_does_not_parse(self, text: object, message: str) -> None:
        with pytest.raises(RuleError) as raised:
            parse_rule(text)  # type: ignore[arg-type]
        assert str(raised.value) == message

    def test_a_nul_byte_is_refused_only_in_a_path(self) -> None:
        assert parse_rule("Bash(echo a\0b)").specifier == "echo a\0b"

    def test_split_rules(self) -> None:
        assert split_rules("Bash(git diff:*) Read,Edit(src/**)") == ["Bash(git diff:*)", "Read", "Edit(src/**)"]
        assert split_rules("Bash(a, b) ,Edit(x y)") == ["Bash(a, b)", "Edit(x y)"]
        assert split_rules("mcp__Xs") == ["mcp__Xs"]


class TestMatching:
    """``fsm.policy.matching``: rules against lines with no command, inline code, the rules an ask offers, and
    path rules against globs and directories."""

    def verdict(self, policy: Policy, ws: Workspace, command: str) -> Verdict:
        return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws)

    def test_rules_on_a_line_with_no_command(self, ws: Workspace) -> None:
        """`Bash(> a.txt)` allows exactly that line; a bare `Bash` allow rule does not allow setting PATH."""
        assert self.verdict(Policy(allow=rules("Bash(> a.txt)")), ws, "> a.txt").behavior == "allow"
        assert self.verdict(Policy(allow=rules("Bash")), ws, "PATH=/tmp").behavior == "ask"

    def test_a_rule_naming_the_code_itself_allows_it(self, ws: Workspace) -> None:
        for rule in ("Bash(python3 -c print(1))", "Bash(python3 -c print*)"):
            assert self.verdict(Policy(allow=rules(rule)), ws, "python3 -c 'print(1)'").behavior == "allow"

    @pytest.mark.parametrize(
        ("command", "suggestions"),
        [
            ("FOO=1 echo x > a.txt", ()),
            ("echo x > a.txt", ("Bash(echo x > a.txt)",)),
            ("node -m x y", ("Bash(node:*)",)),
            ("python -m", ("Bash(python:*)",)),
            ("python -m pytest", ("Bash(python -m pytest:*)",)),
            ("./bin/python3.12 -m pip install x", ("Bash(./bin/python3.12 -m pip:*)",)),
        ],
    )
    def test_the_rules_an_ask_offers(self, ws: Workspace, command: str, suggestions: tuple) -> None:
        """No rule can allow a command with `NAME=value` before it; a module run names the module."""
        assert self.verdict(Policy(), ws, command).suggestions == suggestions

    def test_a_glob_is_judged_as_written_even_when_it_matches_nothing(self, ws: Workspace) -> None:
        verdict = self.verdict(Policy(deny=rules("Read(./*.env)", base=ws.root)), ws, "cat *.env")
        assert verdict.behavior == "deny"

    def test_a_path_rule_is_about_its_own_tool_and_a_file_is_no_directory(self, ws: Workspace) -> None:
        assert self.verdict(Policy(deny=rules("Read(./README.md/**)", base=ws.root)), ws, "cat README.md") == Verdict(
            "allow"
        )
        assert self.verdict(Policy(deny=rules("Edit(./README.md)", base=ws.root)), ws, "cat README.md") == Verdict(
            "allow"
        )
        assert self.verdict(Policy(deny=rules("Read(./src/**)", base=ws.root)), ws, "ls src").behavior == "deny"


class TestHooks:
    """``fsm.policy.hooks``: which PreToolUse answer wins and whose it is, how a failing hook is logged, the
    lock, PreCompact, and the built-in hooks' words."""

    def event(self, ws: Workspace, name: str = "PreToolUse", **fields: object) -> HookEvent:
        return HookEvent(name, "root", 0, ws, tool_call=fields.pop("tool_call", read("README.md")), **fields)  # type: ignore[arg-type]

    def test_the_first_of_equally_strict_answers_wins_and_blank_strings_say_nothing(self, ws: Workspace) -> None:
        hooks = Hooks()
        assert hooks.context is None
        assert hooks.pre_tool_use(self.event(ws)) == PreToolVerdict(None, None, ())
        hooks.on("PreToolUse", lambda e: "   ")
        assert hooks.pre_tool_use(self.event(ws)) == PreToolVerdict(None, None, ())

        def first(e: HookEvent) -> Deny:
            return Deny("first")

        def second(e: HookEvent) -> Deny:
            return Deny("second")

        hooks.on("PreToolUse", first)
        hooks.on("PreToolUse", second)
        assert hooks.pre_tool_use(self.event(ws)) == PreToolVerdict(Deny("first"), "first", ())

    def test_a_hook_is_named_by_its_hook_name(self, ws: Workspace) -> None:
        def guard(e: HookEvent) -> Deny:
            return Deny("no")

        guard.hook_name = "./guard.sh"  # type: ignore[attr-defined]
        hooks = Hooks()
        hooks.on("PreToolUse", guard)
        assert hooks.pre_tool_use(self.event(ws)).by == "./guard.sh"

    def test_a_raising_hook_is_logged_with_its_traceback(self, ws: Workspace, caplog: pytest.LogCaptureFixture) -> None:
        def broken(e: HookEvent) -> None:
            raise RuntimeError("boom")

        hooks = Hooks()
        for name in ("PreToolUse", "Stop"):
            hooks.on(name, broken)
        caplog.set_level("DEBUG", logger="fsm.policy.hooks")
        verdict = hooks.pre_tool_use(self.event(ws))
        assert verdict.decision == Deny(
            "Permission denied: PreToolUse hook broken failed (boom), so the call is blocked"
        )
        assert hooks.fire_each(self.event(ws, "Stop")) == ([], ["Stop hook broken failed: boom"])
        logged = [(r.getMessage(), r.exc_info[0] if r.exc_info else None) for r in caplog.records]
        assert logged == [(f"hook {broken!r} raised", RuntimeError)] * 2

    def test_only_a_thread_safe_hook_runs_without_the_lock(self, ws: Workspace) -> None:
        hooks = Hooks()
        seen: list[tuple[str, bool]] = []

        def locked(e: HookEvent) -> None:
            seen.append((e.name, hooks._lock._is_owned()))  # type: ignore[attr-defined]

        def free(e: HookEvent) -> None:
            seen.append((e.name, hooks._lock._is_owned()))  # type: ignore[attr-defined]

        free.thread_safe = True  # type: ignore[attr-defined]
        for callback in (locked, free):
            hooks.on("PreToolUse", callback)
        hooks.pre_tool_use(self.event(ws))
        assert seen == [("PreToolUse", True), ("PreToolUse", False)]

    def test_pretooluse_hooks_decide_elsewhere(self, ws: Workspace) -> None:
        with pytest.raises(ValueError) as raised:
            Hooks().fire_each(self.event(ws))
        assert str(raised.value) == "PreToolUse hooks decide: use pre_tool_use()"
        with pytest.raises(ValueError) as unknown:
            Hooks().on("Nope", lambda e: None)
        assert str(unknown.value) == f"unknown hook event 'Nope' (expected one of {', '.join(EVENTS)})"

    def test_pre_compact(self, ws: Workspace, caplog: pytest.LogCaptureFixture) -> None:
        """The first Deny blocks, strings are joined, notices kept, a raising hook noted and logged (the others
        still run); each hook is told the event, under the lock unless it is thread-safe."""
        hooks = Hooks()
        seen: list[tuple[str, bool]] = []

        def broken(e: HookEvent) -> None:
            raise RuntimeError("boom")

        def free(e: HookEvent) -> None:
            seen.append((e.name, hooks._lock._is_owned()))  # type: ignore[attr-defined]

        free.thread_safe = True  # type: ignore[attr-defined]
        hooks.on("PreCompact", broken)
        for answer in (Notice("n"), "keep names", Deny("not now"), Deny("later"), "and paths"):
            hooks.on("PreCompact", lambda e, a=answer: a)
        hooks.on("PreCompact", free)
        hooks.on("PreCompact", lambda e: seen.append((e.name, hooks._lock._is_owned())))  # type: ignore[attr-defined]
        caplog.set_level("DEBUG", logger="fsm.policy.hooks")
        hooks.on("PreToolUse", lambda e: Deny("elsewhere"))
        block, text, notes = hooks.pre_compact(self.event(ws, "PreCompact", trigger="manual"))
        assert (block, text, notes) == (
            Deny("not now"),
            "keep names\n\nand paths",
            ["PreCompact hook broken failed: boom", "n"],
        )
        assert seen == [("PreCompact", False), ("PreCompact", True)]
        logged = [(r.getMessage(), r.exc_info[0] if r.exc_info else None) for r in caplog.records]
        assert logged == [(f"hook {broken!r} raised", RuntimeError)]
        assert Hooks().pre_compact(self.event(ws, "PreCompact")) == (None, None, [])

    def test_the_built_in_hooks_words(self, ws: Workspace) -> None:
        assert log_hook(self.event(ws, tool_call={"name": "t", "input": {"a": 1, "b": 2, "c": 3}})) == Notice("t(1, 2)")
        assert log_hook(self.event(ws, tool_call={"name": "t", "input": "raw"})) == Notice("t(raw)")
        with pytest.raises(AssertionError):
            large_output_hook(HookEvent("PostToolUse", "root", 0, ws, output=ToolOutput("x" * 100_001)))
        assert blocked_prompt_message(["a", "b"], "p") == (
            "UserPromptSubmit operation blocked by hook:\na\nb\n\nOriginal prompt: p"
        )
        assert HookContext("s").agent_transcript_path("a") is None
        assert HookContext("s", "/t").agent_transcript_path("a") == "/t/s/subagents/agent-a.jsonl"


class TestJudgeWords:
    """What a bash verdict says: the mode, every question joined, a long command clipped."""

    def verdict(self, policy: Policy, ws: Workspace, command: str) -> Verdict:
        return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws)

    def test_bypass_mode_names_itself_and_every_question_is_joined(self, ws: Workspace) -> None:
        assert self.verdict(Policy(mode="bypassPermissions"), ws, "python x.py") == Verdict(
            "allow", rule="bypassPermissions mode"
        )
        assert self.verdict(Policy(), ws, "python a.py; node b.js") == Verdict(
            "ask",
            "`python a.py` is not a built-in read-only command; `node b.js` is not a built-in read-only command",
            suggestions=("Bash(python:*)", "Bash(node:*)"),
        )

    def test_a_long_command_is_clipped_at_80_characters(self, ws: Workspace) -> None:
        policy = Policy(deny=rules("Bash(echo:*)"))
        whole = "echo " + "a" * 75
        assert self.verdict(policy, ws, whole).reason == f"`{whole}` is denied by rule Bash(echo:*)"
        clipped = self.verdict(policy, ws, whole + "b").reason
        assert clipped == f"`{whole[:79]}…` is denied by rule Bash(echo:*)"

    def test_a_write_to_a_protected_path_asks_in_every_mode(self, ws: Workspace) -> None:
        """Writing .git/config asks, forced, even in bypassPermissions, naming the Edit rule that would allow it;
        reading it does not."""
        policy = Policy(mode="bypassPermissions")
        protected = ("protected path .git/config", ("Edit(./.git/config)",), True)
        write = policy.decide(call("write_file", path=".git/config", content="x"), ws)
        assert write.behavior == "ask"
        assert write.reason == "write_file .git/config writes a protected path: .git/config"
        assert (write.rule, write.suggestions, write.forced) == protected
        bash = self.verdict(policy, ws, "echo x > .git/config")
        assert bash.reason == "`echo x > .git/config` writes a protected path: .git/config"
        assert (bash.behavior, bash.rule, bash.suggestions, bash.forced) == ("ask", *protected)
        assert policy.decide(call("read_file", path=".git/config"), ws).behavior == "allow"

    def test_an_unknown_mode_is_refused_naming_the_modes(self) -> None:
        with pytest.raises(ValueError) as raised:
            Policy(mode="nope")
        assert (
            str(raised.value)
            == "mode must be one of default, acceptEdits, plan, dontAsk, bypassPermissions (got 'nope')"
        )

    def test_a_call_without_a_name_matches_no_rule(self, ws: Workspace) -> None:
        """The tool's own input check answers a nameless call; no rule, even one named like a placeholder, does."""
        assert Policy(deny=rules("XXXX")).decide({"id": "t", "input": {}}, ws) == Verdict("allow")

    def test_a_protected_write_by_bash_offers_the_commands_own_rule_too(self, ws: Workspace) -> None:
        verdict = Policy().decide({"name": "bash", "id": "t", "input": {"command": "echo x > .git/config"}}, ws)
        assert verdict.suggestions == ("Edit(./.git/config)", "Bash(echo x > .git/config)")


class TestProtected:
    """``fsm.policy.protected.guard`` through the judge: what the forced ask says and offers."""

    def verdict(self, policy: Policy, ws: Workspace, command: str) -> Verdict:
        return policy.decide({"name": "bash", "id": "t", "input": {"command": command}}, ws)

    def test_every_protected_path_is_named_after_the_rules_question(self, ws: Workspace) -> None:
        command = "echo x > .git/config; echo y > .bashrc"
        assert self.verdict(Policy(), ws, command) == Verdict(
            "ask",
            "`echo x > .git/config` writes .git/config; `echo y > .bashrc` writes .bashrc; "
            f"`{command}` writes a protected path: .git/config, .bashrc",
            "protected path .git/config, .bashrc",
            ("Edit(./.git/config)", "Edit(./.bashrc)", "Bash(echo x > .git/config)", "Bash(echo y > .bashrc)"),
            forced=True,
        )

    def test_no_rule_is_offered_when_none_could_allow_the_command(self, ws: Workspace) -> None:
        verdict = self.verdict(Policy(), ws, "(echo x > .git/config)")
        assert (verdict.behavior, verdict.forced, verdict.suggestions) == ("ask", True, ())

    @pytest.mark.parametrize("rule", ["Edit", "Bash(echo:*)", "Edit(**)"])
    def test_only_an_edit_rule_naming_the_path_waives_the_question(self, ws: Workspace, rule: str) -> None:
        assert self.verdict(Policy(mode="bypassPermissions", allow=rules(rule)), ws, "echo x > .git/config") == Verdict(
            "ask",
            "`echo x > .git/config` writes a protected path: .git/config",
            "protected path .git/config",
            ("Edit(./.git/config)",),
            forced=True,
        )
        waived = Policy(mode="bypassPermissions", allow=rules("Edit(./.git/config)", base=ws.root))
        assert self.verdict(waived, ws, "echo x > .git/config").behavior == "allow"

    @pytest.mark.parametrize(
        "command", ["echo x > .gi?/config", "echo x >> ?git/config", "echo x > src/../.gi[t]/config"]
    )
    def test_a_glob_redirection_onto_a_protected_file_asks(self, ws: Workspace, command: str) -> None:
        """bash writes the one file a glob target matches: `> .gi?/config` writes .git/config, and was allowed in
        bypassPermissions (the target was unknown and the line names no protected path). An Edit rule naming the
        file waives the question, as for the file written plainly."""
        (ws.root / ".git").mkdir()
        (ws.root / ".git" / "config").write_text("[core]\n")
        verdict = self.verdict(Policy(mode="bypassPermissions"), ws, command)
        assert (verdict.behavior, verdict.rule, verdict.suggestions, verdict.forced) == (
            "ask",
            "protected path .git/config",
            ("Edit(./.git/config)",),
            True,
        )
        waiver = rules("Edit(./.git/config)", base=ws.root)
        assert self.verdict(Policy(mode="bypassPermissions", allow=waiver), ws, command).behavior == "allow"
        assert self.verdict(Policy(mode="bypassPermissions"), ws, "echo x > src/*.py").behavior == "allow"

    @pytest.mark.parametrize(
        "command", ["git config core.pager x", "cd src && git config core.pager x", "git -C src config core.pager x"]
    )
    def test_git_config_in_a_submodule_writes_the_superprojects_modules_config(
        self, tmp_path: Path, command: str
    ) -> None:
        """A submodule's `.git` is a file naming its git directory (`gitdir: ../.git/modules/sub`): `git config`
        there, from the top or a subdirectory, writes that directory's config, a protected path."""
        root = tmp_path / "super" / "sub"
        (root / "src").mkdir(parents=True)
        modules = tmp_path / "super" / ".git" / "modules" / "sub"
        modules.mkdir(parents=True)
        (modules / "config").write_text("[core]\n")
        (root / ".git").write_text("gitdir: ../.git/modules/sub\n")
        verdict = self.verdict(Policy(mode="bypassPermissions"), Workspace(root), command)
        assert (verdict.behavior, verdict.rule, verdict.suggestions) == (
            "ask",
            "protected path .git/config",
            (f"Edit(/{modules / 'config'})",),
        )

    @pytest.mark.parametrize(
        ("command", "entry"),
        [
            ('cd "$(git rev-parse --git-dir)" && echo x > config', ".git/config"),
            ("cd - && echo x > hooks/pre-commit", ".git/hooks"),
            ("popd && echo x > config", ".git/config"),
            ('pushd "$D" && echo x > config', ".git/config"),
            ("cd $D && echo x > info/exclude", ".git/info"),
        ],
    )
    def test_a_write_after_cd_to_an_unknown_directory(self, ws: Workspace, command: str, entry: str) -> None:
        """After a `cd` known only when it runs, a relative write of a name protected inside .git asks, naming
        it, with no rule to offer; an absolute path or another name is judged as usual."""
        verdict = self.verdict(Policy(mode="bypassPermissions"), ws, command)
        assert (
            verdict.reason
            == f"`{command}` names {entry}, a protected path, and may write it in a way known only when it runs"
        )
        assert (verdict.behavior, verdict.rule, verdict.suggestions) == ("ask", f"protected path {entry}", ())
        for harmless in ('cd "$D" && echo x > notes.txt', 'cd "$D" && echo x > /tmp/x/config'):
            assert self.verdict(Policy(mode="bypassPermissions"), ws, harmless).behavior == "allow"


class TestProtectedPaths:
    """How ``fsm.policy.protected`` finds the path a write reaches: after a ``cd`` known only when it runs, through
    a hard link, in git's ``core.hooksPath`` and in the XDG directories (written from protected.py's survivors)."""

    def test_after_a_cd_known_only_when_it_runs_the_word_decides(self, ws: Workspace) -> None:
        """A relative write after `cd "$D"` is one hit with no path and no rule: a protected name in the word, or a
        path protected inside .git (a submodule's or worktree's too), and bypassPermissions asks about it."""
        places = Places(ws.root)
        cases = {
            ".claude/settings.json": ".claude",
            "config": ".git/config",
            "modules/sub/config": ".git/config",
            "worktrees/w/hooks/pre-commit": ".git/hooks",
            "modules/a/modules/b/info/exclude": ".git/info",
        }
        for word, entry in cases.items():
            command = f'cd "$D" && touch {word}'
            assert bash_writes(command, places=places) == [Hit(word, "", entry, None)], command
            verdict = Policy(mode="bypassPermissions").decide({"name": "bash", "input": {"command": command}}, ws)
            assert (verdict.behavior, verdict.rule, verdict.suggestions) == ("ask", f"protected path {entry}", ())
        for harmless in ("modules/sub/notes.txt", "objects", "sub/config"):
            assert bash_writes(f'cd "$D" && touch {harmless}', places=places) == [], harmless

    def test_a_cd_inside_a_substitution_does_not_move_the_line(self, ws: Workspace) -> None:
        """`$(cd "$D"; pwd)` runs in a subshell: the commands after it still run at the root, where `config` is no
        protected path (the parser tracks the directory; bash_writes follows it)."""
        places = Places(ws.root)
        assert bash_writes('echo "$(cd "$D"; pwd)" && touch config', places=places) == []
        assert bash_writes('cd "$D"; touch config', places=places) == [Hit("config", "", ".git/config", None)]
        assert bash_writes("cd - && cd src && touch config", places=places) == [Hit("config", "", ".git/config", None)]

    def test_a_hard_link_to_a_file_under_a_protected_directory_or_at_home(self, ws: Workspace, tmp_path: Path) -> None:
        """The hard-link scan reads the files the protected directories hold (nested too) and home's start-up
        files: a second name of either is a write of it."""
        home = tmp_path / "home"
        home.mkdir()
        nested = ws.root / ".claude" / "agents"
        nested.mkdir(parents=True)
        (nested / "a.md").write_text("x")
        (home / ".bashrc").write_text("x")
        os.link(nested / "a.md", ws.root / "h")
        os.link(home / ".bashrc", ws.root / "b")
        places = Places(ws.root, home=home)
        shown = "h (a hard link to .claude/agents/a.md)"
        assert bash_writes("echo x >> h", places=places) == [
            Hit(shown, str(nested / "a.md"), ".claude", "Edit(./.claude/agents/a.md)")
        ]
        assert bash_writes("echo x >> b", places=places) == [
            Hit("b (a hard link to " + str(home / ".bashrc") + ")", str(home / ".bashrc"), ".bashrc", "Edit(~/.bashrc)")
        ]

    def test_the_hard_link_scan_reads_a_bounded_tree(self, ws: Workspace) -> None:
        """The scan of a protected directory stops after 256 directories (a few hundred files at most): a link to a
        file nested deeper is not looked for, one a level up is."""
        deep = ws.root / ".claude"
        for _ in range(256):  # .claude is the first directory walked, the 256th d the 257th
            deep = deep / "d"
        deep.mkdir(parents=True)
        (deep / "far").write_text("x")
        (deep.parent / "near").write_text("x")
        os.link(deep / "far", ws.root / "f")
        os.link(deep.parent / "near", ws.root / "n")
        places = Places(ws.root)
        assert bash_writes("echo x >> f", places=places) == []
        assert [h.entry for h in bash_writes("echo x >> n", places=places)] == [".claude"]

    def test_the_users_hooks_path_is_read_when_the_repositorys_config_is_missing_or_no_file(
        self, ws: Workspace, tmp_path: Path
    ) -> None:
        """core.hooksPath set in ~/.gitconfig protects that directory (named by its absolute path when outside the
        workspace) whether the repository's .git/config is missing or is no regular file; other paths are not."""
        home, hooks = tmp_path / "home", tmp_path / "githooks"
        home.mkdir()
        (home / ".gitconfig").write_text(f"[core]\n\thooksPath = {hooks}\n")
        places = Places(ws.root, home=home)
        for config_is in ("missing", "a directory"):
            if config_is == "a directory":
                (ws.root / ".git" / "config").mkdir(parents=True)
            assert file_writes(str(hooks / "pre-commit"), places=places) == [
                Hit(str(hooks / "pre-commit"), str(hooks / "pre-commit"), str(hooks), f"Edit(/{hooks}/pre-commit)")
            ], config_is
            assert file_writes(str(hooks), places=places)[0].entry == str(hooks)
            assert file_writes(str(tmp_path / "githooks.txt"), places=places) == []
            assert file_writes("notes.txt", places=places) == []

    def test_the_hooks_path_is_read_again_when_the_config_changes(self, ws: Workspace) -> None:
        """The configuration is read again when its size or its modification time changes (either alone)."""
        config = ws.root / ".git" / "config"
        config.parent.mkdir()
        places = Places(ws.root)

        def hooks_dir(value: str, mtime_ns: int) -> list[str]:
            config.write_text(f"[core]\n\thooksPath = {value}\n")
            os.utime(config, ns=(mtime_ns, mtime_ns))
            return [d for d in ("aa", "bb", "ccc") if file_writes(f"{d}/x", places=places)]

        assert hooks_dir("aa", 10**18) == ["aa"]
        assert hooks_dir("bb", 2 * 10**18) == ["bb"]  # the same size, another time
        assert hooks_dir("ccc", 2 * 10**18) == ["ccc"]  # the same time, another size

    def test_the_xdg_directories_are_read_from_the_environment_each_time(
        self, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """agentfsm's state and configuration directories and git's are protected where $XDG_STATE_HOME,
        $XDG_CONFIG_HOME or, without them, $HOME put them, as the variables are at the time of the call."""
        places = Places(ws.root, home=tmp_path / "elsewhere")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
        entries = [h.entry for h in file_writes(str(tmp_path / "cfg" / "git" / "config"), places=places)]
        assert entries == ["git"]
        assert file_writes(str(tmp_path / "cfg" / "other"), places=places) == []
        monkeypatch.delenv("XDG_CONFIG_HOME")
        monkeypatch.delenv("XDG_STATE_HOME")
        for home in ("h1", "h2"):
            monkeypatch.setenv("HOME", str(tmp_path / home))
            state = tmp_path / home / ".local" / "state" / "agentfsm" / "trust.json"
            assert [h.entry for h in file_writes(str(state), places=places)] == ["agentfsm"], home
            config = tmp_path / home / ".config" / "git" / "config"
            assert [h.entry for h in file_writes(str(config), places=places)] == ["git"], home

    def test_a_brace_expansion_too_long_to_look_at_is_judged_by_what_it_names(self, ws: Workspace) -> None:
        """`touch {a{1..300},.bashrc}` writes .bashrc among 300 others: past the expansion limit the word counts
        when it names a protected path (it was allowed in bypassPermissions), and not when it names none."""
        command = "touch {a{1..300},.bashrc}"
        places = Places(ws.root)
        assert bash_writes(command, places=places) == [Hit("{a{1..300},.bashrc}", "", ".bashrc", None)]
        verdict = Policy(mode="bypassPermissions").decide({"name": "bash", "input": {"command": command}}, ws)
        assert (verdict.behavior, verdict.rule, verdict.forced) == ("ask", "protected path .bashrc", True)
        assert bash_writes("touch {a{1..300},b}", places=places) == []
        assert [h.path for h in bash_writes("touch {a,b/../.bashrc}", places=places)] == [str(ws.root / ".bashrc")]

    def test_git_config_writes_the_repositorys_config_or_one_known_at_run_time(self, ws: Workspace) -> None:
        """`git config` writes the config of the .git it finds upward (exactly that file); after a `cd` known only
        at run time, the .git/config of where it runs (from -C's directory), a hit with no path or rule."""
        (ws.root / ".git").mkdir()
        config = str(ws.root / ".git" / "config")
        places = Places(ws.root)
        for command in ("git config a.b c", "cd src && git config a.b c"):
            assert bash_writes(command, places=places) == [
                Hit(".git/config", config, ".git/config", "Edit(./.git/config)")
            ], command
        assert bash_writes('cd "$D" && git config a.b c', places=places) == [
            Hit("./.git/config", "", ".git/config", None)
        ]
        assert bash_writes('cd "$D" && git -C sub config a.b c', places=places) == [
            Hit("./sub/.git/config", "", ".git/config", None)
        ]

    def test_home_is_found_however_the_variable_is_spelled(self, ws: Workspace, tmp_path: Path) -> None:
        """A value the parser leaves as written (an assignment's) may start with $HOME or ${HOME}: it is home."""
        home = Path(os.environ["HOME"])
        places = Places(ws.root, home=home)
        for spelling in ("$HOME", "${HOME}"):
            command = f"GIT_CONFIG_GLOBAL={spelling}/.bashrc git config --global a.b c"
            assert bash_writes(command, places=places) == [
                Hit(f"{spelling}/.bashrc", str(home / ".bashrc"), ".bashrc", "Edit(~/.bashrc)")
            ], spelling
        assert [h.path for h in bash_writes("GIT_CONFIG_GLOBAL=$HOMEx git config --global a.b c", places=places)] == []

    def test_what_a_hit_shows_and_finds(self, ws: Workspace, tmp_path: Path) -> None:
        """A word under ~ is shown as written, another tidied; an absolute path is known after a run-time cd; each
        variant of a brace is looked at, a run-time one and a known one; `cp` into a directory writes the
        source's name there (a trailing slash dropped); a name spelled in capitals is protected too."""
        places = Places(ws.root)
        assert [h.shown for h in bash_writes("touch ~/./.bashrc ./src/../.bashrc", places=places)] == [
            "~/./.bashrc",
            ".bashrc",
        ]
        assert bash_writes(f'cd "$D" && touch {ws.root}/.bashrc', places=places) == [
            Hit(".bashrc", str(ws.root / ".bashrc"), ".bashrc", "Edit(./.bashrc)")
        ]
        assert bash_writes(f'cd "$D" && touch {{a,{ws.root}/.bashrc}}', places=places) == [
            Hit(f"{{a,{ws.root}/.bashrc}}", "", ".bashrc", None),
            Hit(".bashrc", str(ws.root / ".bashrc"), ".bashrc", "Edit(./.bashrc)"),
        ]
        for source in ("conf/.bashrc/", "conf/.bashrc"):
            assert bash_writes(f"cp -r {source} src/", places=places) == [
                Hit("src", str(ws.root / "src" / ".bashrc"), ".bashrc", "Edit(./src/.bashrc)")
            ], source
        assert bash_writes("cp -r conf/ src/", places=places) == []
        assert [h.entry for h in file_writes(".CLAUDE/settings.json", places=places)] == [".claude"]

    def test_inside_dot_git_what_is_protected(self, ws: Workspace) -> None:
        """.git itself, a submodule's or worktree's git directory, and their config/hooks; not their objects."""
        places = Places(ws.root)
        cases = {
            ".git": ".git",
            ".git/modules/sub": ".git",
            ".git/modules/sub/hooks/x": ".git/hooks",
            ".git/worktrees/w/config": ".git/config",
            ".git/worktrees/w/modules/s/info/exclude": ".git/info",
            "sub/.git": ".git",
        }
        for path, entry in cases.items():
            assert [h.entry for h in file_writes(path, places=places)] == [entry], path
        assert file_writes(".git/modules/sub/objects/ab", places=places) == []

    def test_a_link_itself_replaced_is_no_write_of_what_it_points_to(self, ws: Workspace) -> None:
        """`ln -sf other link` replaces the link: the file it pointed to (.git/config) is not written."""
        (ws.root / ".git").mkdir()
        (ws.root / ".git" / "config").write_text("x")
        (ws.root / "link").symlink_to(".git/config")
        assert bash_writes("ln -sf other link", places=Places(ws.root)) == []
        assert [h.entry for h in bash_writes("echo x >> link", places=Places(ws.root))] == [".git/config"]

    def test_only_an_edit_rule_naming_the_protected_path_waives(self, ws: Workspace) -> None:
        """A rule naming .git/config elsewhere, or a Read rule naming it, does not waive the question; one naming
        a protected file by its own name does (`Edit(./.env.local)` for `.env.*`). Two entries known only at run
        time are both named."""

        def verdict(command: str, *allow: str) -> Verdict:
            policy = Policy(mode="bypassPermissions", allow=rules(*allow, base=ws.root) if allow else ())
            return policy.decide({"name": "bash", "input": {"command": command}}, ws)

        for rule in ("Edit(./sub/.git/config)", "Read(./.git/config)", "Edit(./.env.other)"):
            assert verdict("echo x > .git/config", rule).behavior == "ask", rule
        assert verdict("echo x > .env.local", "Edit(./.env.other)").behavior == "ask"
        assert verdict("echo x > .env.local", "Edit(./.env.local)").behavior == "allow"
        command = 'cd "$D" && touch config hooks/x'
        assert verdict(command).reason == (
            f"`{command}` names .git/config, .git/hooks, a protected path, and may write it in a way known only when "
            "it runs"
        )

    def test_an_interpreters_write_names_the_path_it_mentions(self, ws: Workspace) -> None:
        assert bash_writes("python3 -c \"open('.git/config', 'a')\"", places=Places(ws.root)) == [
            Hit(".git/config", "", ".git/config", None)
        ]
        assert bash_writes('touch "$F" .bashrc', places=Places(ws.root)) == [
            Hit(".bashrc", str(ws.root / ".bashrc"), ".bashrc", "Edit(./.bashrc)")
        ]

    def test_a_recursive_write_of_the_root_shows_it(self, ws: Workspace) -> None:
        (hit,) = bash_writes(f"chmod -R 777 {ws.root}", places=Places(ws.root))
        assert hit == Hit(str(ws.root), str(ws.root), "every protected path under it", None)

    def test_a_config_that_is_not_utf8_is_still_read(self, ws: Workspace) -> None:
        """A byte that is not UTF-8 in .git/config does not stop its hooksPath being read."""
        (ws.root / ".git").mkdir()
        (ws.root / ".git" / "config").write_bytes(b"[x]\n\tname = \xff\n[core]\n\thooksPath = .husky\n")
        assert [h.entry for h in file_writes(".husky/pre-commit", places=Places(ws.root))] == [".husky"]

    def test_replacing_a_protected_name_by_a_link_is_one_write(self, ws: Workspace) -> None:
        """`ln -sf other .bashrc` writes .bashrc itself (once, however the path is spelled); a file tool's write
        of a directory writes nothing under it."""
        assert bash_writes("ln -sf other .bashrc", places=Places(ws.root)) == [
            Hit(".bashrc", str(ws.root / ".bashrc"), ".bashrc", "Edit(./.bashrc)")
        ]
        assert file_writes(str(ws.root), places=Places(ws.root)) == []

    def test_a_glob_is_matched_where_the_shell_runs(
        self, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A glob's matches are found from the directory the command runs in, whatever agentfsm's own is; an
        absolute glob also after a `cd` known only at run time (it was allowed in bypassPermissions); a word
        without glob characters is looked at once; a source whose name only ends like a protected one is none."""
        (ws.root / ".git" / "hooks").mkdir(parents=True)
        (ws.root / ".git" / "config").write_text("x")
        (ws.root / ".git" / "hooks" / "X").write_text("x")
        places = Places(ws.root)
        config = Hit(".git/config", str(ws.root / ".git" / "config"), ".git/config", "Edit(./.git/config)")
        monkeypatch.chdir(ws.root / "src")
        assert bash_writes("echo x > .gi?/config", places=places) == [config]
        assert [h.shown for h in bash_writes("cd src && touch ../.gi?/config", places=places)] == ["../.git/config"]
        command = f'cd "$D" && touch {ws.root}/.gi?/config'
        assert [(h.path, h.entry) for h in bash_writes(command, places=places)] == [(config.path, ".git/config")]
        verdict = Policy(mode="bypassPermissions").decide({"name": "bash", "input": {"command": command}}, ws)
        assert (verdict.behavior, verdict.rule) == ("ask", "protected path .git/config")
        assert [h.shown for h in bash_writes("touch .git/hooks/X", places=places)] == [".git/hooks/X"]
        assert bash_writes("cp -r conf/.bashrcX src/", places=places) == []
        assert bash_writes("cp -r / .git", places=places) == [
            Hit(".git", str(ws.root / ".git"), ".git", "Edit(./.git)")
        ]

    def test_an_unknown_target_before_a_known_one(self, ws: Workspace) -> None:
        """`> "$F" > .bashrc`: the known target is still judged; a line that does not parse counts when it names
        a protected path."""
        assert bash_writes('echo x > "$F" > .bashrc', places=Places(ws.root)) == [
            Hit(".bashrc", str(ws.root / ".bashrc"), ".bashrc", "Edit(./.bashrc)")
        ]
        assert bash_writes("echo x > .git/config (", places=Places(ws.root)) == [
            Hit(".git/config", "", ".git/config", None)
        ]

    def test_a_glob_from_a_directory_known_only_at_run_time(self, ws: Workspace) -> None:
        """A `cd` carrying a glob redirection is itself known only when it runs, so the glob cannot be matched:
        it counts when a part of it may match a protected name (`.gi?`), which bypassPermissions allowed."""
        (ws.root / ".git").mkdir()
        (ws.root / ".git" / "config").write_text("x")
        command = "cd src && echo x > ../.gi?/config"
        assert Hit("../.gi?/config", "", ".git", None) in bash_writes(command, places=Places(ws.root))
        verdict = Policy(mode="bypassPermissions").decide({"name": "bash", "input": {"command": command}}, ws)
        assert (verdict.behavior, verdict.forced) == ("ask", True)
        assert bash_writes('cd "$D" && echo x > ../*.txt', places=Places(ws.root)) == []

    def test_a_glob_inside_dot_git_after_a_run_time_cd_names_its_entry(self, ws: Workspace) -> None:
        """`hooks/*` after `cd "$D"` is .git's hooks (not whatever protected name `*` could match first)."""
        assert bash_writes('cd "$D" && touch hooks/*', places=Places(ws.root)) == [
            Hit("hooks/*", "", ".git/hooks", None)
        ]
