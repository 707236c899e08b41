"""The Agent: the driver bound to one machine. ``send()`` queues, ``step()`` moves one transition, ``run()`` drains.

A step does its I/O first (one model call, one tool, one step of a running subagent), then commits by
firing exactly one trigger of the table in ``fsm.core.machine``. What the step produced travels with the
trigger as a :class:`~fsm.core.reducer.Step`; the machine's ``prepare_event`` callback applies it with
:func:`~fsm.core.reducer.reduce` (the one writer of agent data, which restore uses too) before the guards
are asked, so a guard judges the data the step leaves (``out_of_turns`` counts the call just made); once
the guards pass, ``before_state_change`` regrafts the subagent tree (a child adopted or released), the
machine sets the state name, and ``after_state_change`` makes the Transition record and hands it to the
listeners. The driver picks each trigger knowing its guards, so the table refusing one is a bug
(``AssertionError``), never a path. Exceptions only cross the edges: whatever ``Model.create`` raises
becomes the ``model_failed`` transition (the call counts), ``KeyboardInterrupt`` the ``interrupted`` one (then
it is re-raised; a call it cut short counts too).

Its collaborators, each with one job: :mod:`~fsm.core.options` (the settings and limits, one checked record),
:mod:`~fsm.core.scheduler` (which of a reply's calls and running subagents moves next, and the threads that run
subagents at once), :mod:`~fsm.core.listeners` (who hears the tree, in ``seq`` order),
:mod:`~fsm.core.result` (what the agent writes itself: a subagent's result, interrupted calls) and
:mod:`~fsm.core.nextstep` (what the next step will do, as data; ``fsm.view.nextstep`` words it).

Threads: every transition commits under the tree's one lock (``_tree_lock``, an RLock that ``_fire`` takes),
which also numbers the record and hands it to the listeners. Every check of a guard and the trigger that
depends on it run under that lock too, so "take one call from the budget" is the atomic transition into
``awaiting_model``; the model call itself runs outside the lock. The approver is asked under one lock of the
tree's, one call at a time, and a ``Hooks`` registry calls its Python callbacks one at a time too
(``fsm.policy.hooks``; command hooks may run at once).
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable
from types import EllipsisType
from typing import Any, ClassVar, Literal, Unpack

import attrs
from transitions import EventData

from fsm.core.compacting import Compactor, Plan, Request, compact_instructions, is_compact_prompt, refused_window
from fsm.core.compacting import plan as compaction_plan
from fsm.core.guards import Facts
from fsm.core.guards import by_hand as _by_hand
from fsm.core.guards import can_spawn as _can_spawn
from fsm.core.guards import has_jobs as _has_jobs
from fsm.core.guards import must_connect as _must_connect
from fsm.core.guards import out_of_budget_usd as _out_of_budget_usd
from fsm.core.guards import out_of_compaction_tries as _out_of_compaction_tries
from fsm.core.guards import out_of_compactions as _out_of_compactions
from fsm.core.guards import out_of_model_calls as _out_of_model_calls
from fsm.core.guards import out_of_turns as _out_of_turns
from fsm.core.invariants import check_tree
from fsm.core.listeners import Listener, Listeners, ProcessListener
from fsm.core.machine import STATES, build_machine, first_row
from fsm.core.nextstep import NextStep, next_step
from fsm.core.options import AgentOptions, OptionKeywords
from fsm.core.progress import ProgressListener
from fsm.core.prompts import child_system, compose, parent_system, subagent_system
from fsm.core.records import AgentState, Compaction, Transition, tool_result_block
from fsm.core.reducer import PARENT_INTERRUPTED, Step, child_state, compaction_counts, reduce, reply_order
from fsm.core.result import CANNOT_DELEGATE, CANNOT_FORK, INTERRUPTED, INTERRUPTED_MARKER, subagent_result, task_refused
from fsm.core.scheduler import Abandoned, plan, run_children, typed
from fsm.core.scheduler import deepest_busy as _deepest_busy
from fsm.core.subagents import AgentDefinition, task_problem
from fsm.core.vocabulary import HookEventName, Outcome, State, Trigger
from fsm.errors import ConfigError, MisuseError, ModelError
from fsm.model.price_cache import exclude as exclude_from_price_cache
from fsm.model.pricing import price_of
from fsm.model.protocol import Model, StreamingModel
from fsm.model.reply import Block, Message, Reply
from fsm.policy.chain import Approver, Edited, Permit, Remember, default_hooks, deny_unattended, permit
from fsm.policy.hooks import Ask, BlockingError, Deny, HookEvent, Hooks, PromptBlock, blocked_prompt_message
from fsm.policy.judge import Policy
from fsm.policy.rules import claude_name, parse_rule
from fsm.skills.catalog import SKILL_TOOL, Catalog, Skill
from fsm.skills.invoke import (
    TYPED,
    expand_slash,
    fork_result,
    launching,
    load,
    skills_in_use,
    slash_skill,
    stdout,
    typed_fork,
    typed_text,
)
from fsm.skills.listing import listing
from tools import REGISTRY, Tool, ToolOutput, Workspace, check_input, run_tool
from tools.jobs import Job, Jobs, notification
from tools.reads import ReadMemory
from tools.task import GENERAL_PURPOSE
from tools.todo import checklist

__all__ = ["INTERRUPTED", "INTERRUPTED_MARKER", "Agent", "Listener", "ProcessListener"]


@functools.cache
def _machine() -> Any:
    """The one machine every agent runs on (agents are passed to its triggers, not bound to it)."""
    return build_machine(
        Agent, bind=False, prepare_event="_commit", before_state_change="_regraft", after_state_change="_record"
    )


def _budget_spent(facts: Facts) -> Outcome | None:
    """Which of the run's budgets *facts* show spent, as the outcome it ends with (the table's order), or None."""
    if _out_of_model_calls(facts):
        return "max_model_calls"
    return "max_budget_usd" if _out_of_budget_usd(facts) else None


def _limit_reached(facts: Facts) -> Outcome | None:
    """The agent's turn limit or a run budget, whichever *facts* show reached first, as the outcome, or None."""
    return "max_turns" if _out_of_turns(facts) else _budget_spent(facts)


_HOLDING: tuple[State, ...] = ("awaiting_model", "compacting")
"""The states in which an agent holds a granted model call (the next call, or a compaction's summary call)."""
_TOO_MANY_FAILURES = "the conversation no longer fits the context window: {n} compactions in a row failed ({why})"

_FINAL_OUTCOMES: dict[str, Outcome] = {
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_window",
}
_DESCRIBE_NEXT_MOVED = (
    "Agent.describe_next() is deprecated: the words are the view's now; use fsm.view.describe_next(agent), "
    "or agent.next_step() for the structured answer"
)


def _compactor(options: AgentOptions, model: Model, workspace: Workspace) -> Compactor | None:
    """The passes of ``fsm.compaction`` for *model*'s window when *options* set ``compaction``; else None."""
    if options.compaction is None:
        return None
    from fsm.compaction import PassesCompactor  # only an agent that compacts needs it

    name = getattr(model, "model", None)
    return PassesCompactor.for_model(
        name if isinstance(name, str) else "",
        max_output=options.max_tokens,
        workspace=workspace.root,
        settings=options.compaction,
    )


def _fresh_state(options: AgentOptions, parent: Agent | None) -> AgentState:
    """The data a new agent starts with: a new id (``PARENT.N`` under *parent*) and the limits of *options*."""
    return AgentState(
        agent_id=str(uuid.uuid4()) if parent is None else f"{parent.agent_id}.{parent.data.spawned + 1}",
        parent_id=None if parent is None else parent.agent_id,
        depth=0 if parent is None else parent.depth + 1,
        max_turns=options.max_turns,
        max_model_calls=options.max_model_calls,
        max_budget_usd=options.max_budget_usd,
    )


def _text_of(content: object) -> str | None:
    """A tool_result's content as text: the string, or its text blocks joined; None for anything else."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return None


def _told(jobs: Iterable[Job]) -> list[Block]:
    """The ``<task-notification>`` text blocks telling the model that *jobs* ended."""
    return [{"type": "text", "text": notification(job)} for job in jobs]


class _Commit:
    """What one ``_fire`` hands the machine's callbacks (the event's ``commit``), and what they leave on it."""

    __slots__ = ("adopt", "facts", "notes", "record", "release", "release_all", "step")

    def __init__(
        self, step: Step, notes: tuple[str, ...], adopt: Agent | None, release: Agent | None, release_all: bool
    ) -> None:
        self.step, self.notes = step, notes
        self.adopt, self.release, self.release_all = adopt, release, release_all
        self.facts: Facts | None = None
        """What the guards judge, built when the first one is asked."""
        self.record: Transition | None = None
        """The Transition, once the machine has made the transition."""


class Agent:
    """One agent: its machine, its data (``data``), its tools and its active subagents.

    Args:
        model: anything with the ``Model`` protocol's ``create``.
        workdir: the workspace directory; it must exist.
        max_turns, hooks, approver: as :class:`~fsm.core.options.AgentOptions`' fields (None: the record's).
        options: how the agent runs (:class:`~fsm.core.options.AgentOptions`; its defaults when None).
        data: the agent's starting data (a fresh ``AgentState`` when None), checked against the invariant.
        keywords: :class:`~fsm.core.options.AgentOptions`' other fields (:class:`~fsm.core.options.OptionKeywords`),
            replacing those of *options*.

    Raises:
        ConfigError: a bad setting, a budget with a model that has no known price, or *data* outside the invariant
            (the message names the field and the value).
    """

    _wording: ClassVar[Callable[[NextStep], str]] = str
    """How the deprecated :meth:`describe_next` words the next step; ``import fsm`` lends it
    :func:`fsm.view.nextstep.describe` (the core imports no view)."""

    def __init__(
        self,
        model: Model,
        workdir: str = ".",
        max_turns: int | None = None,
        hooks: Hooks | None = None,
        approver: Approver | None = None,
        *,
        options: AgentOptions | None = None,
        data: AgentState | None = None,
        _parent: Agent | None = None,
        **keywords: Unpack[OptionKeywords],
    ) -> None:
        named = {"max_turns": max_turns, "hooks": hooks, "approver": approver}
        options = AgentOptions.of(options, **{k: v for k, v in named.items() if v is not None}, **keywords)
        policy = options.permissions if options.permissions is not None else Policy()
        reads = ReadMemory(self._result_text) if options.read_dedup else None  # each agent its own
        jobs = Jobs() if _parent is None else None  # the root's: it waits for them; a subagent starts none
        workspace = Workspace(
            workdir,
            bash_timeout=options.bash_timeout,
            extra=policy.directories,
            sandbox=options.sandbox,
            reads=reads,
            jobs=jobs,
        )
        if not workspace.root.is_dir():
            raise ConfigError(f"workdir {workdir} is not a directory; create it or pick another")
        options.check_priced(model)
        self._join(_parent)
        depth = self._depth
        if data is None:
            data = _fresh_state(options, _parent)
        if options.max_parallel is not None:
            data.max_parallel = options.max_parallel
        if _parent is None:
            check_tree(data)
        self._tools = options.toolset(policy, depth=depth)
        self._options = options
        """The options as given; ``opts`` fills in the defaults from what the agent made of them (below)."""
        self._given_mcp = options.mcp_tools
        """The MCP tools the options gave; those its servers' connector gives come after them."""
        self._mcp_notes: tuple[str, ...] = ()
        """What changed in the MCP servers' tools before this step, for its record."""
        self._hooks = options.hooks if options.hooks is not None else default_hooks()
        self._approver: Approver = options.approver if options.approver is not None else deny_unattended
        self._policy, self._max_tokens = policy, options.max_tokens
        self.model = model
        self.workspace = workspace
        if _parent is None:  # prices kept inside the workspace could be forged by what runs in it
            exclude_from_price_cache(workspace.root)
        self.data: AgentState = data
        self._schemas = [t.schema for t in self._tools]
        """The tools as every model call offers them, built once."""
        base = options.system or (parent_system if depth == 0 else child_system)(workspace)
        skills = options.skills if any(t.name == SKILL_TOOL for t in self._tools) else None
        self._skills: Catalog = skills or Catalog()
        """The skills the ``Skill`` tool loads (none without the tool)."""
        self._forks = frozenset(s.name for s in self._skills.for_model if s.fork and _parent is None)
        """The skills whose ``Skill`` call spawns a subagent (``context: fork``; only at the root: depth stays 1)."""
        self.system = compose(base, options.context, listing(self._skills.for_model))
        """What every model call sends as the system prompt."""
        self._compactor = options.compactor if options.compactor is not None else _compactor(options, model, workspace)
        self._measured: tuple[int, int] | None = None
        """The last reply's input tokens and how many messages they covered (None: none since the history
        changed): what the compactor counts the next request from."""
        self._notes: tuple[str, ...] = ()
        """What the PreCompact hooks said, for the record of the compaction under way."""
        self._cancelled = False
        """Set when the parent interrupted this subagent: a step still running in a thread is dropped."""
        self._in_thread = False
        """Whether a thread of ``fsm.core.scheduler`` is stepping this subagent now."""
        self._calling = False
        """Whether a model call of this agent has started and its transition is not committed yet: what a
        parent's Ctrl-C counts (set under the tree's lock, so a call either started before it or never starts)."""
        self._delegates = _parent is None and any(t.name == "task" for t in self._tools)
        """Whether this agent's task calls spawn subagents."""
        self.children: list[Agent] = []
        """The running subagents, in spawn order (their ids are ``data.active``), each answering one pending
        ``task`` call: the first ``len(children)`` pending calls, by the scheduling rule."""
        self.history: list[Transition] = []
        """Every Transition this agent's steps produced, its subagents' included."""
        self._step_started = 0.0
        self._session_source: Literal["startup", "resume"] | None = None
        """On the root: the SessionStart hooks its next prompt fires first (``start_session``), if any."""
        self._session_context: str | None = None
        """On the root: what those hooks said, added to the next prompt's message."""
        self._granted: list[str] = []
        """The allow rules skills granted in the step under way; its transition records them (``granted``)."""
        if _parent is None and data.grants:  # a restored session: what its skills allowed is allowed again
            self._remember(data.grants, "a skill of the resumed session")
        self._chosen_model: str | None = None
        """The model a skill run inline in the step under way names; its transition records it (``skill_model``)."""
        self._skill_model: tuple[str, Model] | None = None
        """``data.model`` and the model that calls it, made once (``_called``)."""
        self._prompt_id: str | None = None
        """On the root: the id of the prompt whose run this is (hooks' ``prompt_id``), new with each prompt."""
        self._ids_seen: tuple[list[Message] | None, int, Message | None, set[str]] = (None, 0, None, set())
        """What ``_tool_use_ids`` read last: (the message list, its length and last message then, the ids)."""
        self._machine = _machine()
        self._events = self._machine.events
        self._steps: dict[State, Callable[[], Transition]] = {name: getattr(self, f"_step_{name}") for name in STATES}

    def _join(self, parent: Agent | None) -> None:
        """Take this agent's place in a tree: under *parent*, sharing its root's lock, approver lock and listeners;
        as a root (*parent* None), making them."""
        self._parent = parent
        if parent is None:
            self._depth, self._root = 0, self
            self._tree_lock, self._approver_lock = threading.RLock(), threading.Lock()
            self._listeners = Listeners(self._tree_lock)
        else:
            self._depth, self._root = parent._depth + 1, parent._root
            self._tree_lock, self._approver_lock = parent._tree_lock, parent._approver_lock
            self._listeners = parent._listeners

    @classmethod
    def restore(
        cls,
        model: Model,
        workdir: str,
        data: AgentState,
        *,
        children: Iterable[AgentState] = (),
        next_seq: int = 1,
        options: AgentOptions | None = None,
        **keywords: Any,
    ) -> Agent:
        """Rebuild an agent, and its running subagents, from saved data (a session journal, a snapshot).

        The machine starts in ``data.state``; nothing is stepped, hooked or recorded on the way.

        Args:
            data: the root agent's data, used as it is (not copied).
            children: the data of the subagents that were running, in order.
            next_seq: the ``seq`` of the next Transition, so a journalled session numbers on without a gap.
            options: as for ``Agent()``; its limits apply to the runs later prompts start. Without it those runs
                take the data's limits (``max_turns``, ``max_model_calls``, ``max_budget_usd``).
            keywords: as for ``Agent()`` (hooks, approver, permissions, tools, max_tokens, system, bash_timeout,
                the limits), replacing those of *options* or the data's.

        Raises:
            ConfigError: the data is outside the invariant (the message names the field and the value), more
                subagents run than the ``max_parallel`` the agent is restored with, or one runs as a custom type
                the options do not define.
        """
        children = list(children)
        parallel = keywords.get("max_parallel", options.max_parallel if options is not None else None)
        check_tree(data, children, max_parallel=parallel)  # the limit the restored agent runs with
        limits = {
            "max_turns": data.max_turns,
            "max_model_calls": data.max_model_calls,
            "max_budget_usd": data.max_budget_usd,
        }
        if options is not None:  # its limits apply
            limits = {}
        agent = cls(model, workdir, options=options, data=data, **{**limits, **keywords})
        for child in children:
            if child.subagent_type is not None and child.subagent_type not in agent._options.agents:
                raise ConfigError(
                    f"subagent {child.agent_id} runs as type {child.subagent_type!r}, which is not defined now; "
                    f"define it again (.claude/agents/{child.subagent_type}.md) to go on"
                )
        agent._listeners.seq = itertools.count(next_seq)
        if agent.busy and agent.state not in ("idle", "connecting"):  # a run past its prompt: no step connects
            agent._connect_servers()
        agent.children.extend(agent._new_child(child) for child in children)
        return agent

    # -- the public API: send, step, run ------------------------------------------------------------------

    def send(self, prompt: str) -> None:
        """Queue *prompt* as the next user message; the next step takes it.

        Raises:
            MisuseError: the agent is not idle, or a prompt is already queued.
            ValueError: *prompt* is not a non-empty string.
        """
        if self.state != "idle":
            raise MisuseError(f"send() needs an idle agent, but it is {self.state}; run() or step() it to idle first")
        if self.data.inbox is not None:
            raise MisuseError("a prompt is already queued; step() to send it first")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"prompt must be a non-empty string (got {prompt!r})")
        self.data.inbox = prompt

    def step(self, *, child: str | None = None) -> Transition:
        """Perform exactly one transition (of this agent, or of a running subagent) and return its record.

        While subagents run, a step moves the one whose turn it is (``fsm.core.scheduler``: round-robin, by the
        data, so a restored agent goes on as the live one would). *child* (a running subagent's id) moves that
        one instead: its next transition, or, once it is idle, this agent's ``subagent_returned`` for it.

        Raises:
            MisuseError: the agent is idle with no prompt queued, or *child* is not running.
            KeyboardInterrupt: after the agent was brought to ``idle`` with outcome ``interrupted``.
        """
        self._step_started = time.time()
        try:
            if child is not None:
                return self._step_child(self._running(child))
            return self._steps[self.data.state]()
        except KeyboardInterrupt:
            self.interrupt()
            raise

    def run(self, prompt: str | None = None) -> str:
        """Step until idle and return the final text; queue *prompt* first when given.

        A reply's ``task`` calls run at once, each subagent in its own thread, up to ``max_parallel``
        (1: one after another, as ``step()`` would; a lone subagent needs no thread); every other call runs
        here, in order.
        """
        if prompt is not None:
            self.send(prompt)
        if not self.busy:
            self.step()  # raises: nothing to do
        while self.busy:
            if len(self.children) > 1:
                run_children(self)
            else:
                self.step()
        return self.data.final_text

    def skip(self, text: str, *, is_error: bool = False, note: str = "skipped: answered without running") -> Transition:
        """Answer the next pending tool call with *text* without running it (the deepest busy agent's).

        Args:
            is_error: send the answer as an error tool_result.
            note: the record's note (printed as ``[HOOK] …``).

        Raises:
            MisuseError: no tool call is pending there.
        """
        self._step_started = time.time()
        mover = self.deepest_busy
        if mover is not self:
            return mover.skip(text, is_error=is_error, note=note)
        moving = self.state == "executing_tools"
        action, call = plan(self.data, self.children, self._delegates, self._forks) if moving else ("", None)
        if action not in ("call", "spawn"):
            raise MisuseError(f"skip needs a pending tool call, but {self.agent_id} is {self.state} with none next")
        return self._fire("tool_ran", tool_call=call, tool_result=ToolOutput(text, is_error=is_error), notes=(note,))

    def interrupt(self, *, model_called: bool = False, error: str = "interrupted by the user") -> None:
        """Bring a busy agent to idle now, as Ctrl-C inside a step does: outcome ``interrupted``, every
        unanswered tool_use answered with an interrupted error result (in the reply's order), and its running
        subagents with it (their *error* is :data:`~fsm.core.reducer.PARENT_INTERRUPTED`). An idle agent is
        left as it is.

        Args:
            model_called: the interruption cut this agent's model call short (the call counts).
        """
        if self.state == "idle":
            return
        with self._tree_lock:
            for child in list(self.children):
                child._cancel()
            interrupted = [tool_result_block(c, ToolOutput(INTERRUPTED, is_error=True)) for c in self.data.pending]
            order = reply_order(self.data)
            answers = sorted(  # a hook's context block (no tool_use_id) stays after the results
                [*self.data.results, *interrupted], key=lambda b: order.get(b.get("tool_use_id", ""), len(order))
            )
            answers = [b for b in answers if not str(b.get("tool_use_id", "")).startswith(TYPED) or order]
            marker = {"type": "text", "text": INTERRUPTED_MARKER}
            killed, notified = self._killed_jobs()
            told = [block for message in killed for block in message["content"]]
            appended: tuple[Message, ...] = ({"role": "user", "content": [*answers, marker, *told]},)
            self._fire(
                "interrupted",
                appended=appended,
                outcome="interrupted",
                error=error,
                release_all=True,
                model_called=model_called and self.state in _HOLDING,
                notified=notified,
            )

    def set_limits(
        self,
        max_turns: int | None = None,
        max_model_calls: int | None = None,
        *,
        max_budget_usd: float | EllipsisType | None = ...,
    ) -> None:
        """Set the limits that the runs started by later prompts take (a run under way keeps its own); a limit
        left out keeps its value (``max_budget_usd=None`` removes the USD budget).

        Raises:
            ConfigError: a value out of range (max_turns 1..30, max_model_calls >= 1, max_budget_usd > 0), or a
                USD budget with a model that has no known price.
        """
        limits = {"max_turns": max_turns, "max_model_calls": max_model_calls}
        changes: dict[str, Any] = {k: v for k, v in limits.items() if v is not None}
        if max_budget_usd is not ...:
            changes["max_budget_usd"] = max_budget_usd
        options = attrs.evolve(self._options, **changes)
        options.check_priced(self.model)
        self._options = options

    def forget_reads(self) -> None:
        """Forget which files this agent has read whole, so each is sent whole on its next ``read_file``: call it
        after rewriting its messages (compaction), where the model may no longer have what it read."""
        if self.workspace.reads is not None:
            self.workspace.reads.forget()

    def _result_text(self, call_id: str) -> str | None:
        """The text of tool call *call_id*'s result in this agent's messages now (what a re-read of an unchanged
        file refers the model to); None when it is not there, or is an error."""
        for message in reversed(self.data.messages):
            content = message["content"]
            if message["role"] == "user" and isinstance(content, list):
                for block in content:
                    if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                        return None if block.get("is_error") else _text_of(block.get("content"))
        return None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hand every future Transition (subagents' too) to *listener*; returns a function that unsubscribes."""
        return self._listeners.subscribe(listener)

    def watch_processes(self, listener: ProcessListener) -> Callable[[], None]:
        """Tell *listener* about every tool call's processes (subagents' too): ``(agent_id, tool_use_id, process,
        running)``, before the command runs (``running=True``) and once they are all gone; returns a function
        that unsubscribes. The journal records them so a resumed run can kill an orphan."""
        return self._listeners.watch_processes(listener)

    def watch_progress(self, listener: ProgressListener) -> Callable[[], None]:
        """Tell *listener* what starts inside each step (subagents' too): model calls, their stream events, tool
        calls (``fsm.core.progress``); returns a function that unsubscribes. While any listener watches, model
        calls stream when the model can."""
        return self._listeners.watch_progress(listener)

    # -- one method per state: I/O, then exactly one trigger ----------------------------------------------

    def _step_idle(self) -> Transition:
        prompt = self.data.inbox
        if prompt is None:
            raise MisuseError("nothing to do: the agent is idle and no prompt is queued; call send(prompt) first")
        extra: str | None = None
        notes: list[str] = []
        if self._parent is None:  # a subagent's prompt is the task call's, not a user's: Claude Code fires none
            notes = self._session_started()
            self._prompt_id = str(uuid.uuid4())
            texts, more = self._hooks.fire_each(self._event("UserPromptSubmit", prompt=prompt))
            notes += more
            blocks = [text for text in texts if isinstance(text, PromptBlock)]
            if blocks:  # Claude Code drops the prompt and ends the run: no call, nothing kept but the record
                message = blocked_prompt_message(blocks, prompt)
                return self._fire(
                    "prompt_blocked", notes=tuple(notes), outcome="prompt_blocked", error=message, prompt=prompt
                )
            extra = "\n\n".join(texts) if texts else None
        compact = self._parent is None and is_compact_prompt(prompt)
        said = prompt
        if self._parent is None and self._options.skills is not None and not compact:
            invoked = slash_skill(prompt, self._options.skills)  # `/name args`: the skill's text is the prompt
            forked = typed_fork(prompt, self._options.skills)
            if forked is not None:  # … or, for a context: fork skill, a subagent's: no turn of the root's
                return self._typed_fork(forked, extra, notes)
            if invoked is not None:
                said = expand_slash(prompt, self._options.skills) or prompt
                self._grant(invoked)
                self._use_model(invoked)
        context = None if compact else self._session_context  # /compact appends no message: it waits
        texts = [t for t in (extra, context) if isinstance(t, str)]
        content: Any = [{"type": "text", "text": t} for t in (said, *texts)] if texts else said
        appended = ({"role": "user", "content": content},)
        if compact:  # a turn of its own: the history is compacted
            options = self._options
            return self._fire(
                "compact_requested",
                instructions=compact_instructions(prompt),
                notes=tuple(notes),
                run_limits=(options.max_turns, options.max_model_calls),
                max_budget_usd=options.max_budget_usd,
            )
        if self._parent is None:  # the root's prompt starts a new run: new limits, fresh budgets
            self._session_context, options = None, self._options
            return self._fire(
                "prompt",
                appended=appended,
                notes=tuple(notes),
                run_limits=(options.max_turns, options.max_model_calls),
                max_budget_usd=options.max_budget_usd,
            )
        with self._tree_lock:
            spent = _budget_spent(self.facts())
            if spent is not None:
                return self._fire("budget_spent", notes=tuple(notes), outcome=spent)
            return self._fire("prompt", appended=appended, notes=tuple(notes))

    def _typed_fork(self, call: Block, extra: str | None, notes: list[str]) -> Transition:
        """``skill_forked``: the root's prompt ``/NAME args`` names a ``context: fork`` skill, so, as in Claude
        Code, the prompt is kept as typed and the skill's text runs as a subagent's prompt (*call*, never sent to
        the model, stands for it); the subagent's answer ends the run (``fork_returned``)."""
        context, self._session_context = self._session_context, None
        texts = [t for t in (extra, context) if isinstance(t, str)]
        said = f"/{call['input']['skill']} {call['input']['args']}".strip()
        content: Any = [{"type": "text", "text": t} for t in (said, *texts)] if texts else said
        options = self._options
        return self._fire(
            "skill_forked",
            tool_call=call,
            appended=({"role": "user", "content": content},),
            notes=tuple(notes),
            run_limits=(options.max_turns, options.max_model_calls),
            max_budget_usd=options.max_budget_usd,
        )

    def start_session(self, source: Literal["startup", "resume"]) -> None:
        """Have this root agent fire the ``SessionStart`` hooks with *source* (``startup``: a new session;
        ``resume``: one resumed or continued) at its next prompt, before ``UserPromptSubmit``, as Claude Code fires
        them when a session opens; what they say reaches the model with that prompt, in a text block after it
        (Claude Code's "SessionStart hook additional context: …").

        Raises:
            MisuseError: this is a subagent.
        """
        if self._parent is not None:
            raise MisuseError("start_session() is for a root agent: a subagent's session is its parent's")
        self._session_source = source

    def _session_started(self) -> list[str]:
        """Fire the SessionStart hooks :meth:`start_session` asked for, if any: their text waits, in
        ``_session_context``, for the next prompt's message; their notices are returned."""
        source, self._session_source = self._session_source, None
        if source is None:
            return []
        self._prompt_id = None  # Claude Code fires them before any prompt: the input has no prompt_id
        text, notes = self._hooks.fire(self._event("SessionStart", source=source))
        if text:
            said = f"<system-reminder>\nSessionStart hook additional context: {text}\n</system-reminder>"
            self._session_context = said if self._session_context is None else f"{self._session_context}\n\n{said}"
        return notes

    def _step_connecting(self) -> Transition:
        """Connect the root's MCP servers, all at once (``AgentOptions.mcp_connect``): their tools join those every
        later request offers, and each server's status is a note of the record; then the run's first model call,
        under the budgets' guards. Ctrl-C here ends every session started (the connector's part) and goes idle."""
        notes = self._connect_servers()
        with self._tree_lock:
            spent = _budget_spent(self.facts())
            if spent is not None:
                return self._fire("budget_spent", notes=notes, outcome=spent)
            return self._fire("connected", notes=notes)

    def _connect_servers(self) -> tuple[str, ...]:
        """Run the root's connector, if it has one still to run: its tools offered from now (and to every subagent
        spawned from now), the connector dropped; its notes."""
        connect = self._options.mcp_connect if self._parent is None else None
        if connect is None:
            return ()
        tools, notes = connect()
        self._offer_mcp(tools, mcp_connect=None)
        return tuple(notes)

    def _refresh_servers(self) -> None:
        """Before the root's model call: when a connected server's tools changed, offer the new list from this call
        on; the change is noted on the step's record."""
        refresh = self._options.mcp_refresh if self._parent is None and self._options.mcp_connect is None else None
        fresh = refresh() if refresh is not None else None
        if fresh is not None:
            tools, notes = fresh
            self._offer_mcp(tools)
            self._mcp_notes = (*self._mcp_notes, *notes)

    def _offer_mcp(self, tools: tuple[Tool, ...], **changes: Any) -> None:
        """Offer *tools* as the connected servers' (beside the MCP tools the options gave from the start)."""
        self._options = attrs.evolve(self._options, mcp_tools=(*self._given_mcp, *tools), **changes)
        self._tools = self._options.toolset(self._policy, depth=self._depth)
        self._schemas = [t.schema for t in self._tools]

    def _step_awaiting_model(self) -> Transition:
        self._refresh_servers()
        full = self._context_full()
        if full is not None:
            return self._fire("context_full", notes=(full,))
        listeners = self._listeners
        progress = listeners.progress
        if progress:  # before the call: what a listener raises here is no model failure
            listeners.tell("model_call", self.data.agent_id, self._depth)
        self._start_call()
        model = self._called()
        try:
            if progress and isinstance(model, StreamingModel):
                reply = model.stream(
                    system=self.system,
                    messages=self.data.messages,
                    tools=self._schemas,
                    max_tokens=self._max_tokens,
                    on_event=functools.partial(listeners.tell_event, self.data.agent_id, self._depth),
                )
            else:
                reply = model.create(
                    system=self.system, messages=self.data.messages, tools=self._schemas, max_tokens=self._max_tokens
                )
        except ModelError as exc:
            if exc.kind == "context_window":
                return self._context_exceeded(str(exc))
            return self._fire("model_failed", error=str(exc), outcome="model_error")
        except Exception as exc:  # whatever the model raised, the call was made: it counts, the run stops cleanly
            return self._fire(
                "model_failed", error=f"the model call raised {type(exc).__name__}: {exc}", outcome="model_error"
            )
        except KeyboardInterrupt:
            self.interrupt(model_called=True)
            raise
        usage = reply.usage
        sent = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        self._measured = (sent, len(self.data.messages)) if sent else None
        reply, renamed = reply.with_unique_ids(self._tool_use_ids())
        appended: tuple[Message, ...] = (
            ({"role": "assistant", "content": list(reply.content)},) if reply.content else ()
        )
        cost = self._price(reply) if self._root.data.max_budget_usd is not None else None
        if reply.tool_uses:
            return self._fire("replied_with_tools", reply=reply, appended=appended, notes=tuple(renamed), cost_usd=cost)
        if reply.stop_reason == "pause_turn":
            with self._tree_lock:  # the guards judge the data after this call counts
                limit = _limit_reached(self.facts(after_call=True, cost_usd=cost))
                if limit == "max_turns":
                    return self._fire("turn_limit", reply=reply, appended=appended, outcome=limit, cost_usd=cost)
                if limit is not None:
                    return self._fire("budget_spent", reply=reply, appended=appended, outcome=limit, cost_usd=cost)
                return self._fire("paused", reply=reply, appended=appended, cost_usd=cost)
        outcome = _FINAL_OUTCOMES.get(reply.stop_reason or "", "end_turn")
        return self._fire("replied_final", reply=reply, appended=appended, outcome=outcome, cost_usd=cost)

    def _step_compacting(self) -> Transition:
        data, compactor = self.data, self._compactor
        self._notes = ()
        if compactor is None:
            return self._compaction_failed("no compactor: this agent cannot shorten its history", called=False)
        block, extra, notes = self._hooks.pre_compact(
            self._event(
                "PreCompact",
                trigger="manual" if data.manual_compaction else "auto",
                custom_instructions=data.compaction_instructions,
            )
        )
        if block is not None:
            return self._compaction_blocked(block.reason, tuple(notes))
        self._notes = tuple(notes)
        plan = compaction_plan(compactor, self._request(), manual=data.manual_compaction, limit=self._limit() or 0)
        replaced = len(data.messages)
        instructions = "\n\n".join(t for t in (data.compaction_instructions, extra) if t) or None
        if not plan.summary:
            info = Compaction("auto", plan.pre_tokens, plan.cheap_tokens, plan.cleared, plan.persisted, replaced)
            return self._compacted("compacted", tuple(plan.messages), info)
        system, request = compactor.summary_request(plan.messages, instructions=instructions)
        if self._listeners.progress:
            self._listeners.tell("model_call", data.agent_id, self._depth)
        self._start_call()
        try:
            reply = self.model.create(system=system, messages=request, tools=[], max_tokens=self._max_tokens)
        except KeyboardInterrupt:
            self.interrupt(model_called=True)
            raise
        except Exception as exc:  # the summary call was made: it counts; the compaction failed
            return self._compaction_failed(f"the summary call failed: {exc}", called=True)
        cost = self._price(reply) if self._root.data.max_budget_usd is not None else None
        summary = reply.text.strip()
        if not summary:
            return self._compaction_failed("the summary call returned no text", called=True, reply=reply, cost=cost)
        history = self._given_back(tuple(compactor.summarized(summary, plan.messages)), plan.messages)
        post = compactor.tokens(Request(self.system, history, self._schemas))
        info = Compaction(plan.trigger, plan.pre_tokens, post, plan.cleared, plan.persisted, replaced)
        return self._compacted("summarized", history, info, reply=reply, cost=cost)

    def _step_executing_tools(self) -> Transition:
        action, target = plan(self.data, self.children, self._delegates, self._forks)
        if action == "child":
            return self._step_child(target)
        if action == "spawn":
            return self._spawn(target)
        if action == "interrupt":
            self.interrupt()
            return self.history[-1]
        if action == "call":
            return self._run_call(target)
        typed = self._typed_answer()
        if typed is not None:  # a typed /NAME's subagent answered: the run ends with its answer, no model call
            killed, notified = self._killed_jobs()
            answer = ToolOutput(_text_of(typed["content"]) or "", is_error=bool(typed.get("is_error")))
            return self._fire(
                "fork_returned",
                appended=({"role": "user", "content": stdout(answer.text)}, *killed),
                tool_result=answer,
                outcome="end_turn",
                notified=notified,
            )
        told, notified = self._ended_jobs()
        results: tuple[Message, ...] = ({"role": "user", "content": [*self.data.results, *told]},)
        with self._tree_lock:
            limit = _limit_reached(self.facts())
            if limit == "max_turns":
                return self._fire("turn_limit", appended=results, outcome=limit, notified=notified)
            if limit is not None:
                return self._fire("budget_spent", appended=results, outcome=limit, notified=notified)
            return self._fire("tools_done", appended=results, notified=notified)

    def _typed_answer(self) -> Block | None:
        """The result block answering a typed ``/NAME``'s call (:meth:`_typed_fork`), once every call is answered."""
        data = self.data
        if self._parent is not None or data.pending or (data.messages and data.messages[-1]["role"] == "assistant"):
            return None
        return next((b for b in data.results if str(b.get("tool_use_id", "")).startswith(TYPED)), None)

    def _step_stopping(self) -> Transition:
        name: HookEventName = "Stop" if self._depth == 0 else "SubagentStop"
        data = self.data
        more, notes = self._hooks.fire(
            self._event(name, messages=data.messages, outcome=data.outcome, stop_hook_active=data.stop_forced)
        )
        outcome = data.outcome
        if isinstance(more, str) and more.strip():
            with self._tree_lock:
                limit = _limit_reached(self.facts())
                if limit is None:
                    told, notified = self._ended_jobs()
                    content: Any = [{"type": "text", "text": more}, *told] if told else more
                    return self._fire(
                        "continue_forced",
                        appended=({"role": "user", "content": content},),
                        notes=tuple(notes),
                        notified=notified,
                    )
                outcome = limit
        appended, notified = self._killed_jobs()  # the run ends: no job outlives it untold
        return self._fire("stopped", notes=tuple(notes), outcome=outcome, appended=appended, notified=notified)

    def _step_awaiting_jobs(self) -> Transition:
        """Wait for a background job to end (its notification wakes the model, a turn under the limits), or for
        the wait ceiling (the jobs are killed and the run fails, outcome ``wait_ceiling``)."""
        jobs, ceiling = self.workspace.jobs, self._options.bg_wait_ceiling
        assert jobs is not None  # the root of a tree with jobs has their registry
        if not jobs.wait(self.data.jobs, ceiling):
            running = [job_id for job_id in self.data.jobs if (job := jobs.get(job_id)) is not None and job.running]
            appended, notified = self._killed_jobs()
            error = (
                f"background jobs still ran after waiting {ceiling:g} s (--bg-wait-ceiling): "
                f"{', '.join(running)} killed"
            )
            return self._fire("wait_ceiling", appended=appended, notified=notified, outcome="wait_ceiling", error=error)
        told, notified = self._ended_jobs()
        woken: tuple[Message, ...] = ({"role": "user", "content": told},)
        with self._tree_lock:  # the turns are as the final reply left them: the table let it wait with one left
            spent = _budget_spent(self.facts())
            if spent is not None:
                return self._fire("budget_spent", appended=woken, outcome=spent, notified=notified)
            return self._fire("job_ended", appended=woken, notified=notified)

    # -- background jobs: what the model is told of them ---------------------------------------------------

    def _ended_jobs(self) -> tuple[list[Block], tuple[str, ...]]:
        """The root's notifications of its tree's jobs that have ended and were not told yet (text blocks, in
        start order), and their ids; nothing for a subagent (the root is told)."""
        jobs = self.workspace.jobs
        if self._parent is not None or not self.data.jobs or jobs is None:
            return [], ()
        ended = jobs.ended(self.data.jobs)
        return _told(ended), tuple(job.id for job in ended)

    def _killed_jobs(self) -> tuple[tuple[Message, ...], tuple[str, ...]]:
        """Kill every job of the tree the model has not been told the end of (the root's run is ending): a user
        message holding their notifications, and their ids; nothing when there are none."""
        jobs = self.workspace.jobs
        if self._parent is not None or not self.data.jobs or jobs is None:
            return (), ()
        jobs.stop_all(self.data.jobs)
        ended = jobs.ended(self.data.jobs)
        return ({"role": "user", "content": _told(ended)},), tuple(job.id for job in ended)

    # -- compaction: when it starts, how it ends ---------------------------------------------------------

    def _request(self) -> Request:
        """The next model call's request, as the compactor measures it."""
        measured = self._measured
        last, counted = measured if measured is not None else (None, 0)
        return Request(self.system, self.data.messages, self._schemas, last, counted)

    def _limit(self) -> int | None:
        """The tokens a request must stay under: the compactor's threshold, or (once the model refused a request
        as too long) nine tenths of the window it named, whichever is smaller; None: no limit is known."""
        threshold = self._compactor.threshold if self._compactor is not None else None
        window = self.data.context_window
        known = None if window is None else window - window // 10
        limits = [n for n in (threshold, known) if n is not None]
        return min(limits) if limits else None

    def _after(
        self, trigger: Trigger, *, after_call: bool = False, turn: bool = True, cost: float | None = None
    ) -> Facts:
        """The facts the table's guards will judge once *trigger* has been reduced (*after_call*: a call made,
        counted as a turn unless not *turn*)."""
        data = self.data
        facts = self.facts(after_call=after_call, cost_usd=cost)
        before = (data.compactions, data.failed_compactions, data.manual_compaction)
        counts = compaction_counts(trigger, data.state, before)
        return attrs.evolve(
            facts,
            turn=facts.turn if turn else data.turn,
            compactions=counts[0],
            failed_compactions=counts[1],
            manual=counts[2],
        )

    def _context_full(self) -> str | None:
        """Why the next request must be compacted first (a note), or None: it is under the limit, there is no
        compactor, or the table allows no more compactions before this call."""
        limit = self._limit()
        if self._compactor is None or limit is None:
            return None
        tokens = self._compactor.tokens(self._request())
        if tokens < limit:
            return None
        with self._tree_lock:
            if first_row("context_full", self.state, self._after("context_full")) is None:
                return None
        return f"compacting: the next request is about {tokens:,} tokens, the limit {limit:,}"

    def context_tokens(self) -> int | None:
        """The tokens this agent's next request would hold, as its compactor counts them (None without one)."""
        return None if self._compactor is None else self._compactor.tokens(self._request())

    def compaction_plan(self) -> Plan | None:
        """What compacting now would do (the debugger shows it before the step); None without a compactor."""
        if self._compactor is None:
            return None
        return compaction_plan(
            self._compactor, self._request(), manual=self.data.manual_compaction, limit=self._limit() or 0
        )

    def context_full_reason(self) -> str | None:
        """Why the next step in ``awaiting_model`` goes to ``compacting`` instead of calling the model, or None."""
        return self._context_full() if self.state == "awaiting_model" else None

    def _context_exceeded(self, error: str) -> Transition:
        """The model refused the request as too long: compact and call again, if the table allows and there is a
        reply to compact; else the run ends with ``context_window`` (as Claude Code's, a refused first prompt makes
        one call)."""
        refused, window = refused_window(error), None
        if refused is not None and refused[0] > 0 and self._compactor is not None:
            # the window in the compactor's own count: its estimate of this request, scaled as the API counted it
            estimate = self._compactor.tokens(self._request())
            window = max(1, refused[1] * estimate // refused[0])
        with self._tree_lock:
            facts = self._after("context_exceeded", after_call=True)
            # a history with no reply yet is the prompt alone: no pass and no summary can make it shorter
            replied = any(m.get("role") == "assistant" for m in self.data.messages)
            if self._compactor is not None and replied and first_row("context_exceeded", self.state, facts) is not None:
                return self._fire("context_exceeded", error=error, window=window)
            return self._fire("model_failed", error=error, outcome="context_window", window=window)

    def _given_back(self, history: tuple[Message, ...], before: list[Message]) -> tuple[Message, ...]:
        """*history* with this agent's todo list and the skills *before* had loaded given back after the summary, as
        text blocks of its first message (``fsm.compaction.reinject``)."""
        from fsm.compaction.reinject import Reinjection

        given = Reinjection(todos=checklist(self.data.todos) or None, skills=skills_in_use(before)).texts()
        if not given or not history or history[0]["role"] != "user":
            return history
        first = history[0]["content"]
        blocks = [{"type": "text", "text": first}] if isinstance(first, str) else list(first)
        return ({"role": "user", "content": [*blocks, *({"type": "text", "text": t} for t in given)]}, *history[1:])

    def _compacted(
        self,
        trigger: Trigger,
        history: tuple[Message, ...],
        info: Compaction,
        *,
        reply: Reply | None = None,
        cost: float | None = None,
    ) -> Transition:
        """``compacted`` or ``summarized`` (a summary call made), or ``budget_spent`` when that spent the budget."""
        called = reply is not None
        self._measured = None
        context, notes = self._hooks.fire(self._event("SessionStart", source="compact"))
        if context:
            history = (*history, {"role": "user", "content": context})
        fields: dict[str, Any] = {"history": history, "compaction": info, "reply": reply, "model_called": called}
        fields["notes"] = (*self._notes, *notes)
        with self._tree_lock:
            facts = self._after(trigger, after_call=called, turn=False, cost=cost)
            row = first_row(trigger, self.state, facts)
            if row is None:
                return self._fire("budget_spent", outcome=_budget_spent(facts), cost_usd=cost, **fields)
            outcome: Outcome | None = "end_turn" if row["dest"] == "idle" else None
            return self._fire(trigger, outcome=outcome, cost_usd=cost, **fields)

    def _compaction_blocked(self, reason: str, notes: tuple[str, ...]) -> Transition:
        """``compaction_blocked``: a PreCompact hook said no; /compact ends, a run goes on uncompacted (Claude
        Code's "continuing uncompacted"), unless its budget is spent."""
        error = f"compaction blocked by a PreCompact hook: {reason}"
        with self._tree_lock:
            facts = self._after("compaction_blocked")
            row = first_row("compaction_blocked", self.state, facts)
            if row is None:
                return self._fire("budget_spent", outcome=_budget_spent(facts), error=error, notes=notes)
            outcome: Outcome | None = "end_turn" if row["dest"] == "idle" else None
            return self._fire("compaction_blocked", outcome=outcome, error=error, notes=(*notes, error))

    def _compaction_failed(
        self, why: str, *, called: bool, reply: Reply | None = None, cost: float | None = None
    ) -> Transition:
        """``compaction_failed``: the run goes on uncompacted, or ends after the third failure in a row (or a
        /compact ends); ``budget_spent`` when the summary call spent the budget."""
        error = f"compaction failed: {why}"
        with self._tree_lock:
            facts = self._after("compaction_failed", after_call=called, turn=False, cost=cost)
            row = first_row("compaction_failed", self.state, facts)
            fields: dict[str, Any] = {"reply": reply, "model_called": called, "cost_usd": cost, "error": error}
            fields["notes"] = self._notes
            if row is None:
                return self._fire("budget_spent", outcome=_budget_spent(facts), **fields)
            if row["dest"] == "stopping":
                fields["error"] = _TOO_MANY_FAILURES.format(n=facts.failed_compactions, why=why)
            outcome: Outcome | None = None if row["dest"] == "awaiting_model" else "context_window"
            return self._fire("compaction_failed", outcome=outcome, **fields)

    # -- what a step in executing_tools does: a tool call, a spawn, a subagent's step or return -----------

    def _run_call(self, call: Block) -> Transition:
        """Run one tool call that is not a spawn (a subagent's ``task`` call is refused)."""
        if call["id"] in self.data.unrunnable:  # cut at max_tokens, or an input that is not an object
            output = ToolOutput(self.data.unrunnable[call["id"]], is_error=True)
            return self._fire("tool_ran", tool_call=call, tool_result=output)
        if call["name"] == "task" and self._depth > 0:
            return self._fire("tool_ran", tool_call=call, tool_result=CANNOT_DELEGATE)
        allowed = self._permit(call)
        loaded: str | None = None
        took = 0.0
        if allowed.denial is not None:
            output = ToolOutput(allowed.denial.reason, is_error=True)
        elif call["name"] == SKILL_TOOL:
            output, loaded = self._load_skill(call["input"] if allowed.input is None else allowed.input)
        else:
            workspace = self.workspace.unconfined() if allowed.unconfined else self.workspace
            if workspace.reads is not None or call["name"] == "bash":  # a read's note, a job's tool_use_id
                workspace = attrs.evolve(workspace, call_id=call["id"])
            listeners = self._listeners
            if listeners.processes:
                told = functools.partial(listeners.tell_processes, self.data.agent_id, call["id"])
                workspace = attrs.evolve(workspace, process_listener=told)
            if listeners.progress:
                listeners.tell("tool_call", self.data.agent_id, self._depth, tool_call=call)
            tool_input = call["input"] if allowed.input is None else allowed.input  # an approver's edit
            began = time.monotonic()
            output = run_tool(self._tools, call["name"], workspace, tool_input)
            took = time.monotonic() - began
        context, post = self._post_tool_use(call, output, took)
        if loaded is not None:  # the skill's text after its result, as Claude Code sends it (a hook's before it)
            context = loaded if context is None else f"{context}\n\n{loaded}"
        notes = (*allowed.notes, *post)
        jobs = self.workspace.jobs
        job = jobs.started_by(call["id"]) if jobs is not None and allowed.denial is None else None
        return self._fire(
            "tool_ran",
            tool_call=call,
            tool_result=output,
            notes=notes,
            denial=allowed.denial,
            context=context,
            job=job,
        )

    def _load_skill(self, tool_input: dict[str, Any]) -> tuple[ToolOutput, str | None]:
        """A ``Skill`` call run here (not forked): its result and the skill's text, or the error that answers it."""
        problem = check_input(REGISTRY[SKILL_TOOL].input_schema, tool_input)
        if problem is not None:
            return ToolOutput(f"Error: {SKILL_TOOL}: {problem}", is_error=True), None
        loaded = load(self._skills, tool_input)
        if isinstance(loaded, str):
            return ToolOutput(loaded, is_error=True), None
        if loaded.skill.fork:  # only the root forks: a subagent cannot start another
            return ToolOutput(f"Error: {loaded.skill.name}: {CANNOT_FORK}", is_error=True), None
        self._grant(loaded.skill)
        self._use_model(loaded.skill)
        return ToolOutput(launching(loaded.skill.name)), loaded.text

    def _use_model(self, skill: Skill) -> None:
        """Have this run's next turns call the model *skill* names, if it names one (Claude Code's ``model`` of a
        skill run inline: the rest of the run; its ``inherit``, or none, keeps the model): the step's transition
        records it, and the reducer keeps it in ``data.model``."""
        if skill.model is not None:
            self._chosen_model = skill.model

    def _called(self) -> Model:
        """The model this agent's turn calls: the one a skill chose (``data.model``), else its own."""
        wanted = self.data.model
        if wanted is None or not hasattr(self.model, "with_model"):
            return self.model
        if self._skill_model is None or self._skill_model[0] != wanted:
            self._skill_model = (wanted, self.model.with_model(wanted))
        return self._skill_model[1]

    def _grant(self, skill: Skill) -> None:
        """Allow what a trusted *skill*'s ``allowed-tools`` name, for the rest of the session (never an untrusted
        folder's: ``fsm.skills.catalog``)."""
        if not skill.trusted:
            return
        self._remember(skill.allowed_tools, f"skill {skill.name}")
        self._granted.extend(skill.allowed_tools)  # journalled with this step's transition (``granted``)

    def _remember(self, rules: Iterable[str], source: str) -> None:
        """Allow what *rules* (as written) match for the rest of the session, those not allowed yet."""
        known = {r.text for r in self._policy.session}
        for text in rules:
            if text not in known:
                self._policy.remember(parse_rule(text, source=source, base=self.workspace.root))

    def _fork(self, call: Block) -> Transition:
        """``subagent_spawned`` for a ``Skill`` call of a ``context: fork`` skill: its text is the subagent's
        prompt; ``tool_ran`` answering why not when it cannot."""
        self._step_started = time.time()
        if typed(call, self.data):  # the user typed it: no permission asked, any skill a user may invoke
            skill = (self._options.skills or Catalog()).get(call["input"].get("skill"))
            if skill is None:  # a resumed session without the skill
                missing = ToolOutput(f"Error: Unknown skill: {call['input'].get('skill')}", is_error=True)
                return self._fire("tool_ran", tool_call=call, tool_result=missing)
            return self._spawn_fork(call, skill, typed_text(skill, str(call["input"].get("args", ""))), ())
        allowed = self._permit(call)
        problem = check_input(REGISTRY[SKILL_TOOL].input_schema, call["input"])
        loaded = load(self._skills, call["input"]) if problem is None else f"Error: {SKILL_TOOL}: {problem}"
        if allowed.denial is not None or isinstance(loaded, str):
            why = allowed.denial.reason if allowed.denial is not None else str(loaded)
            refusal = ToolOutput(why, is_error=True)
            return self._fire(
                "tool_ran", tool_call=call, tool_result=refusal, notes=allowed.notes, denial=allowed.denial
            )
        return self._spawn_fork(call, loaded.skill, loaded.text, allowed.notes)

    def _spawn_fork(self, call: Block, skill: Skill, text: str, notes: tuple[str, ...]) -> Transition:
        """``subagent_spawned``: the forked *skill*'s *text* is a subagent's prompt (its ``agent`` type, else the
        general-purpose one; its ``model``), answering *call*."""
        self._grant(skill)
        kind = skill.agent if skill.agent in self._options.agents else None
        limit = self._options.agents[kind].max_turns if kind is not None else None
        child_id = f"{self.agent_id}.{self.data.spawned + 1}"
        child = self._new_child(
            child_state(self.data, call, child_id, subagent_type=kind, max_turns=limit, prompt=text, model=skill.model)
        )
        _, start_notes = self._hooks.fire(child._event("SubagentStart", prompt=text))
        return self._fire(
            "subagent_spawned",
            tool_call=call,
            child=child.agent_id,
            notes=(*notes, *start_notes),
            adopt=child,
            prompt=text,  # journalled: a snapshot's subagent starts with it (a Skill call has no prompt key)
        )

    def _spawn(self, call: Block) -> Transition:
        """``subagent_spawned`` for the ``task`` call *call*, or ``tool_ran`` answering why it cannot spawn."""
        if call["name"] == SKILL_TOOL:
            return self._fork(call)
        self._step_started = time.time()
        problem = task_problem(call["input"], self._options.agents)
        allowed = self._permit(call)
        refusal = task_refused(allowed.denial, problem)
        if refusal is not None:
            return self._fire(
                "tool_ran", tool_call=call, tool_result=refusal, notes=allowed.notes, denial=allowed.denial
            )
        kind = call["input"].get("subagent_type") or GENERAL_PURPOSE
        known = kind in self._options.agents
        child = self._new_child(
            child_state(
                self.data,
                call,
                f"{self.agent_id}.{self.data.spawned + 1}",
                subagent_type=kind if known else None,
                max_turns=self._options.agents[kind].max_turns if known else None,
            )
        )
        _, start_notes = self._hooks.fire(child._event("SubagentStart", prompt=call["input"]["prompt"]))
        return self._fire(
            "subagent_spawned", tool_call=call, child=child.agent_id, notes=(*allowed.notes, *start_notes), adopt=child
        )

    def _new_child(self, data: AgentState) -> Agent:
        """A subagent sharing this agent's model, workspace, hooks, approver and settings, with *data*; a forked
        skill's model (``data.model``) wins over its type's, which wins over this agent's, as in Claude Code."""
        definition: AgentDefinition | None = self._options.agents.get(data.subagent_type or "")
        wanted = data.model if data.model is not None else definition.model if definition is not None else None
        called = self.model
        if wanted is not None and hasattr(called, "with_model"):
            called = called.with_model(wanted)
        options = self.opts.for_subagent(
            definition,
            system=functools.partial(subagent_system, self.workspace),
            max_turns=self.data.max_turns,
            max_model_calls=self._root.data.max_model_calls,
        )
        return Agent(called, str(self.workspace.root), options=options, data=data, _parent=self)

    def _running(self, child_id: str) -> Agent:
        child = next((c for c in self.children if c.agent_id == child_id), None)
        if child is None:
            running = ", ".join(c.agent_id for c in self.children) or "none"
            raise MisuseError(f"no running subagent {child_id!r} under {self.agent_id} (running: {running})")
        return child

    def _step_child(self, child: Agent) -> Transition:
        """One transition for *child*: its own next one, or, once it is idle, this agent's return of it."""
        if child.busy:
            return child.step()
        return self._return(child)

    def _return(self, child: Agent) -> Transition:
        """``subagent_returned``: the idle *child*'s result answers its task call."""
        self._step_started = time.time()
        call = next(c for c in self.data.pending if c["id"] == child.data.parent_tool_use_id)
        began = child.history[0].started_at if child.history else self._step_started
        output = child.result()
        by_hand = typed(call, self.data)  # a typed /NAME: its answer as it is, no tool hook (no tool was called)
        if call["name"] == SKILL_TOOL and not output.is_error and not by_hand:
            output = ToolOutput(fork_result(str(call["input"].get("skill")), output.text))
        context, notes = (None, []) if by_hand else self._post_tool_use(call, output, self._step_started - began)
        return self._fire(
            "subagent_returned",
            tool_call=call,
            tool_result=output,
            child=child.agent_id,
            outcome=child.outcome,
            notes=tuple(notes),
            release=child,
            context=context,
        )

    def _start_call(self) -> None:
        """Mark a model call as started, unless the parent interrupted this subagent first (then the step is
        dropped before the call: :class:`Abandoned`)."""
        with self._tree_lock:
            if self._cancelled:
                raise Abandoned(f"{self.agent_id} was interrupted before its model call started; no call is made")
            self._calling = True

    def _cancel(self) -> None:
        """Interrupt this subagent for its parent; a step of it still running in a thread will be dropped (a
        model call it had started counts; one it had not started never starts)."""
        with self._tree_lock:
            self._cancelled = True
            self.interrupt(model_called=self._calling, error=PARENT_INTERRUPTED)

    # -- what steps ask on the way: permission, hooks, prices -------------------------------------------

    def _permit(self, call: Block) -> Permit:
        """The permission chain for *call*: every PreToolUse hook, the rules and mode, the approver once."""
        return permit(
            call,
            self._event("PreToolUse", tool_call=call),
            hooks=self._hooks,
            policy=self._policy,
            approver=self._approve,
            workspace=self.workspace,
        )

    def _approve(self, call: Block, ask: Ask) -> bool | Deny | Remember | Edited:
        """The approver, asked one call at a time for the whole tree (subagents run at once), told which
        subagent asks. Rules it remembers are added before the next question is taken up, and a question the rules
        asked is not put when a rule added while it waited allows the call (``a`` covers the queued questions)."""
        asking = ask if self._parent is None else attrs.evolve(ask, agent=self.agent_id)
        with self._approver_lock:
            if ask.by_rules and self._policy.decide(call, self.workspace).behavior == "allow":
                return True
            answer = self._approver(call, asking)
            if isinstance(answer, Remember):
                for text in answer.rules:
                    self._policy.remember(parse_rule(text, source="session", base=self.workspace.root))
                return True
            return answer

    def _post_tool_use(self, call: Block, output: ToolOutput, seconds: float) -> tuple[str | None, list[str]]:
        """Run the PostToolUse hooks (the call took *seconds*); return what they say for the model, as the
        context block Claude Code sends after the tool results, and their notices."""
        event = self._event("PostToolUse", tool_call=call, output=output, duration_ms=max(0, round(seconds * 1000)))
        texts, notes = self._hooks.fire_each(event)
        if not texts:
            return None, notes
        hook = f"PostToolUse:{claude_name(str(call.get('name')))} hook"
        said = "\n".join(
            f'{hook} blocking error from command: "{text.command}": {text}'
            if isinstance(text, BlockingError)
            else f"{hook} additional context: {text}"
            for text in texts
        )
        return f"<system-reminder>\n{said}\n</system-reminder>", notes

    def _event(self, name: HookEventName, **fields: Any) -> HookEvent:
        data, root = self.data, self._root
        if root._prompt_id is None and name != "SessionStart":  # a resumed run under way: its prompt's id is lost
            root._prompt_id = str(uuid.uuid4())
        return HookEvent(
            name,
            data.agent_id,
            self._depth,
            self.workspace,
            tool_calls=data.tool_calls,
            run_tool_calls=root.data.run_tool_calls,
            permission_mode=self._policy.mode,
            context=self._hooks.context,
            prompt_id=root._prompt_id,
            agent_type=None if self._parent is None else data.subagent_type or GENERAL_PURPOSE,
            **fields,
        )

    def _price(self, reply: Reply) -> float | None:
        """*reply*'s price in USD, by the model that answered (else the one asked); None when it has none."""
        name = reply.model or getattr(self.model, "model", None)
        price = price_of(name, reply.usage) if isinstance(name, str) else None
        return None if price is None else price.usd

    def _tool_use_ids(self) -> set[str]:
        """Every tool_use id the conversation holds (the API refuses a repeated one), read from the messages
        appended since the last call: a message list is only ever extended, and one replaced, cut or changed at
        its end is read again in full."""
        messages = self.data.messages
        seen, count, last, ids = self._ids_seen
        if seen is not messages or not 0 < count <= len(messages) or messages[count - 1] is not last:
            count, ids = 0, set()
        for message in messages[count:]:
            if message["role"] == "assistant" and isinstance(message["content"], list):
                ids.update(b["id"] for b in message["content"] if b.get("type") == "tool_use")
        self._ids_seen = (messages, len(messages), messages[-1] if messages else None, ids)
        return ids

    # -- guards: yes/no questions the table asks ---------------------------------------------------------

    def facts(self, *, after_call: bool = False, cost_usd: float | None = None) -> Facts:
        """What the guards know about this agent and its tree now (*after_call*: once the call now made counts,
        with its reply's price *cost_usd*)."""
        root, extra = self._root, int(after_call)
        awaiting = int(root is not self and root.data.state in _HOLDING)
        for child in root.children:
            awaiting += child is not self and child.data.state in _HOLDING
        budget, cost = root.data.max_budget_usd, root.data.run_cost_usd
        if after_call and budget is not None and cost is not None:
            cost = None if cost_usd is None else cost + cost_usd
        return Facts(
            turn=self.data.turn + extra,
            max_turns=self.data.max_turns,
            depth=self._depth,
            active_children=len(self.children),
            max_parallel=self.data.max_parallel,
            run_calls=root.data.run_calls + extra,
            others_awaiting=awaiting,
            max_model_calls=root.data.max_model_calls,
            run_cost_usd=cost,
            max_budget_usd=budget,
            compactions=self.data.compactions,
            failed_compactions=self.data.failed_compactions,
            manual=self.data.manual_compaction,
            jobs=len(root.data.jobs),
            servers=int(root._options.mcp_connect is not None),
        )

    def _judged(self, event: EventData | None) -> Facts:
        """The facts a guard of the table judges: built once per event, since nothing changes the data while
        the machine asks an event's guards (under the tree's lock, after ``reduce``); now, without an event."""
        if event is None:
            return self.facts()
        commit: _Commit = event.kwargs["commit"]
        if commit.facts is None:
            commit.facts = self.facts()
        return commit.facts

    def out_of_turns(self, event: EventData | None = None) -> bool:
        """Whether this agent has used every model call its run allows."""
        return _out_of_turns(self._judged(event))

    def out_of_model_calls(self, event: EventData | None = None) -> bool:
        """Whether the run's budget of model calls is spent (calls granted to agents in awaiting_model count)."""
        return _out_of_model_calls(self._judged(event))

    def out_of_budget_usd(self, event: EventData | None = None) -> bool:
        """Whether the run's cost has reached its USD budget (or is unknown, with a budget set)."""
        return _out_of_budget_usd(self._judged(event))

    def can_spawn(self, event: EventData | None = None) -> bool:
        """Whether this agent may start a subagent now: it is the root and fewer than max_parallel run."""
        return _can_spawn(self._judged(event))

    def out_of_compactions(self, event: EventData | None = None) -> bool:
        """Whether this agent has compacted more than twice since its last reply (the one it would start counted)."""
        return _out_of_compactions(self._judged(event))

    def out_of_compaction_tries(self, event: EventData | None = None) -> bool:
        """Whether three compactions in a row have failed."""
        return _out_of_compaction_tries(self._judged(event))

    def by_hand(self, event: EventData | None = None) -> bool:
        """Whether the compaction under way was asked for by hand (``/compact``)."""
        return _by_hand(self._judged(event))

    def has_jobs(self, event: EventData | None = None) -> bool:
        """Whether this is the root and the tree has background jobs the model has not been told the end of."""
        return _has_jobs(self._judged(event))

    def must_connect(self, event: EventData | None = None) -> bool:
        """Whether this is the root and its MCP servers are configured and not connected yet."""
        return _must_connect(self._judged(event))

    # -- commit and record (the machine's callbacks) ------------------------------------------------------

    def _fire(
        self,
        trigger: Trigger,
        *,
        notes: tuple[str, ...] = (),
        child: str | None = None,
        adopt: Agent | None = None,
        release: Agent | None = None,
        release_all: bool = False,
        **fields: Any,
    ) -> Transition:
        """Fire *trigger* carrying the step's result (*fields*: a Step's; *notes* and *child* go on the record);
        the subagent tree changes with it (*adopt* a new child, *release* a returned one, or all on interruption)."""
        if self._mcp_notes:
            notes, self._mcp_notes = (*self._mcp_notes, *notes), ()
        with self._tree_lock:
            if self._cancelled and trigger != "interrupted":
                raise Abandoned(f"{self.agent_id} was interrupted while this step ran; {trigger} is dropped")
            if self._granted:  # what a skill invoked in this step allowed: the record keeps it for resume
                fields["granted"], self._granted = tuple(self._granted), []
            if self._chosen_model is not None:  # the model a skill run inline in this step names
                fields["skill_model"], self._chosen_model = self._chosen_model, None
            if adopt is not None:  # what a snapshot's subagent needs beyond its call: its type, cap and skill's model
                kind = adopt.data.subagent_type
                fields["subagent_type"], fields["skill_model"] = kind, adopt.data.model
                fields["subagent_max_turns"] = None if kind is None else adopt.data.max_turns
            commit = _Commit(Step(trigger, self.data.state, child=child, **fields), notes, adopt, release, release_all)
            if not self._events[trigger].trigger(self, commit=commit) or commit.record is None:
                raise AssertionError(
                    f"the table refused {trigger!r} in {self.state}: a guard disagrees with the driver"
                )
            self._calling = False  # a call started is counted by this transition (or was not made)
        return commit.record

    def _commit(self, event: EventData) -> None:
        reduce(self.data, event.kwargs["commit"].step, self._root.data)

    def _regraft(self, event: EventData) -> None:
        """The subagent tree changes once the guards have passed: a child adopted, released, or all of them."""
        commit: _Commit = event.kwargs["commit"]
        if commit.adopt is not None:
            self.children.append(commit.adopt)
        if commit.release is not None:
            self.children.remove(commit.release)
        if commit.release_all:
            self.children.clear()

    def _record(self, event: EventData) -> None:
        """Number the Transition, file it in the history of this agent and its parents, hand it to the listeners."""
        commit: _Commit = event.kwargs["commit"]
        step, data, started, listeners = commit.step, self.data, self._step_started, self._listeners
        record = commit.record = Transition(
            next(listeners.seq),
            data.agent_id,
            data.parent_id,
            self._depth,
            step.source,
            step.trigger,
            data.state,
            data.turn,
            step.reply,
            step.tool_call,
            step.tool_result,
            step.error,
            step.outcome,
            step.child,
            step.appended,
            commit.notes,
            started,
            (time.time() - started) * 1000,
            step.model_called,
            step.run_limits,
            step.denial,
            step.max_budget_usd,
            step.cost_usd,
            step.context,
            step.history,
            step.compaction,
            step.instructions,
            step.prompt,
            step.window,
            step.job,
            step.notified,
            step.granted,
            step.subagent_type,
            step.subagent_max_turns,
            step.skill_model,
        )
        agent: Agent | None = self
        while agent is not None:
            agent.history.append(record)
            agent = agent._parent
        if listeners.records:
            listeners.record(record)

    # -- views of the data and the settings ---------------------------------------------------------------

    @property
    def state(self) -> State:
        """The machine's state name (kept in ``data`` so a journal can restore it)."""
        return self.data.state

    @state.setter
    def state(self, value: State) -> None:  # only the machine sets it
        self.data.state = value

    agent_id = property(lambda self: self.data.agent_id, doc="This agent's id; a subagent's is PARENT.N.")
    messages = property(lambda self: self.data.messages, doc="The conversation, in Messages API wire shape.")
    turn = property(lambda self: self.data.turn, doc="Model calls in the current run.")
    max_turns = property(lambda self: self.data.max_turns, doc="Model calls allowed per run.")
    outcome = property(
        lambda self: self.data.outcome, doc="How the last run ended (an ``Outcome`` of fsm.core.vocabulary)."
    )
    parent = property(lambda self: self._parent, doc="The agent that spawned this one (None for the root).")
    prompt_id = property(
        lambda self: self._root._prompt_id,
        doc="The id of the root's prompt whose run this is (hooks' ``prompt_id``); None before the first prompt.",
    )
    depth = property(lambda self: self._depth, doc="0 for the root, 1 for a subagent: counted along ``parent``.")
    tools = property(lambda self: self._tools, doc="The tools offered to the model (never ``task`` below the root).")
    hooks = property(lambda self: self._hooks, doc="The hook registry, shared with subagents.")
    permissions = property(lambda self: self._policy, doc="The mode and rules tool calls are judged by.")
    agents = property(lambda self: self._options.agents, doc="The custom subagent types ``task`` may pick.")
    max_tokens = property(lambda self: self._max_tokens, doc="The ``max_tokens`` of every model call.")
    context = property(lambda self: self._options.context, doc="The project context block in the system prompt.")
    max_model_calls = property(lambda self: self._root.data.max_model_calls, doc="The current run's budget of calls.")
    run_calls = property(lambda self: self._root.data.run_calls, doc="Model calls of the tree in the current run.")
    max_budget_usd = property(lambda self: self._root.data.max_budget_usd, doc="The current run's USD budget.")
    run_cost_usd = property(
        lambda self: self._root.data.run_cost_usd,
        doc="What the replies of the current run cost in USD, with a USD budget (0 without); None: unknown.",
    )

    @property
    def jobs(self) -> Jobs:
        """The background jobs of this agent's tree (``tools.jobs``): the root's (a subagent starts none)."""
        jobs = self._root.workspace.jobs
        assert jobs is not None  # every root's workspace has them
        return jobs

    @property
    def opts(self) -> AgentOptions:
        """The options this agent runs with, every default filled in (its hooks, approver and policy, the tools it
        offers, ``max_parallel``): ``Agent(model, workdir, options=agent.opts)`` builds one like it."""
        return attrs.evolve(
            self._options,
            hooks=self._hooks,
            approver=self._approver,
            permissions=self._policy,
            tools=tuple(t.name for t in self._tools if not t.name.startswith("mcp__")),
            max_parallel=self.data.max_parallel,
        )

    @property
    def approver(self) -> Approver:
        """Answers ``Ask`` decisions for the whole tree; setting it changes ``opts`` and what later subagents get."""
        return self._approver

    @approver.setter
    def approver(self, value: Approver) -> None:
        self._approver = value

    @property
    def servers_pending(self) -> bool:
        """Whether this root's MCP servers are still to connect: its next prompt goes to ``connecting`` (or it is
        there now)."""
        return self._parent is None and self._options.mcp_connect is not None

    @property
    def busy(self) -> bool:
        """Whether a step would move this agent: it is not idle, or a prompt is queued."""
        data = self.data
        return data.state != "idle" or data.inbox is not None

    @property
    def deepest_busy(self) -> Agent:
        """The agent the next step moves: a busy subagent whose turn it is, else this one."""
        return _deepest_busy(self)

    def next_step(self) -> NextStep:
        """What the next step will do, as data (``fsm.view.describe_next(agent)`` says it in words)."""
        return next_step(self)

    def describe_next(self) -> str:
        """What the next step will do, in words. Deprecated: use ``fsm.view.describe_next(agent)``."""
        warnings.warn(_DESCRIBE_NEXT_MOVED, DeprecationWarning, stacklevel=2)
        return Agent._wording(self.next_step())

    def result(self) -> ToolOutput:
        """This (idle) agent's last run as a parent's tool_result: its final text, or why there is none."""
        return subagent_result(self.data, self._root.data)

    def options(self) -> dict[str, Any]:
        """``opts`` as ``Agent()`` keywords, to build another like it (``options=agent.opts`` does the same)."""
        return attrs.asdict(self.opts, recurse=False)

    def __repr__(self) -> str:
        nxt = f" next={self.next_step()}" if self.busy else ""
        outcome = f" outcome={self.outcome}" if self.outcome and self.state == "idle" else ""
        return (
            f"<Agent {self.agent_id} depth={self.depth} state={self.state} "
            f"turn={self.turn}/{self.max_turns}{outcome}{nxt}>"
        )
