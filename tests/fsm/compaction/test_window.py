"""The window table and Claude Code's threshold formula, with every override."""

from __future__ import annotations

import pytest

from fsm.compaction import CompactSettings, window_for
from fsm.compaction.window import AUTOCOMPACT_BUFFER, DEFAULT_WINDOW, ONE_M_WINDOW, OUTPUT_RESERVE, context_window
from fsm.errors import ConfigError


class TestContextWindow:
    @pytest.mark.parametrize(
        ("model", "window"),
        [
            ("haiku", 200_000),
            ("claude-haiku-4-5-20251001", 200_000),
            ("claude-sonnet-4-5", 200_000),
            ("claude-sonnet-4-5[1m]", ONE_M_WINDOW),
            ("haiku[1M]", ONE_M_WINDOW),
            ("sonnet", 1_000_000),  # claude-sonnet-5: genai-prices gives it 1M
            ("no-such-model", DEFAULT_WINDOW),
        ],
    )
    def test_one_table(self, model, window):
        """genai-prices' window, 1M for a [1m] name, 200k for a model the table lacks."""
        assert context_window(model) == window

    def test_the_beta_asks_for_1m(self):
        """The context-1m beta sent beside a model gives it 1M."""
        assert context_window("claude-sonnet-4-5", betas=("context-1m-2025-08-07",)) == ONE_M_WINDOW


class TestWindowFor:
    def test_claude_codes_formula(self):
        """Effective window = window - min(max output, 20k); auto-compaction at effective - 13k."""
        small = window_for("claude-sonnet-4-5", max_output=8_000)
        assert (small.context_window, small.effective, small.threshold, small.auto) == (200_000, 192_000, 179_000, True)
        big = window_for("claude-sonnet-4-5", max_output=64_000)
        assert big.effective == 200_000 - OUTPUT_RESERVE
        assert big.threshold == big.effective - AUTOCOMPACT_BUFFER == 167_000

    def test_pct_never_later_than_the_default(self):
        """CLAUDE_AUTOCOMPACT_PCT_OVERRIDE moves the threshold to p% of the effective window, never above the
        default."""
        assert window_for("haiku", max_output=8_000, settings=CompactSettings(pct=50)).threshold == 96_000
        assert window_for("haiku", max_output=8_000, settings=CompactSettings(pct=100)).threshold == 179_000

    def test_window_setting_only_shrinks(self):
        """autoCompactWindow caps the model's window; it never grows it."""
        assert window_for("sonnet", max_output=8_000, settings=CompactSettings(window=150_000)).context_window == (
            150_000
        )
        assert window_for("haiku", max_output=8_000, settings=CompactSettings(window=900_000)).context_window == (
            200_000
        )

    def test_threshold_flag_wins(self):
        """--compact-threshold sets the threshold outright, below or above the formula's."""
        assert window_for("haiku", max_output=8_000, settings=CompactSettings(threshold=5_000, pct=50)).threshold == (
            5_000
        )

    def test_disabled(self):
        """Disabled auto-compaction is never due, whatever the tokens."""
        window = window_for("haiku", max_output=8_000, settings=CompactSettings(disabled=True))
        assert not window.auto and not window.due(10**9)
        assert window_for("haiku", max_output=8_000).due(179_000)
        assert not window_for("haiku", max_output=8_000).due(178_999)


class TestCompactSettings:
    def test_nothing_said_is_none(self):
        """No flag, setting or variable: None (the defaults)."""
        assert CompactSettings.from_sources(env={"PATH": "/bin"}) is None

    def test_env_names(self):
        """Claude Code's variables, as the real CLI reads them: the env's window wins over the settings', is
        clamped into 100k..1M, and any truthy DISABLE_* turns auto-compaction off."""
        got = CompactSettings.from_sources(
            window=300_000, env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "50000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "75"}
        )
        assert got == CompactSettings(pct=75.0, window=100_000)
        for name in ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"):
            for value, off in (("1", True), ("TRUE", True), ("yes", True), ("on", True), ("0", False), ("", False)):
                settings = CompactSettings.from_sources(env={name: value})
                assert (settings is not None and settings.disabled) is off

    def test_settings_keys(self):
        """autoCompactEnabled false disables; autoCompactWindow is taken as given."""
        assert CompactSettings.from_sources(enabled=False) == CompactSettings(disabled=True)
        assert CompactSettings.from_sources(window=120_000, enabled=True) == CompactSettings(window=120_000)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "abc"}}, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a number "
             "0 < p <= 100 (got 'abc')"),
            ({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "0"}}, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a number "
             "0 < p <= 100 (got '0')"),
            ({"env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "big"}}, "CLAUDE_CODE_AUTO_COMPACT_WINDOW must be an "
             "integer 100,000..1,000,000 (got 'big')"),
            ({"threshold": 0}, "compaction threshold must be an integer >= 1 (got 0)"),
            ({"window": 5}, "autoCompactWindow must be an integer 100,000..1,000,000 (got 5)"),
        ],
    )  # fmt: skip
    def test_bad_values_are_one_line(self, kwargs, message):
        """A bad value is a ConfigError naming the setting and the value."""
        with pytest.raises(ConfigError) as caught:
            CompactSettings.from_sources(**kwargs)
        assert str(caught.value) == message
