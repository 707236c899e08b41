"""The flags every agent-running command shares, and how they become an :class:`~fsm.core.agent.Agent`.

:func:`add_agent_flags` adds them to a parser (``run``, ``debug`` and the REPL use the same words);
:func:`agent_from_args` validates them once, reads ``.env``, resolves the model id and the approver, and
builds the agent. Every problem is a :class:`~fsm.errors.ConfigError` with a one-line message that names
the flag, the value and what to do; the CLI prints it as ``agentfsm: MESSAGE`` and exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from fsm.core.agent import Agent
from fsm.core.hooks import Ask, Deny
from fsm.core.model import DEFAULT_MODEL, Model
from fsm.core.permissions import Approver, allow_all, deny_all, deny_unattended
from fsm.core.records import DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_TURNS
from fsm.errors import ConfigError
from tools import REGISTRY

__all__ = [
    "NO_API_KEY",
    "PERMISSION_MODES",
    "add_agent_flags",
    "agent_from_args",
    "limits_given",
    "load_env",
    "model_id",
    "terminal_approver",
]

PERMISSION_MODES = ("default", "deny", "allow")
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


def add_agent_flags(parser: argparse.ArgumentParser) -> None:
    """Add the flags shared by every command that runs an agent (``run``, ``debug``, the REPL)."""
    group = parser.add_argument_group("agent")
    resumed = "; with --resume/--continue it applies to the run this command's prompt starts"
    group.add_argument("--max-turns", type=_int_flag("--max-turns", 1, MAX_TURNS), default=None,
                       metavar="N", help=f"model calls allowed per agent per run (the root and each subagent), "
                                         f"1..{MAX_TURNS} (default {MAX_TURNS}){resumed}")
    group.add_argument("--max-model-calls", type=_int_flag("--max-model-calls", 1), default=None, metavar="N",
                       help=f"model calls allowed per run, all subagents included (default {MAX_MODEL_CALLS})"
                            f"{resumed}"),
    group.add_argument("--max-tokens", type=_int_flag("--max-tokens", 1), default=DEFAULT_MAX_TOKENS,
                       metavar="N", help=f"max_tokens of each model call (default {DEFAULT_MAX_TOKENS})")
    group.add_argument("--model", metavar="ID",
                       help=f"model id (default: $MODEL_ID, else $ANTHROPIC_MODEL, else {DEFAULT_MODEL})")
    group.add_argument("--cwd", metavar="DIR", help="the workspace directory (default: the current directory)")
    group.add_argument("--permission-mode", choices=PERMISSION_MODES, default="default",
                       help="what a call needing approval becomes: default = ask when a terminal is attached, "
                            "else deny; deny = always deny; allow = always allow (the deny list always holds)")
    group.add_argument("--allowed-tools", metavar="LIST",
                       help="comma list of the only tools to offer (default: all six)")
    group.add_argument("--disallowed-tools", metavar="LIST",
                       help="comma list of tools not to offer; 'task' turns delegation off")
    group.add_argument("--verbose", action="store_true", help="progress lines on stderr")


def load_env(directory: Path | None = None) -> None:
    """Read ``.env`` from *directory* (the current one by default); real environment variables win."""
    from dotenv import load_dotenv

    path = (directory or Path.cwd()) / ".env"
    if path.is_file():
        load_dotenv(path, override=False)


def model_id(flag: str | None) -> str:
    """The model to use: *flag*, else ``MODEL_ID``, else ``ANTHROPIC_MODEL``, else ``DEFAULT_MODEL``."""
    return flag or os.environ.get("MODEL_ID") or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL


def terminal_approver(*, stdin: TextIO | None = None, stderr: TextIO | None = None) -> Approver:
    """An approver that asks ``Allow? [y/N]`` on the terminal; only ``y``/``yes`` allow, EOF denies.

    The question goes to stderr so a headless run's stdout holds only its result.
    """

    def approve(tool_call: dict[str, Any], ask: Ask) -> bool | Deny:
        out, inp = stderr or sys.stderr, stdin or sys.stdin
        out.write(f"\n[Permission] {tool_call.get('name')} needs approval: {ask.reason}\nAllow? [y/N] ")
        out.flush()
        answer = inp.readline()
        if not answer.endswith("\n"):
            out.write("\n")
        return answer.strip().lower() in ("y", "yes")

    return approve


def _tool_list(flag: str, text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ConfigError(f"{flag}: unknown tool {', '.join(map(repr, unknown))} (available: {', '.join(REGISTRY)})")
    return names


def _tools(args: argparse.Namespace) -> list[str]:
    allowed = _tool_list("--allowed-tools", getattr(args, "allowed_tools", None))
    disallowed = _tool_list("--disallowed-tools", getattr(args, "disallowed_tools", None)) or []
    offered = [n for n in REGISTRY if allowed is None or n in allowed]
    return [n for n in offered if n not in disallowed]


def _approver(mode: str, *, interactive: bool) -> Approver:
    if mode == "allow":
        return allow_all
    if mode == "deny":
        return deny_all
    if mode != "default":
        raise ConfigError(f"--permission-mode must be one of {', '.join(PERMISSION_MODES)} (got {mode!r})")
    return terminal_approver() if interactive and sys.stdin.isatty() else deny_unattended


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
        interactive: whether a person may be asked to approve calls; with ``--permission-mode default``
            they are asked (``Allow? [y/N]``) only when this is true and stdin is a terminal.

    Raises:
        ConfigError: a bad flag value, a missing workspace directory, or no API key.
    """
    max_turns = _check_int("--max-turns", _given(args, "max_turns", MAX_TURNS), 1, MAX_TURNS)
    max_model_calls = _check_int("--max-model-calls", _given(args, "max_model_calls", MAX_MODEL_CALLS), 1)
    max_tokens = _check_int("--max-tokens", getattr(args, "max_tokens", DEFAULT_MAX_TOKENS), 1)
    cwd = getattr(args, "cwd", None)
    workdir = Path(cwd) if cwd else Path.cwd()
    if not workdir.is_dir():
        raise ConfigError(f"--cwd {cwd} is not a directory")
    tools = _tools(args)
    approver = _approver(getattr(args, "permission_mode", "default") or "default", interactive=interactive)
    load_env()
    if model is None:
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise ConfigError(NO_API_KEY)
        from fsm.core.model import AnthropicModel

        model = AnthropicModel(model_id(getattr(args, "model", None)))
    return Agent(model, str(workdir), max_turns, approver=approver, tools=tools, max_tokens=max_tokens,
                 max_model_calls=max_model_calls)


def _given(args: argparse.Namespace, name: str, default: int) -> object:
    value = getattr(args, name, None)
    return default if value is None else value


def limits_given(args: argparse.Namespace) -> dict[str, int]:
    """The run limits set on the command line (``--max-turns``, ``--max-model-calls``), as ``Agent()`` keywords."""
    return {name: value for name in ("max_turns", "max_model_calls")
            if (value := getattr(args, name, None)) is not None}
