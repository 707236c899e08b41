"""Every flag of the agent-running commands, declared once: names, help texts and argparse types.

Each ``add_*`` function adds one group to a parser; the commands pick theirs (the top level: ``-p`` and ``-v``;
``run`` and ``-p``: the output, agent and session flags, which the REPL shares; ``debug``: the agent and
time-travel flags; ``sessions``, ``replay`` and ``ui``: the journal flags). A type refuses a bad value in one
line that names the flag and the value (``--max-turns must be 1..30 (got 45)``). What the values mean together
is :mod:`fsm.cli.options`' job.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Callable

from fsm.core.limits import BG_WAIT_CEILING, DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS
from fsm.model.aliases import ALIASES, EFFORTS, THINKING
from fsm.model.defaults import DEFAULT_MAX_RETRIES, DEFAULT_MODEL, DEFAULT_TIMEOUT
from fsm.policy.modes import ALIASES as MODE_ALIASES
from fsm.policy.modes import MODES
from fsm.policy.sources import SOURCES

__all__ = [
    "DB_HELP",
    "OUTPUT_FORMATS",
    "PERMISSION_MODES",
    "add_agent_flags",
    "add_db_flags",
    "add_output_flags",
    "add_session_flags",
    "add_time_travel_flags",
    "add_top_level_flags",
    "int_flag",
    "version",
]

PERMISSION_MODES = (*MODES, "auto", *MODE_ALIASES)
OUTPUT_FORMATS = ("text", "json", "stream-json")
DB_HELP = "the session journal (default: one per workspace, under $XDG_STATE_HOME/agentfsm or ~/.local/state/agentfsm)"


def int_flag(flag: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` that accepts an integer in ``low..high`` and says so otherwise."""
    expected = f"{low}..{high}" if high is not None else f"an integer >= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {expected} (got {text!r})") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{flag} must be {expected} (got {value})")
        return value

    parse.__name__ = flag  # argparse names the type in some messages
    return parse


def _dollars(text: str) -> float:
    """An argparse ``type`` for ``--max-budget-usd``: a positive, finite number of dollars."""
    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"--max-budget-usd must be a number of dollars > 0, e.g. 0.50 (got {text!r})")
    return value


_dollars.__name__ = "--max-budget-usd"


def _seconds_flag(flag: str) -> Callable[[str], float]:
    """An argparse ``type`` that accepts a positive number of seconds."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"{flag} must be a number of seconds > 0 (got {text!r})")
        return value

    parse.__name__ = flag
    return parse


def _uuid(text: str) -> str:
    """An argparse ``type``: a UUID in its canonical form."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--session-id must be a UUID (got {text!r})") from None


def version() -> str:
    """The installed version of agentfsm (``unknown`` in a source tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("agentfsm")
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: print ``VERSION (agentfsm)`` and exit; the installed version is looked up only then (reading
    the package metadata costs every other command a few milliseconds)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{version()} (agentfsm)")
        parser.exit()


def add_top_level_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``-p/--print [PROMPT]`` and ``-v/--version``."""
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        nargs="?",
        const="-",
        default=None,
        metavar="PROMPT",
        help="run PROMPT headless and print the result; '-' or no value reads it from stdin",
    )
    parser.add_argument("-v", "--version", action=_Version, help="print the version and exit")


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--output-format``, ``--input-format``, ``--permission-prompt-tool``, ``--mcp-config``,
    ``--strict-mcp-config``,
    ``--no-transition-events`` and ``--include-partial-messages``."""
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=None,
        help="text: the final text only (default); json: one result object; "
        "stream-json: Claude Code's messages as JSON lines (system/init, assistant, user), "
        "our transition events, then the result object",
    )
    parser.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: user messages and the Agent SDK's control requests as JSON lines on stdin, each "
        "message the next prompt of the same session; runs headless without -p (needs --output-format stream-json)",
    )
    parser.add_argument(
        "--permission-prompt-tool",
        metavar="TOOL",
        help="stdio: put what would ask to the Agent SDK's can_use_tool callback over the control protocol "
        "(needs --input-format stream-json); MCP tools are not supported yet",
    )
    parser.add_argument(
        "--mcp-config",
        nargs="+",
        action="extend",
        metavar="FILE_OR_JSON",
        help='MCP servers from JSON files or texts ({"mcpServers": {...}}, as Claude Code\'s); repeatable',
    )
    parser.add_argument(
        "--strict-mcp-config",
        action="store_true",
        default=False,
        help="use only the MCP servers of --mcp-config, none from .mcp.json or the settings",
    )
    parser.add_argument(
        "--replay-user-messages",
        action="store_true",
        default=False,
        help="stream-json input: each user message read is written back on stdout (isReplay: true) as its turn starts",
    )
    parser.add_argument(
        "--include-hook-events",
        action="store_true",
        default=False,
        help="stream-json: a system/hook_started and a system/hook_response line for each command hook that runs",
    )
    parser.add_argument(
        "--json-schema",
        metavar="SCHEMA",
        help="a JSON Schema (JSON text) the final answer must match: the answer is JSON, checked, sent back to the "
        "model when it does not match, and the result holds it as structured_output",
    )
    parser.add_argument(
        "--no-transition-events",
        dest="transition_events",
        action="store_false",
        default=True,
        help='stream-json without our {"type": "transition"} events',
    )
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        default=False,
        help="stream-json: also a stream_event line per raw API stream event (text deltas) as the "
        "model's reply arrives",
    )


def add_agent_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags shared by every command that runs an agent (``run``, ``debug``, the REPL)."""
    group = parser.add_argument_group("agent")
    resumed = "; with --resume/--continue it applies to the run this command's prompt starts"
    group.add_argument(
        "--max-turns",
        type=int_flag("--max-turns", 1),
        default=None,
        metavar="N",
        help=f"model calls allowed per agent per run (the root and each subagent), at most {MAX_TURNS}: a "
        f"larger N runs with {MAX_TURNS}, and the result says so (default {MAX_TURNS}){resumed}",
    )
    group.add_argument(
        "--max-model-calls",
        type=int_flag("--max-model-calls", 1),
        default=None,
        metavar="N",
        help=f"model calls allowed per run, all subagents included (default {MAX_MODEL_CALLS}){resumed}",
    )
    group.add_argument(
        "--max-budget-usd",
        type=_dollars,
        default=None,
        metavar="USD",
        help="dollars one run may spend on model calls, all subagents included, priced by genai-prices "
        "from each reply's usage (every model used needs a known price); checked after each "
        "call: once the cost reaches it no call is granted, but the calls granted then (one per "
        "agent at most) still run and count, so a run may end above it (default: no budget)"
        f"{resumed}",
    )
    group.add_argument(
        "--max-tokens",
        type=int_flag("--max-tokens", 1),
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"max_tokens of each model call (default {DEFAULT_MAX_TOKENS})",
    )
    group.add_argument(
        "--compact-threshold",
        type=int_flag("--compact-threshold", 1),
        default=None,
        metavar="TOKENS",
        help="compact the conversation automatically once the next request would hold this many tokens "
        "(default: Claude Code's, the model's context window - min(--max-tokens, 20000) - 13000)",
    )
    group.add_argument(
        "--model",
        metavar="ID",
        help=f"model id, or an alias ({', '.join(ALIASES)}; a [1m] suffix asks for the 1M context window) "
        f"(default: $MODEL_ID, else $ANTHROPIC_MODEL, else {DEFAULT_MODEL})",
    )
    group.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="comma list of models to try, in order, when the model is overloaded (529, after its retries) or "
        "not found (404); the one that answers serves the rest of the process",
    )
    group.add_argument(
        "--effort",
        choices=EFFORTS,
        metavar="LEVEL",
        help=f"output_config.effort: {', '.join(EFFORTS)} (on the models that take it)",
    )
    group.add_argument(
        "--thinking",
        choices=THINKING,
        metavar="MODE",
        help="extended thinking: enabled (adaptive on models that think adaptively, else a token budget), "
        "adaptive, disabled (default: no thinking parameter)",
    )
    group.add_argument(
        "--max-thinking-tokens",
        type=int_flag("--max-thinking-tokens", 0),
        metavar="N",
        help="thinking.budget_tokens on models that take a budget (0: thinking disabled); turns thinking on",
    )
    group.add_argument(
        "--betas", nargs="+", action="extend", metavar="BETA", help="anthropic-beta headers for every request"
    )
    group.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        default=None,
        help="--permission-mode bypassPermissions (refused as root unless IS_SANDBOX=1, as Claude Code does)",
    )
    group.add_argument("--cwd", metavar="DIR", help="the workspace directory (default: the current directory)")
    group.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default=None,
        metavar="MODE",
        help="default (asks, in a terminal; headless, an ask is denied), acceptEdits, plan, "
        "dontAsk, bypassPermissions; deny and allow are aliases of dontAsk and "
        "bypassPermissions (default: the settings' defaultMode, else default)",
    )
    group.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        nargs="+",
        action="extend",
        metavar="RULE",
        help="allow rules, comma- or space-separated: 'Bash(git diff:*)' Read",
    )
    group.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        nargs="+",
        action="extend",
        metavar="RULE",
        help="deny rules; a bare tool name takes the tool away ('Task' turns delegation off)",
    )
    group.add_argument(
        "--tools", metavar="LIST", help="comma list of the only tools to offer, e.g. Bash,Read (default: all six)"
    )
    group.add_argument(
        "--add-dir",
        dest="add_dir",
        action="append",
        metavar="DIR",
        help="another directory inside the workspace boundary (repeatable)",
    )
    group.add_argument(
        "--trust",
        action="store_true",
        default=None,
        help="trust the workspace for this run (for CI, where the checkout is yours): its .claude/settings*.json "
        "allow rules, defaultMode, additionalDirectories, env and hooks, its .env's endpoint variables and its git "
        "configuration apply; without it an untrusted workspace's files only restrict (see agentfsm trust)",
    )
    group.add_argument(
        "--settings", metavar="FILE_OR_JSON", help="a settings file, or JSON text, layered above the settings files"
    )
    group.add_argument(
        "--setting-sources",
        dest="setting_sources",
        metavar="LIST",
        help=f"comma list of the settings files to read, of {','.join(SOURCES)} (default: all)",
    )
    group.add_argument(
        "--timeout",
        type=_seconds_flag("--timeout"),
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds one model request may take (default {DEFAULT_TIMEOUT:g})",
    )
    group.add_argument(
        "--max-retries",
        type=int_flag("--max-retries", 0, 10),
        default=DEFAULT_MAX_RETRIES,
        metavar="N",
        help="retries of a failed model request: rate limits, overload, 5xx, timeouts "
        f"(0..10, default {DEFAULT_MAX_RETRIES})",
    )
    group.add_argument(
        "--sandbox",
        action="store_true",
        default=None,
        help="run each bash command in an OS sandbox (bubblewrap): only the workspace and --add-dir "
        "directories writable (their protected paths not), Read-denied paths hidden, no network, no unix "
        "sockets, no other process visible, memory, processes and file sizes bounded; bash then needs no "
        'approval except what deny and ask rules say (settings: "sandbox": {"enabled": true})',
    )
    group.add_argument(
        "--no-read-dedup",
        action="store_true",
        help="send a file whole on every read_file, even one unchanged since the agent last read it (by "
        "default such a re-read is answered with a short note, as Claude Code does)",
    )
    group.add_argument(
        "--bg-wait-ceiling",
        type=_seconds_flag("--bg-wait-ceiling"),
        default=None,
        metavar="SECONDS",
        help=f"how long a final reply waits for one of its background jobs (bash run_in_background) to end "
        f"before the jobs are killed and the run fails, outcome wait_ceiling (default {BG_WAIT_CEILING:g})",
    )
    group.add_argument(
        "--max-parallel",
        type=int_flag("--max-parallel", 1, MAX_PARALLEL),
        metavar="N",
        help=f"subagents run at once when a reply holds several task calls, 1..{MAX_PARALLEL} "
        "(default 4; 1 runs them one after another)",
    )
    group.add_argument(
        "--verbose",
        action="store_true",
        help="text output: what was loaded, and what the run was given other than it asked, on stderr "
        "(json modes: stderr holds errors only; required with stream-json, as in Claude Code)",
    )
    group.add_argument(
        "-d",
        "--debug",
        nargs="?",
        const="all",
        default=None,
        metavar="FILTER",
        help="progress lines and debug logging on stderr; FILTER: comma list of our logger names to keep "
        "(e.g. fsm.model,tools), !NAME to drop one",
    )
    group.add_argument(
        "--agent", metavar="NAME", help="run the root agent as the custom agent NAME: its prompt, tools and model"
    )
    group.add_argument(
        "--bare",
        action="store_true",
        default=None,
        help="minimal mode, as Claude Code's: no CLAUDE.md/AGENTS.md, no settings hooks, no .env; context comes "
        "only from the flags (--system-prompt, --append-system-prompt, --settings, --agents, --add-dir)",
    )
    group.add_argument(
        "--disable-slash-commands",
        action="store_true",
        default=None,
        help="no skills or custom commands: no Skill tool, and a prompt that starts with / is sent as typed",
    )
    group.add_argument(
        "--agents",
        metavar="JSON",
        help="custom subagents, as Claude Code takes them: "
        '{"NAME": {"description": "...", "prompt": "...", "tools": ["Read"], "model": "haiku"}}',
    )
    prompt = group.add_mutually_exclusive_group()
    prompt.add_argument("--system-prompt", metavar="TEXT", help="the root agent's system prompt instead of ours")
    prompt.add_argument("--system-prompt-file", metavar="PATH", help="the same, read from PATH")
    more = group.add_mutually_exclusive_group()
    more.add_argument(
        "--append-system-prompt", metavar="TEXT", help="text added at the end of the root's system prompt"
    )
    more.add_argument("--append-system-prompt-file", metavar="PATH", help="the same, read from PATH")


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``-r/--resume``, ``-c/--continue``, ``--session-id``, ``--session-db`` and ``--no-session`` to a run
    command's parser."""
    group = parser.add_argument_group("sessions")
    group.add_argument(
        "-r", "--resume", metavar="SESSION_ID", help="go on with a journalled session (an id or an unambiguous prefix)"
    )
    group.add_argument(
        "-c",
        "--continue",
        dest="continue_session",
        action="store_true",
        help="go on with the most recent session of this workspace",
    )
    group.add_argument(
        "--session-id", type=_uuid, metavar="UUID", help="the id of the new session (a UUID; default: a random one)"
    )
    group.add_argument("--session-db", metavar="PATH", help=DB_HELP)
    group.add_argument("--no-session", "--no-session-persistence", action="store_true", help="do not journal this run")
    group.add_argument(
        "--fork-session",
        action="store_true",
        default=None,
        help="with --resume/--continue: go on in a new session (a new id) that starts with the old one's history",
    )
    group.add_argument(
        "--resume-session-at",
        metavar="MESSAGE_ID",
        help="with --resume: go on from the assistant message MESSAGE_ID (the uuid of its stream-json or transcript "
        "line, as Claude Code takes it, or its message.id, msg_…), in a new session forked there",
    )


def add_time_travel_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--session ID``, ``--at SEQ``, ``--recorded`` (and ``--session-db``) for stepping on from an old session."""
    parser.add_argument(
        "--session",
        metavar="ID",
        help="restore the agents of this journalled session (or of a trajectory file: agentfsm sessions export, "
        "a batch's OUT/ID/trajectory.jsonl)",
    )
    parser.add_argument(
        "--at",
        metavar="SEQ",
        type=int,
        help="as they were right after transition SEQ (default: its last); a new session forks",
    )
    parser.add_argument(
        "--recorded",
        action="store_true",
        help="serve the replies the session got after SEQ instead of calling the model (offline)",
    )
    if not any("--session-db" in action.option_strings for action in parser._actions):
        parser.add_argument("--session-db", metavar="PATH", help=DB_HELP)


def add_db_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--session-db`` and ``--cwd`` to a subcommand that reads the journal."""
    # SUPPRESS: a value given before the subcommand (agentfsm --cwd X sessions ...) is not overwritten.
    parser.add_argument("--session-db", metavar="PATH", default=argparse.SUPPRESS, help=DB_HELP)
    parser.add_argument(
        "--cwd", metavar="DIR", default=argparse.SUPPRESS, help="the workspace (default: the current directory)"
    )
