"""The transport of the Agent SDK's in-process MCP servers (``"type": "sdk"``): JSON-RPC over the control channel.

An SDK program's ``create_sdk_mcp_server`` runs inside the SDK host; the CLI reaches it by sending each JSON-RPC
message as a ``mcp_message`` control request (``{"subtype": "mcp_message", "server_name", "message"}``) and reads
the server's answer in the control response (``{"mcp_response": {...}}``), as Claude Code does. :func:`sdk_transport`
is an ``mcp`` client transport doing that through *send*, a function the CLI gives (``fsm.cli.sdk_session``: the
channel's ``request``), so this package never imports the CLI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["Send", "sdk_transport"]

Send = Callable[[str, dict[str, Any]], dict[str, Any]]
"""``send(server_name, message)``: the control request ``mcp_message``, blocking; its response body."""


@asynccontextmanager
async def sdk_transport(name: str, send: Send) -> AsyncIterator[Any]:
    """A transport to SDK server *name*: each message the client writes goes out through *send* (in a worker
    thread); a request's answer (or a JSON-RPC error, when the host cannot answer) is what the client reads."""
    import anyio
    import anyio.to_thread
    import mcp_types
    from mcp.shared.message import SessionMessage

    read_in, read_out = anyio.create_memory_object_stream[Any](16)
    write_in, write_out = anyio.create_memory_object_stream[Any](16)

    async def pump() -> None:
        async with write_out, read_in:
            async for message in write_out:
                payload = message.message.model_dump(mode="json", by_alias=True, exclude_unset=True)
                request = "method" in payload and "id" in payload
                try:
                    body = await anyio.to_thread.run_sync(send, name, payload, abandon_on_cancel=True)
                    answer = body.get("mcp_response")
                    if not request:
                        continue
                    reply = mcp_types.jsonrpc_message_adapter.validate_python(answer, by_name=False)
                except Exception as exc:  # the host could not answer: the request fails, the session goes on
                    if not request:
                        continue
                    error = {"jsonrpc": "2.0", "id": payload["id"], "error": {"code": -32603, "message": str(exc)}}
                    reply = mcp_types.jsonrpc_message_adapter.validate_python(error, by_name=False)
                await read_in.send(SessionMessage(reply))

    async with anyio.create_task_group() as group:
        group.start_soon(pump)
        try:
            yield read_out, write_in
        finally:
            group.cancel_scope.cancel()
            await write_in.aclose()
            await read_out.aclose()
