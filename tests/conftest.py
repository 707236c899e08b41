"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import Workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A confined workspace rooted at ``tmp_path / "ws"``, leaving ``tmp_path`` free for outside files."""
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)
