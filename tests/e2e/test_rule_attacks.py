"""Real attacks on the bash rules (issue 21, items 4 and 5), run as an attacker would.

Each case first runs the command with ``bash`` in a throwaway project and a throwaway HOME, to show that it has an
effect (a sentinel file written or emptied, a secret printed); then a headless ``agentfsm -p`` in default mode, with
the allow rule the attack hides behind, receives the same command from the fake model: it must be denied, and
nothing happens. Nothing here touches a real file: every path is under pytest's tmp_path.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from attrs import frozen

from fsm.testing import text_reply, tool_reply, tool_use
from tests.e2e.conftest import Runner, base_env
from tests.e2e.fake_server import FakeAnthropic


@frozen
class Attack:
    command: str
    rules: tuple[str, ...]
    """The allow rules given on the command line (--allowedTools)."""
    harmed: str
    """What the effect is: ``sentinel`` (a file ``pwned`` appears in the home), ``emptied`` (important.txt is
    emptied) or ``leaked`` (the home's secret appears in the output)."""


ATTACKS = {
    "redirection under an exact rule": Attack("npm test > ~/pwned", ("Bash(npm test)",), "sentinel"),
    "a look-alike program": Attack("./scripts/git diff", ("Bash(git diff:*)",), "sentinel"),
    "a leading assignment": Attack("GIT_EXTERNAL_DIFF=./scripts/ext git diff", ("Bash(git diff:*)",), "sentinel"),
    "PATH before a read-only command": Attack("PATH=scripts:/usr/bin:/bin ls", (), "sentinel"),
    "only a redirection": Attack("ls && > important.txt", (), "emptied"),
    "$HOME outside the workspace": Attack("cat $HOME/secret.txt", (), "leaked"),
    "${HOME} in quotes": Attack('cat "${HOME}"/secret.txt', (), "leaked"),
    "date --file reads a file": Attack("date --file=../home/secret.txt", (), "leaked"),
}


@pytest.fixture
def stage(tmp_path: Path, project: Path) -> tuple[Path, Path]:
    """A project (git repository with one changed file, hostile scripts, a PATH shim for npm) and a home with a
    secret; returns (home, shim directory)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text("TOPSECRET\n")
    scripts = project / "scripts"
    scripts.mkdir()
    for name in ("git", "ext", "ls"):
        script = scripts / name
        script.write_text(f'#!/bin/sh\necho pwned > "{home}/pwned"\n')
        script.chmod(0o755)
    shim = tmp_path / "bin"
    shim.mkdir()
    npm = shim / "npm"
    npm.write_text("#!/bin/sh\necho '1 passed'\n")
    npm.chmod(0o755)
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home), "PATH": os.environ["PATH"]}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]):
        if args[0] == "add":
            (project / "important.txt").write_text("precious\n")
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True, env=env)
    (project / "important.txt").write_text("precious, v2\n")
    return home, shim


def harmed(attack: Attack, project: Path, home: Path, output: str) -> bool:
    if attack.harmed == "sentinel":
        return (home / "pwned").exists()
    if attack.harmed == "emptied":
        return (project / "important.txt").read_text() == ""
    return "TOPSECRET" in output


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_attack_works_when_run(name: str, project: Path, stage: tuple[Path, Path]) -> None:
    """Run by bash, each attack has its effect: the denial below is not vacuous."""
    home, shim = stage
    attack = ATTACKS[name]
    env = {**base_env(HOME=str(home), PATH=f"{shim}{os.pathsep}{os.environ['PATH']}"), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["bash", "-c", attack.command], cwd=project, env=env, capture_output=True, text=True)
    assert harmed(attack, project, home, done.stdout + done.stderr), (done.stdout, done.stderr)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_agentfsm_denies_it_headless(
    name: str, agentfsm: Runner, fake: FakeAnthropic, project: Path, stage: tuple[Path, Path]
) -> None:
    """In default mode, headless, with the rule the attack hides behind, the call is denied and nothing happens."""
    home, shim = stage
    attack = ATTACKS[name]
    fake.script = [tool_reply(tool_use("bash", {"command": attack.command}, id="a")), text_reply("done")]
    env = base_env(
        ANTHROPIC_BASE_URL=fake.url,
        ANTHROPIC_API_KEY="test",
        HOME=str(home),
        PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
        GIT_CONFIG_NOSYSTEM="1",
    )
    flags = ["--allowedTools", ",".join(attack.rules)] if attack.rules else []
    run = agentfsm("-p", "go", "--output-format", "json", *flags, env=env)
    assert run.code == 0, run.stderr
    (result,) = fake.messages_requests[1].messages[-1]["content"]
    assert result["is_error"] and result["content"].startswith("Permission denied: "), result
    assert not harmed(attack, project, home, result["content"] + run.stdout), result
    assert [d["tool_use_id"] for d in run.json()["permission_denials"]] == ["a"]
