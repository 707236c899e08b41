"""The agent's data as plain attrs records: Usage, Reply, Transition and the one mutable AgentState.

Messages are kept as plain dicts in the Messages API wire shape, never SDK objects, so every record here
round-trips through JSON with :data:`converter` — the ground journal, resume and replay stand on.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import attrs
from attrs import Factory, define, field, frozen
from cattrs.preconf.json import make_converter

from fsm.errors import ModelError
from tools import ToolOutput

__all__ = [
    "CUT_CALL",
    "DEFAULT_MAX_TOKENS",
    "MAX_MODEL_CALLS",
    "MAX_PARALLEL",
    "MAX_TURNS",
    "OUTCOMES",
    "AgentState",
    "Denial",
    "Message",
    "Reply",
    "Transition",
    "Usage",
    "converter",
    "tool_result_block",
]

MAX_PARALLEL = 8
"""Ceiling of subagents one agent may run at once (``max_parallel``); the default is 4."""
MAX_TURNS = 30
"""Default and ceiling of model calls per agent per run."""

DEFAULT_MAX_TOKENS = 8000
"""The ``max_tokens`` of each model call unless an agent is given its own."""

MAX_MODEL_CALLS = 200
"""Default budget of model calls per run of the root agent, its subagents included."""


OUTCOMES = (
    "end_turn",
    "max_turns",
    "max_model_calls",
    "max_budget_usd",
    "model_error",
    "refusal",
    "max_tokens",
    "interrupted",
    "context_window",
)
"""How a run can end; ``AgentState.outcome`` holds one of these once the agent stops."""

Message = dict[str, Any]
Block = dict[str, Any]


def tool_result_block(call: Block, output: ToolOutput) -> Block:
    """The tool_result block answering the tool_use block *call* (``is_error`` only when true)."""
    block = {"type": "tool_result", "tool_use_id": call["id"], "content": output.text}
    return {**block, "is_error": True} if output.is_error else block


@frozen(slots=False)  # made at every model call: a frozen slotted class's __init__ costs about twice as much
class Usage:
    """Token counts as the Messages API reports them; ``+`` adds them up."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @classmethod
    def from_wire(cls, data: object) -> Usage:
        """Read the ``usage`` object of a reply; missing or null counts are 0.

        Raises:
            ModelError: *data* is not an object, or a count is not a non-negative integer (kind ``malformed``).
        """
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise _malformed(f"usage must be an object (got {_show(data)})")
        counts = []
        for name in _USAGE_FIELDS:
            value = data.get(name)
            if value is None:
                value = 0
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _malformed(f"usage.{name} must be a non-negative integer (got {_show(value)})")
            counts.append(value)
        return cls(*counts)


_USAGE_FIELDS = tuple(f.name for f in attrs.fields(Usage))


def _show(value: object, width: int = 60) -> str:
    """*value* as JSON would spell it, cut to *width* characters: what came back, for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _malformed(problem: str) -> ModelError:
    return ModelError(f"malformed reply: {problem}", kind="malformed")


def _check_block(index: int, block: object) -> tuple[Block, str | None]:
    """The block as we keep it (top-level nulls dropped), and what was wrong with a tool_use input, if anything."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise _malformed(f"content[{index}] is not a content block (got {_show(block)})")
    kind = block["type"]
    if kind == "text" and not isinstance(block.get("text"), str):
        raise _malformed(f"text content[{index}] has no text (got {_show(block.get('text'))})")
    bad_input = None
    if kind == "tool_use":
        for key in ("id", "name"):
            if not isinstance(block.get(key), str) or not block[key]:
                raise _malformed(f"tool_use content[{index}] needs a string {key} (got {_show(block.get(key))})")
        if not isinstance(block.get("input"), dict):
            bad_input = "no input" if "input" not in block else _show(block["input"])
            block = {**block, "input": {}}
    return (dict(block) if None not in block.values() else {k: v for k, v in block.items() if v is not None}), bad_input


CUT_CALL = (
    "Error: this tool call was cut off at the max_tokens limit before it was complete, so it was not "
    "run; make the call again, smaller (write a large file in parts)"
)
"""The tool_result of every tool_use in a reply that stopped at ``max_tokens``."""


@frozen(slots=False)  # made at every model call: a frozen slotted class's __init__ costs about twice as much
class Reply:
    """One model reply: content blocks (wire-shape dicts), the stop reason and the tokens it cost."""

    content: tuple[Block, ...]
    stop_reason: str | None = None
    usage: Usage = Usage()
    model: str | None = None
    id: str | None = None
    """The API message id (``msg_…``), when the model gave one."""
    bad_inputs: tuple[tuple[int, str], ...] = ()
    """``(content index, what came)`` of each tool_use whose input was not an object (kept as ``{}``)."""

    @classmethod
    def from_wire(cls, data: object) -> Reply:
        """Build a Reply from a Messages API response body, checking every field we read.

        A tool_use whose ``input`` is not an object is kept with ``input: {}`` (so the conversation stays
        valid) and listed in ``bad_inputs``: it is answered with an error result, never run.

        Raises:
            ModelError: the body is not a usable reply (kind ``malformed``).
        """
        if not isinstance(data, dict):
            raise _malformed(f"expected an object with a content list (got {_show(data)})")
        if data.get("type") == "error" and isinstance(data.get("error"), dict):
            raise _malformed(f"the body is an error, not a message ({_show(data['error'].get('message'), 120)})")
        if not isinstance(data.get("content"), list):
            raise _malformed(f"expected an object with a content list (got content {_show(data.get('content'))})")
        blocks, bad_inputs = [], []
        for i, item in enumerate(data["content"]):
            block, bad = _check_block(i, item)
            blocks.append(block)
            if bad is not None:
                bad_inputs.append((i, bad))
        stop = data.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise _malformed(f"stop_reason must be a string (got {_show(stop)})")
        model, message_id = data.get("model"), data.get("id")
        return cls(
            tuple(blocks),
            stop,
            Usage.from_wire(data.get("usage")),
            model if isinstance(model, str) else None,
            message_id if isinstance(message_id, str) else None,
            tuple(bad_inputs),
        )

    @property
    def tool_uses(self) -> list[Block]:
        """The tool_use blocks, in order: what the agent must run."""
        return [b for b in self.content if b["type"] == "tool_use"]

    @property
    def text(self) -> str:
        """The text blocks joined: what a person reads."""
        return "".join([b["text"] for b in self.content if b["type"] == "text"])

    @property
    def unrunnable(self) -> dict[str, str]:
        """tool_use id → the error result that answers it without running: every call of a reply cut at
        ``max_tokens`` (its input may be incomplete), and each call whose input was not an object."""
        if self.stop_reason == "max_tokens":
            return {b["id"]: CUT_CALL for b in self.tool_uses}
        return {
            self.content[i]["id"]: f"Error: {self.content[i]['name']}: input must be an object (got {bad}); "
            "call the tool again with an object input"
            for i, bad in self.bad_inputs
        }

    def with_unique_ids(self, taken: set[str]) -> tuple[Reply, list[str]]:
        """This reply with each tool_use id that is in *taken* or repeats an earlier one renamed (``ID_2``…),
        and a note per renaming; the API refuses a conversation whose tool_use ids repeat."""
        seen: set[str] = set()  # this reply's ids so far (*taken* is not copied: it may be large)
        content, notes = [], []
        for block in self.content:
            if block["type"] == "tool_use":
                if block["id"] in taken or block["id"] in seen:
                    new = next(
                        f"{block['id']}_{n}"
                        for n in itertools.count(2)
                        if f"{block['id']}_{n}" not in taken and f"{block['id']}_{n}" not in seen
                    )
                    notes.append(f"renamed duplicate tool_use id {block['id']} to {new}")
                    block = {**block, "id": new}
                seen.add(block["id"])
            content.append(block)
        return (attrs.evolve(self, content=tuple(content)), notes) if notes else (self, [])


@frozen
class Denial:
    """A tool call the permission chain refused (what Claude Code reports as ``permission_denials``)."""

    tool_name: str
    tool_use_id: str
    tool_input: Any
    reason: str
    """Exactly what the model was told (the error tool_result)."""
    by: str
    """What refused it: ``rule Bash(sudo:*) (built-in)``, ``hook ./guard.sh``, ``user``, ``plan mode`` …"""

    def to_json(self) -> dict[str, Any]:
        """Claude Code's ``permission_denials`` entry (``tool_name``, ``tool_use_id``, ``tool_input``), plus
        ``reason`` and ``by``."""
        return {
            "tool_name": self.tool_name,
            "tool_use_id": self.tool_use_id,
            "tool_input": self.tool_input,
            "reason": self.reason,
            "by": self.by,
        }


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class Transition:
    """The record of one step: which agent moved, along which edge, and what happened on the way."""

    seq: int
    """Position in the run's event stream, shared by a parent and its subagents; starts at 1."""
    agent: str
    parent: str | None
    depth: int
    source: str
    trigger: str
    dest: str
    turn: int
    """The agent's model calls in this run after the transition."""
    reply: Reply | None = None
    tool_call: Block | None = None
    """The tool_use block this step answered."""
    tool_result: ToolOutput | None = None
    error: str | None = None
    outcome: str | None = None
    child: str | None = None
    """The subagent's id, on ``subagent_spawned`` and ``subagent_returned``."""
    appended: tuple[Message, ...] = ()
    """Messages this step appended to the agent's list, in order: the journal stores only these."""
    notes: tuple[str, ...] = ()
    """What hooks had to say on the way (printed as ``[HOOK] …``)."""
    started_at: float = 0.0
    duration_ms: float = 0.0
    model_called: bool = False
    """On ``interrupted`` from ``awaiting_model``: the interruption cut a model call short, and it counts."""
    run_limits: tuple[int, int] | None = None
    """On the root's ``prompt``: ``(max_turns, max_model_calls)`` of the run it starts."""
    denial: Denial | None = None
    """Set when the permission chain refused the tool call this step answered."""
    max_budget_usd: float | None = None
    """On the root's ``prompt``: the USD budget of the run it starts (None: the run has none)."""
    cost_usd: float | None = None
    """On a step that followed a model call with a reply, in a run with a USD budget: the reply's price in USD
    (``fsm.core.pricing``). None otherwise; in a budgeted run, None for a reply means no price is known for the
    model that answered, and the run's cost becomes unknown."""


@define
class AgentState:
    """Everything an agent knows, as plain data (the machine's ``state`` name included)."""

    agent_id: str
    parent_id: str | None = None
    depth: int = 0
    max_turns: int = MAX_TURNS
    """Model calls allowed to this agent in its current run, 1..30."""
    max_model_calls: int = MAX_MODEL_CALLS
    """The budget of model calls of the root's current run, shared by the whole tree."""
    run_calls: int = 0
    """On the root: model calls the whole tree has made in the current run (a subagent's stays 0)."""
    max_budget_usd: float | None = None
    """The USD budget of the root's current run, shared by the whole tree (None: no budget)."""
    run_cost_usd: float | None = 0.0
    """On the root, in a run with a USD budget: what the whole tree's replies cost so far, in USD (a subagent's
    stays 0); None when a reply came from a model whose price is unknown (the budget then counts as spent)."""
    run_tool_calls: int = 0
    """On the root: tool calls the whole tree has answered in the current run, ``task`` calls and the subagents'
    calls included (a subagent's stays 0); the Stop summary's count."""
    state: str = "idle"
    messages: list[Message] = Factory(list)
    turn: int = 0
    """Model calls in the current run."""
    inbox: str | None = None
    """A prompt queued by ``send()``, taken by the next step."""
    pending: list[Block] = Factory(list)
    """The last reply's tool_use blocks not answered yet, in order."""
    results: list[Block] = Factory(list)
    """tool_result blocks collected for the last reply, sent in one user message by ``tools_done``."""
    outcome: str | None = None
    error: str | None = None
    final_text: str = ""
    usage: Usage = Usage()
    model_calls: int = 0
    """Model calls over the agent's whole life."""
    tool_calls: int = 0
    parent_tool_use_id: str | None = field(default=None)
    """For a subagent: the parent's ``task`` tool_use it answers."""
    spawned: int = 0
    """How many subagents this agent has started (the next one is numbered ``spawned + 1``)."""
    subagent_type: str | None = None
    """For a custom subagent: its type's name (``fsm.core.subagents``); None for the general-purpose one."""
    stop_forced: bool = False
    """Whether a Stop hook already made this agent's current run go on (Claude Code's ``stop_hook_active``)."""
    denials: list[Denial] = Factory(list)
    """Every tool call the permission chain refused, in order: a subagent's own; the root's, its subagents'
    too (what a result reports as ``permission_denials``; a run's are those added since its prompt)."""
    unrunnable: dict[str, str] = Factory(dict)
    """Pending tool_use id → the error result that answers it without running (see ``Reply.unrunnable``)."""
    max_parallel: int = 4
    """Subagents this agent may run at once; a reply's further ``task`` calls wait for a free slot."""
    transitions: int = 0
    """Transitions this agent has made, over its whole life: running subagents take turns by it."""
    active: list[str] = Factory(list)
    """The running subagents' ids, in the order they were spawned (each answers one pending ``task`` call)."""


converter = make_converter()
"""Turns every record here into JSON-ready data and back."""
