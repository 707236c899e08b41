"""A model reply holding lone surrogates or bytes that are not UTF-8 is repaired (U+FFFD) or refused (one line)
at the model boundary, so the journal, the terminal and the next request never meet text no encoder takes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from fsm import Agent, ModelError, Policy, Reply
from fsm.model.anthropic import AnthropicModel
from fsm.model.reply import REPLACEMENT, without_surrogates
from fsm.session.journal import Journal
from fsm.testing import ScriptedModel, text, text_reply, tool_reply, tool_use
from tests.e2e.fake_server import FakeAnthropic, Raw, sse, stream_events

BAD = "\ud800"
"""A lone surrogate: JSON may spell it (``"\\ud800"``), Python keeps it, UTF-8 refuses it."""
KW: dict[str, Any] = {"system": "sys", "messages": [{"role": "user", "content": "hi"}], "tools": [], "max_tokens": 9}


def _encodes(value: object) -> None:
    json.dumps(value, ensure_ascii=False).encode("utf-8")


class TestFromWire:
    def test_text_and_tool_input_are_repaired(self) -> None:
        """Surrogates in a text block, a tool input's value and key, and an id all become U+FFFD."""
        reply = Reply.from_wire(
            tool_reply(text(f"hi {BAD}"), tool_use("glob", {"pattern": f"*{BAD}", f"k{BAD}": [BAD]}, id=f"t{BAD}"))
        )
        assert reply.content == (
            {"type": "text", "text": f"hi {REPLACEMENT}"},
            {
                "type": "tool_use",
                "id": f"t{REPLACEMENT}",
                "name": "glob",
                "input": {"pattern": f"*{REPLACEMENT}", f"k{REPLACEMENT}": [REPLACEMENT]},
            },
        )
        _encodes(list(reply.content))

    def test_a_valid_pair_is_kept(self) -> None:
        """An escaped surrogate pair is one character, kept as it is; a clean reply is the very same object."""
        data = json.loads('{"content": [{"type": "text", "text": "\\ud83d\\ude00"}]}')
        assert Reply.from_wire(data).text == "\U0001f600"
        clean = {"content": [{"type": "text", "text": "naïve"}]}
        assert without_surrogates(clean) is clean


class TestAgentWithScriptedModel:
    def test_the_run_ends_clean_and_the_journal_holds_the_repair(self, tmp_path: Path) -> None:
        """A scripted reply with surrogates in its text and tool input runs, is journalled and reads back."""
        work = tmp_path / "w"
        work.mkdir()
        model = ScriptedModel(
            [tool_reply(tool_use("write_file", {"path": f"a{BAD}.txt", "content": f"x{BAD}"})), text_reply(f"ok {BAD}")]
        )
        agent = Agent(model, str(work), permissions=Policy(mode="acceptEdits"))
        with Journal(tmp_path / "j.db") as journal:
            session = journal.start(agent)
            agent.send("go")
            agent.run()
            assert agent.state == "idle" and agent.data.outcome == "end_turn"
            records = journal.records(session)
        assert (work / f"a{REPLACEMENT}.txt").read_text() == f"x{REPLACEMENT}"
        final = {"role": "assistant", "content": [text(f"ok {REPLACEMENT}")]}
        assert [r.appended for r in records if r.trigger == "replied_final"] == [(final,)]
        _encodes(agent.data.messages)


class TestOverTheWire:
    @staticmethod
    def model(fake: FakeAnthropic) -> AnthropicModel:
        client = anthropic.Anthropic(api_key="test", base_url=fake.url)
        return AnthropicModel("m", client=client, max_retries=0, sleep=lambda seconds: None)

    def test_create_repairs_escaped_surrogates_and_bad_bytes(self) -> None:
        """A JSON body spelling a lone surrogate and holding a byte that is not UTF-8 comes back repaired."""
        body = (
            b'{"type":"message","role":"assistant","model":"m","stop_reason":"tool_use","content":['
            b'{"type":"text","text":"a\\ud800 b\xff"},'
            b'{"type":"tool_use","id":"t1","name":"glob","input":{"pattern":"\\udfff*"}}]}'
        )
        with FakeAnthropic([Raw(body)]) as fake:
            reply = self.model(fake).create(**KW)
        assert reply.content == (
            {"type": "text", "text": f"a{REPLACEMENT} b{REPLACEMENT}"},
            {"type": "tool_use", "id": "t1", "name": "glob", "input": {"pattern": f"{REPLACEMENT}*"}},
        )

    def test_a_stream_is_repaired_before_any_listener_sees_it(self) -> None:
        """Streamed events spelling lone surrogates reach on_event, and the reply, repaired."""
        message = {"id": "m1", "model": "m", "stop_reason": "end_turn", "content": [text(f"x{BAD}y")]}
        events = stream_events(
            {**message, "type": "message", "role": "assistant", "usage": {"input_tokens": 1, "output_tokens": 1}}
        )
        body = b"".join(sse(e) for e in events).decode()
        seen: list[dict[str, Any]] = []
        with FakeAnthropic([Raw(body, content_type="text/event-stream")]) as fake:
            reply = self.model(fake).stream(**KW, on_event=seen.append)
        assert reply.text == f"x{REPLACEMENT}y"
        _encodes(seen)
        deltas = [e["delta"]["text"] for e in seen if e["type"] == "content_block_delta"]
        assert "".join(deltas) == f"x{REPLACEMENT}y"

    def test_a_stream_with_bytes_that_are_not_utf8_is_one_line(self) -> None:
        """A stream the SDK cannot decode ends the call with one malformed line, not a traceback."""
        body = b'event: ping\ndata: {"type": "ping"}\n\nevent: message_start\ndata: {"x": "\xff"}\n\n'
        with (
            FakeAnthropic([Raw(body, content_type="text/event-stream")]) as fake,
            pytest.raises(
                ModelError, match=r"^the model API's stream held bytes that are not UTF-8 after 0 events"
            ) as info,
        ):
            self.model(fake).stream(**KW, on_event=lambda event: None)
        assert info.value.kind == "malformed"

    def test_an_error_body_with_a_surrogate_is_one_clean_line(self) -> None:
        """An error message spelling a lone surrogate is repaired in the ModelError's text."""
        body = json.dumps({"type": "error", "error": {"type": "api_error", "message": f"down {BAD}"}})
        with FakeAnthropic([Raw(body, code=400)]) as fake, pytest.raises(ModelError) as info:
            self.model(fake).create(**KW)
        assert str(info.value) == f"the model API answered 400: down {REPLACEMENT}"
