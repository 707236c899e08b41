"""``agentfsm sessions list | show ID | export ID [--format jsonl]``: read the journalled sessions of a workspace.

``list`` and ``show`` are text for a terminal, so what a tool or a model wrote shows its control characters
escaped (:func:`~fsm.core.lines.visible`); ``export`` is JSON, which escapes them itself. This subcommand only
reads the journal; the session a run writes to (``--resume``, ``--continue``, a fork) is
:mod:`fsm.cli.run_session`'s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fsm.cli.flags import add_db_flags
from fsm.errors import ConfigError

if TYPE_CHECKING:  # the journal and the core load when the command runs: every command's parser imports this module
    from fsm.core.records import Transition
    from fsm.session.journal import Journal, SessionInfo

__all__ = ["command", "configure", "export_jsonl", "render_list", "render_show"]

SHOW_CHARS = 300
"""How much of a long text ``sessions show`` prints without ``--full``."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``list``, ``show`` and ``export`` to the ``sessions`` subcommand's parser."""
    add_db_flags(parser)
    sub = parser.add_subparsers(dest="sessions_command", metavar="{list,show,export}", required=True)
    listing = sub.add_parser("list", help="the sessions of this workspace: id, started, turns, tokens, outcome, prompt")
    show = sub.add_parser("show", help="one session as a transcript, subagents indented")
    show.add_argument("session_id", metavar="ID", help="a session id or an unambiguous prefix")
    show.add_argument("--full", action="store_true", help=f"print long texts whole (default: {SHOW_CHARS} chars)")
    export = sub.add_parser("export", help="one session as JSON lines: a header, then every transition")
    export.add_argument("session_id", metavar="ID", help="a session id or an unambiguous prefix")
    export.add_argument("--format", choices=["jsonl"], default="jsonl", help="the output format (jsonl)")
    for each in (listing, show, export):
        add_db_flags(each)


def command(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    """Run ``sessions list|show|export``; 0 on success (errors are raised for the CLI to print)."""
    from fsm.cli.resolve import journal_path
    from fsm.session.journal import Journal

    out = out or sys.stdout
    path = journal_path(getattr(args, "session_db", None), getattr(args, "cwd", None))
    if not path.exists():
        if args.sessions_command != "list":
            raise ConfigError(f"no session {args.session_id!r}: {path} does not exist yet")
        out.write(f"No sessions yet: {path} does not exist.\n")
        return 0
    with Journal(path) as journal:
        if args.sessions_command == "list":
            out.write(render_list(journal.sessions(), path))
        elif args.sessions_command == "show":
            out.write(render_show(journal, args.session_id, full=args.full))
        else:
            export_jsonl(journal, args.session_id, out)
    return 0


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _outcome(info: SessionInfo) -> str:
    return info.outcome or (f"({info.state})" if info.state else "(no transitions)")


def render_list(sessions: list[SessionInfo], path: Path) -> str:
    """The ``sessions list`` table, oldest first."""
    from fsm.core.lines import clip, visible

    if not sessions:
        return f"No sessions in {path} yet.\n"
    w = max(len(s.id) for s in sessions)
    lines = [f"{'ID':<{w}}  {'STARTED':<16}  {'TURNS':>5}  {'TOKENS':>7}  {'OUTCOME':<17}  PROMPT"]
    for s in sessions:
        prompt = clip(s.prompt, 60)
        if s.forked_from:
            prompt = f"[fork of {s.forked_from} at {s.forked_at}] {prompt}"
        lines.append(
            f"{s.id:<{w}}  {_when(s.created_at):<16}  {s.turns:>5}  {s.tokens:>7,}  {_outcome(s):<17}  {prompt}"
        )
    lines += [f"damaged: {s.damage}" for s in sessions if s.damage]
    return visible("\n".join(lines)) + "\n"


def render_show(journal: Journal, session_id: str, *, full: bool = False) -> str:
    """One session as a readable transcript: one entry per transition, ``[seq]`` first, subagents indented."""
    from fsm.core.lines import visible

    info = journal.find(session_id)
    turns = "1 turn" if info.turns == 1 else f"{info.turns} turns"
    lines = [
        f"Session {info.id} · started {_when(info.created_at)} · {_outcome(info)} · {turns} · {info.tokens:,} tokens",
        f"Workdir: {info.workdir}",
    ]
    if info.forked_from:
        lines.append(f"Forked from {info.forked_from} at seq {info.forked_at}")
    if info.damage:
        lines.append(f"damaged: {info.damage}")
    lines.append("")
    calls: dict[str, str] = {}
    for record in journal.records(info.id):
        entries = _entries(record, calls)
        for note in record.notes:
            entries.append(f"note: {note}")
        prefix = "    " * record.depth + f"[{record.seq}] "
        for entry in entries:
            lines.extend(_indent(prefix, _clip(entry, full)))
            prefix = " " * len(prefix)
    return visible("\n".join(lines)) + "\n"


def _clip(text: str, full: bool) -> str:
    if full or len(text) <= SHOW_CHARS:
        return text
    return f"{text[:SHOW_CHARS]}… ({len(text) - SHOW_CHARS:,} more chars)"


def _indent(prefix: str, text: str) -> list[str]:
    first, *rest = text.split("\n")
    return [prefix + first, *(" " * len(prefix) + line for line in rest)]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _entries(record: Transition, calls: dict[str, str]) -> list[str]:
    """What ``show`` says about one transition."""
    t = record.trigger
    entries: list[str] = []
    if t == "prompt":
        entries.append(f"user: {_text_of(record.appended[0]['content'])}")
    if t == "continue_forced":
        entries.append(f"user (Stop hook): {_text_of(record.appended[0]['content'])}")
    if t == "compact_requested":
        entries.append("user: /compact" + (f" {record.instructions}" if record.instructions else ""))
    if record.compaction is not None:
        entries.append(_compaction(record))
    elif record.reply is not None and record.source == "compacting":
        entries.append(f"summary call: {_text_of(list(record.reply.content)) or '(no text)'}")
    elif record.reply is not None:
        for block in record.reply.content:
            if block["type"] == "text":
                entries.append(f"assistant: {block['text']}")
            elif block["type"] == "tool_use":
                calls[block["id"]] = block["name"]
                entries.append(f"tool_use {block['name']} {json.dumps(block['input'], ensure_ascii=False)}")
        if not record.reply.content:
            entries.append("assistant: (empty reply)")
    if t == "model_failed":
        entries.append(f"model error: {record.error}")
    if t in ("context_exceeded", "compaction_failed", "compaction_blocked"):
        entries.append(f"{t}: {record.error}")
    if t == "subagent_spawned":
        entries.append(f"subagent {record.child} started")
    if record.tool_result is not None and record.tool_call is not None:
        kind = " (error)" if record.tool_result.is_error else ""
        entries.append(f"result of {record.tool_call['name']}{kind}: {record.tool_result.text}")
    if t in ("stopped", "turn_limit", "interrupted") or (t == "replied_final" and record.outcome != "end_turn"):
        entries.append(f"{t}: {record.outcome or 'max_turns'}" + (f" ({record.error})" if record.error else ""))
    return entries


def _compaction(record: Transition) -> str:
    """Where a compaction happened and what it replaced: ``compaction (auto): 2,123 → 1,128 tokens; cleared 1 old
    tool result (r0)``, or a summary that replaced N messages, followed by the summary."""
    info = record.compaction
    assert info is not None
    what = [f"compaction ({info.trigger}): {info.pre_tokens:,} → {info.post_tokens:,} tokens"]
    if record.reply is not None:
        what.append(f"a summary replaced {info.replaced} messages")
    for ids, done in ((info.cleared, "cleared"), (info.persisted, "persisted")):
        if ids:
            what.append(f"{done} {len(ids)} old tool result{'s' if len(ids) > 1 else ''} ({', '.join(ids)})")
    text = "; ".join(what)
    return text if record.reply is None else f"{text}\nsummary: {record.reply.text}"


def export_jsonl(journal: Journal, session_id: str, out: TextIO) -> None:
    """Write the session as JSON lines (:func:`fsm.session.export.export_jsonl`, loaded when it runs)."""
    from fsm.session.export import export_jsonl as export

    export(journal, session_id, out)
