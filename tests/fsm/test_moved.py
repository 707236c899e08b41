"""Tests for fsm._moved: code written against a module path that wave 3 moved still imports, and is told where
the module lives now."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

from fsm._moved import MOVED


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_warns_and_is_the_new_module(monkeypatch, old, new):
    """Importing an old path warns with its new home and gives the very module at that home, spec untouched."""
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=f"^{old} moved to {new}; import it from there"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new


def test_from_import_of_an_old_path_gets_the_same_class(monkeypatch):
    """``from fsm.core.policy import Policy`` is the Policy of ``fsm``'s door."""
    import fsm

    monkeypatch.delitem(sys.modules, "fsm.core.policy", raising=False)
    with pytest.warns(DeprecationWarning):
        from fsm.core.policy import Policy
    assert Policy is fsm.Policy


def test_every_new_path_exists_and_no_old_one_does():
    """Each alias points at a real module, and no file at an old path would shadow it."""
    core = Path(importlib.import_module("fsm.core").__file__).parent
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None
        assert not (core / f"{old.rpartition('.')[2]}.py").exists()
