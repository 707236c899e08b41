"""fsm.mcp.tools: Claude Code's names, results mapped to tool_result content, the output cap."""

from __future__ import annotations

from fsm.mcp.client import CallResult, Connections, ServerStatus
from fsm.mcp.tools import mcp_tools, output_of, sanitise, tool_name


class TestNames:
    def test_sanitised(self) -> None:
        """Every character outside [A-Za-z0-9_-] becomes _, in the server's name and the tool's."""
        assert sanitise("my server.v2") == "my_server_v2"
        assert tool_name("git hub", "create/issue") == "mcp__git_hub__create_issue"

    def test_long_names_left_out_with_a_notice(self) -> None:
        """A name over 128 characters is not offered; a notice says so. Disconnected servers offer nothing."""
        statuses = [
            ServerStatus(
                "s", "connected", tools=({"name": "ok", "inputSchema": {"type": "object"}}, {"name": "x" * 130})
            ),
            ServerStatus("f", "failed", error="boom"),
        ]
        tools, notices = mcp_tools(statuses, Connections())
        assert [t.name for t in tools] == ["mcp__s__ok"]
        assert len(notices) == 1 and "over 128 characters" in notices[0]
        assert tools[0].schema == {"name": "mcp__s__ok", "description": "", "input_schema": {"type": "object"}}


class TestOutput:
    def test_text_and_error(self) -> None:
        """Text blocks are joined; isError is kept."""
        out = output_of(CallResult(({"type": "text", "text": "a"}, {"type": "text", "text": "b"}), True))
        assert (out.text, out.is_error, out.blocks) == ("a\nb", True, ())

    def test_images_become_image_blocks(self) -> None:
        """An image is the API's base64 image block, in the result's order."""
        image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
        out = output_of(CallResult((image, {"type": "text", "text": "dot"}), False))
        assert out.blocks == (
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            {"type": "text", "text": "dot"},
        )

    def test_structured_content_wins(self) -> None:
        """structuredContent, when there is some, is the result, as compact JSON (Claude Code's choice)."""
        result = CallResult(({"type": "text", "text": "42"},), False, {"answer": 42})
        assert output_of(result).text == '{"answer":42}'

    def test_cap(self) -> None:
        """Output over MAX_MCP_OUTPUT_TOKENS (4 characters a token) is cut, with Claude Code's note naming the cap."""
        out = output_of(CallResult(({"type": "text", "text": "y" * 500},), False), cap_tokens=100)
        assert out.text.startswith("y" * 400 + "\n\n[OUTPUT TRUNCATED - exceeded 100 token limit]")
        assert "pagination" in out.text and "y" * 401 not in out.text

    def test_unavailable_server_is_an_error_result(self) -> None:
        """A call to a server that is not connected is an error result, never a raise."""
        result = Connections().call("gone", "t", {})
        assert result.is_error and "MCP server 'gone' is unavailable" in result.content[0]["text"]
