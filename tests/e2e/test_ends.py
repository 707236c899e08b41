"""Fast at both ends: a command imports only what it uses, and the process ends without interpreter teardown.

Which modules a command imports is read from the installed ``agentfsm``'s own ``-X importtime`` report
(``PYTHONPROFILEIMPORTTIME=1``), so the test sees exactly the command a user runs. How long they take is for
``tests/perf/bench_ends.py``, not a test.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from fsm.testing import text_reply
from tests.e2e.conftest import AGENTFSM, base_env, run_agentfsm
from tests.e2e.fake_server import FakeAnthropic

NEVER = (
    "claude_agent_sdk",
    "starlette",
    "uvicorn",
    "pygraphviz",
    "fsm.ui",
    "fsm.checker",
    "fsm.session.replay",
    "prompt_toolkit",
    "fsm.cli.repl",
)
"""Never imported by --help or a headless run: the Agent SDK (tests only), the web view, diagrams, the checker, the
REPL and its line editor."""
SDK = ("anthropic", "genai_prices", "httpx2", "yaml", "jsonschema", "tree_sitter", "pydantic")
CORE = (
    "fsm.core.agent",
    "fsm.core.records",
    "fsm.model.anthropic",
    "fsm.model.reply",
    "fsm.policy.chain",
    "fsm.policy.judge",
    "fsm.policy.settings",
    "fsm.session",
    "fsm.cli.resolve",
    "fsm.cli.debugger",
    "tools.bash",
    "tools.toolsets",
    "importlib.metadata",
)
"""Never imported to print help: the driver and its records, the model client, the policy's judge and settings, the
journal, the options' resolution, the debugger, the tools' handlers, the package metadata (read for --version)."""


def imported(stderr: str) -> set[str]:
    """The modules an ``-X importtime`` report on *stderr* names."""
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")} - {
        "imported package"
    }


def among(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """The *modules* that are, or are inside, one of *packages*."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


class TestImports:
    def test_help_imports_no_sdk_no_prices_no_parser_of_bash(self, tmp_path: Path) -> None:
        """``agentfsm --help`` imports neither the model SDK nor its HTTP client, the prices, YAML, JSON Schema,
        tree-sitter, the web view, the diagrams or the checker."""
        run = run_agentfsm(tmp_path, base_env(PYTHONPROFILEIMPORTTIME="1"), "--help")
        assert run.code == 0 and "usage: agentfsm" in run.stdout
        modules = imported(run.stderr)
        assert "fsm.cli.app" in modules  # the report is there
        assert among(modules, NEVER + SDK) == []

    @pytest.mark.parametrize("argv", [["--help"], ["sessions", "--help"], ["check", "--help"], ["debug", "--help"]])
    def test_help_imports_none_of_the_core(self, tmp_path: Path, argv: list[str]) -> None:
        """Help, the top level's or a subcommand's, is printed from the flags' declarations: the parser imports
        neither the Agent, its records, the model client, the policy's judge, the journal nor the tools' handlers
        (package re-exports load on first use; each plug-in imports its work when it runs)."""
        run = run_agentfsm(tmp_path, base_env(PYTHONPROFILEIMPORTTIME="1"), *argv)
        assert run.code == 0 and run.stdout.startswith("usage: agentfsm")
        modules = imported(run.stderr)
        assert {"fsm.cli.parser", "fsm.cli.flags"} <= modules  # the report is there
        assert among(modules, CORE) == []

    def test_a_headless_run_never_imports_the_sdk(self, fake: FakeAnthropic, project: Path) -> None:
        """``agentfsm -p`` (journalled, text) sends its request without the anthropic SDK (fsm.model.wire) and
        imports no YAML, JSON Schema, web view, diagram, checker or Agent SDK."""
        fake.script = [text_reply("done")]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", PYTHONPROFILEIMPORTTIME="1")
        run = run_agentfsm(project, env, "-p", "hi")
        assert (run.code, run.stdout) == (0, "done\n")
        modules = imported(run.stderr)
        assert "fsm.model.wire" in modules and "httpx2" in modules
        assert among(modules, (*NEVER, "anthropic", "yaml", "jsonschema")) == []

    def test_a_run_after_the_first_never_loads_the_price_table(
        self, fake: FakeAnthropic, project: Path, tmp_path: Path
    ) -> None:
        """The first run that prices a model keeps what genai-prices said of it in the user's cache directory;
        the next run reads the model's window and prices its answers (``--output-format json``'s cost) without
        importing genai_prices, so neither its start nor its exit pays for the table."""
        fake.script = [text_reply("done"), text_reply("done")]
        env = base_env(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="test", XDG_CACHE_HOME=str(tmp_path / "cache"))
        runs = [
            run_agentfsm(project, {**env, "PYTHONPROFILEIMPORTTIME": "1"}, "-p", "hi", "--output-format", "json")
            for _ in range(2)
        ]
        assert [run.code for run in runs] == [0, 0]
        assert [run.json()["total_cost_usd"] > 0 for run in runs] == [True, True]
        assert runs[0].json()["total_cost_usd"] == runs[1].json()["total_cost_usd"]
        assert [among(imported(run.stderr), ("genai_prices",)) != [] for run in runs] == [True, False]


class TestExit:
    def test_the_command_is_entry(self) -> None:
        """The installed ``agentfsm`` script runs ``fsm.cli:entry`` (main, then exit without teardown)."""
        (script,) = [e for e in entry_points(group="console_scripts") if e.name == "agentfsm"]
        assert script.value == "fsm.cli:entry"
        assert "entry()" in AGENTFSM.read_text()

    @pytest.mark.parametrize(("argv", "code"), [(["--version"], 0), (["--max-turns", "0", "-p", "x"], 1)])
    def test_entry_flushes_and_skips_teardown(self, tmp_path: Path, argv: list[str], code: int) -> None:
        """After main returns, entry flushes stdout and stderr and ends the process with main's status, before
        interpreter teardown (an atexit handler never runs)."""
        script = (
            "import atexit, sys\n"
            "atexit.register(lambda: print('teardown ran', file=sys.stderr))\n"
            f"sys.argv = ['agentfsm', *{argv!r}]\n"
            "from fsm.cli import entry\n"
            "entry()\n"
            "print('entry returned', file=sys.stderr)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=tmp_path, env=base_env(), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == code
        assert "teardown ran" not in done.stderr and "entry returned" not in done.stderr
        assert (done.stdout if code == 0 else done.stderr).strip()  # what main wrote was flushed
