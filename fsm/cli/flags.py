"""The flags every agent-running command shares, and how they become an :class:`~fsm.core.agent.Agent`.

:func:`add_agent_flags` adds them to a parser (``run``, ``debug`` and the REPL use the same words);
:func:`agent_from_args` validates them once, reads ``.env`` and the settings files
(``fsm.policy.settings``, with ``--settings`` and ``--setting-sources``), layers the permission flags
on top (``--permission-mode``, ``--allowedTools``, ``--disallowedTools``, ``--add-dir``: Claude Code's
names), installs the settings' command hooks, resolves the model id and the approver, and builds the
agent. Every problem is a :class:`~fsm.errors.ConfigError` with a one-line message that names the flag
(or the settings file), the value and what to do; the CLI prints it as ``agentfsm: MESSAGE`` and exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from fsm.cli.project import add_project_flags, project_from_args
from fsm.core.agent import Agent
from fsm.core.prompts import compose, parent_system
from fsm.core.records import DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS
from fsm.errors import ConfigError
from fsm.model.anthropic import DEFAULT_MAX_RETRIES, DEFAULT_MODEL, DEFAULT_TIMEOUT
from fsm.model.pricing import unpriced
from fsm.model.protocol import Model
from fsm.policy import command_hooks
from fsm.policy.chain import Approver, Remember, default_hooks, deny_unattended
from fsm.policy.hooks import Ask
from fsm.policy.judge import Policy
from fsm.policy.modes import ALIASES, MODES, resolve_mode
from fsm.policy.rules import TOOL_NAMES, RuleError, parse_rule, split_rules
from fsm.policy.settings import SOURCES, Settings, load_settings
from tools import REGISTRY, Workspace
from tools.sandbox import Sandbox, SandboxUnavailable, backend_for
from tools.secrets import take_secrets

__all__ = [
    "NO_API_KEY",
    "PERMISSION_MODES",
    "add_agent_flags",
    "agent_from_args",
    "limits_given",
    "load_env",
    "model_id",
    "print_retry",
    "sandbox_from",
    "settings_from_args",
    "system_prompt",
    "terminal_approver",
]

PERMISSION_MODES = (*MODES, *ALIASES)
NO_API_KEY = "No API key: set ANTHROPIC_API_KEY, or try 'agentfsm demo'"


def _int_flag(flag: str, low: int, high: int | None = None) -> Callable[[str], int]:
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


def print_retry(line: str) -> None:
    """Tell the user on stderr that a model request waits before its retry (every output mode)."""
    print(f"agentfsm: {line}", file=sys.stderr, flush=True)


def add_agent_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags shared by every command that runs an agent (``run``, ``debug``, the REPL)."""
    group = parser.add_argument_group("agent")
    resumed = "; with --resume/--continue it applies to the run this command's prompt starts"
    group.add_argument(
        "--max-turns",
        type=_int_flag("--max-turns", 1, MAX_TURNS),
        default=None,
        metavar="N",
        help=f"model calls allowed per agent per run (the root and each subagent), "
        f"1..{MAX_TURNS} (default {MAX_TURNS}){resumed}",
    )
    (
        group.add_argument(
            "--max-model-calls",
            type=_int_flag("--max-model-calls", 1),
            default=None,
            metavar="N",
            help=f"model calls allowed per run, all subagents included (default {MAX_MODEL_CALLS}){resumed}",
        ),
    )
    group.add_argument(
        "--max-budget-usd",
        type=_dollars,
        default=None,
        metavar="USD",
        help="dollars one run may spend on model calls, all subagents included, priced by genai-prices "
        "from each reply's usage (every model used needs a known price); checked after each "
        "call: once the cost reaches it no call starts, but the calls in flight then (one per "
        "agent at most) finish and count, so a run may end above it (default: no budget)"
        f"{resumed}",
    )
    group.add_argument(
        "--max-tokens",
        type=_int_flag("--max-tokens", 1),
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"max_tokens of each model call (default {DEFAULT_MAX_TOKENS})",
    )
    group.add_argument(
        "--model", metavar="ID", help=f"model id (default: $MODEL_ID, else $ANTHROPIC_MODEL, else {DEFAULT_MODEL})"
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
        type=_int_flag("--max-retries", 0, 10),
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
        "directories writable, no network, no other process visible; bash then needs no "
        'approval except what deny and ask rules say (settings: "sandbox": {"enabled": true})',
    )
    group.add_argument(
        "--max-parallel",
        type=_int_flag("--max-parallel", 1, MAX_PARALLEL),
        metavar="N",
        help=f"subagents run at once when a reply holds several task calls, 1..{MAX_PARALLEL} "
        "(default 4; 1 runs them one after another)",
    )
    group.add_argument("--verbose", action="store_true", help="progress lines on stderr")
    add_project_flags(group)
    prompt = group.add_mutually_exclusive_group()
    prompt.add_argument("--system-prompt", metavar="TEXT", help="the root agent's system prompt instead of ours")
    prompt.add_argument("--system-prompt-file", metavar="PATH", help="the same, read from PATH")
    more = group.add_mutually_exclusive_group()
    more.add_argument(
        "--append-system-prompt", metavar="TEXT", help="text added at the end of the root's system prompt"
    )
    more.add_argument("--append-system-prompt-file", metavar="PATH", help="the same, read from PATH")


def load_env(directory: Path | None = None) -> None:
    """Read ``.env`` from *directory* (the current one by default); real environment variables win.

    Raises:
        ConfigError: the file cannot be read, or is not UTF-8 text.
    """
    from dotenv import load_dotenv

    path = (directory or Path.cwd()) / ".env"
    if not path.is_file():
        return
    try:
        load_dotenv(path, override=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        utf16 = path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
        what = "UTF-16 text" if utf16 else f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise ConfigError(f"cannot read {path}: it is {what}; save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror or exc}); fix its permissions or remove it") from None


def model_id(flag: str | None) -> str:
    """The model to use: *flag*, else ``MODEL_ID``, else ``ANTHROPIC_MODEL``, else ``DEFAULT_MODEL``."""
    return flag or os.environ.get("MODEL_ID") or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL


def terminal_approver(*, stdin: TextIO | None = None, stderr: TextIO | None = None) -> Approver:
    """An approver that asks ``Allow? [y/N/a]`` on the terminal: ``y``/``yes`` allow this call, ``a``/``always``
    allow it and add the offered rules for the rest of the session (printing them); anything else, or EOF,
    denies.

    The question goes to stderr so a headless run's stdout holds only its result.
    """

    def approve(tool_call: dict[str, Any], ask: Ask) -> bool | Remember:
        out, inp = stderr or sys.stderr, stdin or sys.stdin
        offer = f" (a: allow {', '.join(ask.suggestions)} for this session)" if ask.suggestions else ""
        who = f"subagent {ask.agent}: " if ask.agent else ""  # subagents running at once ask one at a time
        out.write(f"\n[Permission] {who}{tool_call.get('name')} needs approval: {ask.reason}{offer}\nAllow? [y/N/a] ")
        out.flush()
        answer = inp.readline()
        if not answer.endswith("\n"):
            out.write("\n")
        word = answer.strip().lower()
        if word in ("a", "always"):
            if not ask.suggestions:
                out.write("[Permission] no rule can cover this call; allowed once\n")
                return True
            out.write(f"[Permission] added for this session: {', '.join(ask.suggestions)}\n")
            return Remember(ask.suggestions)
        return word in ("y", "yes")

    return approve


def _tools(text: str | None) -> list[str] | None:
    """``--tools``: tool names (Claude Code's spelling or ours), in registry order; None: all of them."""
    if text is None or text.strip() == "default":
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if TOOL_NAMES.get(n) not in REGISTRY]
    if unknown:
        raise ConfigError(f"--tools: unknown tool {', '.join(map(repr, unknown))} (available: {', '.join(REGISTRY)})")
    chosen = {TOOL_NAMES[n] for n in names}
    return [n for n in REGISTRY if n in chosen]


def _rules(flag: str, values: list[str] | None) -> list[str]:
    """The rule strings of a repeatable rules flag, each checked (the message names the flag)."""
    texts = [t for value in values or [] for t in split_rules(value)]
    for text in texts:
        try:
            parse_rule(text)
        except RuleError as exc:
            raise ConfigError(f"{flag}: {exc}") from None
    return texts


def _directories(values: list[str] | None) -> list[str]:
    for value in values or []:
        if not Path(value).expanduser().is_dir():
            raise ConfigError(f"--add-dir {value} is not a directory")
    return [str(Path(v).expanduser().resolve()) for v in values or []]


def _mode(text: str | None) -> str | None:
    if text is None:
        return None
    mode = resolve_mode(text)
    if mode is None:
        raise ConfigError(f"--permission-mode must be one of {', '.join(PERMISSION_MODES)} (got {text!r})")
    return mode


def _sources(text: str | None) -> tuple[str, ...]:
    if text is None:
        return SOURCES
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise ConfigError(f"--setting-sources: unknown source {unknown[0]!r} (expected some of {','.join(SOURCES)})")
    return names


def settings_from_args(args: argparse.Namespace, workdir: Path) -> Settings:
    """The settings files of *workdir* (``--setting-sources``), ``--settings``, then the permission flags."""
    overrides: dict[str, Any] = {}
    allow = _rules("--allowedTools", getattr(args, "allowed_tools", None))
    deny = _rules("--disallowedTools", getattr(args, "disallowed_tools", None))
    dirs = _directories(getattr(args, "add_dir", None))
    if allow or deny or dirs:
        overrides["permissions"] = {"allow": allow, "deny": deny, "additionalDirectories": dirs}
    settings = load_settings(
        workdir,
        sources=_sources(getattr(args, "setting_sources", None)),
        extra=getattr(args, "settings", None),
        overrides=overrides,
    )
    if getattr(args, "verbose", False):
        for note in settings.notes:
            print(f"agentfsm: note: {note}", file=sys.stderr, flush=True)
    return settings


def _text_flag(args: argparse.Namespace, name: str) -> str | None:
    """The text of ``--NAME`` or of the file ``--NAME-file`` names (None when neither is given)."""
    text, path = getattr(args, name, None), getattr(args, f"{name}_file", None)
    if path is None:
        return text if text is None or text.strip() else None
    flag = f"--{name.replace('_', '-')}-file"
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{flag} {path} is not UTF-8 text") from None


def system_prompt(args: argparse.Namespace, workdir: Path) -> str | None:
    """The root's system prompt the prompt flags describe: ours or ``--system-prompt``'s, then
    ``--append-system-prompt``'s text; None (the agent's default) when no such flag is given."""
    base, extra = _text_flag(args, "system_prompt"), _text_flag(args, "append_system_prompt")
    if base is None and extra is None:
        return None
    return compose(base if base is not None else parent_system(Workspace(str(workdir))), extra or "")


def _check_int(flag: str, value: object, low: int, high: int | None = None) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)
    if not ok:
        expected = f"{low}..{high}" if high is not None else f"an integer >= {low}"
        raise ConfigError(f"{flag} must be {expected} (got {value})")
    assert isinstance(value, int)
    return value


def agent_from_args(args: argparse.Namespace, *, model: Model | None = None, interactive: bool) -> Agent:
    """Validate the shared flags in *args* and build the root agent they describe.

    Args:
        args: a namespace from a parser given :func:`add_agent_flags` (missing attributes take the defaults).
        model: use this model instead of an ``AnthropicModel`` built from the environment.
        interactive: whether a person may be asked to approve calls; they are asked (``Allow? [y/N/a]``)
            only when this is true and stdin is a terminal, otherwise what would ask is denied.

    Raises:
        ConfigError: a bad flag value, a missing workspace directory, a bad settings file, or no API key.
    """
    max_turns = _check_int("--max-turns", _given(args, "max_turns", MAX_TURNS), 1, MAX_TURNS)
    max_model_calls = _check_int("--max-model-calls", _given(args, "max_model_calls", MAX_MODEL_CALLS), 1)
    max_budget_usd = getattr(args, "max_budget_usd", None)
    max_tokens = _check_int("--max-tokens", getattr(args, "max_tokens", DEFAULT_MAX_TOKENS), 1)
    max_parallel = _check_int("--max-parallel", _given(args, "max_parallel", 4), 1, MAX_PARALLEL)
    cwd = getattr(args, "cwd", None)
    workdir = Path(cwd) if cwd else Path.cwd()
    if not workdir.is_dir():
        raise ConfigError(f"--cwd {cwd} is not a directory")
    tools = _tools(getattr(args, "tools", None))
    mode = _mode(getattr(args, "permission_mode", None))
    settings = settings_from_args(args, workdir)
    policy = Policy.from_settings(settings, mode=mode)
    hooks = command_hooks.install(default_hooks(), settings, project=workdir)
    approver = terminal_approver() if interactive and sys.stdin.isatty() else deny_unattended
    sandbox = sandbox_from(settings, flag=getattr(args, "sandbox", None))
    load_env()
    credentials = take_secrets()  # from here on no tool can find them in this process's environment
    if model is None:
        if not (credentials.get("ANTHROPIC_API_KEY") or credentials.get("ANTHROPIC_AUTH_TOKEN")):
            raise ConfigError(NO_API_KEY)
        from fsm.model.anthropic import AnthropicModel

        model = AnthropicModel(
            model_id(getattr(args, "model", None)),
            on_retry=print_retry,
            timeout=getattr(args, "timeout", DEFAULT_TIMEOUT),
            max_retries=getattr(args, "max_retries", DEFAULT_MAX_RETRIES),
            credentials=credentials,
        )
    context, agents = project_from_args(args, workdir)
    if (
        max_budget_usd is not None
        and (name := unpriced([getattr(model, "model", None), *(d.model for d in agents.values())])) is not None
    ):
        raise ConfigError(
            f"--max-budget-usd needs the price of model {name!r}, and genai-prices has none; "
            "use a model it prices, or drop --max-budget-usd"
        )
    return Agent(
        model,
        str(workdir),
        max_turns,
        hooks,
        approver,
        tools=tools,
        max_tokens=max_tokens,
        max_model_calls=max_model_calls,
        permissions=policy,
        system=system_prompt(args, workdir),
        sandbox=sandbox,
        context=context,
        agents=agents,
        max_parallel=max_parallel,
        max_budget_usd=max_budget_usd,
    )


def sandbox_from(settings: Settings, *, flag: bool | None) -> Sandbox | None:
    """The sandbox ``--sandbox`` or the settings' ``sandbox`` key ask for, checked to work here; None for none.

    Raises:
        ConfigError: the sandbox is asked for but cannot run here (the message says what to install).
    """
    wanted = settings.sandbox
    if not (flag or wanted.enabled):
        return None
    sandbox = Sandbox(network=bool(wanted.network), auto_allow=wanted.auto_allow_bash is not False)
    try:
        backend_for(sandbox)
    except SandboxUnavailable as exc:
        raise ConfigError(str(exc)) from None
    return sandbox


def _given(args: argparse.Namespace, name: str, default: int) -> object:
    value = getattr(args, name, None)
    return default if value is None else value


def limits_given(args: argparse.Namespace) -> dict[str, int | float]:
    """The run limits set on the command line (``--max-turns``, ``--max-model-calls``, ``--max-budget-usd``,
    ``--max-parallel``), as ``Agent()`` keywords."""
    return {
        name: value
        for name in ("max_turns", "max_model_calls", "max_budget_usd", "max_parallel")
        if (value := getattr(args, name, None)) is not None
    }
