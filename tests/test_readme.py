"""README.md and the pages of docs/: their examples run as written, and what they point at exists.

Examples are found by their heading, in the page where they live; a heading that moves or an example that goes
stale fails here. Links, anchors, repository paths and dotted names are checked on every page.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fsm import Agent
from fsm.cli import build_parser
from fsm.testing import ScriptedModel, text_reply
from fsm.view.stream import CONTENT_CUT, event_of
from tests.suite import COLLECTED

ROOT = Path(__file__).parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCED = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.S | re.M)
HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$", re.M)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`]+)`")
PATH = re.compile(r"(?:^|[\s(])((?:fsm|tools|tests|diagrams|docs|\.ci)/[\w./-]*)(?:::([\w:]+))?")
DOTTED = re.compile(r"(?:python -m )?((?:fsm|tools|tests)(?:\.\w+)+)(?: .*)?")
UUID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
SHORT_ID = re.compile(r"\b[0-9a-f]{8}\b")


def section(page: Path, heading: str) -> str:
    """The text under the heading *heading* (any level) of *page*, up to the next heading of its level or
    higher."""
    text = page.read_text()
    prose = FENCED.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)  # headings inside code are not headings
    for match in HEADING.finditer(prose):
        if match.group(2) == heading:
            level = len(match.group(1))
            rest = HEADING.finditer(prose, match.end())
            end = next((m.start() for m in rest if len(m.group(1)) <= level), len(text))
            return text[match.end() : end]
    raise AssertionError(f"{page.relative_to(ROOT)} has no heading {heading!r}")


def blocks(text: str, lang: str = "") -> list[str]:
    """The bodies of the fenced code blocks of *text* whose info string is *lang*."""
    return [body for info, body in FENCED.findall(text) if info == lang]


def run_python(code: str, cwd: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def prose_of(page: Path) -> str:
    """*page* without its fenced code blocks."""
    return FENCED.sub("", page.read_text())


def spans(page: Path) -> list[str]:
    """The code spans of *page*'s prose, a span wrapped over two lines joined with one space."""
    return [" ".join(span.split()) for span in SPAN.findall(prose_of(page))]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, heading in HEADING.findall(prose_of(page)):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def broken_links(page: Path) -> list[str]:
    """Each relative link or image of *page* whose file, or whose anchor in a Markdown file, does not exist."""
    broken = []
    for target in LINK.findall(SPAN.sub("x", prose_of(page))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    return broken


def missing_paths(page: Path) -> list[str]:
    """Each repository path named in a code span of *page* that does not exist, or whose ``::Name`` parts are not
    a class or function defined in it."""
    missing = []
    for span in spans(page):
        for path, names in PATH.findall(span):
            file = ROOT / path
            if not file.exists():
                missing.append(path)
            for name in filter(None, names.split("::")):
                if not re.search(rf"^\s*(class|def) {name}\b", file.read_text() if file.is_file() else "", re.M):
                    missing.append(f"{path}::{name}")
    return missing


def unresolved_names(page: Path) -> list[str]:
    """Each dotted name of ours in a code span of *page* (``fsm.core.progress.Progress``, ``python -m
    tests.perf.bench_ui``) that is neither a module nor an attribute of one."""
    unresolved = []
    for span in spans(page):
        match = DOTTED.fullmatch(span)
        if match and not _resolves(match.group(1)):
            unresolved.append(match.group(1))
    return unresolved


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except ModuleNotFoundError:
            continue
        obj = importlib.import_module(module) if cut < len(parts) else None
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def debugger_transcript(commands: list[str], cwd: Path) -> list[str]:
    """What ``agentfsm debug --demo`` prints for *commands*, each command shown after its prompt as on a
    terminal, agent ids cut to 8 characters."""
    out = subprocess.run(
        [sys.executable, "-m", "fsm", "debug", "--demo"],
        input="".join(f"{c}\n" for c in commands),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    first, *answers = out.split("(afsm) ")
    shown = first + "".join(f"(afsm) {c}\n{a}" for c, a in zip(commands, answers, strict=True))
    return UUID.sub(r"\1", shown).splitlines()


class TestReadme:
    def test_quick_start_names_the_test_command(self):
        """The quick start's second command is exactly the test command CI runs."""
        quick = blocks(section(README, "Quick start"), "bash")[0]
        assert quick.splitlines()[0].endswith("&& agentfsm demo")
        assert quick.splitlines()[1] == "pytest -n auto"
        assert (ROOT / ".ci" / "run").read_text().splitlines()[-1] == quick.splitlines()[1]

    def test_is_a_first_read(self):
        """The README stays a front door: at most 330 lines, the reference in docs/."""
        assert len(README.read_text().splitlines()) <= 330

    def test_stepping_example_runs(self, tmp_path):
        """The stepping example runs offline and steps into the subagent."""
        (tmp_path / "README.md").write_text("hi\n")
        lines = run_python(blocks(section(README, "Stepping from Python"), "python")[0], tmp_path)
        assert any(line.endswith(" depth=1 idle --prompt--> awaiting_model") for line in lines)
        assert lines[-2].endswith("stopping --stopped--> idle")
        assert lines[-1].startswith("The folder holds one file, README.md. <Agent ")
        assert lines[-1].endswith("depth=0 state=idle turn=2/30 outcome=end_turn>")

    def test_package_doors_import(self, tmp_path):
        """Each package of the Architecture table has one import line, of its own names, and they all import."""
        rows = re.findall(
            r"^\| `([\w.]+)` \|.*\| `(from ([\w.]+) import [\w, ]+)` \|$", section(README, "Architecture"), re.M
        )
        packages = {"tools", "fsm.errors", "fsm.testing"}
        packages |= {f"fsm.{p.parent.name}" for p in (ROOT / "fsm").glob("*/__init__.py")}
        assert sorted(package for package, _, _ in rows) == sorted(packages)
        for package, _, module in rows:
            assert module == package or module.startswith(f"{package}."), module
        run_python("\n".join(line for _, line, _ in rows), tmp_path)

    def test_every_runtime_dependency_has_its_line(self):
        """Why these dependencies names each runtime dependency of pyproject.toml."""
        why = section(README, "Why these dependencies")
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        for requirement in project["dependencies"]:
            name = re.match(r"[\w.-]+", requirement).group()
            assert f"`{name}`" in why, name

    @pytest.mark.parametrize("page", [README, DOCS / "debugging.md"], ids=lambda p: str(p.relative_to(ROOT)))
    def test_debugger_transcript_is_what_it_prints(self, page, tmp_path):
        """The `agentfsm debug --demo` session shown is what the debugger prints for those commands today."""
        [shown] = [b for b in blocks(page.read_text()) if b.startswith("$ agentfsm debug --demo\n")]
        expected = shown.splitlines()[1:]
        commands = [line.removeprefix("(afsm) ") for line in expected if line.startswith("(afsm) ")]
        actual = debugger_transcript(commands, tmp_path)
        assert [SHORT_ID.sub("ID", line) for line in actual] == [SHORT_ID.sub("ID", line) for line in expected]


class TestDocs:
    def test_sessions_example_prints_what_it_says(self, tmp_path):
        """docs/sessions.md's example resumes, replays and forks as its comments say, and really writes a.txt."""
        code = blocks(section(DOCS / "sessions.md", "Time travel and replay"), "python")[0]
        assert run_python(code + "\nprint(open(work + '/a.txt').read())", tmp_path) == [
            "resumed: this call was in flight when the run stopped; not run again",
            "a.txt says hi",
            "2",
            "True 7",
            "run bash 'cat a.txt'",
            "a.txt says hi",
            "hi",
        ]

    def test_hooks_example_denies_curl(self, tmp_path):
        """docs/permissions.md's hook denies the curl call before anyone is asked, and records who denied it."""
        code = blocks(section(DOCS / "permissions.md", "Hooks"), "python")[0]
        assert run_python(code, tmp_path) == ["No network.", "no network by hook <lambda>"]

    def test_transition_events_documented(self, tmp_path):
        """docs/cli.md states the content cut and names every key a transition event has."""
        events = " ".join(section(DOCS / "cli.md", "Transition events").split())
        assert f"cut to {CONTENT_CUT:,} characters" in events
        agent = Agent(model=ScriptedModel([text_reply("hi")]), workdir=str(tmp_path))
        agent.send("hi")
        keys = list(event_of(agent.step()))
        assert len(keys) > 10
        for key in keys[1:]:
            assert f"`{key}`" in events, key

    def test_every_flag_is_documented(self):
        """Every option the parser knows, of agentfsm and of each subcommand, is named in docs/cli.md."""
        text = (DOCS / "cli.md").read_text()
        options = sorted(
            {o for p in _parsers(build_parser()) for a in p._actions for o in a.option_strings} - {"-h", "--help"}
        )
        assert len(options) > 40
        missing = [o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
        assert not missing

    def test_the_suite_is_sized_in_one_sentence(self):
        """The README and docs/testing.md give the full suite's size and time once each, and agree."""
        size = re.compile(r"the\s+full\s+suite\s+\((\d[\d,]*)\s+tests,\s+about\s+(\d+)\s+minutes")
        said = [size.findall(page.read_text()) for page in PAGES]
        assert said[PAGES.index(README)] == said[PAGES.index(DOCS / "testing.md")]
        assert sum(map(len, said)) == 2

    @pytest.mark.slow
    def test_the_suite_size_is_current(self, request):
        """The size the README states is within 5 % of the tests pytest collects today (this session's count when
        it collected the whole suite, else a collection of its own)."""
        stated = int(re.search(r"the full suite \((\d[\d,]*) tests", README.read_text()).group(1).replace(",", ""))
        if [(request.config.invocation_params.dir / a).resolve() for a in request.config.args] == [ROOT / "tests"]:
            collected = request.config.stash[COLLECTED]
        else:
            out = subprocess.run(
                [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider"],
                cwd=ROOT,
                capture_output=True,
                text=True,
            ).stdout
            collected = int(re.search(r"^(\d+) tests collected", out, re.M).group(1))
        assert abs(stated - collected) <= collected * 0.05, f"README says {stated} tests; pytest collects {collected}"


class TestLinks:
    @pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
    def test_links_and_anchors_resolve(self, page):
        """Every relative link and image of the page exists, and every anchor names a heading there."""
        assert not broken_links(page)

    @pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
    def test_named_paths_exist(self, page):
        """Every repository path (and test class or function) the page names in code exists."""
        assert not missing_paths(page)

    @pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
    def test_dotted_names_resolve(self, page):
        """Every dotted name of ours the page gives in code is a module, or an attribute of one."""
        assert not unresolved_names(page)

    def test_the_checks_can_fail(self, tmp_path):
        """A missing file, a missing anchor, a missing test class and an unknown name are each reported."""
        page = tmp_path / "page.md"
        page.write_text(
            "# Title\n\n[a](nowhere.md) [b](#title) [c](#elsewhere) `tests/test_readme.py::TestNothing` "
            "`tools/nothing.py` `fsm.core.Nothing` `fsm.core.Agent`\n\n```\n# not a heading\n```\n"
        )
        assert broken_links(page) == ["nowhere.md: no such file", "#elsewhere: no heading with that anchor in page.md"]
        assert missing_paths(page) == ["tests/test_readme.py::TestNothing", "tools/nothing.py"]
        assert unresolved_names(page) == ["fsm.core.Nothing"]
        assert anchors(page) == {"title"}

    def test_every_page_is_linked_from_the_index(self):
        """docs/README.md links every page of docs/, and the README links docs/README.md."""
        index = (DOCS / "README.md").read_text()
        for page in PAGES[1:]:
            if page.name != "README.md":
                assert f"]({page.name})" in index, page.name
        assert "](docs/README.md)" in README.read_text()


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """*parser* and every subcommand's parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found
