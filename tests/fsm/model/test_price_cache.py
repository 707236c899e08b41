"""Tests for fsm.model.price_cache: what genai-prices said of a model, kept so a later process need not load it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsm.model import price_cache
from fsm.model.price_cache import UNKNOWN, Entry
from fsm.model.pricing import _library_price, price_of
from fsm.model.reply import Usage


def _anthropic_models() -> list[str]:
    from genai_prices import data_snapshot

    provider = next(p for p in data_snapshot.get_snapshot().providers if p.id == "anthropic")
    return [model.id for model in provider.models]


MODELS = _anthropic_models()
COUNTS = st.integers(min_value=0, max_value=400_000)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache directory of this test's own, read afresh."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    price_cache.forget()
    yield tmp_path / "agentfsm"
    price_cache.forget()


class TestEntries:
    def test_every_anthropic_model_is_kept_with_rates(self, cache: Path) -> None:
        """Each Anthropic model of the table is kept with its per-token rates (its price is linear below its first
        tier), its canonical id and context window as the library names them."""
        for model in MODELS:
            price_of(model, Usage())
            entry = price_cache.load(model)
            library = _library_price(model, Usage())
            assert isinstance(entry, Entry) and entry.rates is not None and library is not None, model
            assert (entry.canonical_model, entry.context_window) == (library.canonical_model, library.context_window)
        assert len(list(cache.glob("prices-*.json"))) == 1

    @settings(max_examples=60, deadline=None)
    @given(
        model=st.sampled_from(MODELS),
        usage=st.builds(Usage, COUNTS, COUNTS, COUNTS, COUNTS),
    )
    def test_the_kept_rates_price_as_the_library_does(self, model: str, usage: Usage) -> None:
        """Whatever the usage, within the first tier or past it, the price from the cache is the library's to the
        last digit (past the bound the library itself is asked)."""
        price_of(model, Usage())  # kept (in the session's cache directory)
        assert price_of(model, usage) == _library_price(model, usage)

    def test_an_unknown_model_is_kept_as_unknown(self, cache: Path) -> None:
        """A model the table lacks is remembered as having no price, and still costs None."""
        assert price_of("my-local-model", Usage(10, 10)) is None
        assert price_cache.load("my-local-model") == UNKNOWN
        price_cache.forget()
        assert price_cache.load("my-local-model") == UNKNOWN and price_of("my-local-model", Usage(1)) is None

    def test_a_damaged_file_is_a_miss(self, cache: Path) -> None:
        """A cache file that does not read is ignored, then written anew."""
        price_of("claude-sonnet-4-5", Usage())
        (path,) = cache.glob("prices-*.json")
        path.write_text('{"claude-sonnet-4-5": {"rates": "nonsense"')
        price_cache.forget()
        assert price_cache.load("claude-sonnet-4-5") is None
        assert price_of("claude-sonnet-4-5", Usage(1_000_000)) == _library_price("claude-sonnet-4-5", Usage(1_000_000))
        assert isinstance(price_cache.load("claude-sonnet-4-5"), Entry)


class TestAnotherProcess:
    def test_a_later_process_prices_without_loading_the_table(self, tmp_path: Path) -> None:
        """The first process to price a model loads genai-prices and keeps what it said; the next one prices the
        same model, and reads its context window, without importing genai_prices."""
        program = (
            "import sys\n"
            "from fsm.model.pricing import price_of\n"
            "from fsm.model.reply import Usage\n"
            "from fsm.compaction.window import context_window\n"
            "price = price_of('claude-sonnet-4-5', Usage(1000, 1000))\n"
            "print(price.usd, context_window('claude-sonnet-4-5'), 'genai_prices' in sys.modules)\n"
        )
        env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        runs = [
            subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True)
            for _ in range(2)
        ]
        assert [run.stdout.split() for run in runs] == [["0.018", "200000", "True"], ["0.018", "200000", "False"]]


class TestInsideTheWorkspace:
    def test_a_cache_inside_the_workspace_is_never_read_nor_written(self, tmp_path, monkeypatch) -> None:
        """When the cache directory lies inside an agent's workspace, a forged cache file there (every price zero)
        is not read and nothing is written there: the prices come from the library."""
        from fsm import Agent
        from fsm.testing import ScriptedModel

        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))
        monkeypatch.setattr(price_cache, "_excluded", set())
        price_cache.forget()
        path = price_cache._path()
        assert path is not None
        path.parent.mkdir(parents=True)
        forged = {"canonical_model": "claude-sonnet-4-5", "context_window": 10, "rates": ["0"] * 4, "bound": None}
        path.write_text(json.dumps({"claude-sonnet-4-5": forged}))
        assert price_of("claude-sonnet-4-5", Usage(1000)).usd == 0  # read, before the workspace is known

        Agent(ScriptedModel([]), str(tmp_path))
        usage = Usage(1000, 1000)
        assert price_of("claude-sonnet-4-5", usage) == _library_price("claude-sonnet-4-5", usage)
        price_of("claude-haiku-4-5", usage)
        assert json.loads(path.read_text()) == {"claude-sonnet-4-5": forged}  # nothing written
        price_cache.forget()
