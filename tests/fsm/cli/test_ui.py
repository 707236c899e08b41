"""Tests for fsm.cli.ui: ``agentfsm ui`` starts on loopback, warns off it, and says one line when it cannot run."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from fsm.cli.app import main
from fsm.session.journal import default_path
from tests.fsm.ui.conftest import AGENTFSM
from tests.fsm.ui.sessions import delegating_session


def _start(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [str(AGENTFSM), "ui", "--port", "0", *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    return process, process.stdout.readline() if process.stdout else ""


def _stop(process: subprocess.Popen[str]) -> str:
    """Stop the server; its stderr, less the system fontconfig's notices that Graphviz may print."""
    process.terminate()
    err = process.communicate(timeout=10)[1]
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("Fontconfig "))


class TestServe:
    def test_serves_the_workspace_journal_on_loopback(self, tmp_path):
        """With no flags it serves the journal `agentfsm sessions` reads, on 127.0.0.1, and says where."""
        ws = tmp_path / "ws"
        session = delegating_session(default_path(ws), ws)
        process, line = _start(cwd=ws)
        try:
            assert line.startswith("agentfsm ui: http://127.0.0.1:")
            assert line.rstrip().endswith(f"(sessions from {default_path(ws)}; Ctrl-C stops)")
            url = line.split()[2]
            with urllib.request.urlopen(url + "api/sessions", timeout=5) as response:
                assert session in response.read().decode()
        finally:
            assert _stop(process) == ""  # no warning, no traceback

    def test_another_host_warns(self, tmp_path):
        """--host other than loopback serves, with one warning line on stderr."""
        process, line = _start("--host", "0.0.0.0", "--session-db", str(tmp_path / "j.db"), cwd=tmp_path)
        err = _stop(process)
        assert line.startswith("agentfsm ui: http://0.0.0.0:")
        assert err.splitlines()[0] == (
            "agentfsm: warning: --host 0.0.0.0 makes your sessions (prompts, tool "
            "output, file contents) readable by anyone who can reach this address"
        )

    def test_open_opens_the_printed_address(self, tmp_path, capsys, monkeypatch):
        """--open hands the browser the address it prints, once the app is ready."""
        import webbrowser

        import fsm.ui.server

        opened, served = [], []
        monkeypatch.setattr(webbrowser, "open", opened.append)
        monkeypatch.setattr(fsm.ui.server, "run", lambda app, sock: served.append(sock.getsockname()))
        assert main(["ui", "--port", "0", "--open", "--session-db", str(tmp_path / "j.db")]) == 0
        url = capsys.readouterr().out.split()[2]
        assert opened == [url] and url == f"http://127.0.0.1:{served[0][1]}/"


class TestErrors:
    def test_port_in_use_is_one_line(self, tmp_path, capsys):
        """A taken port is exit 1 and one line naming it."""
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            code = main(["ui", "--port", str(port), "--session-db", str(tmp_path / "j.db")])
        finally:
            taken.close()
        assert code == 1
        assert capsys.readouterr().err == (
            f"agentfsm: cannot listen on 127.0.0.1:{port} (Address already in use); pick another --port or --host\n"
        )

    def test_unreadable_journal_is_one_line(self, tmp_path, capsys):
        """A journal the page could not read stops the command at once, with the journal's own message."""
        (tmp_path / "j.db").write_text("not a database" * 100)
        assert main(["ui", "--port", "0", "--session-db", str(tmp_path / "j.db")]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"agentfsm: session journal {tmp_path / 'j.db'} is not a readable SQLite database")
        assert err.count("\n") == 1

    def test_older_journal_is_not_migrated(self, tmp_path, capsys, monkeypatch):
        """A journal of an older schema is refused in one line saying how to migrate it, and left as it is."""
        import fsm.session.journal

        path = tmp_path / "j.db"
        monkeypatch.setattr(fsm.session.journal, "MIGRATIONS", fsm.session.journal.MIGRATIONS[:1])
        monkeypatch.setattr(fsm.session.journal, "SCHEMA_VERSION", 1)
        fsm.session.journal.Journal(path).close()
        monkeypatch.undo()
        assert main(["ui", "--port", "0", "--session-db", str(path)]) == 1
        assert "has schema version 1, older than this version reads" in capsys.readouterr().err
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA user_version").fetchone() == (1,)
        db.close()

    def test_bad_port_is_a_usage_error(self, capsys):
        assert main(["ui", "--port", "70000"]) == 1
        assert capsys.readouterr().err == "error: --port must be 0..65535 (got 70000)\n"

    @pytest.mark.parametrize("missing", ["starlette", "uvicorn"])
    def test_missing_extra_is_a_one_line_hint(self, missing, capsys, monkeypatch):
        """Without the ui extra, `agentfsm ui` says how to install it, in one line."""
        for name in list(sys.modules):
            if name == missing or name.startswith(f"{missing}.") or name.startswith("fsm.ui"):
                monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, missing, None)  # import fails as if not installed
        assert main(["ui", "--port", "0"]) == 1
        assert capsys.readouterr().err == "agentfsm: agentfsm ui needs its extra: pip install 'agentfsm[ui]'\n"
