"""Our thresholds are the real Claude Code's: its own debug log says when it would compact, on the loopback fake.

Each case runs ``claude -p`` (2.1.x, stream-json input) with two prompts against the fake model; the first reply
reports ``usage.input_tokens`` just below or just above the threshold :func:`fsm.compaction.window_for` computes,
and Claude Code's ``--debug-file`` tells what it decided before the second request (``autocompact:
tokens=… level=ok|warn|compact effectiveWindow=N``). The replies are text, so nothing runs. Skipped when claude is
not installed.

Seen along the way (2.1.197): Claude Code checks only when a window is configured (env, settings, or a model's
default); with none (``source auto``) it never compacts ahead and waits for "prompt is too long". agentfsm compacts
ahead at the same threshold whether or not a window is configured.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fsm.compaction import CompactSettings, window_for
from tests.e2e.fake_server import FakeAnthropic
from tests.fsm.policy.conformance.record import claude_binary

MODEL = "claude-haiku-4-5-20251001"
CLAUDE_MAX_OUTPUT = 32_000
"""The max_tokens Claude Code sends for this model (seen on the wire)."""
OUTPUT = 50
"""The first reply's output tokens: they count toward the next request."""
_LINE = re.compile(r"autocompact: tokens=\S+ level=(\w+) effectiveWindow=(\d+)")

CASES = [
    pytest.param({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}, None, id="env-window"),
    pytest.param({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "50000"}, None, id="env-window-clamped"),
    pytest.param(
        {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, None, id="pct"
    ),
    pytest.param({}, {"autoCompactWindow": 120_000}, id="settings-window"),
]


@pytest.fixture(scope="module")
def claude() -> str:
    binary = claude_binary()
    if binary is None:
        pytest.skip("claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
    return binary


def _decisions(claude: str, tmp: Path, input_tokens: int, env: dict[str, str], settings: Any) -> list[tuple[str, int]]:
    """Claude Code's autocompact decisions over a two-prompt run whose first reply reports *input_tokens*."""
    home, work = tmp / "home", tmp / "work"
    (home / ".claude").mkdir(parents=True)
    work.mkdir()
    if settings is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    first = {
        "content": [{"type": "text", "text": "one"}],
        "usage": {"input_tokens": input_tokens, "output_tokens": OUTPUT},
    }
    with FakeAnthropic([first, {"content": [{"type": "text", "text": "two"}]}]) as fake:
        environ = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            **env,
        }
        prompts = "".join(json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n" for t in "ab")
        log = tmp / "debug.log"
        argv = [claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += ["--model", MODEL, "--debug", "--debug-file", str(log)]
        done = subprocess.run(argv, cwd=work, env=environ, input=prompts, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-500:]
    return [(m[1], int(m[2])) for m in _LINE.finditer(log.read_text())]


@pytest.mark.parametrize(("env", "settings"), CASES)
def test_thresholds_match(claude: str, tmp_path: Path, env: dict[str, str], settings: Any) -> None:
    """Just below our threshold Claude Code does not compact, just above it does, and its effective window is ours."""
    ours = window_for(
        MODEL,
        max_output=CLAUDE_MAX_OUTPUT,
        settings=CompactSettings.from_sources(window=(settings or {}).get("autoCompactWindow"), env=env),
    )
    below = _decisions(claude, tmp_path / "below", ours.threshold - OUTPUT - 40, env, settings)
    above = _decisions(claude, tmp_path / "above", ours.threshold - OUTPUT + 10, env, settings)
    assert below[-1] != ("compact", ours.effective) and below[-1][1] == ours.effective
    assert above[-1] == ("compact", ours.effective)


def test_disabled_never_checks(claude: str, tmp_path: Path) -> None:
    """DISABLE_AUTO_COMPACT: Claude Code does not even check, far over the threshold; ours is never due."""
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "DISABLE_AUTO_COMPACT": "1"}
    assert _decisions(claude, tmp_path, 95_000, env, None) == []
    assert not window_for(MODEL, max_output=CLAUDE_MAX_OUTPUT, settings=CompactSettings.from_sources(env=env)).due(
        95_000
    )
