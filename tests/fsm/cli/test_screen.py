"""Tests for fsm.cli.screen: wrapping at word boundaries, and output held while a question is pending."""

from __future__ import annotations

import io
import threading

from fsm.cli.screen import Screen


def _screen(width: int | None = 20) -> tuple[Screen, io.StringIO]:
    out = io.StringIO()
    return Screen(out, width=lambda: width), out


class TestWrapping:
    def test_words_move_to_the_next_line_whole(self) -> None:
        """A word that would cross the edge starts the next line; none is cut."""
        screen, out = _screen(20)
        screen.write("the quick brown fox jumps over the lazy dog\n")
        assert out.getvalue() == "the quick brown fox\njumps over the lazy\ndog\n"
        assert all(len(line) <= 20 for line in out.getvalue().splitlines())

    def test_streamed_pieces_that_end_mid_word(self) -> None:
        """Text streamed in pieces that split words wraps as if it came whole."""
        screen, out = _screen(20)
        for piece in ["the qu", "ick brown f", "ox jum", "ps over the la", "zy dog", "\n"]:
            screen.write(piece)
            screen.flush()
        assert out.getvalue() == "the quick brown fox\njumps over the lazy\ndog\n"

    def test_colour_codes_take_no_room_and_indents_stay(self) -> None:
        """Escape codes of colour are not counted; a line's leading spaces are kept."""
        screen, out = _screen(12)
        screen.write("  \033[2mab cd\033[0m ef gh\n")
        assert out.getvalue() == "  \033[2mab cd\033[0m ef\ngh\n"

    def test_a_word_longer_than_the_line_is_written_whole(self) -> None:
        """A word wider than the terminal is written as it is (the terminal breaks it)."""
        screen, out = _screen(5)
        screen.write("ab abcdefghij c\n")
        assert out.getvalue() == "ab\nabcdefghij\nc\n"

    def test_no_terminal_no_wrapping(self) -> None:
        """Off a terminal (no width) the text passes unchanged."""
        screen, out = _screen(None)
        text = "word " * 50 + "\n"
        screen.write(text)
        assert out.getvalue() == text


class TestHeld:
    def test_output_waits_for_the_question(self) -> None:
        """What another thread writes while the screen is held appears only once the block ends."""
        screen, out = _screen(80)
        with screen.held():
            writer = threading.Thread(target=lambda: screen.write("[2] ● bash(ls)\n"))
            writer.start()
            writer.join()
            assert out.getvalue() == ""
        assert out.getvalue() == "[2] ● bash(ls)\n"

    def test_a_pending_word_is_shown_before_holding(self) -> None:
        """A word streamed without its end is written before the question, so the question follows it."""
        screen, out = _screen(80)
        screen.write("Let me check")
        with screen.held():
            assert out.getvalue() == "Let me check"
