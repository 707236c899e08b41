"""Old module paths, kept importable for a while: each warns once and hands back the module at its new home.

Wave 3 moved the policy, the model boundary and the checker out of ``fsm.core`` into packages of their own, and
``fsm.core.parallel`` (subagents run at once) into ``fsm.core.scheduler`` beside the rule of who moves next.
Code written against the old paths (``from fsm.core.policy import Policy``) keeps working, with a
``DeprecationWarning`` naming the new path; the public names at ``fsm``'s door never moved.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import importlib.abc

MOVED = {
    "fsm.core.policy": "fsm.policy.judge",
    "fsm.core.permissions": "fsm.policy.chain",
    "fsm.core.rules": "fsm.policy.rules",
    "fsm.core.commands": "fsm.policy.commands",
    "fsm.core.shell_rules": "fsm.policy.shell_rules",
    "fsm.core.modes": "fsm.policy.modes",
    "fsm.core.settings": "fsm.policy.settings",
    "fsm.core.hooks": "fsm.policy.hooks",
    "fsm.core.command_hooks": "fsm.policy.command_hooks",
    "fsm.core.model": "fsm.model.anthropic",
    "fsm.core.pricing": "fsm.model.pricing",
    "fsm.core.configs": "fsm.checker.space",
    "fsm.core.reduction": "fsm.checker.reduced",
    "fsm.core.checker": "fsm.checker.search",
    "fsm.core.parallel": "fsm.core.scheduler",
}
"""Old module path → where it lives now."""


class _Alias:
    """Finds an old path of :data:`MOVED` and loads it as the module at its new path (whose own spec it keeps).

    A meta path finder and loader by its methods: the ``importlib.abc`` bases would cost every command the import
    of ``importlib.resources`` (``fsm`` installs this at import)."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("importlib.abc.Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; import it from there (the old path will go)", DeprecationWarning, stacklevel=2
        )
        module = importlib.import_module(new)
        self._specs[new] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module at the new path has run already; it keeps its own spec (importlib set the alias's)."""
        module.__spec__ = self._specs[module.__name__]


def install() -> None:
    """Let the old paths of :data:`MOVED` import (once per process)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
