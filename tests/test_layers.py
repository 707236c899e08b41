"""The layers hold: every import of ours points down
``tools, errors ← model, policy ← compaction ← core ← checker, testing ← session, view ← ui ← cli``, and none cycles.

Imports are read with ``ast`` (nothing is imported), lazy ones inside functions and ``TYPE_CHECKING`` blocks
included, so a shortcut taken in a function body is caught too.
"""

from __future__ import annotations

import ast
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

RANK = {
    "tools": 0,
    "fsm.errors": 0,
    "fsm.model": 1,
    "fsm.policy": 1,
    "fsm.compaction": 1.5,
    "fsm.mcp": 1.5,
    "fsm.skills": 1.5,
    "fsm.core": 2,
    "fsm.checker": 2.5,
    "fsm.testing": 2.5,
    "fsm.session": 3,
    "fsm.view": 3,
    "fsm.batch": 3.2,
    "fsm.ui": 3.5,
    "fsm.cli": 4,
    "fsm": 5,
    "fsm.__main__": 5,
}
"""A module may import modules of a lower rank, or of its own package. Packages that share a rank are separate
rooms, so neither imports the other: the model boundary and the policy know nothing of each other, and the
checker is built on the core's table as an extension the core never imports."""


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "tools":
        return "tools"
    if len(parts) == 1:
        return "fsm"
    return ".".join(parts[:2])


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of ``fsm`` or ``tools`` in the file at *path*."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            if node.module is None or base in ("fsm", "tools"):
                found += [(node.lineno, f"{base}.{alias.name}" if base else alias.name) for alias in node.names]
            else:
                found.append((node.lineno, base))
    return [(line, name) for line, name in found if name.split(".")[0] in ("fsm", "tools")]


def _sources() -> list[Path]:
    return sorted([*(ROOT / "fsm").rglob("*.py"), *(ROOT / "tools").rglob("*.py")])


def violations(sources: list[Path]) -> list[str]:
    """Every import that points up or sideways across the layers, as ``file:line imports module (why)``."""
    problems = []
    for path in sources:
        here = _module_name(path)
        mine = _layer(here)
        for line, target in imports_of(path):
            theirs = _layer(target)
            if theirs == mine or here == "fsm" or here == "fsm.__main__":
                continue
            if theirs not in RANK:
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {target} (no such layer: {theirs})")
            elif RANK[theirs] >= RANK[mine]:
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {target} ({mine} may not import {theirs})")
    return problems


def _resolve(target: str, known: set[str]) -> str | None:
    """The module *target* names (``fsm.core.agent.Agent`` → ``fsm.core.agent``)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def cycles(sources: list[Path]) -> list[list[str]]:
    """Import cycles among our modules (package ``__init__`` re-exports left out), each as a module path."""
    modules = {_module_name(p): p for p in sources}
    graph = {m: set() for m in modules}
    for module, path in modules.items():
        for _, target in imports_of(path):
            found = _resolve(target, set(modules))
            if found and found != module and modules[found].name != "__init__.py":
                graph[module].add(found)
    found_cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found_cycles.append([*trail[trail.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found_cycles


class TestLayers:
    def test_no_upward_import(self):
        """No module imports a layer above its own (or a sibling room), naming the offending import."""
        assert violations(_sources()) == []

    def test_no_cycles(self):
        """No two of our modules import each other, directly or around a loop."""
        assert cycles(_sources()) == []

    def test_an_upward_import_is_caught(self, tmp_path, monkeypatch):
        """A core module importing the CLI is reported with its file, line and the rule it breaks."""
        fake = ROOT / "fsm" / "core" / "_layers_probe.py"
        monkeypatch.setattr(Path, "read_text", _reader({fake: "from fsm.cli.app import main\n"}))
        assert violations([fake]) == [
            "fsm/core/_layers_probe.py:1 imports fsm.cli.app (fsm.core may not import fsm.cli)"
        ]

    def test_a_sideways_import_is_caught(self, monkeypatch):
        """session and view are separate rooms: one importing the other is reported."""
        fake = ROOT / "fsm" / "session" / "_probe.py"
        monkeypatch.setattr(Path, "read_text", _reader({fake: "import fsm.view.stream\n"}))
        assert violations([fake]) == [
            "fsm/session/_probe.py:1 imports fsm.view.stream (fsm.session may not import fsm.view)"
        ]

    @pytest.mark.parametrize("source", ["from tools import REGISTRY\n", "from fsm.errors import ConfigError\n"])
    def test_downward_imports_pass(self, monkeypatch, source):
        """Core importing tools or errors is fine."""
        fake = ROOT / "fsm" / "core" / "_probe.py"
        monkeypatch.setattr(Path, "read_text", _reader({fake: source}))
        assert violations([fake]) == []

    @pytest.mark.parametrize(
        ("place", "source", "rule"),
        [
            ("core", "from fsm.checker.search import check\n", "fsm.core may not import fsm.checker"),
            ("policy", "from fsm.core.agent import Agent\n", "fsm.policy may not import fsm.core"),
            ("policy", "from fsm.model.reply import Reply\n", "fsm.policy may not import fsm.model"),
            ("model", "import fsm.policy.rules\n", "fsm.model may not import fsm.policy"),
        ],
    )
    def test_the_rooms_beside_the_core_stay_apart(self, monkeypatch, place, source, rule):
        """The core never imports its checker; the policy and the model boundary import neither the core nor each
        other."""
        fake = ROOT / "fsm" / place / "_probe.py"
        monkeypatch.setattr(Path, "read_text", _reader({fake: source}))
        assert [v.split(" (", 1)[1] for v in violations([fake])] == [f"{rule})"]

    def test_tools_never_import_fsm(self, monkeypatch):
        """tools/ sits below fsm/: importing any of it is reported."""
        fake = ROOT / "tools" / "_probe.py"
        monkeypatch.setattr(Path, "read_text", _reader({fake: "def f():\n    from fsm.core import agent\n"}))
        assert violations([fake]) == ["tools/_probe.py:2 imports fsm.core (tools may not import fsm.core)"]


class TestPackaging:
    def test_every_package_is_installed(self):
        """pyproject's package list takes in every package under fsm/ and tools/, so a wheel holds each layer."""
        include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
        packages = {
            ".".join(p.relative_to(ROOT).parent.parts)
            for top in ("fsm", "tools")
            for p in (ROOT / top).rglob("__init__.py")
        }
        # setuptools' find matches each dotted package name against the include patterns with fnmatch
        assert {p for p in packages if not any(fnmatch(p, pattern) for pattern in include["include"])} == set()


def _reader(fakes: dict[Path, str]):
    real = Path.read_text

    def read_text(self: Path, *args, **kwargs) -> str:
        return fakes[self] if self in fakes else real(self, *args, **kwargs)

    return read_text
