"""A run the Claude Agent SDK drives: ``--input-format stream-json`` with the control protocol, until stdin ends.

:func:`run` opens the channel (:mod:`fsm.cli.control`), takes the SDK's ``initialize`` (its ``agents`` join the
custom subagents; its ``hooks`` become :class:`~fsm.policy.sdk.SdkHook`\\ s in the agent's one hook registry),
builds the agent (under ``--permission-prompt-tool stdio`` with :class:`~fsm.policy.sdk.SdkApprover` as its
approver), answers ``initialize`` as Claude Code does, registers the handlers of the SDK's other requests and runs
each user message as a turn of one session (:func:`fsm.cli.headless.run`).

The SDK's requests and what they do, served from the first line (before ``initialize``, or without it, too):
``interrupt`` ends the turn as Ctrl-C does; ``set_permission_mode`` and ``set_model`` apply from the next check and
the next model call (``set_permission_mode`` answers ``{"mode": MODE}`` and streams Claude Code's ``system/status``
line, ``{"status": null, "permissionMode": MODE}``); ``mcp_status`` lists every MCP server with its status,
tools and config (``pending`` before the first prompt's ``connecting`` step connects it); ``mcp_reconnect``
connects one again, ``mcp_toggle`` ends one (``enabled: false``: its calls fail from then) or connects it again;
``get_context_usage`` counts the root's last request; ``stop_task`` names no task we run (an error response);
any other subtype gets an error response.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from fsm.cli import headless
from fsm.cli.control import Answer, Channel
from fsm.errors import ConfigError
from fsm.mcp.config import ServerConfig
from fsm.policy.hooks import Ask, Deny
from fsm.policy.modes import resolve_mode
from fsm.policy.sdk import SdkApprover, TurnInterrupt, install
from fsm.view.stream import StreamWriter

if TYPE_CHECKING:
    from fsm.cli.options import RunOptions
    from fsm.core.agent import Agent
    from fsm.policy.chain import Edited

__all__ = ["initialize_response", "run"]

_CONTEXT_WINDOW = 200_000
"""The context window get_context_usage reports when the price table does not know the model's."""


def run(options: RunOptions) -> int:
    """Serve the SDK on stdin/stdout with the agent *options* describe; the exit status (0, or 1 after an error
    result).

    Raises:
        ConfigError: a bad ``initialize`` (its agents or hooks), or a line that is not of the protocol.
    """
    from fsm.cli.run_session import session_for

    channel = Channel(sys.stdin, StreamWriter(sys.stdout))
    first = channel.first_initialize()
    request = first["request"] if first is not None else {}
    try:
        options = _with_initialize(options, request, channel)
    except ConfigError as exc:
        if first is not None:
            channel.respond(first["request_id"], error=str(exc))
        raise
    if any(s.transport == "sdk" for s in options.agent.mcp_servers):
        channel.start()  # the SDK's servers answer on the channel (the first prompt's connecting step asks them)
    with session_for(options.session, options.build_agent(), limits=options.agent.limits_given()) as (agent, session):
        # first: the reader may run already
        _serve(channel, agent, session.id if session else agent.agent_id, servers=options.agent.mcp_servers)
        if first is not None:
            channel.respond(first["request_id"], initialize_response(agent))
        channel.start()
        return headless.run(options, agent, session, channel)


def _with_initialize(options: RunOptions, request: dict[str, Any], channel: Channel) -> RunOptions:
    """*options* with what ``initialize`` brings: its agents, its hooks, and the SDK as the approver."""
    from fsm.core.subagents import definitions_from_json

    agents = request.get("agents")
    defined = definitions_from_json(json.dumps(agents)) if agents else {}
    try:
        install(options.agent.hooks, request.get("hooks"), channel.request)
    except ValueError as exc:
        raise ConfigError(f"initialize: {exc}") from None
    approver = _approver(channel) if options.output.permission_prompt else None
    setup = attrs.evolve(
        options.agent, agents={**options.agent.agents, **defined}, approver=approver, mcp_sdk=_mcp_message(channel)
    )
    return attrs.evolve(options, agent=setup)


def _mcp_message(channel: Channel) -> Any:
    """How an SDK server is reached: one ``mcp_message`` control request per JSON-RPC message, as Claude Code
    sends them (the SDK host answers with ``{"mcp_response": ...}``)."""

    def send(server: str, message: dict[str, Any]) -> dict[str, Any]:
        return channel.request({"subtype": "mcp_message", "server_name": server, "message": message}, timeout=60)

    return send


def _approver(channel: Channel) -> Any:
    """The SDK's ``can_use_tool`` as the approver; an answer that interrupts marks the turn as the SDK's to end."""
    ask_sdk = SdkApprover(channel.request)

    def approve(call: dict[str, Any], ask: Ask) -> bool | Deny | Edited:
        try:
            return ask_sdk(call, ask)
        except TurnInterrupt:
            channel.interrupted = True
            raise

    return approve


def initialize_response(agent: Agent) -> dict[str, Any]:
    """What Claude Code answers ``initialize`` with: the session's commands (its skills a user may invoke),
    agents, output style and models."""
    model = getattr(agent.model, "model", None) or "unknown"
    agents = [{"name": "general-purpose", "description": "The general-purpose subagent (task)"}]
    agents += [
        {"name": name, "description": d.description, **({"model": d.model} if d.model else {})}
        for name, d in agent.opts.agents.items()
    ]
    skills = agent.opts.skills
    commands = [
        {"name": s.name, "description": s.description, "argumentHint": s.argument_hint or ""}
        for s in (skills.skills.values() if skills else ())
        if s.user_invocable
    ]
    return {
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": ["default"],
        "models": [
            {"value": model, "resolvedModel": model, "displayName": model, "description": "this session's model"}
        ],
        "account": {},
        "pid": os.getpid(),
    }


def _serve(channel: Channel, agent: Agent, session_id: str, *, servers: Sequence[ServerConfig] = ()) -> None:
    """Register the handlers of the SDK's requests on *channel*, for *agent* of session *session_id*, whose MCP
    servers (*servers*) its first prompt connects."""

    def initialize(request: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("already initialized: initialize is the first request of a session, sent once")

    def set_permission_mode(request: dict[str, Any]) -> Answer:
        mode = resolve_mode(str(request.get("mode")))
        if mode is None:
            raise ValueError(f"unknown permission mode {request.get('mode')!r}")
        agent.permissions.set_mode(mode)
        status = {"type": "system", "subtype": "status", "status": None, "permissionMode": mode}
        return Answer({"mode": mode}, ({**status, "uuid": str(uuid.uuid4()), "session_id": session_id},))

    def set_model(request: dict[str, Any]) -> dict[str, Any]:
        from fsm.cli.resolve import model_id

        with_model = getattr(agent.model, "with_model", None)
        if with_model is None:
            raise ValueError("this session's model cannot be changed")
        agent.model = with_model(model_id(request.get("model") or None))
        return {}

    def mcp_status(request: dict[str, Any]) -> dict[str, Any]:
        mcp = sys.modules.get("fsm.mcp")  # imported only by a run that has MCP servers
        connections = mcp.running() if mcp is not None else None
        if connections is None:  # not connected yet: the first prompt's connecting step connects them
            return {"mcpServers": [_not_yet(config) for config in servers]}
        return {"mcpServers": [s.to_status_json() for s in connections.statuses]}

    def mcp_reconnect(request: dict[str, Any]) -> dict[str, Any]:
        from fsm import mcp
        from fsm.mcp.config import connect_timeout

        name = str(request.get("serverName"))
        connections = mcp.running()
        if connections is None or name not in {s.name for s in connections.statuses}:
            raise ValueError(f"Server not found: {name}")
        status = connections.reconnect(name, timeout=connect_timeout())
        if status.status != "connected":
            raise ValueError(f"Failed to reconnect to {name}: {status.error}")
        return {}

    def mcp_toggle(request: dict[str, Any]) -> dict[str, Any]:
        from fsm import mcp
        from fsm.mcp.config import connect_timeout

        name = str(request.get("serverName"))
        connections = mcp.running()
        if connections is None or name not in {s.name for s in connections.statuses}:
            raise ValueError(f"Server not found: {name}")
        if request.get("enabled"):
            connections.reconnect(name, timeout=connect_timeout())
        else:
            connections.disable(name)
        return {}

    def stop_task(request: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(f"no task {request.get('task_id')!r}: agentfsm runs no background tasks")

    channel.on("initialize", initialize)
    channel.on("interrupt", channel.interrupt)
    channel.on("set_permission_mode", set_permission_mode)
    channel.on("set_model", set_model)
    channel.on("mcp_status", mcp_status)
    channel.on("mcp_reconnect", mcp_reconnect, threaded=True)
    channel.on("mcp_toggle", mcp_toggle, threaded=True)
    channel.on("get_context_usage", lambda request: context_usage(agent))
    channel.on("stop_task", stop_task)


def _not_yet(config: ServerConfig) -> dict[str, Any]:
    """A server before the connecting step, as ``mcp_status`` reports it: ``pending`` (Claude Code's word for one
    not connected yet), or ``disabled`` / ``failed`` with why when it will not start."""
    status, error = ("disabled", config.disabled) if config.disabled is not None else ("pending", None)
    if config.problem is not None:
        status, error = "failed", config.problem
    shown: dict[str, Any] = {"name": config.name, "status": status}
    if error is not None:
        shown["error"] = error
    shown["config"] = {"type": config.transport, **dict(config.raw)}
    shown["scope"] = config.scope
    return shown


def context_usage(agent: Agent) -> dict[str, Any]:
    """``get_context_usage``: the tokens of the root's next request as its compactor counts them (else those of its
    last request), and whether automatic compaction is on."""
    from fsm.model.pricing import price_of

    model = getattr(agent.model, "model", None) or "unknown"
    replies = [r.reply for r in agent.history if r.reply is not None and r.depth == 0]
    usage = replies[-1].usage if replies else None
    total = 0
    if usage is not None:
        total = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    price = price_of(model, usage) if usage is not None else None
    window = price.context_window if price is not None and price.context_window else _CONTEXT_WINDOW
    estimate = agent.context_tokens()  # the next request, as the compactor counts it: what compaction acts on
    if estimate is not None:
        total = estimate
    return {
        "categories": [{"name": "Messages", "tokens": total, "color": "default"}],
        "totalTokens": total,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * total / window, 2),
        "model": model,
        "isAutoCompactEnabled": getattr(agent.opts.compactor, "threshold", None) is not None,
        "memoryFiles": [],
        "mcpTools": [],
        "agents": [{"agentType": name, "source": d.source} for name, d in agent.opts.agents.items()],
    }
