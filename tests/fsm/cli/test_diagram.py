"""Tests for fsm.cli.diagram: the ``agentfsm diagram`` subcommand, run through the CLI's entry point."""

from __future__ import annotations

import sys

from fsm.cli.app import main
from fsm.view import diagram
from fsm.view.diagram import INSTALL_HINT, mermaid

try:
    import pygraphviz  # noqa: F401

    HAVE_PYGRAPHVIZ = True
except ImportError:
    HAVE_PYGRAPHVIZ = False


def run(*argv: str) -> int:
    return main(["diagram", *argv])


class TestMissingPygraphviz:
    def test_command_exits_1(self, monkeypatch, capsys, tmp_path):
        """agentfsm diagram --format svg without pygraphviz prints the install command and exits 1."""
        monkeypatch.setitem(sys.modules, "pygraphviz", None)
        assert run("--format", "svg") == 1
        assert capsys.readouterr().err == f"agentfsm: {INSTALL_HINT}\n"


class TestCommand:
    def test_mermaid_to_stdout(self, capsys):
        """The default is mermaid on stdout."""
        assert run() == 0
        assert capsys.readouterr().out == mermaid()

    def test_options_reach_the_diagram(self, capsys):
        """--highlight and --conditions are passed through."""
        assert run("--highlight", "stopping", "--conditions") == 0
        assert capsys.readouterr().out == mermaid("stopping", conditions=True)

    def test_output_file_and_format_from_suffix(self, tmp_path):
        """--output writes the file; its suffix picks the format when --format is not given."""
        assert run("--output", str(tmp_path / "m.mmd")) == 0
        assert (tmp_path / "m.mmd").read_text() == mermaid()
        if HAVE_PYGRAPHVIZ:
            assert run("-o", str(tmp_path / "m.svg")) == 0
            assert (tmp_path / "m.svg").read_text() == diagram.svg()

    def test_bad_highlight_exits_1(self, capsys):
        """An unknown --highlight is one line on stderr and exit 1."""
        assert run("--highlight", "nowhere") == 1
        err = capsys.readouterr().err
        assert err.startswith("agentfsm: cannot highlight 'nowhere': ") and err.count("\n") == 1

    def test_png_needs_output(self, capsys):
        """PNG is not written to a terminal: --output is required."""
        assert run("--format", "png") == 1
        assert capsys.readouterr().err == "agentfsm: --format png writes binary data: give --output FILE\n"

    def test_unwritable_output_exits_1(self, tmp_path, capsys):
        """A directory that does not exist is one line and exit 1."""
        assert run("-o", str(tmp_path / "no" / "such" / "x.mmd")) == 1
        assert capsys.readouterr().err.startswith("agentfsm: cannot write ")
