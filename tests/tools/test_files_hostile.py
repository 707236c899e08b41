"""Hostile files end clean: read_file, write_file and edit_file refuse FIFOs, devices, sockets, files too big
to edit and binary ones, at once, with one line, and without reading what they refuse."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tools import BASE_TOOLS, ToolOutput, Workspace, run_tool
from tools.files import MAX_EDIT_BYTES

_HANG = 10.0
"""Seconds a call may take before the test calls it hung."""


def _call(workspace: Workspace, name: str, **tool_input: object) -> ToolOutput:
    return run_tool(BASE_TOOLS, name, workspace, tool_input)


def _error(text: str) -> ToolOutput:
    return ToolOutput(f"Error: {text}", is_error=True)


def _within(seconds: float, call: Callable[[], ToolOutput], *, unblock: Callable[[], None]) -> ToolOutput:
    """What *call* returned, or a failed test when it is still running after *seconds* (then *unblock* frees it)."""
    result: list[ToolOutput] = []
    worker = threading.Thread(target=lambda: result.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        unblock()
        worker.join(seconds)
        pytest.fail(f"the call was still blocked after {seconds:g} s")
    return result[0]


def _open_writer(path: Path) -> Callable[[], None]:
    """A way to free a reader blocked opening the FIFO at *path*: open it for writing, then close it."""

    def unblock() -> None:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    return unblock


@pytest.fixture
def fifo(workspace: Workspace) -> Path:
    path = workspace.root / "pipe"
    os.mkfifo(path)
    return path


class TestFifo:
    def test_edit_file_refuses_a_fifo_without_blocking(self, workspace: Workspace, fifo: Path) -> None:
        """edit_file on a FIFO no one writes to answers at once instead of waiting for a writer for ever."""
        out = _within(
            _HANG,
            lambda: _call(workspace, "edit_file", path="pipe", old_text="a", new_text="b"),
            unblock=_open_writer(fifo),
        )
        assert out == _error("pipe is a FIFO (named pipe), not a regular file; edit_file edits text files")

    def test_write_file_refuses_a_fifo_and_keeps_it(self, workspace: Workspace, fifo: Path) -> None:
        """write_file does not replace a FIFO with a regular file."""
        out = _within(
            _HANG, lambda: _call(workspace, "write_file", path="pipe", content="x"), unblock=_open_writer(fifo)
        )
        assert out == _error("pipe is a FIFO (named pipe), not a regular file; write_file writes regular files only")
        assert fifo.is_fifo()

    def test_read_file_refuses_a_fifo(self, workspace: Workspace, fifo: Path) -> None:
        """read_file refuses a FIFO without opening it."""
        out = _within(_HANG, lambda: _call(workspace, "read_file", path="pipe"), unblock=_open_writer(fifo))
        assert out == _error("pipe is a FIFO (named pipe), not a regular file; read_file reads text files")

    def test_read_file_refuses_a_file_swapped_for_a_fifo_after_the_check(
        self, workspace: Workspace, fifo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A FIFO that appears between the check and the open is refused on the opened descriptor, not waited on."""
        real_stat = os.stat
        regular = real_stat(__file__)

        def stat_before_swap(path: object, *args: object, **kwargs: object) -> os.stat_result:
            return regular if path == fifo else real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "stat", stat_before_swap)
        out = _within(_HANG, lambda: _call(workspace, "read_file", path="pipe"), unblock=_open_writer(fifo))
        assert out == _error("pipe is a FIFO (named pipe), not a regular file; read_file reads text files")


class TestDevicesAndSockets:
    def test_edit_file_refuses_a_device(self, workspace: Workspace) -> None:
        """An approved edit of /dev/zero is refused at once instead of reading an endless file into memory."""
        out = _within(
            _HANG,
            lambda: _call(workspace.unconfined(), "edit_file", path="/dev/zero", old_text="a", new_text="b"),
            unblock=lambda: None,
        )
        assert out == _error("/dev/zero is a character device, not a regular file; edit_file edits text files")

    def test_write_file_refuses_a_device(self, workspace: Workspace) -> None:
        """An approved write to /dev/null is refused: the device is not replaced by a file."""
        out = _call(workspace.unconfined(), "write_file", path="/dev/null", content="x")
        assert out == _error(
            "/dev/null is a character device, not a regular file; write_file writes regular files only"
        )

    @pytest.fixture
    def sock(self) -> Iterator[tuple[Workspace, Path]]:
        # A short directory: a unix socket's path must fit in 108 bytes.
        with tempfile.TemporaryDirectory(prefix="afsm") as short, socket.socket(socket.AF_UNIX) as server:
            path = Path(short).resolve() / "s"
            server.bind(str(path))
            yield Workspace(short), path

    @pytest.mark.parametrize("name", ["read_file", "edit_file"])
    def test_a_socket_is_refused(self, sock: tuple[Workspace, Path], name: str) -> None:
        """A unix socket is neither read nor edited."""
        workspace, _ = sock
        args = {"old_text": "a", "new_text": "b"} if name == "edit_file" else {}
        out = _call(workspace, name, path="s", **args)
        assert out.is_error
        assert out.text.startswith("Error: s is a socket, not a regular file;")

    def test_write_file_refuses_a_socket(self, sock: tuple[Workspace, Path]) -> None:
        """write_file leaves a socket where it is."""
        workspace, path = sock
        out = _call(workspace, "write_file", path="s", content="x")
        assert out == _error("s is a socket, not a regular file; write_file writes regular files only")
        assert path.is_socket()


class TestEditLimits:
    def test_a_file_over_the_limit_is_refused_and_untouched(self, workspace: Workspace) -> None:
        """A file one byte over MAX_EDIT_BYTES is not edited, and says how to edit it instead."""
        path = workspace.root / "big.txt"
        with path.open("wb") as out:
            out.write(b"needle\n")
            out.truncate(MAX_EDIT_BYTES + 1)
        before = path.stat()
        assert _call(workspace, "edit_file", path="big.txt", old_text="needle", new_text="pin") == _error(
            f"big.txt is {MAX_EDIT_BYTES + 1} bytes, over edit_file's limit of {MAX_EDIT_BYTES} bytes; "
            "edit it with bash (sed -i, or a script)"
        )
        assert path.stat().st_mtime_ns == before.st_mtime_ns
        with path.open("rb") as check:
            assert check.read(7) == b"needle\n"

    def test_a_file_at_the_limit_is_edited(self, workspace: Workspace) -> None:
        """A text file of exactly MAX_EDIT_BYTES is edited."""
        path = workspace.root / "edge.txt"
        path.write_bytes(b"needle\n" + b"x" * (MAX_EDIT_BYTES - 7))
        assert _call(workspace, "edit_file", path="edge.txt", old_text="needle", new_text="pin") == ToolOutput(
            "Edited edge.txt"
        )
        assert path.stat().st_size == MAX_EDIT_BYTES - 3

    def test_a_2_gb_sparse_file_costs_no_memory(self, workspace: Workspace) -> None:
        """Editing a 2 GB sparse file is refused without reading it (peak memory of the call well under 1 MB)."""
        path = workspace.root / "sparse.bin"
        with path.open("wb") as out:
            out.truncate(2 * 1024**3)
        tracemalloc.start()
        try:
            out = _call(workspace, "edit_file", path="sparse.bin", old_text="a", new_text="b")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert out.is_error and "over edit_file's limit" in out.text
        assert peak < 1024 * 1024

    def test_a_binary_file_is_refused(self, workspace: Workspace) -> None:
        """A file with a NUL byte is not edited: a text edit could corrupt it."""
        path = workspace.root / "blob.bin"
        path.write_bytes(b"header needle\0\x01\x02")
        assert _call(workspace, "edit_file", path="blob.bin", old_text="needle", new_text="pin") == _error(
            "blob.bin is a binary file (NUL bytes); edit_file edits text"
        )
        assert path.read_bytes() == b"header needle\0\x01\x02"
