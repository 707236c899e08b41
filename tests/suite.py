"""How the suite runs: the Hypothesis profiles, and which tests are marked ``e2e`` or ``slow``.

Three profiles. ``ci`` is the thorough one, and CI's (``.ci/run`` sets ``CI``): every property test draws the
examples it asks for, derandomized so a run is repeatable, printing the blob that reproduces a failure.
``dev`` is the quick inner loop: a tenth of the examples, random, its failures kept in ``.hypothesis/`` to be
tried first next time. ``mutation`` is the mutation run's (``tests/mutation/``): dev's tenth, derandomized so a
mutant is killed or not the same way every time. ``HYPOTHESIS_PROFILE`` names one outright (as does
``--hypothesis-profile``).

Property tests ask for their examples through :func:`examples`, so the profile scales them too: an explicit
``max_examples`` would override the profile.

The markers (``pyproject.toml`` lists them): a test under ``tests/e2e/`` or one that drives the real browser
is ``e2e`` and ``slow`` by where it is (:func:`markers_for`); other tests that need real bubblewrap or a
pseudo-terminal say ``e2e``, and other slow ones say ``slow``, where they are written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

__all__ = ["CI_EXAMPLES", "COLLECTED", "examples", "load_profile", "markers_for", "profile_for"]

TESTS = Path(__file__).resolve().parent

COLLECTED = pytest.StashKey[int]()
"""How many tests the session collected, before ``-m`` or ``-k`` deselected any (the README states the suite's size)."""

CI_EXAMPLES = 100
"""The ``ci`` profile's ``max_examples``: what :func:`examples` counts against."""

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 10, deadline=None)
settings.register_profile(
    "mutation",
    max_examples=CI_EXAMPLES // 10,
    deadline=None,
    derandomize=True,
    database=None,
    # mutmut runs a test twice in one process (its stats pass, then the clean run) and forks for each mutant
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)


def profile_for(environ: Mapping[str, str]) -> str:
    """The profile to load: ``HYPOTHESIS_PROFILE`` when set, else ``ci`` when ``CI`` is, else ``dev``."""
    return environ.get("HYPOTHESIS_PROFILE") or ("ci" if environ.get("CI") else "dev")


def load_profile(environ: Mapping[str, str]) -> str:
    """Load :func:`profile_for` *environ* and return its name."""
    name = profile_for(environ)
    settings.load_profile(name)
    return name


def examples(thorough: int, *, under: settings | None = None) -> int:
    """``max_examples`` for a property test that wants *thorough* examples under ``ci``, scaled to the profile
    *under* (the loaded one by default): ``dev`` runs a tenth, never fewer than one."""
    return max(1, thorough * (under or settings.default).max_examples // CI_EXAMPLES)


E2E_FIXTURES = frozenset({"browser"})
"""Fixtures that start something real and slow (headless Chromium): a test using one is e2e and slow."""


def markers_for(path: Path, fixturenames: Iterable[str]) -> frozenset[str]:
    """The markers a test gets by where it lives: everything under ``tests/e2e/`` (each test runs the CLI in
    another process, and many share a fixture that runs it for a minute) and every browser test are ``e2e``
    and ``slow``."""
    if TESTS / "e2e" in path.resolve().parents or E2E_FIXTURES.intersection(fixturenames):
        return frozenset({"e2e", "slow"})
    return frozenset()
