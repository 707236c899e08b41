"""The mutation run: mutmut over one module at a time, judged by the narrow test selection
``tests/mutation/targets.toml`` names for it, and the kill rate of its non-equivalent mutants.

``python -m tests.mutation.run fsm/policy/judge.py`` (or several modules; ``--all`` for every target) copies the
project into ``.mutation/<module>/`` (ignored by git), writes the target into the copy's ``[tool.mutmut]`` (the
rest of mutmut's configuration is the project's, in ``pyproject.toml``), runs ``mutmut run`` under the
``mutation`` Hypothesis profile, and prints per module: mutants, killed (a timeout counts: the tests noticed),
equivalent (listed in ``targets.toml`` with why), survived, and the kill rate ``killed / (mutants -
equivalent)``; then every survivor that is not listed as equivalent, with its diff. The exit status is 1 when a
module's rate is under ``--min`` (default 0.9). mutmut keeps its results in the copy: ``--again`` retests only
the functions that changed since (not the mutants new tests would kill); without it every mutant is tested.
Not part of ``pytest``: a run takes minutes per module (docs/mutation.md).
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from attrs import frozen

ROOT = Path(__file__).resolve().parents[2]
TARGETS = Path(__file__).with_name("targets.toml")
COPIED = ("fsm", "tools", "tests", "docs", "diagrams", "README.md", "pyproject.toml")
"""What the copy holds: the code, the tests and what the tests read (the README, docs, diagrams)."""
KILLED = frozenset({"killed", "timeout", "caught by type check", "segfault"})


@frozen
class Outcome:
    """One module's mutants by status, and the kill rate of those that are not equivalent."""

    module: str
    statuses: dict[str, str]
    """mutmut's status of each mutant, by its name."""
    equivalent: frozenset[str]

    @property
    def killed(self) -> int:
        return sum(s in KILLED for s in self.statuses.values())

    @property
    def survivors(self) -> list[str]:
        """The mutants the tests did not catch that are not known to be equivalent."""
        return [n for n, s in self.statuses.items() if s not in KILLED and n not in self.equivalent]

    @property
    def rate(self) -> float:
        judged = len(self.statuses) - len(self.equivalent & self.statuses.keys())
        return self.killed / judged if judged else 1.0

    def line(self) -> str:
        eq = len(self.equivalent & self.statuses.keys())
        return (
            f"{self.module}: {len(self.statuses)} mutants, {self.killed} killed, {eq} equivalent, "
            f"{len(self.survivors)} survived: {self.rate:.0%} of the non-equivalent killed"
        )


def load_targets(path: Path = TARGETS) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The tests of each target module, and the equivalent mutants with why."""
    data = tomllib.loads(path.read_text())
    return {m: t["tests"] for m, t in data["targets"].items()}, data.get("equivalent", {})


def mutmut_config(pyproject: str, module: str, tests: list[str]) -> str:
    """*pyproject* with *module* and its *tests* added to ``[tool.mutmut]``."""
    header = "[tool.mutmut]\n"
    if header not in pyproject:
        raise SystemExit("pyproject.toml has no [tool.mutmut] table")
    added = f"only_mutate = [{module!r}]\npytest_add_cli_args_test_selection = {tests!r}\n".replace("'", '"')
    return pyproject.replace(header, header + added, 1)


def prepare(module: str, tests: list[str], *, root: Path = ROOT) -> Path:
    """The copy of the project in which *module* is mutated (made or refreshed)."""
    work = root / ".mutation" / module.removesuffix(".py").replace("/", ".")
    work.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.egg-info")
    for name in COPIED:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(source, work / name)
    (work / "pyproject.toml").write_text(mutmut_config((root / "pyproject.toml").read_text(), module, tests))
    return work


def mutmut(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run mutmut (beside this Python) in *work*."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation"}
    command = [str(Path(sys.executable).with_name("mutmut")), *args]
    return subprocess.run(command, cwd=work, env=env, text=True, capture_output=True, check=False)


_RESULT = re.compile(r"^\s+(\S+): (.+)$")


def outcome(module: str, work: Path, equivalent: dict[str, str]) -> Outcome:
    """What mutmut found for *module* in *work*."""
    listed = mutmut(work, "results", "--all", "true").stdout
    prefix = module.removesuffix(".py").replace("/", ".") + "."
    statuses = {m[1]: m[2] for line in listed.splitlines() if (m := _RESULT.match(line)) and m[1].startswith(prefix)}
    return Outcome(module, statuses, frozenset(equivalent))


def diffs(work: Path, module: str) -> dict[str, str]:
    """Each mutant of *module* by its name: the lines it changes (read from mutmut's mutated copy, which holds
    every function as ``x_NAME__mutmut_orig`` beside its mutants ``x_NAME__mutmut_N``)."""
    tree = ast.parse((work / "mutants" / module).read_text())
    functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    prefix = module.removesuffix(".py").replace("/", ".")
    out = {}
    for name, node in list(functions.items()):
        base, _, number = name.rpartition("__mutmut_")
        if not base or not number.isdigit():
            continue
        original = copy.deepcopy(functions.get(f"{base}__mutmut_orig"))
        if original is None:
            continue
        original.name = node.name = base  # the same name, so only the mutation differs (a default too)
        lines = difflib.unified_diff(
            ast.unparse(original).splitlines(), ast.unparse(node).splitlines(), lineterm="", n=0
        )
        out[f"{prefix}.{name}"] = "\n".join(x for x in lines if x[:1] in "-+" and x[:3] not in ("---", "+++"))
    return out


def recheck(work: Path, names: list[str], tests: list[str], *, jobs: int = 1) -> set[str]:
    """The mutants of *names* that *tests* (as they are now) kill, each run in a fresh pytest in mutmut's copy
    (*jobs* at once)."""
    shutil.copytree(work / "tests", work / "mutants" / "tests", dirs_exist_ok=True)

    def killed(name: str) -> bool:
        env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation", "MUTANT_UNDER_TEST": name}
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
        try:
            ran = subprocess.run(command, cwd=work / "mutants", env=env, capture_output=True, check=False, timeout=600)
        except subprocess.TimeoutExpired:  # a mutant that loops: the tests noticed, as mutmut's timeout
            return True
        return ran.returncode == 1  # a test failed (2-5: pytest could not run them)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return {name for name, dead in zip(names, pool.map(killed, names), strict=True) if dead}


def main(argv: list[str] | None = None) -> int:
    targets, equivalent = load_targets()
    parser = argparse.ArgumentParser(prog="python -m tests.mutation.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"modules to mutate, of: {', '.join(targets)}")
    parser.add_argument("--all", action="store_true", help="every target, one after another")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument(
        "--again", action="store_true", help="keep mutmut's results of the last run: retest only what changed"
    )
    parser.add_argument(
        "--recheck",
        nargs="*",
        metavar="TEST",
        help="run the survivors again, one fresh pytest each, against these tests (default: the module's), as they "
        "are now: with --again, what tests added since the run kill",
    )
    parser.add_argument("--min", type=float, default=0.9, help="the kill rate each module must reach (default 0.9)")
    args = parser.parse_args(argv)
    modules = list(targets) if args.all else args.modules
    unknown = [m for m in modules if m not in targets]
    if unknown or not modules:
        parser.error(f"name modules of {TARGETS.relative_to(ROOT)} (got {', '.join(unknown) or 'none'})")
    failed = False
    for module in modules:
        work = prepare(module, targets[module])
        if not args.again:  # mutmut does not retest a mutant when only the tests changed
            shutil.rmtree(work / "mutants", ignore_errors=True)
        ran = mutmut(work, "run", "--max-children", str(args.jobs))
        result = outcome(module, work, equivalent)
        if args.recheck is not None:
            caught = recheck(work, result.survivors, args.recheck or targets[module], jobs=args.jobs)
            statuses = {n: "killed" if n in caught else s for n, s in result.statuses.items()}
            result = Outcome(module, statuses, result.equivalent)
        if not result.statuses:
            print(f"{module}: mutmut ran no mutant (exit {ran.returncode}):\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}")
            failed = True
            continue
        print(result.line())
        changed = diffs(work, module)
        for name in result.survivors:
            print(f"# {name}: {result.statuses[name]}\n{changed.get(name, '(no diff found)')}")
        failed |= result.rate < args.min
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
