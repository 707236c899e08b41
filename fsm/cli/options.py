"""One typed record of everything a run needs, resolved once from the flags, the environment and the files.

:meth:`RunOptions.from_args` is the only place the parsed ``argparse.Namespace`` of a run turns into values:
it reads the headless inputs (the prompt, on stdin or not), resolves each flag with :mod:`fsm.cli.resolve`
(the workspace's trust first, then the settings files, ``.env``, the project's files), takes the credentials
out of the environment, and returns a frozen :class:`RunOptions`. Everything downstream (the headless run, the
REPL, the debugger, the session flags) takes the record, or plain values from it::

    options = RunOptions.from_args(args, prompt="-")         # every ConfigError is raised here...
    agent = options.build_agent()                             # ...or here: no API key, a budget with no price
    with session_for(options.session, agent, limits=options.agent.limits_given()) as (agent, session): ...

A record built by hand (a test, a script) is checked by the same validators, in the flags' words
(``--max-turns must be 1..30 (got 45)``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
from attrs import Factory, field, frozen

from fsm.cli import resolve, structured
from fsm.cli.hook_events import HookEventRelay
from fsm.cli.inputs import EMPTY_PROMPT, NO_PROMPT, read_prompt, stream_stdin
from fsm.cli.structured import instructions
from fsm.compaction import PassesCompactor, ResultStore
from fsm.compaction.window import CompactSettings
from fsm.core.context import context_text
from fsm.core.limits import BG_WAIT_CEILING
from fsm.core.lines import visible
from fsm.core.options import AgentOptions, Connect
from fsm.core.prompts import compose, parent_system
from fsm.core.records import DEFAULT_MAX_TOKENS, MAX_PARALLEL, MAX_TURNS, Transition
from fsm.core.subagents import AgentDefinition
from fsm.core.validators import Count, Positive
from fsm.errors import ConfigError
from fsm.mcp.config import ServerConfig, claude_json_servers
from fsm.mcp.config import gather as gather_servers
from fsm.model.aliases import RequestOptions
from fsm.model.anthropic import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from fsm.policy import command_hooks
from fsm.policy.chain import Approver, default_hooks, deny_unattended
from fsm.policy.hooks import Hooks
from fsm.policy.judge import Policy
from fsm.session.journal import default_path
from fsm.skills.catalog import Catalog
from tools import Tool, Workspace
from tools.sandbox import Sandbox
from tools.secrets import distrust, take_secrets

if TYPE_CHECKING:
    from fsm.core.agent import Agent
    from fsm.model.protocol import Model

__all__ = [
    "NO_API_KEY",
    "RUN_LIMITS",
    "AgentSetup",
    "ModelSetup",
    "Output",
    "RunOptions",
    "SessionChoice",
    "recorded_servers",
]

RUN_LIMITS = ("max_turns", "max_model_calls", "max_budget_usd", "max_parallel")
"""The options a run takes when its prompt is sent: a resumed session keeps its own unless the command line
sets them."""

NO_API_KEY = "No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'"


@frozen
class AgentSetup:
    """What the root agent is built with, besides its model: its workspace and its :class:`AgentOptions`, as the
    command line gives them (a limit not given is None, so a resumed session keeps its own)."""

    workdir: Path
    """The workspace (``--cwd``)."""
    max_turns: int | None = field(
        default=None, validator=Count(1, MAX_TURNS, f"1..{MAX_TURNS}", optional=True, label="--max-turns")
    )
    """Given on the command line; None: the default for a new agent, the session's own on a resume."""
    max_model_calls: int | None = field(
        default=None, validator=Count(1, None, "an integer >= 1", optional=True, label="--max-model-calls")
    )
    max_budget_usd: float | None = field(
        default=None, validator=Positive("a number of dollars > 0", optional=True, label="--max-budget-usd")
    )
    max_parallel: int | None = field(
        default=None, validator=Count(1, MAX_PARALLEL, f"1..{MAX_PARALLEL}", optional=True, label="--max-parallel")
    )
    max_tokens: int = field(
        default=DEFAULT_MAX_TOKENS, validator=Count(1, None, "an integer >= 1", label="--max-tokens")
    )
    compaction: CompactSettings | None = None
    """When automatic compaction starts (``--compact-threshold``, settings, env); None: the defaults."""
    tools: tuple[str, ...] | None = None
    """The only tools to offer (``--tools``); None: all."""
    permissions: Policy = Factory(Policy)
    """The mode and rules: the settings files, ``--settings`` and the permission flags layered."""
    hooks: Hooks = Factory(default_hooks)
    """The default hooks and the settings' command hooks."""
    sandbox: Sandbox | None = None
    bg_wait_ceiling: float = field(
        default=BG_WAIT_CEILING, validator=Positive("a number of seconds > 0", label="--bg-wait-ceiling")
    )
    """Seconds a final reply waits for a background job to end (``--bg-wait-ceiling``)."""
    read_dedup: bool = True
    """Whether a re-read of an unchanged file is answered with a note (``--no-read-dedup``: no)."""
    system: str | None = None
    """The root's system prompt (None: ours)."""
    context: str = ""
    """The project's context block (``CLAUDE.md``, ``AGENTS.md``)."""
    agents: Mapping[str, AgentDefinition] = Factory(dict)
    """The custom subagent types (``.claude/agents``, ``--agents``)."""
    skills: Catalog | None = None
    """The skills (``fsm.skills``): the user's, the project's, ``--add-dir``'s; None: none."""
    ask_person: bool = False
    """Whether an ``Ask`` is put to the person at the terminal (stdin is one); otherwise it is denied."""
    approver: Approver | None = None
    """Who answers an ``Ask`` instead (the Agent SDK's ``can_use_tool``, ``fsm.policy.sdk``); None: as above."""
    mcp_servers: tuple[ServerConfig, ...] = ()
    """The MCP servers configured (``.mcp.json``, the settings, ``--mcp-config``; ``fsm.mcp.config``), each
    connected when the agent is built."""
    mcp_sdk: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
    """How the Agent SDK's in-process servers (``"type": "sdk"``) are reached: ``mcp_message`` on its control
    channel (``fsm.cli.sdk_session``); None: they fail."""

    def limits_given(self) -> dict[str, int | float]:
        """The run limits set on the command line, as ``Agent()`` keywords (a resumed session keeps the others)."""
        return {name: value for name in RUN_LIMITS if (value := getattr(self, name)) is not None}

    def agent_options(self) -> AgentOptions:
        """The root agent's options (a limit not given takes ``AgentOptions``' default)."""
        from fsm.cli.terminal import terminal_approver

        return AgentOptions.of(
            None,
            **self.limits_given(),
            max_tokens=self.max_tokens,
            compaction=self.compaction,
            tools=self.tools,
            system=self.system,
            context=self.context,
            sandbox=self.sandbox,
            read_dedup=self.read_dedup,
            bg_wait_ceiling=self.bg_wait_ceiling,
            permissions=self.permissions,
            hooks=self.hooks,
            approver=self.approver or (terminal_approver(root=self.workdir) if self.ask_person else deny_unattended),
            agents=dict(self.agents),
            skills=self.skills,
        )


@frozen
class ModelSetup:
    """The model a run calls: its id and how its requests are made."""

    model_id: str
    """``--model``, else ``MODEL_ID``, else ``ANTHROPIC_MODEL``, else our default."""
    timeout: float = field(default=DEFAULT_TIMEOUT, validator=Positive("a number of seconds > 0", label="--timeout"))
    max_retries: int = field(default=DEFAULT_MAX_RETRIES, validator=Count(0, 10, "0..10", label="--max-retries"))
    credentials: Mapping[str, str] = field(factory=dict, repr=False)
    """The API key or token, taken out of the environment (so no tool's process inherits them)."""
    request: RequestOptions = Factory(RequestOptions)
    """Thinking, effort, beta headers and fallback models (``--thinking``, ``--effort``, ``--betas``,
    ``--fallback-model``, a ``[1m]`` suffix)."""

    def build(self) -> Model:
        """The ``AnthropicModel`` this describes (``anthropic`` is imported only now).

        Raises:
            ConfigError: no API key and no token.
        """
        if not (self.credentials.get("ANTHROPIC_API_KEY") or self.credentials.get("ANTHROPIC_AUTH_TOKEN")):
            raise ConfigError(NO_API_KEY)
        from fsm.cli.terminal import print_retry
        from fsm.model.anthropic import AnthropicModel

        return AnthropicModel(
            self.model_id,
            on_retry=print_retry,
            timeout=self.timeout,
            max_retries=self.max_retries,
            credentials=dict(self.credentials),
            options=self.request,
        )


@frozen
class SessionChoice:
    """Which journal session a run writes to: a new one (the default), one resumed (``--resume ID``), the latest
    (``--continue``), a fork of an old one (``--session ID [--at SEQ]``), or none (``--no-session``)."""

    journal: Path | None
    """The journal file (``--session-db``, else the workspace's); None: ``--no-session``."""
    resume: str | None = None
    continue_latest: bool = False
    new_id: str | None = None
    """``--session-id``: the new session's id."""
    fork_of: str | None = None
    """``--session``: the session to restore, as it was after :attr:`at` (its last transition when None)."""
    at: int | None = None
    recorded: bool = False
    """``--recorded``: serve the replies the forked session got after :attr:`at` instead of calling the model."""
    fork: bool = False
    """``--fork-session``: the session resumed or continued goes on in a new one, its history copied (without
    ``--resume``/``--continue`` a run starts a new session anyway: accepted, as Claude Code does)."""
    at_message: str | None = None
    """``--resume-session-at``: the assistant message (its line's uuid, or its API id) the resumed session goes on
    from, forked."""

    def recorded_records(self) -> tuple[list[Transition], list[Transition]] | None:
        """With ``--session ID --recorded``: that session's records, and those after ``--at SEQ`` (what the
        debugger's time travel serves offline); None without ``--recorded``.

        Raises:
            ConfigError: an unknown session.
        """
        if not self.recorded or self.fork_of is None or self.journal is None:
            return None
        if not self.journal.exists():
            raise ConfigError(f"no session {self.fork_of!r}: {self.journal} does not exist yet")
        from fsm.session.journal import Journal

        with Journal(self.journal) as journal:
            records = journal.records(self.fork_of)
        return records, [r for r in records if self.at is None or r.seq > self.at]

    def __attrs_post_init__(self) -> None:
        self._check_going_on()
        self._check_fork()
        if self.at_message is not None and not self.resume:
            raise ConfigError("--resume-session-at needs --resume SESSION_ID")

    def _check_going_on(self) -> None:
        going_on = "--resume" if self.resume else "--continue" if self.continue_latest else None
        if self.resume and self.continue_latest:
            raise ConfigError("--resume and --continue cannot be used together; pick one")
        if going_on and self.new_id:
            raise ConfigError(f"--session-id names a new session; it cannot be used with {going_on}")
        if going_on and self.journal is None:
            raise ConfigError(f"--no-session cannot be used with {going_on}")

    def _check_fork(self) -> None:
        if self.fork_of is None and (self.recorded or self.at is not None):
            raise ConfigError(f"{'--recorded' if self.recorded else '--at'} needs --session ID")
        if self.fork_of is not None and self.journal is None:
            raise ConfigError("--no-session cannot be used with --session: time travel journals the fork it makes")

    @property
    def resuming(self) -> bool:
        """Whether the run goes on with a session that exists (``--resume``, ``--continue``)."""
        return bool(self.resume or self.continue_latest)


@frozen
class Output:
    """What a run writes: the output format, what goes in a stream, and whether progress goes to stderr."""

    format: Literal["text", "json", "stream-json"] = "text"
    stream_input: bool = False
    """``--input-format stream-json``: the prompts are user messages on stdin, one JSON object a line."""
    transition_events: bool = True
    """stream-json: our ``transition`` events too (``--no-transition-events``: Claude Code's messages only)."""
    partial_messages: bool = False
    """stream-json: a ``stream_event`` line per raw API stream event (``--include-partial-messages``)."""
    verbose: bool = False
    """Text output: what was loaded and what the run was given other than it asked, a line each on stderr (in
    json and stream-json, stderr holds only real errors: those go in the result)."""
    progress: bool = False
    """``-d/--debug``: our transition and console lines on stderr, in every output format."""
    replay_user: bool = False
    """``--replay-user-messages``: each stream-json user message is written back on stdout as its turn starts."""
    hook_events: HookEventRelay | None = field(default=None, eq=False)
    """``--include-hook-events``: what the command hooks tell of their runs, for the stream (without stream-json
    there is no stream to write them to: accepted and unused, as Claude Code does)."""
    json_schema: Mapping[str, Any] | None = None
    """``--json-schema``: the schema the final answer must match (``structured_output`` in the result)."""
    notes: tuple[str, ...] = ()
    """What the run was given other than it asked (``--max-turns 50 runs with 30``): in the result, and in one
    ``--verbose`` line each."""
    permission_prompt: bool = False
    """``--permission-prompt-tool stdio``: what would ask is put to the Agent SDK (``can_use_tool``)."""

    def __attrs_post_init__(self) -> None:
        if self.stream_input and self.format != "stream-json":
            raise ConfigError("--input-format stream-json needs --output-format stream-json")
        if self.permission_prompt and not self.stream_input:
            raise ConfigError(
                "--permission-prompt-tool stdio asks the Agent SDK on stdin: it needs --input-format stream-json"
            )
        if self.partial_messages and self.format != "stream-json":
            raise ConfigError("--include-partial-messages needs --output-format stream-json")
        if self.replay_user and not self.stream_input:  # Claude Code's words (it exits 1; a usage error is 2 here)
            raise ConfigError(
                "--replay-user-messages requires both --input-format=stream-json and --output-format=stream-json."
            )


@frozen
class RunOptions:
    """Everything a run needs, resolved once: the agent, its model, its session, its output, its first prompt."""

    agent: AgentSetup
    model: ModelSetup
    session: SessionChoice
    output: Output = Output()
    prompt: str | None = None
    """A headless run's first prompt, read once (from the argument, or stdin); None with stream-json input (read
    a line at a time as the run goes), for a resume that only finishes the run that was killed, and for a command
    that is not headless."""

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, prompt: str | None = None) -> RunOptions:
        """The options *args* describe, with the environment and the files they point to.

        Args:
            args: a namespace from a parser given the flags of :mod:`fsm.cli.flags` (a flag it lacks takes its
                default).
            prompt: a headless run's prompt argument (``-``: read stdin); None for a command that runs no
                headless prompt (the REPL, the debugger), whose output flags are not read.

        Raises:
            ConfigError: a bad flag value or combination, a missing workspace, a bad settings, prompt or project
                file, an unreadable ``.env``, or no prompt.
        """
        flags: dict[str, Any] = vars(args)
        output = _output(flags) if prompt is not None else Output(verbose=bool(flags.get("verbose")))
        first = None if prompt is None else _first_prompt(prompt, output=output, resuming=_resuming(flags))
        root = resolve.workdir(flags.get("cwd"))
        tools = resolve.tool_names(flags.get("tools"))
        skip = bool(flags.get("dangerously_skip_permissions"))
        mode = resolve.permission_mode(flags.get("permission_mode"), skip=skip)
        bare = bool(flags.get("bare"))
        max_turns, notes = resolve.max_turns(flags.get("max_turns"))
        trust = resolve.trusted(root, flag=bool(flags.get("trust"))) is not None
        settings = resolve.settings(
            root,
            trust=trust,
            sources=flags.get("setting_sources"),
            extra=flags.get("settings"),
            allow=flags.get("allowed_tools"),
            deny=flags.get("disallowed_tools"),
            add_dir=flags.get("add_dir"),
        )
        sandbox = resolve.sandbox(settings, flag=flags.get("sandbox"))
        files, agents = resolve.project(root, agents_json=flags.get("agents"), bare=bare)
        persona = resolve.persona(agents, flags.get("agent"))
        skills = resolve.skills(
            root, trusted=trust, add_dir=flags.get("add_dir"), bare=bare or bool(flags.get("disable_slash_commands"))
        )
        system = resolve.system_prompt(
            root,
            text=flags.get("system_prompt") or (persona.prompt if persona else None),
            file=flags.get("system_prompt_file"),
            append=flags.get("append_system_prompt"),
            append_file=flags.get("append_system_prompt_file"),
        )
        if persona is not None and tools is None and persona.tools is not None:
            tools = tuple(t for t in persona.tools if not t.startswith("mcp__"))
        schema = structured.load_schema(flags["json_schema"]) if flags.get("json_schema") else None
        if schema is not None:
            system = compose(
                system if system is not None else parent_system(Workspace(str(root))), instructions(schema)
            )
        observer = output.hook_events
        hooks = (
            default_hooks()
            if bare
            else command_hooks.install(default_hooks(), settings, project=root, observer=observer)
        )
        if schema is not None:
            hooks.on("Stop", structured.stop_hook(schema))
        user_servers, local_servers = claude_json_servers(Path.home(), root)
        agent = AgentSetup(
            root,
            max_turns=max_turns if max_turns is not None else (persona.max_turns if persona else None),
            max_model_calls=flags.get("max_model_calls"),
            max_budget_usd=flags.get("max_budget_usd"),
            max_parallel=flags.get("max_parallel"),
            max_tokens=flags.get("max_tokens", DEFAULT_MAX_TOKENS),
            tools=tools,
            permissions=Policy.from_settings(settings, mode=mode),
            hooks=hooks,
            sandbox=sandbox,
            read_dedup=not flags.get("no_read_dedup"),
            bg_wait_ceiling=flags.get("bg_wait_ceiling") or BG_WAIT_CEILING,
            system=system,
            context=context_text(files),
            agents=agents,
            skills=skills,
            ask_person=sys.stdin is not None and sys.stdin.isatty(),
            mcp_servers=tuple(
                gather_servers(
                    settings_servers=[*user_servers, *settings.mcp_servers],
                    local_servers=local_servers,
                    project_file=root / ".mcp.json",
                    trusted=trust,
                    flags=flags.get("mcp_config") or (),
                    strict=bool(flags.get("strict_mcp_config")) or bare,  # --bare: --mcp-config's only, as Claude Code
                    enable_all=settings.enable_all_project_mcp_servers,
                    enabled=settings.enabled_mcpjson_servers,
                    disabled=settings.disabled_mcpjson_servers,
                    interactive=prompt is None,
                )
            ),
        )
        resolve.apply_env(settings)
        agent = attrs.evolve(agent, compaction=resolve.compaction(settings, threshold=flags.get("compact_threshold")))
        env_trusted = resolve.trusted(Path.cwd(), flag=bool(flags.get("trust"))) is not None
        refused = [] if bare else resolve.load_env(trust=env_trusted)
        if not trust:
            distrust(root)
        # (the line on stderr, the result's note): each skill skipped or whose rules are ignored, an mcp__* allow
        warnings = [(f"warning: {visible(w)}", w) for w in skills.warnings]
        if any(rule.tool == "mcp__*" for rule in agent.permissions.allow):
            mcp = "allow rule mcp__* is ignored: allow a server (mcp__server) or a tool (mcp__server__tool)"
            warnings.append((mcp, mcp))
        for line, note in warnings:
            if output.format == "text":
                print(f"agentfsm: {line}", file=sys.stderr, flush=True)
            else:  # json modes: stderr is for errors; the result's notes say it
                notes = [*notes, note]
        if ignored := [*settings.ignored, *([f".env ({', '.join(refused)})"] if refused else [])]:
            line = visible(resolve.untrusted_line(root, ignored))
            if output.format == "text":
                print(line, file=sys.stderr, flush=True)
            else:  # json modes: stderr is for errors; the result's notes say it
                notes = [*notes, line.removeprefix("agentfsm: ")]
        chosen, request = resolve.model(
            flags.get("model") or (persona.model if persona else None),
            fallback=flags.get("fallback_model"),
            betas=flags.get("betas"),
            thinking=flags.get("thinking"),
            thinking_budget=flags.get("max_thinking_tokens"),
            effort=flags.get("effort"),
        )
        model = ModelSetup(
            chosen,
            timeout=flags.get("timeout", DEFAULT_TIMEOUT),
            max_retries=flags.get("max_retries", DEFAULT_MAX_RETRIES),
            credentials=take_secrets(),  # from here on no tool can find them in this process's environment
            request=request,
        )
        journal = None if flags.get("no_session") else resolve.journal_path(flags.get("session_db"), root)
        session = SessionChoice(
            journal,
            resume=flags.get("resume"),
            continue_latest=bool(flags.get("continue_session")),
            new_id=flags.get("session_id"),
            fork_of=resolve.fork_source(flags.get("session"), journal),
            at=flags.get("at"),
            recorded=bool(flags.get("recorded")),
            fork=bool(flags.get("fork_session")),
            at_message=flags.get("resume_session_at"),
        )
        output = attrs.evolve(output, notes=tuple(notes), json_schema=schema)
        if output.verbose and output.format == "text":
            loaded = resolve.project_notes(files, agents, skills)
            for note in [*(f"note: {n}" for n in (*settings.notes, *notes)), *loaded]:
                print(f"agentfsm: {visible(note)}", file=sys.stderr, flush=True)
        return cls(agent, model, session, output, first)

    def build_agent(self, model: Model | None = None) -> Agent:
        """The root agent these options describe, around *model* (else the model they name).

        Raises:
            ConfigError: no API key (when no model is given), or a USD budget with a model that has no known price.
        """
        from fsm.core.agent import Agent
        from fsm.model.price_cache import exclude

        exclude(self.agent.workdir)  # before the first price is read: never a cache a repository could hold
        chosen = self.model.build() if model is None else model
        options = self.agent.agent_options()
        name = options.unpriced_model(chosen)
        if name is not None:
            raise ConfigError(
                f"--max-budget-usd needs the price of model {name!r}, and genai-prices has none; "
                "use a model it prices, or drop --max-budget-usd"
            )
        options = attrs.evolve(options, compactor=self.compactor())
        # the root's first prompt connects the servers (``connecting``): nothing starts here
        connect = self._connector()
        live = connect is not None and not self.session.recorded  # a live server may change its tools
        options = attrs.evolve(options, mcp_connect=connect, mcp_refresh=_refresh_servers if live else None)
        return Agent(chosen, str(self.agent.workdir), options=options)

    def _connector(self) -> Connect | None:
        """How the root connects the configured MCP servers: live (``fsm.mcp``, imported only when it runs); with
        ``--recorded``, from the session's journal, starting no server; None: there is nothing to connect."""
        if self.session.recorded:
            return recorded_servers(self.session)
        if not self.agent.mcp_servers:
            return None
        servers, cwd, sdk = self.agent.mcp_servers, str(self.agent.workdir), self.agent.mcp_sdk

        def connect() -> tuple[tuple[Tool, ...], tuple[str, ...]]:
            from fsm import mcp

            def notice(line: str) -> None:
                print(f"agentfsm: {visible(line)}", file=sys.stderr, flush=True)

            return mcp.connector(servers, cwd=cwd, sdk=sdk, notice=notice)()

        return connect

    def compactor(self) -> PassesCompactor:
        """How the root agent (and its subagents) compact: the model's window, the thresholds the flags, settings
        and environment set, large tool results kept beside the workspace's journal (never in the workspace: when
        that is inside it, large results stay in the conversation)."""
        workdir = self.agent.workdir
        try:
            store: ResultStore | None = ResultStore(default_path(workdir).parent / "tool-results", workspace=workdir)
        except ConfigError:  # the state directory is inside the workspace (HOME is the workspace): keep none
            store = None
        return PassesCompactor.for_model(
            self.model.model_id,
            max_output=self.agent.max_tokens,
            workspace=workdir,
            store=store,
            settings=self.agent.compaction,
            betas=tuple(self.model.request.betas or ()),
        )


def recorded_servers(choice: SessionChoice) -> Connect | None:
    """With ``--session ID --recorded``: the ``mcp_connect`` that serves the MCP results that session got after
    ``--at SEQ`` (``fsm.session.replay.recorded_connect``): no server starts; None without ``--recorded``, or when
    the session called no MCP tool and connected no server.

    Raises:
        ConfigError: an unknown session.
    """
    found = choice.recorded_records()
    if found is None:
        return None
    from fsm.session.replay import connects, recorded_connect

    records, served = found
    if not connects(records) and not any(r.tool_call and r.tool_call["name"].startswith("mcp__") for r in records):
        return None
    return recorded_connect(records, served=served)


def _refresh_servers() -> tuple[tuple[Tool, ...], tuple[str, ...]] | None:
    """The root's ``mcp_refresh``: ``fsm.mcp.refresh`` once the servers are connected (nothing before)."""
    mcp = sys.modules.get("fsm.mcp")
    return mcp.refresh() if mcp is not None else None


def _resuming(flags: dict[str, Any]) -> bool:
    return bool(flags.get("resume") or flags.get("continue_session"))


def _output(flags: dict[str, Any]) -> Output:
    return Output(
        format=flags.get("output_format") or "text",
        stream_input=flags.get("input_format") == "stream-json",
        transition_events=flags.get("transition_events", True),
        partial_messages=bool(flags.get("include_partial_messages")),
        hook_events=HookEventRelay() if flags.get("include_hook_events") else None,
        replay_user=bool(flags.get("replay_user_messages")),
        verbose=bool(flags.get("verbose")),
        progress=flags.get("debug") is not None,
        permission_prompt=_permission_prompt(flags.get("permission_prompt_tool")),
    )


def _permission_prompt(tool: str | None) -> bool:
    """``--permission-prompt-tool``: ``stdio`` (the Agent SDK's control protocol) or none; an MCP tool is refused."""
    if tool is None:
        return False
    if tool != "stdio":
        raise ConfigError(
            f"--permission-prompt-tool {tool}: an MCP tool cannot answer permission prompts here; only 'stdio' (the "
            "Agent SDK's can_use_tool) is supported"
        )
    return True


def _first_prompt(argument: str, *, output: Output, resuming: bool) -> str | None:
    """A headless run's first prompt (None with stream-json input, or when a resume has none to give)."""
    if output.stream_input:
        if argument != "-":
            raise ConfigError("--input-format stream-json reads the prompts from stdin; give no prompt argument")
        stream_stdin()  # a terminal is refused now, not once the run has started
        return None
    try:
        return read_prompt(argument)
    except ConfigError as exc:  # resuming without a prompt: finish the run that was killed, and stop
        if not resuming or str(exc) not in (NO_PROMPT, EMPTY_PROMPT):
            raise
        return None
