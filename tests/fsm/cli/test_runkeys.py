"""Tests for fsm.cli.runkeys on a real pseudo-terminal: quiet keys during a run, Esc as an interrupt."""

from __future__ import annotations

import os
import select
import termios
import time
from collections.abc import Iterator

import pytest

from fsm.cli.runkeys import RunKeys


@pytest.fixture
def tty() -> Iterator[tuple[int, object]]:
    """A pseudo-terminal: its controlling side's descriptor, and a text stream on the terminal side."""
    controller, terminal = os.openpty()
    stream = os.fdopen(terminal, "r", closefd=True)
    yield controller, stream
    stream.close()
    os.close(controller)


def _pending(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0.05)[0])


class TestRunKeys:
    def test_no_echo_during_the_run_and_typed_keys_are_dropped(self, tty: tuple[int, object]) -> None:
        """While the run goes the terminal neither echoes nor buffers lines; what was typed is gone after it."""
        controller, stream = tty
        fd = stream.fileno()  # type: ignore[attr-defined]
        before = termios.tcgetattr(fd)
        with RunKeys(stream, enabled=True):  # type: ignore[arg-type]
            assert not termios.tcgetattr(fd)[3] & (termios.ECHO | termios.ICANON)
            assert termios.tcgetattr(fd)[3] & termios.ISIG  # Ctrl-C still interrupts
            os.write(controller, b"typed meanwhile\x1b[A")
            time.sleep(0.2)
        assert termios.tcgetattr(fd) == before
        assert not _pending(fd)  # nothing left for the next prompt
        assert not _pending(controller)  # and nothing was echoed

    def test_a_lone_escape_interrupts_the_main_thread(self, tty: tuple[int, object]) -> None:
        """Esc alone raises KeyboardInterrupt in the main thread; an arrow key (Esc [ A) does not."""
        controller, stream = tty
        keys = RunKeys(stream, enabled=True)  # type: ignore[arg-type]
        with pytest.raises(KeyboardInterrupt), keys:
            os.write(controller, b"\x1b[A")
            time.sleep(0.3)
            assert not keys.pressed_escape
            os.write(controller, b"\x1b")
            time.sleep(2)
        assert keys.pressed_escape

    def test_paused_restores_the_terminal_for_the_question(self, tty: tuple[int, object]) -> None:
        """While the approver asks, the terminal is as it was (echo, lines); after, quiet again."""
        _, stream = tty
        fd = stream.fileno()  # type: ignore[attr-defined]
        before = termios.tcgetattr(fd)
        keys = RunKeys(stream, enabled=True)  # type: ignore[arg-type]
        with keys:
            seen = keys.paused(lambda: termios.tcgetattr(fd))()
            assert not termios.tcgetattr(fd)[3] & termios.ECHO
        assert seen == before

    def test_disabled_touches_nothing(self, tty: tuple[int, object]) -> None:
        """Off a terminal (disabled) the block changes nothing."""
        _, stream = tty
        fd = stream.fileno()  # type: ignore[attr-defined]
        before = termios.tcgetattr(fd)
        with RunKeys(stream, enabled=False):  # type: ignore[arg-type]
            assert termios.tcgetattr(fd) == before
