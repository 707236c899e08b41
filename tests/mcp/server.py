"""A tiny MCP server for the tests, written with the ``mcp`` package's server API (``MCPServer``, once FastMCP).

::

    python tests/mcp/server.py stdio [--delay SECONDS] [--pidfile PATH]
    python tests/mcp/server.py http PORT [--delay SECONDS]    # streamable HTTP, at /mcp
    python tests/mcp/server.py sse PORT                       # the older SSE transport, at /sse
    python tests/mcp/server.py silent          # a stdio "server" that reads and never answers

Tools: ``add(a, b)`` (text), ``echo_env(name)`` (a variable of its environment, or ``(unset)``), ``fail()``
(an error result), ``big(n)`` (n characters), ``sleep(seconds)``, ``picture()`` (an image and a text), ``data()``
(structured content only), ``pid()`` (its process id), ``grow()`` (adds the tool ``extra()`` and sends
``notifications/tools/list_changed``). ``--delay`` sleeps before serving (a server slow to start);
``--pidfile`` writes its pid there.
"""

import argparse
import base64
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ImageContent, TextContent

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build() -> Any:
    server = MCPServer("tiny")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    def echo_env(name: str) -> str:
        """A variable of the server's environment."""
        return os.environ.get(name, "(unset)")

    @server.tool()
    def fail() -> CallToolResult:
        """Always an error result."""
        return CallToolResult(content=[TextContent(type="text", text="it failed")], is_error=True)

    @server.tool()
    def big(n: int) -> str:
        """n characters."""
        return "x" * n

    @server.tool()
    def picture() -> CallToolResult:
        """An image and a caption."""
        image = ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
        return CallToolResult(content=[image, TextContent(type="text", text="a red dot")])

    @server.tool()
    def data() -> CallToolResult:
        """Structured content only."""
        return CallToolResult(content=[], structured_content={"answer": 42})

    @server.tool()
    def sleep(seconds: float) -> str:
        """Sleep, then say so."""
        time.sleep(seconds)
        return "slept"

    @server.tool()
    def pid() -> str:
        """The server's process id."""
        return str(os.getpid())

    def extra() -> str:
        """A tool added by grow()."""
        return "extra"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool extra() and tell the client its list of tools changed: on a subscriptions/listen stream
        (protocol 2026-07-28), and as ``notifications/tools/list_changed`` (earlier protocols, Claude Code's)."""
        server.add_tool(extra)
        await ctx.notify_tools_changed()
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("stdio", "http", "sse", "silent"))
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--pidfile")
    args = parser.parse_args()
    if args.pidfile:
        with open(args.pidfile, "a") as out:
            out.write(f"{os.getpid()}\n")
    if args.mode == "silent":
        for _line in sys.stdin:
            pass
        time.sleep(3600)
        return
    time.sleep(args.delay)
    server = build()
    if args.mode == "stdio":
        server.run()
    elif args.mode == "sse":
        server.run("sse", host="127.0.0.1", port=args.port)
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
