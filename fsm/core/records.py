"""The agent's data as plain attrs records: the Transition of each step and the one mutable AgentState.

Messages are kept as plain dicts in the Messages API wire shape, never SDK objects, so every record here
round-trips through JSON with :data:`converter` — the ground journal, resume and replay stand on.
"""

from __future__ import annotations

import uuid
from typing import Any

from attrs import Factory, define, field, frozen
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.preconf.json import make_converter

from fsm.core.limits import DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS
from fsm.core.vocabulary import OUTCOMES, Outcome, State, Trigger
from fsm.model.reply import Block, Message, Reply, Usage
from fsm.policy.chain import Denial
from tools import ToolOutput

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MAX_MODEL_CALLS",
    "MAX_PARALLEL",
    "MAX_TURNS",
    "OUTCOMES",
    "AgentState",
    "Compaction",
    "Transition",
    "converter",
    "message_uuid",
    "tool_result_block",
]


_MESSAGES = uuid.UUID("6f1c6a2e-9d1b-4f5e-8a39-2b7c1d0e4a53")
"""The namespace of :func:`message_uuid`'s name-based uuids."""


def message_uuid(session_id: str, record: Transition, index: int) -> str:
    """The ``uuid`` of message *index* of the messages *record* appended, in session *session_id*: the same in the
    stream-json line and the transcript line that carry it, and the same whenever it is computed again from the
    journal (a uuid5 of the session, agent and seq), so ``--resume-session-at UUID`` finds the transition."""
    return str(uuid.uuid5(_MESSAGES, f"{session_id}/{record.agent}/{record.seq}/{index}"))


def tool_result_block(call: Block, output: ToolOutput) -> Block:
    """The tool_result block answering the tool_use block *call* (``is_error`` only when true)."""
    content: Any = [dict(b) for b in output.blocks] if output.blocks else output.text
    block = {"type": "tool_result", "tool_use_id": call["id"], "content": content}
    return {**block, "is_error": True} if output.is_error else block


@frozen
class Compaction:
    """What one compaction did, on the record of the step that made it (``compacted``, ``summarized``)."""

    trigger: str
    """``auto`` (the threshold, or the model refusing the request as too long) or ``manual`` (``/compact``):
    Claude Code's ``compact_metadata.trigger``."""
    pre_tokens: int
    """The estimated tokens of the request before the compaction."""
    post_tokens: int
    """The estimated tokens of the request after it."""
    cleared: tuple[str, ...] = ()
    """The tool_use ids whose old results were replaced by a short marker."""
    persisted: tuple[str, ...] = ()
    """The tool_use ids whose large results were saved outside the conversation, a preview left in their place."""
    replaced: int = 0
    """How many messages the new history replaced."""


@frozen(slots=False)  # made at every step: a frozen slotted class's __init__ costs about twice as much
class Transition:
    """The record of one step: which agent moved, along which edge, and what happened on the way."""

    seq: int
    """Position in the run's event stream, shared by a parent and its subagents; starts at 1."""
    agent: str
    parent: str | None
    depth: int
    source: State
    trigger: Trigger
    dest: State
    turn: int
    """The agent's model calls in this run after the transition."""
    reply: Reply | None = None
    tool_call: Block | None = None
    """The tool_use block this step answered."""
    tool_result: ToolOutput | None = None
    error: str | None = None
    outcome: Outcome | None = None
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
    (``fsm.model.pricing``). None otherwise; in a budgeted run, None for a reply means no price is known for the
    model that answered, and the run's cost becomes unknown."""
    context: str | None = None
    """On ``tool_ran`` / ``subagent_returned``: what PostToolUse hooks added for the model, sent as a text block of
    its own after the tool results (Claude Code's ``additionalContext``), not in the tool_result."""
    history: tuple[Message, ...] | None = None
    """On a compaction (``compacted``, ``summarized``): the messages the model sees from then on; they replace the
    agent's list. The journal keeps the ones they replaced in the rows that appended them."""
    compaction: Compaction | None = None
    """On a compaction: what it did (trigger, tokens before and after, what it cleared)."""
    instructions: str | None = None
    """On ``compact_requested``: the ``/compact`` prompt's instructions for the summary, if it gave any."""
    prompt: str | None = None
    """On ``prompt_blocked``: the prompt a UserPromptSubmit hook blocked (never a message: Claude Code drops it);
    ``error`` holds Claude Code's words for the block. On ``subagent_spawned`` for a forked skill: the subagent's
    prompt (the skill's text), which its ``Skill`` call does not hold."""
    window: int | None = None
    """On a request the model refused as too long ("prompt is too long: N tokens > M maximum"): the window it named,
    in the agent's compactor's count (M scaled by the compactor's estimate of the request over N). Kept in the
    agent's data (``AgentState.context_window``), so a resumed session does not learn it again."""
    job: str | None = None
    """On ``tool_ran``: the id of the background job the call started (``bash`` with ``run_in_background``)."""
    notified: tuple[str, ...] = ()
    """The background jobs whose ``<task-notification>`` the appended messages carry (each job is told once)."""
    granted: tuple[str, ...] = ()
    """On the step that invoked a trusted skill: the allow rules its ``allowed-tools`` granted for the session, as
    written (the root's data keeps them, ``AgentState.grants``, so a resumed session has them again)."""
    subagent_type: str | None = None
    """On ``subagent_spawned`` of a custom subagent: its type (None: the general-purpose one), so a resumed session
    runs it as the same type."""
    subagent_max_turns: int | None = None
    """On ``subagent_spawned`` of a custom subagent: the turns it may take, its type's ``maxTurns`` when lower than
    the run's (a resumed session keeps the cap it started with, whatever the type's file says by then)."""
    skill_model: str | None = None
    """On the step that ran a skill naming a model (its ``model``): that model. Run inline (the ``prompt`` of a typed
    ``/NAME``, the ``tool_ran`` of a ``Skill`` call), the root calls it for the rest of its run; on ``subagent_spawned``
    of a forked skill, the subagent calls it (``AgentState.model``), so a resumed session calls the same model."""


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
    state: State = "idle"
    messages: list[Message] = Factory(list)
    turn: int = 0
    """Model calls in the current run."""
    inbox: str | None = None
    """A prompt queued by ``send()``, taken by the next step."""
    pending: list[Block] = Factory(list)
    """The last reply's tool_use blocks not answered yet, in order."""
    results: list[Block] = Factory(list)
    """tool_result blocks collected for the last reply (in its order, then any hook context as text blocks), sent
    in one user message by ``tools_done``."""
    outcome: Outcome | None = None
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
    compactions: int = 0
    """Compactions since the agent's last reply from the model, the one under way included (guard
    ``out_of_compactions``)."""
    failed_compactions: int = 0
    """Consecutive failed compactions in the current run (guard ``out_of_compaction_tries``)."""
    manual_compaction: bool = False
    """The compaction under way was asked for by hand (``/compact``); read only in ``compacting``."""
    compaction_instructions: str | None = None
    """A ``/compact`` prompt's instructions for the summary (None: none given)."""
    context_window: int | None = None
    """The context window the model named when it last refused a request as too long, in the compactor's count
    (``Transition.window``; None: it never did). Requests are compacted to stay under nine tenths of it."""
    grants: list[str] = Factory(list)
    """On the root: the allow rules the session's skills granted (their ``allowed-tools``), in order, each once;
    a restored agent remembers them again."""
    todos: list[dict[str, str]] = Factory(list)
    """The todo list the agent's last successful ``TodoWrite`` left (``content``, ``status``, ``activeForm`` each;
    empty once every item was completed, as Claude Code clears it)."""
    jobs: list[str] = Factory(list)
    """On the root: the tree's background jobs started and not yet told to the model (``<task-notification>``),
    in start order; empty whenever the root is idle after a run (a subagent's stays empty)."""
    model: str | None = None
    """The model a skill chose for this agent (``Transition.skill_model``): on the root, the one a skill run inline
    named, for the rest of its run; on a forked skill's subagent, the skill's, for its whole life. None: the agent's
    own model."""


converter = make_converter()
"""Turns every record here into JSON-ready data and back."""
converter.register_unstructure_hook(
    ToolOutput,
    make_dict_unstructure_fn(ToolOutput, converter, blocks=override(omit_if_default=True)),
)
"""A tool result without blocks (every tool's but an MCP image's) is journalled as it always was."""
