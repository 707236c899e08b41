"""attrs validators for settings records, whose messages name the setting, what it must be and what it got.

Each is a small frozen class whose ``repr`` says what it checks (``<must be 1..30>``), as attrs' own are. The
message names the field (``max_turns must be 1..30 (got 31)``), or the *label* a record gives it instead: the CLI's
records name their flags (``--max-turns must be 1..30 (got 31)``). A failure is a :class:`~fsm.errors.ConfigError`.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from attrs import frozen

from fsm.errors import ConfigError

__all__ = ["Count", "Kind", "Positive"]


def _refuse(label: str | None, attribute: attrs.Attribute[Any], expected: str, value: object) -> ConfigError:
    return ConfigError(f"{label or attribute.name} must be {expected} (got {value!r})")


@frozen(repr=False)
class Count:
    """Checks an integer (a bool is none) in ``low..high``, or None when *optional*."""

    low: int
    high: int | None
    expected: str
    """The message's words for the range: ``1..30``, ``an integer >= 1``."""
    optional: bool = False
    label: str | None = None
    """What the message calls the setting (the field's name when None)."""

    def __call__(self, instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None and self.optional:
            return
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < self.low
            or (self.high is not None and value > self.high)
        ):
            raise _refuse(self.label, attribute, self.expected, value)

    def __repr__(self) -> str:
        return f"<must be {self.expected}{' or None' if self.optional else ''}>"


@frozen(repr=False)
class Positive:
    """Checks a finite number > 0 (a bool is none), or None when *optional*."""

    expected: str
    optional: bool = False
    label: str | None = None
    """What the message calls the setting (the field's name when None)."""

    def __call__(self, instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None and self.optional:
            return
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
            raise _refuse(self.label, attribute, self.expected, value)

    def __repr__(self) -> str:
        return f"<must be {self.expected}>"


@frozen(repr=False)
class Kind:
    """Checks that a value is a *kind* (callable, when *kind* is None), or None when *optional*."""

    kind: type | None
    expected: str
    optional: bool = True

    def __call__(self, instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None and self.optional:
            return
        if not (callable(value) if self.kind is None else isinstance(value, self.kind)):
            raise _refuse(None, attribute, self.expected, value)

    def __repr__(self) -> str:
        return f"<must be {self.expected}>"
