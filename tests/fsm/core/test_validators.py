"""Tests for fsm.core.validators: each check refuses what it should with the setting's name or label, and says
what it checks in its repr."""

from __future__ import annotations

import pytest
from attrs import field, frozen

from fsm.core.validators import Count, Kind, Positive
from fsm.errors import ConfigError


@frozen
class _Settings:
    turns: int | None = field(default=1, validator=Count(1, 30, "1..30", optional=True))
    retries: int = field(default=0, validator=Count(0, 10, "0..10", label="--max-retries"))
    budget: float | None = field(default=None, validator=Positive("a number of dollars > 0", optional=True))
    name: str | None = field(default=None, validator=Kind(str, "a string or None"))


class TestCount:
    @pytest.mark.parametrize("value", [0, 31, True, 2.0, "3"])
    def test_refuses_out_of_range_or_not_an_int(self, value):
        """A value outside the range, a bool, a float or a string is refused, naming the field and the value."""
        with pytest.raises(ConfigError, match=rf"^turns must be 1\.\.30 \(got {value!r}\)$"):
            _Settings(turns=value)

    def test_a_label_names_the_setting(self):
        """With a label, the message names the label (a CLI flag) instead of the field."""
        with pytest.raises(ConfigError, match=r"^--max-retries must be 0\.\.10 \(got 11\)$"):
            _Settings(retries=11)

    def test_none_only_when_optional(self):
        """None passes an optional check and fails one that is not."""
        assert _Settings(turns=None).turns is None
        with pytest.raises(ConfigError, match="got None"):
            _Settings(retries=None)

    def test_repr_says_what_it_checks(self):
        """The repr reads as the rule."""
        assert repr(Count(1, 30, "1..30", optional=True)) == "<must be 1..30 or None>"


class TestPositiveAndKind:
    @pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), False])
    def test_positive_refuses_zero_negative_infinite_nan_and_bools(self, value):
        """Only a finite number above zero passes."""
        with pytest.raises(ConfigError, match=r"^budget must be a number of dollars > 0"):
            _Settings(budget=value)

    def test_kind_refuses_another_type(self):
        """A value of another type is refused, naming the field and what it must be."""
        with pytest.raises(ConfigError, match=r"^name must be a string or None \(got 3\)$"):
            _Settings(name=3)
        assert _Settings(name="x").name == "x"
