"""ScriptedModel records what each call received, linearly: only the messages new since a list's last call
are copied, and later changes to the caller's list never show in an earlier request."""

from __future__ import annotations

from fsm import Agent
from fsm.testing import ScriptedModel, text_reply, tool_reply, tool_use


def _call(model: ScriptedModel, messages: list[dict], tools: list[dict] | None = None) -> None:
    model.create(system="s", messages=messages, tools=tools or [], max_tokens=10)


class TestScriptedModelRecording:
    def test_each_request_shows_what_its_call_received(self):
        """requests[i].messages is the list call i got, whatever the caller appends afterwards."""
        model = ScriptedModel([text_reply("a"), text_reply("b"), text_reply("c")])
        messages = [{"role": "user", "content": "one"}]
        _call(model, messages)
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "a"}]})
        _call(model, messages)
        messages.append({"role": "user", "content": "two"})
        assert [m["content"] for m in model.requests[0].messages] == ["one"]
        assert len(model.requests[1].messages) == 2
        _call(model, messages)
        assert [len(r.messages) for r in model.requests] == [1, 2, 3]

    def test_messages_are_copied_once_and_shared(self):
        """A message already recorded is not copied again: later requests share its one copy."""
        model = ScriptedModel([text_reply("a"), text_reply("b")])
        messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
        _call(model, messages)
        messages.append({"role": "user", "content": "more"})
        _call(model, messages)
        first, second = model.requests
        assert second.messages[0] is first.messages[0]
        assert first.messages[0] is not messages[0] and first.messages[0] == messages[0]
        assert first.messages is not second.messages

    def test_a_changed_message_before_recording_is_copied(self):
        """A request holds a copy: changing the caller's message afterwards does not alter it."""
        model = ScriptedModel([text_reply("a")])
        messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
        _call(model, messages)
        messages[0]["content"][0]["text"] = "changed"
        assert model.requests[0].messages[0]["content"][0]["text"] == "hi"

    def test_another_list_is_copied_whole(self):
        """A list that is not the one seen before, or no longer ends as it did, is copied in full."""
        model = ScriptedModel([text_reply("a"), text_reply("b"), text_reply("c")])
        messages = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
        _call(model, messages)
        messages[1] = {"role": "user", "content": "replaced"}
        _call(model, messages)
        _call(model, [{"role": "user", "content": "other"}])
        assert [m["content"] for m in model.requests[1].messages] == ["one", "replaced"]
        assert [m["content"] for m in model.requests[2].messages] == ["other"]

    def test_an_agent_run_records_every_call(self, tmp_path):
        """Driven by an agent, each request holds the conversation as it was at that call."""
        model = ScriptedModel([tool_reply(tool_use("glob", {"pattern": "*"})), text_reply("done")])
        agent = Agent(model, str(tmp_path))
        agent.run("look")
        assert [len(r.messages) for r in model.requests] == [1, 3]
        assert model.requests[1].messages[:1] == model.requests[0].messages
        assert model.requests[1].messages == agent.messages[:3]
        assert model.requests[0].tools is not model.requests[1].tools
        assert model.requests[0].tools == model.requests[1].tools
