"""Every package's public names load on first use (PEP 562) and are exactly the names it declares.

A package ``__init__`` lists its names three times: the ``TYPE_CHECKING`` imports mypy reads, the
``lazy_loader.attach`` table that loads them at run time, and ``__all__``. These tests hold the three together: each
name of ``__all__`` resolves, to the very object its ``TYPE_CHECKING`` import names, and importing the packages
imports none of their modules.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAZY = [
    "fsm",
    "fsm.core",
    "fsm.model",
    "fsm.policy",
    "fsm.compaction",
    "fsm.skills",
    "fsm.checker",
    "fsm.view",
    "tools",
]
"""The packages whose names load on first use."""


def typed_imports(package: str) -> dict[str, str]:
    """Name → the module its ``from MODULE import NAME`` in the package's ``if TYPE_CHECKING:`` block names."""
    path = ROOT.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(path.read_text())
    (block,) = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    return {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }


@pytest.mark.parametrize("package", LAZY)
class TestExports:
    def test_every_name_resolves_to_what_mypy_sees(self, package: str) -> None:
        """Each name of ``__all__`` is the object its TYPE_CHECKING import names, and the two lists agree."""
        module = importlib.import_module(package)
        typed = typed_imports(package)
        assert sorted(typed) == sorted(module.__all__)
        for name in module.__all__:
            assert getattr(module, name) is getattr(importlib.import_module(typed[name]), name), name

    def test_dir_lists_the_names(self, package: str) -> None:
        """``dir(package)`` offers every public name before any is loaded (tab completion, ``help()``)."""
        assert set(importlib.import_module(package).__all__) <= set(dir(importlib.import_module(package)))

    def test_an_unknown_name_is_an_attribute_error(self, package: str) -> None:
        """A name the package does not export raises AttributeError (``from fsm import Nope`` an ImportError)."""
        module = importlib.import_module(package)
        with pytest.raises(AttributeError):
            module.no_such_name  # noqa: B018
        with pytest.raises(ImportError, match="cannot import name 'no_such_name'"):
            exec(f"from {package} import no_such_name", {})


def test_importing_the_packages_imports_none_of_their_modules() -> None:
    """``import fsm, fsm.core, …, tools`` loads only ``fsm._moved`` (the old paths' finder): nothing until a name is
    used. Run in a fresh interpreter, since this one has imported everything."""
    code = (
        f"import sys, {', '.join(LAZY)}\n"
        "print(sorted(m for m in sys.modules if m.startswith(('fsm.', 'tools.')) and m not in "
        f"{LAZY!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['fsm._moved']"


def test_fsm_agent_is_lent_the_views_wording() -> None:
    """``fsm.Agent``, reached first in a fresh interpreter, words the deprecated ``describe_next()`` as the view does
    (``import fsm`` used to set this eagerly)."""
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "from fsm import Agent\n"
        "from fsm.testing import ScriptedModel\n"
        "agent = Agent(ScriptedModel([]), '.')\n"
        "agent.send('go')\n"
        "print(agent.describe_next())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "send the prompt"


def test_the_registry_holds_every_tool_in_order_whichever_is_imported_first() -> None:
    """``tools.REGISTRY`` (through ``tools.toolsets``) holds every handler in the same order even when a tool's
    module was imported on its own first, as ``fsm.core.agent`` imports ``tools.task``."""
    code = "import tools.task, tools.files\nfrom tools import REGISTRY\nprint(list(REGISTRY))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    registered = [
        "bash", "read_file", "write_file", "edit_file", "glob", "task", "TaskOutput", "TaskStop", "TodoWrite", "Skill"
    ]  # fmt: skip
    assert done.stdout.strip() == str(registered)
