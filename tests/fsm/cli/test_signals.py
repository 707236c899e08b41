"""Tests for fsm/cli/signals.py: SIGTERM and SIGHUP interrupt like Ctrl-C, once."""

from __future__ import annotations

import os
import signal

import pytest

from fsm.cli.signals import HANDLED, Interrupted, signal_name, signals_interrupt


class TestSignalsInterrupt:
    @pytest.mark.parametrize("signum", HANDLED)
    def test_each_signal_raises_interrupted(self, signum: int) -> None:
        """SIGINT, SIGTERM and SIGHUP raise an Interrupted (a KeyboardInterrupt) naming the signal."""
        with signals_interrupt() as state, pytest.raises(KeyboardInterrupt) as caught:
            os.kill(os.getpid(), signum)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])  # a syscall, so the handler has run before we go on
            pytest.fail("the signal did not interrupt")
        assert signal_name(caught.value) == signal.Signals(signum).name
        assert state.received == signal.Signals(signum).name

    def test_a_second_signal_during_cleanup_is_ignored(self) -> None:
        """After the first interruption, more signals are noted and do not raise, until rearmed."""
        with signals_interrupt() as state:
            with pytest.raises(Interrupted):
                os.kill(os.getpid(), signal.SIGINT)
                signal.pthread_sigmask(signal.SIG_BLOCK, [])
            os.kill(os.getpid(), signal.SIGINT)  # "cleanup": must not raise
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])
            assert state.ignored == ["SIGINT", "SIGTERM"]
            state.rearm()
            with pytest.raises(Interrupted):
                os.kill(os.getpid(), signal.SIGHUP)
                signal.pthread_sigmask(signal.SIG_BLOCK, [])

    def test_handlers_are_restored(self) -> None:
        """Leaving the block puts the previous handlers back."""
        before = [signal.getsignal(s) for s in HANDLED]
        with signals_interrupt():
            pass
        assert [signal.getsignal(s) for s in HANDLED] == before

    def test_plain_keyboard_interrupt_is_sigint(self) -> None:
        """A KeyboardInterrupt from elsewhere counts as Ctrl-C."""
        assert signal_name(KeyboardInterrupt()) == "SIGINT"
