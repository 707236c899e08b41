"""agentfsm's permission policy against the real Claude Code's verdicts (``tests/fsm/policy/conformance``).

The corpus (``corpus.jsonl``) holds each case with the verdict Claude Code gave it, recorded from the real CLI
by ``conformance/record.py``. Here every case is judged by agentfsm's policy with the same rules and mode in a
workspace built from the same template: agentfsm must never allow what Claude Code asks about or denies, and
where it is stricter the case must be listed in ``stricter.txt`` with its reason (and a listed case must still
be stricter, so the list stays true). The figures are printed (``pytest -s``). Re-recording runs the real
``claude`` (slow; skipped with the reason when it or bubblewrap is not installed).
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.fsm.policy.conformance import effect, holdout2_cases, holdout_cases, measure, record, template
from tests.fsm.policy.conformance.cases import CASES

CORPUS = measure.load(measure.CORPUS)
VERDICTS = {"allow", "ask", "deny"}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[measure.Outcome]:
    ws, home = template.build(tmp_path_factory.mktemp("conformance"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        return measure.compare(CORPUS, ws, home)


class TestCorpus:
    def test_every_case_is_recorded_once_with_a_verdict(self) -> None:
        """Each case of cases.py is in corpus.jsonl once, with Claude Code's verdict, its message and version."""
        ids = [c["id"] for c in CORPUS]
        assert len(ids) == len(set(ids))
        assert set(ids) == {c["id"] for c in CASES}
        for case in CORPUS:
            assert case["verdict"] in VERDICTS, case["id"]
            assert case["message"] and case["claude_code"].startswith("2."), case["id"]

    def test_the_recorded_cases_are_the_defined_ones(self) -> None:
        """A case edited in cases.py but not re-recorded is caught: the recorded fields equal the definition."""
        defined = {c["id"]: c for c in CASES}
        stale = [c["id"] for c in CORPUS if {k: c[k] for k in defined[c["id"]]} != defined[c["id"]]]
        assert not stale, f"re-record these cases (record.py --only ID): {stale}"

    def test_the_corpus_is_broad(self) -> None:
        """At least 400 cases, every mode, all three verdicts, Write/Edit cases and everyday safe commands."""
        assert len(CORPUS) >= 400
        assert {c["mode"] for c in CORPUS} == {"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"}
        assert set(Counter(c["verdict"] for c in CORPUS)) == VERDICTS
        assert {c["tool"] for c in CORPUS} == {"Bash", "Write", "Edit"}
        assert sum(1 for c in CORPUS if c["safe"]) >= 50


def _key(case: dict[str, object]) -> str:
    """What makes two cases the same: the call, the mode and the rules."""
    fields = ("tool", "command", "path", "content", "old", "new", "mode", "allow", "ask", "deny")
    return json.dumps([case.get(k) for k in fields])


class TestHoldout:
    def test_the_holdout_is_recorded_and_apart(self) -> None:
        """holdout.jsonl holds each hold-out case once with a verdict, and no case of the main corpus."""
        holdout = measure.load(measure.HOLDOUT)
        assert [c["id"] for c in holdout] == [c["id"] for c in holdout_cases.CASES]
        assert all(c["verdict"] in VERDICTS for c in holdout)
        defined = {c["id"]: c for c in holdout_cases.CASES}
        assert [c["id"] for c in holdout if {k: c[k] for k in defined[c["id"]]} != defined[c["id"]]] == []
        main = {_key(c) for c in CORPUS}
        assert not [c["id"] for c in holdout if _key(c) in main]

    def test_the_second_holdout_is_recorded_complete_and_apart(self) -> None:
        """holdout2.jsonl holds each case of holdout2_cases.py once, as defined, with Claude Code's verdict, its
        message and version, and no case of the main corpus or the first hold-out (nor one twice). Only that:
        agentfsm's verdicts on it are measured (``measure --holdout2``), never asserted, so it stays unseen."""
        holdout2 = measure.load(measure.HOLDOUT2)
        assert [c["id"] for c in holdout2] == [c["id"] for c in holdout2_cases.CASES]
        for case in holdout2:
            assert case["verdict"] in VERDICTS, case["id"]
            assert case["message"] and case["claude_code"].startswith("2."), case["id"]
        defined = {c["id"]: c for c in holdout2_cases.CASES}
        assert [c["id"] for c in holdout2 if {k: c[k] for k in defined[c["id"]]} != defined[c["id"]]] == []
        keys = [_key(c) for c in holdout2]
        assert len(keys) == len(set(keys))
        seen = {_key(c) for c in [*CORPUS, *measure.load(measure.HOLDOUT)]}
        assert not [c["id"] for c in holdout2 if _key(c) in seen]

    def test_the_second_holdout_is_broad(self) -> None:
        """About 150 hostile commands and more, in the three common modes, with all three verdicts, Write/Edit
        calls, and at least 20 everyday safe commands."""
        holdout2 = measure.load(measure.HOLDOUT2)
        assert len({c["command"] for c in holdout2 if c["tool"] == "Bash" and not c["safe"]}) >= 150
        assert {"default", "acceptEdits", "bypassPermissions"} <= {c["mode"] for c in holdout2}
        assert set(Counter(c["verdict"] for c in holdout2)) == VERDICTS
        assert {c["tool"] for c in holdout2} == {"Bash", "Write", "Edit"}
        assert sum(1 for c in holdout2 if c["safe"] and c["tool"] == "Bash") >= 20


LOOSER_ON_PURPOSE = {
    "file-040": "issue 21 item 3: an explicit allow rule naming a protected path (Edit(./.git/config)) lets it be "
    "written; Claude Code 2.1.197 asks even then",
}
"""Cases where agentfsm allows what Claude Code asks about, on purpose, each with its reason."""


class TestConformance:
    def test_agentfsm_never_allows_what_claude_code_refuses(self, outcomes: list[measure.Outcome]) -> None:
        """No case where Claude Code asks or denies and agentfsm allows."""
        looser = [measure._show(o) for o in outcomes if o.kind == "looser" and o.case["id"] not in LOOSER_ON_PURPOSE]
        assert not looser, f"{len(looser)} cases agentfsm allows and Claude Code does not:\n" + "\n".join(looser)

    def test_the_looser_cases_on_purpose_are_still_looser(self, outcomes: list[measure.Outcome]) -> None:
        """Each case of LOOSER_ON_PURPOSE is still one (so the list stays true)."""
        assert {o.case["id"] for o in outcomes if o.kind == "looser"} == set(LOOSER_ON_PURPOSE)

    def test_every_stricter_case_is_listed_with_its_reason(self, outcomes: list[measure.Outcome]) -> None:
        """stricter.txt names exactly the cases where agentfsm refuses what Claude Code runs, each with a reason."""
        listed = measure.stricter_list()
        stricter = {o.case["id"]: o for o in outcomes if o.kind == "stricter"}
        unlisted = [measure._show(o) + f"  ({o.ours.reason})" for i, o in stricter.items() if i not in listed]
        stale = sorted(set(listed) - set(stricter))
        assert not unlisted, "stricter than Claude Code, not in stricter.txt:\n" + "\n".join(unlisted)
        assert not stale, f"listed in stricter.txt but no longer stricter (remove them): {stale}"
        assert all(listed.values()), "every line of stricter.txt gives a reason"

    def test_figures(self, outcomes: list[measure.Outcome]) -> None:
        """The agreement figures, printed for the README (run with -s to see them)."""
        figures = measure.figures(outcomes)
        print("\nconformance:", json.dumps(figures))
        assert figures["cases"] == len(CORPUS)
        assert sum(figures[k] for k in ("same", "looser", "stricter", "other")) == len(CORPUS)

    def test_the_readme_states_todays_figures(self, outcomes: list[measure.Outcome]) -> None:
        """README's "Against Claude Code" gives the corpus size, the agreement and the stricter count measured now."""
        figures = measure.figures(outcomes)
        readme = " ".join((Path(__file__).parents[3] / "README.md").read_text().split())
        assert f"a corpus of {figures['cases']} commands" in readme
        assert f"the same verdict in {round(figures['agreement'] * 100)} % of cases" in readme
        assert f"is stricter in {figures['stricter']} cases" in readme

    def test_the_holdouts_looser_cases_are_fixed(self, tmp_path: Path) -> None:
        """README: the hold-outs' looser cases (measured blind, once) are "all since fixed"."""
        ws, home = template.build(tmp_path)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HOME", str(home))
            for corpus in (measure.HOLDOUT, measure.HOLDOUT2):
                looser = [o for o in measure.compare(measure.load(corpus), ws, home) if o.kind == "looser"]
                assert not looser, [measure._show(o) for o in looser]


LIVE_SAMPLE = ("wrap-001", "wrap-006", "rule-deny-001", "protected-001", "safe-001", "file-001")


@pytest.mark.slow
def test_live_recording_reproduces_the_corpus(tmp_path: Path) -> None:
    """Re-recording a sample with the real claude gives the committed verdicts."""
    binary = record.claude_binary()
    if binary is None:
        pytest.skip("claude is not installed (npm install @anthropic-ai/claude-code, or set CLAUDE_BIN)")
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; the recorder runs claude only inside it")
    committed = {c["id"]: c for c in CORPUS}
    version = record.claude_version(binary)
    fresh = []
    for run in record.group([committed[i] for i in LIVE_SAMPLE]):
        fresh += record.record([{k: v for k, v in c.items() if k not in ("verdict", "message")} for c in run],
                               binary, version, tmp_path)  # fmt: skip
    assert {c["id"]: c["verdict"] for c in fresh} == {i: committed[i]["verdict"] for i in LIVE_SAMPLE}


@pytest.fixture
def jail() -> None:
    if shutil.which("bwrap") is None:
        if os.environ.get("CI"):
            pytest.fail("bubblewrap (bwrap) is not installed, and CI needs it")
        pytest.skip("bubblewrap (bwrap) is not installed (apt-get install bubblewrap)")


@pytest.mark.usefixtures("jail")
class TestEffect:
    def test_a_payload_that_runs_is_seen(self) -> None:
        """A sentinel left by the command is reported as a payload that ran."""
        assert effect.effect("[[ 'a[$(touch PWNED)]' -eq 0 ]]") == "left the PWNED sentinel; changed PWNED"

    def test_a_secret_read_is_seen(self) -> None:
        """A secret of the template in the output is reported, wherever the path came from."""
        assert effect.effect("cat $HOME/.ssh/id_rsa") == "printed a secret"

    def test_a_write_anywhere_in_the_run_is_seen(self) -> None:
        """A changed file in the workspace, the home or the jail's /tmp is named."""
        assert (
            effect.effect("> notes.txt; echo x >> ~/.bashrc; echo x > /tmp/t") == "changed /tmp/t, notes.txt, ~/.bashrc"
        )

    def test_a_harmless_command_has_no_effect(self) -> None:
        """An everyday read-only command (git refreshing its index aside) does nothing."""
        assert effect.effect("ls -la && git status && git diff && cat README.md") is None
