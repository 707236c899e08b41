"""How much room a model's context has, and when automatic compaction starts: Claude Code's formula.

Read from the real CLI (2.1.197): the *effective window* is the context window less the room kept for the reply,
``min(max output, 20,000)``; automatic compaction starts at ``effective - 13,000`` tokens.
``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (a percentage, ``0 < p <= 100``) moves that threshold to ``p%`` of the
effective window, but never above ``effective - 13,000``. The window compaction works to may be set smaller than
the model's: settings ``autoCompactWindow`` (an integer 100,000..1,000,000) or env
``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (the env wins; clamped into that range); it never exceeds the model's own.
``DISABLE_AUTO_COMPACT`` (``1``/``true``/``yes``/``on``) turns automatic compaction off, and so does settings
``autoCompactEnabled: false``; ``/compact`` by hand and the reactive compaction on "prompt is too long" stay.
``DISABLE_COMPACT`` turns off every compaction in Claude Code; here it turns off the automatic one only (a run
that overflows still needs the reactive one to go on). A value Claude Code would silently ignore (a percentage
that is no number) is refused here in one line.

Checked on the real CLI's own debug log (``tests/e2e/test_compaction_window.py``): the effective window, the
threshold to the token, the percentage, the clamping and ``DISABLE_AUTO_COMPACT``. One difference, on purpose:
Claude Code 2.1.197 compacts ahead only when a window is configured (env, settings, a model's default) and
otherwise waits for the API's "prompt is too long"; agentfsm compacts ahead at the same threshold either way.

Ours beside those: ``--compact-threshold N`` (tokens, any N >= 1) sets the threshold outright, so a test can
run with a small window.

The model's context window comes from one table, ``genai-prices`` (:func:`fsm.model.pricing.price_of`); a name
with a ``[1m]`` suffix or the ``context-1m`` beta has 1,000,000; a model the table lacks has 200,000.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from fsm.errors import ConfigError
from fsm.model.aliases import CONTEXT_1M_BETA, resolve_model
from fsm.model.pricing import price_of
from fsm.model.reply import Usage
from fsm.policy.settings import AUTO_COMPACT_WINDOW

__all__ = [
    "AUTOCOMPACT_BUFFER",
    "DEFAULT_WINDOW",
    "ENV_NAMES",
    "ONE_M_WINDOW",
    "OUTPUT_RESERVE",
    "WINDOW_RANGE",
    "CompactSettings",
    "Window",
    "context_window",
    "window_for",
]

DEFAULT_WINDOW = 200_000
"""The context window of a model the table does not know (Claude Code's default)."""
ONE_M_WINDOW = 1_000_000
"""The context window a ``[1m]`` name (or the ``context-1m`` beta) asks for."""
OUTPUT_RESERVE = 20_000
"""The most of the window kept for the reply: ``min(max output, 20,000)``."""
AUTOCOMPACT_BUFFER = 13_000
"""Automatic compaction starts this many tokens below the effective window."""
WINDOW_RANGE = AUTO_COMPACT_WINDOW
"""What ``autoCompactWindow`` and ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` may be (Claude Code's bounds)."""
ENV_NAMES = (
    "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
    "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
    "DISABLE_AUTO_COMPACT",
    "DISABLE_COMPACT",
)
"""The environment variables :meth:`CompactSettings.from_sources` reads."""

_TRUE = ("1", "true", "yes", "on")


def _threshold(instance: object, attribute: object, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"compaction threshold must be an integer >= 1 (got {value!r})")


def _pct(instance: object, attribute: object, value: Any) -> None:
    good = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 100
    if value is not None and not good:
        raise ConfigError(f"autocompact percentage must be a number 0 < p <= 100 (got {value!r})")


def _window(instance: object, attribute: object, value: Any) -> None:
    low, high = WINDOW_RANGE
    good = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if value is not None and not good:
        raise ConfigError(f"autoCompactWindow must be an integer {low:,}..{high:,} (got {value!r})")


@frozen(kw_only=True)
class CompactSettings:
    """When automatic compaction starts, as flags, settings and the environment say.

    Raises:
        ConfigError: a value out of range (the message names the setting and the value).
    """

    threshold: int | None = field(default=None, validator=_threshold)
    """``--compact-threshold``: compact automatically at this many tokens (wins over the rest)."""
    pct: float | None = field(default=None, validator=_pct)
    """``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``: compact at this percentage of the effective window (never later than
    Claude Code's default)."""
    window: int | None = field(default=None, validator=_window)
    """``autoCompactWindow`` (settings) or ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (env): the window compaction works
    to, when smaller than the model's."""
    disabled: bool = False
    """Automatic compaction is off (``DISABLE_AUTO_COMPACT``, ``DISABLE_COMPACT``, ``autoCompactEnabled: false``)."""

    @classmethod
    def from_sources(
        cls,
        *,
        threshold: int | None = None,
        window: int | None = None,
        enabled: bool | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CompactSettings | None:
        """What ``--compact-threshold`` (*threshold*), settings ``autoCompactWindow`` (*window*) and
        ``autoCompactEnabled`` (*enabled*) and the environment (*env*, :data:`ENV_NAMES`) say; None when none says
        anything. The env's window wins over the settings', as in Claude Code.

        Raises:
            ConfigError: a value that is not what its setting takes, named with the value, in one line.
        """
        env = env or {}
        window = _env_int(env, "CLAUDE_CODE_AUTO_COMPACT_WINDOW") or window
        pct = _env_pct(env)
        disabled = enabled is False or any(env.get(name, "").strip().lower() in _TRUE for name in ENV_NAMES[2:])
        if threshold is None and pct is None and window is None and not disabled:
            return None
        return cls(threshold=threshold, pct=pct, window=window, disabled=disabled)


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    low, high = WINDOW_RANGE
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer {low:,}..{high:,} (got {raw!r})") from None
    if value <= 0:
        raise ConfigError(f"{name} must be an integer {low:,}..{high:,} (got {raw!r})")
    return min(max(value, low), high)  # Claude Code clamps the env's value into the range


def _env_pct(env: Mapping[str, str]) -> float | None:
    raw = env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= 100:
        raise ConfigError(f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE must be a number 0 < p <= 100 (got {raw!r})")
    return value


@frozen
class Window:
    """A model's room and the point where automatic compaction starts, in tokens."""

    context_window: int
    """The window compaction works to: the model's, or a smaller ``autoCompactWindow``."""
    max_output: int
    """The reply's ``max_tokens``."""
    effective: int
    """``context_window - min(max_output, 20,000)``: what the request itself may hold."""
    threshold: int
    """Automatic compaction starts when the next request holds this many tokens."""
    auto: bool
    """Automatic compaction is on."""

    def due(self, tokens: int) -> bool:
        """Whether a request of *tokens* tokens should be compacted first (automatic compaction only)."""
        return self.auto and tokens >= self.threshold


def context_window(model: str, *, betas: tuple[str, ...] = ()) -> int:
    """The context window of *model* (an alias or id, ``[1m]`` suffix allowed), with *betas* sent beside it."""
    resolved = resolve_model(model)
    if CONTEXT_1M_BETA in (*resolved.betas, *betas):
        return ONE_M_WINDOW
    price = price_of(resolved.id, Usage())
    return price.context_window if price is not None and price.context_window else DEFAULT_WINDOW


def window_for(
    model: str, *, max_output: int, settings: CompactSettings | None = None, betas: tuple[str, ...] = ()
) -> Window:
    """*model*'s :class:`Window` when its replies take up to *max_output* tokens, under *settings*."""
    settings = settings or CompactSettings()
    window = context_window(model, betas=betas)
    if settings.window is not None:
        window = min(window, settings.window)
    effective = window - min(max_output, OUTPUT_RESERVE)
    threshold = effective - AUTOCOMPACT_BUFFER
    if settings.pct is not None:
        threshold = min(math.floor(effective * settings.pct / 100), threshold)
    if settings.threshold is not None:
        threshold = settings.threshold
    return Window(window, max_output, effective, max(threshold, 1), not settings.disabled)
