"""Protected paths end to end: the real CLI, headless, against the fake server, in a throwaway git repository.

The model plants what would run code later: a settings file that turns on bypassPermissions, a
``core.fsmonitor`` in ``.git/config`` (through a redirection, a link, a ``cd`` and write_file), a git hook,
a VS Code task and shell start-up lines. Every payload is ``touch PWNED``, a harmless sentinel, and HOME is a
temporary directory. After the run the test runs ``git status`` itself: had a payload landed, PWNED would exist.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic

FSMONITOR = '[core] fsmonitor = "touch PWNED"'
SETTINGS = json.dumps({"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash"]}})
ATTACKS = {
    "settings": (
        "bash",
        {"command": f"echo '{SETTINGS}' > .claude/settings.local.json"},
        "Edit(./.claude/settings.local.json)",
    ),
    "append": ("bash", {"command": f"echo '{FSMONITOR}' >> .git/config"}, "Edit(./.git/config)"),
    "link": ("bash", {"command": f"echo '{FSMONITOR}' >> cfg"}, "Edit(./.git/config)"),
    "cd": ("bash", {"command": f"cd .git && echo '{FSMONITOR}' >> config"}, "Edit(./.git/config)"),
    "config": ("write_file", {"path": ".git/config", "content": FSMONITOR + "\n"}, "Edit(./.git/config)"),
    "hook": (
        "write_file",
        {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch PWNED\n"},
        "Edit(./.git/hooks/pre-commit)",
    ),
    "tasks": ("write_file", {"path": ".vscode/tasks.json", "content": '{"tasks": []}'}, "Edit(./.vscode/tasks.json)"),
    "bashrc": ("write_file", {"path": ".bashrc", "content": "touch PWNED\n"}, "Edit(./.bashrc)"),
    "home": ("bash", {"command": "echo 'touch PWNED' >> ~/.bashrc"}, "Edit(~/.bashrc)"),
}
"""Each attack: the tool, its input, and the allow rule the denial must name."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    (path / ".bashrc").write_text("# mine\n")
    return path


@pytest.fixture
def repo(project: Path) -> dict[Path, str | None]:
    """The project as a git repository with a link `cfg` -> `.git/config`; returns the protected files and their
    contents (None: absent)."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "cfg").symlink_to(".git/config")
    files = [".git/config", ".claude/settings.local.json", ".git/hooks/pre-commit", ".vscode/tasks.json", ".bashrc"]
    return {project / f: (project / f).read_text() if (project / f).exists() else None for f in files}


def _state(files: dict[Path, str | None], home: Path) -> dict[str, str | None]:
    paths = [*files, home / ".bashrc"]
    return {str(p): p.read_text() if p.exists() else None for p in paths}


def _results(fake: FakeAnthropic) -> dict[str, tuple[str, bool]]:
    return {
        b["tool_use_id"]: (b["content"], b.get("is_error", False))
        for b in fake.messages_requests[1].messages[-1]["content"]
    }


def _no_payload_ran(project: Path, home: Path) -> None:
    env = base_env(HOME=str(home))
    subprocess.run(["git", "status"], cwd=project, env=env, capture_output=True, timeout=30)
    subprocess.run(["bash", "-ic", "true"], cwd=project, env=env, capture_output=True, timeout=30)
    assert not (project / "PWNED").exists() and not (home / "PWNED").exists()


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_headless_denies_every_protected_write(
    agentfsm: Runner, fake: FakeAnthropic, project: Path, repo: dict[Path, str | None], home: Path, mode: str
) -> None:
    """In every mode, with `echo` and `cd` allowed, each protected write is denied naming the rule that would
    allow it; the files are as they were and `git status` runs no payload."""
    before = _state(repo, home)
    fake.script = [
        tool_reply(*(tool_use(tool, tool_input, id=name) for name, (tool, tool_input, _) in ATTACKS.items())),
        text_reply("planted"),
    ]
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))
    run = agentfsm(
        "-p", "plant", "--permission-mode", mode, "--allowedTools", "Bash(echo:*)", "Bash(cd:*)", "--output-format",
        "json", env=env,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    results = _results(fake)
    for name, (_, _, rule) in ATTACKS.items():
        content, is_error = results[name]
        assert is_error and content.startswith("Permission denied: "), (name, content)
        assert "protected path" in content, (name, content)
        # a write outside the workspace (~/.bashrc) asks on its own account too, and that ask offers no rule
        assert rule in content or "writes outside the workspace" in content, (name, content)
    assert {d["tool_use_id"] for d in run.json()["permission_denials"]} == set(ATTACKS)
    assert _state(repo, home) == before
    _no_payload_ran(project, home)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_an_allow_rule_naming_the_path_lets_it_be_written(
    agentfsm: Runner, fake: FakeAnthropic, project: Path, repo: dict[Path, str | None], home: Path, mode: str
) -> None:
    """With an Edit rule naming each path (given on the user's command line), the same writes are made."""
    (project / ".claude").mkdir()
    writes = {
        "settings": ("bash", {"command": "echo '{}' > .claude/settings.local.json"}),
        "append": ("bash", {"command": "echo '[user] name = t' >> .git/config"}),
        "hook": ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nexit 0\n"}),
        "tasks": ("write_file", {"path": ".vscode/tasks.json", "content": "{}"}),
        "home": ("write_file", {"path": "~/.bashrc", "content": "# edited\n"}),
    }
    fake.script = [
        tool_reply(*(tool_use(tool, tool_input, id=name) for name, (tool, tool_input) in writes.items())),
        text_reply("written"),
    ]
    env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", HOME=str(home))
    allowed = ["Bash(echo:*)", "Edit(./.claude/settings.local.json)", "Edit(./.git/config)", "Edit(./.git/hooks/**)"]
    allowed += ["Edit(./.vscode/tasks.json)", "Edit(~/.bashrc)"]
    run = agentfsm("-p", "write", "--permission-mode", mode, "--allowedTools", *allowed, env=env)
    assert run.code == 0, run.stderr
    assert not any(is_error for _, is_error in _results(fake).values()), _results(fake)
    assert (project / ".claude" / "settings.local.json").read_text() == "{}\n"
    assert (project / ".git" / "config").read_text().endswith("[user] name = t\n")
    assert (project / ".git" / "hooks" / "pre-commit").exists() and (project / ".vscode" / "tasks.json").exists()
    assert (home / ".bashrc").read_text() == "# edited\n"
