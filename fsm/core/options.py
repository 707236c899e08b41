"""How an agent runs: :class:`AgentOptions`, one frozen record of its limits, model settings, tools, permissions
and sandbox, checked when it is made.

``Agent(model, workdir, options=AgentOptions(max_turns=5))`` takes one; ``Agent(model, workdir, max_turns=5)``
builds the same record from its keywords (:class:`OptionKeywords` lists them), and keywords given beside
``options=`` replace those fields. ``agent.opts`` is the record the agent runs with, every default filled in
(its hooks, approver and policy, its tools, ``max_parallel``), so ``Agent(model, workdir, options=agent.opts)``
builds another like it, sharing those objects as a subagent does. Every check raises
:class:`~fsm.errors.ConfigError` with a message that names the field and the value: ``max_turns must be 1..30
(got 31)``.

Limits. ``max_turns`` bounds each agent's model calls per run; ``max_model_calls`` bounds the calls of one run
of the root, subagents included: the root's ``data.run_calls`` counts them (through ``reduce``). Both are
guards on every edge into ``awaiting_model``, and ``out_of_model_calls`` counts the other agents already in
``awaiting_model`` as spent, so being in ``awaiting_model`` *is* holding one granted call. ``max_budget_usd``
(optional) bounds what one run's replies cost: each reply is priced when it comes (``fsm.model.pricing``, with
the model that answered), the price travels on the step, and the root's ``data.run_cost_usd`` sums them; the
guard ``out_of_budget_usd`` on the same edges stops every call that would start once the sum has reached the
budget. A call's price is known only when it answers, so the calls already in flight at that moment may still
add theirs (Claude Code's ``--max-budget-usd`` also checks after each call). A run takes its limits when its
prompt is sent: ``Agent.set_limits`` changes them for the runs later prompts start. Depth is a fact of the tree
(``parent``), never an option: a subagent has no ``task`` tool and ``can_spawn`` is false for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self, TypedDict

import attrs
from attrs import field, frozen

from fsm.compaction.window import CompactSettings
from fsm.core.compacting import Compactor
from fsm.core.limits import BG_WAIT_CEILING
from fsm.core.records import DEFAULT_MAX_TOKENS, MAX_MODEL_CALLS, MAX_PARALLEL, MAX_TURNS
from fsm.core.subagents import AgentDefinition
from fsm.core.validators import Count, Kind, Positive
from fsm.errors import ConfigError
from fsm.model.pricing import unpriced
from fsm.policy.chain import Approver
from fsm.policy.hooks import Hooks
from fsm.policy.judge import Policy
from fsm.policy.rules import mcp_covers
from fsm.skills.catalog import SKILL_TOOL, Catalog
from tools import BASE_TOOL_NAMES, BASH_TIMEOUT, EXTRA_TOOL_NAMES, JOB_TOOL_NAMES, PARENT_TOOLS, REGISTRY, Tool, toolset
from tools.sandbox import Sandbox
from tools.task import task_tool

__all__ = ["AgentOptions", "Connect", "OptionKeywords", "Refresh"]

Connect = Callable[[], tuple[tuple[Tool, ...], tuple[str, ...]]]
"""How a root connects its MCP servers (``fsm.mcp``), in the ``connecting`` step: it returns the connected servers'
tools and one note per server (its status) and per tool left out. It may raise ``KeyboardInterrupt`` (Ctrl-C),
having ended every session it started."""
Refresh = Callable[[], tuple[tuple[Tool, ...], tuple[str, ...]] | None]
"""Asked by the root before each model call: when a connected MCP server's tools changed
(``notifications/tools/list_changed``), every connected server's tools now and a note per change; None: unchanged."""


def _known_tools(instance: object, attribute: attrs.Attribute[Any], value: tuple[str, ...] | None) -> None:
    """Refuses a tool name no tool has, listing the ones there are."""
    unknown = [name for name in value or () if name not in REGISTRY]
    if unknown:
        raise ConfigError(f"unknown tool(s) {', '.join(unknown)} (available: {', '.join(REGISTRY)})")


def _names(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _tool_tuple(value: Iterable[Tool]) -> tuple[Tool, ...]:
    return tuple(value)


def _dollars(value: float | None) -> float | None:
    """A good number of dollars as a float; anything else as it is, for the check to name as it was given."""
    good = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf
    return float(value) if good and value is not None else value


def _types(value: Mapping[str, AgentDefinition] | None) -> dict[str, AgentDefinition]:
    return dict(value or {})


@frozen(kw_only=True)
class AgentOptions:
    """How an agent runs: its limits, model settings, tools, permissions and sandbox.

    Raises:
        ConfigError: a value out of range or of the wrong kind, or an unknown tool name (the message names the
            field and the value).
    """

    max_turns: int = field(default=MAX_TURNS, validator=Count(1, MAX_TURNS, f"1..{MAX_TURNS}"))
    """Model calls allowed per agent per run, 1..``MAX_TURNS`` (30); each run takes it when its prompt is sent."""
    max_model_calls: int = field(default=MAX_MODEL_CALLS, validator=Count(1, None, "an integer >= 1"))
    """Model calls allowed per run of the root agent, its subagents' included, at least 1."""
    max_budget_usd: float | None = field(
        default=None, converter=_dollars, validator=Positive("a number of dollars > 0, or None", optional=True)
    )
    """US dollars one run of the root may spend on model calls, its subagents' included (None: no such budget);
    every model it may call needs a price in ``genai-prices`` (:meth:`check_priced`)."""
    max_parallel: int | None = field(
        default=None, validator=Count(1, MAX_PARALLEL, f"1..{MAX_PARALLEL}", optional=True)
    )
    """Subagents run at once, 1..``MAX_PARALLEL`` (8); None: 4, or the agent's data's own."""
    max_tokens: int = field(default=DEFAULT_MAX_TOKENS, validator=Count(1, None, "at least 1"))
    """The ``max_tokens`` of every model call."""
    compaction: CompactSettings | None = field(
        default=None, validator=Kind(CompactSettings, "a fsm.compaction.CompactSettings or None")
    )
    """Compact with ``fsm.compaction``'s passes, automatic compaction starting where these settings say
    (``CompactSettings()``: Claude Code's thresholds for the model's window); shared with subagents. None, the
    default: no compaction unless *compactor* is given (a request over the window ends the run, ``context_window``).
    The CLI always compacts."""
    tools: tuple[str, ...] | None = field(default=None, converter=_names, validator=_known_tools)
    """Tool names to offer (None: ``PARENT_TOOLS``); a subagent gets these minus ``task``, and tools a bare deny
    rule of *permissions* names are not offered."""
    mcp_tools: tuple[Tool, ...] = field(default=(), converter=_tool_tuple)
    """The connected MCP servers' tools (``fsm.mcp``), offered after *tools* (less those a bare deny rule of
    *permissions* names, ``mcp__server`` among them); shared with subagents, whose custom type may name them."""
    mcp_connect: Connect | None = field(default=None, eq=False)
    """How the root connects its MCP servers, once, in ``connecting`` (its first prompt goes there; the tools
    it returns join *mcp_tools*); None: there is nothing to connect. Subagents never connect (it is not passed
    on): they reuse the root's tools."""
    mcp_refresh: Refresh | None = field(default=None, eq=False)
    """Asked by the root before each model call (``fsm.mcp.refresh``): the connected servers' tools anew when one
    said its list changed, so that call offers the new list (the record notes the change); subagents spawned
    later get it, a running one keeps the list it started with."""
    system: str | None = field(default=None, validator=Kind(str, "a string or None"))
    """The system prompt (None: ours for the agent's depth); *context* is added after it."""
    context: str = field(default="", validator=Kind(str, "a string", optional=False))
    """The project context block (``fsm.core.context``), in the system prompt of this agent and every subagent."""
    bash_timeout: float = field(default=BASH_TIMEOUT, validator=Positive("a number of seconds > 0"))
    """Seconds before a bash command's process group is killed."""
    bg_wait_ceiling: float = field(default=BG_WAIT_CEILING, validator=Positive("a number of seconds > 0"))
    """Seconds a root whose reply was final waits for one of its background jobs to end (``awaiting_jobs``)
    before it kills them and the run fails (outcome ``wait_ceiling``)."""
    sandbox: Sandbox | None = field(default=None, validator=Kind(Sandbox, "a tools.sandbox.Sandbox or None"))
    """The OS sandbox bash commands run in (``tools.sandbox``); None runs them unconfined."""
    read_dedup: bool = field(default=True, validator=Kind(bool, "True or False", optional=False))
    """Answer a ``read_file`` of a file unchanged since this agent last read it whole with a short note, as Claude
    Code does (``tools.reads``); False sends it whole every time."""
    permissions: Policy | None = field(default=None, validator=Kind(Policy, "a Policy or None"))
    """The mode and rules every tool call is judged by (None: ``Policy()``, ``default`` mode and no rules); shared
    with subagents. Its ``directories`` join the workspace boundary."""
    hooks: Hooks | None = field(default=None, validator=Kind(Hooks, "a Hooks registry or None"))
    """The hook registry (None: ``default_hooks()``, a new one per root agent); shared with subagents."""
    approver: Approver | None = field(default=None, validator=Kind(None, "a callable or None"))
    """Answers ``Ask`` decisions (None: ``deny_unattended``); shared with subagents."""
    agents: dict[str, AgentDefinition] = field(factory=dict, converter=_types)
    """The custom subagent types ``task`` may pick with ``subagent_type`` (``fsm.core.subagents``)."""
    skills: Catalog | None = field(default=None, validator=Kind(Catalog, "a fsm.skills.Catalog or None"))
    """The skills the ``Skill`` tool loads and the system prompt lists (``fsm.skills``); shared with subagents.
    None: no skills, no ``Skill`` tool."""
    compactor: Compactor | None = field(default=None, validator=Kind(Compactor, "a Compactor or None"))
    """How the history is measured and shortened (``fsm.core.compacting``); shared with subagents, each of which
    compacts its own history. None: no compaction (a request over the window ends the run, ``context_window``)."""

    @classmethod
    def of(cls, options: AgentOptions | None, **given: Any) -> AgentOptions:
        """*options* with the fields *given* replaced (``Agent()``'s keywords), or a new record of them."""
        if options is None:
            return cls(**given) if given else _DEFAULTS
        return attrs.evolve(options, **given) if given else options

    def check_priced(self, model: object) -> None:
        """Refuse a USD budget when a model this agent or a custom subagent type names has no known price: its
        calls' cost could not be counted (a model without a name is priced by each reply's ``model``).

        Raises:
            ConfigError: ``max_budget_usd`` is set and *model* (its ``model`` name) or a custom type's model has
                no price in ``genai-prices``.
        """
        name = self.unpriced_model(model)
        if name is not None:
            raise ConfigError(
                f"max_budget_usd needs the price of model {name!r}, and genai-prices has none; "
                "use a model it prices, or set no USD budget"
            )

    def unpriced_model(self, model: object) -> str | None:
        """With a USD budget, the name of a model this agent (*model*) or a custom subagent type would call that
        ``genai-prices`` cannot price; None when there is no budget or every model has a price."""
        if self.max_budget_usd is None:
            return None
        return unpriced([getattr(model, "model", None), *(d.model for d in self.agents.values())])

    def toolset(self, policy: Policy, *, depth: int) -> tuple[Tool, ...]:
        """The tools an agent at *depth* offers: ``tools`` (or ``PARENT_TOOLS``, ``TodoWrite``, and ``Skill`` when
        there are skills the model may invoke), less those a bare deny rule of *policy* names, less ``task`` and the
        background jobs' tools below the root (the jobs are the root's); ``task`` lists the custom subagent types,
        if any."""
        names = self.tools if self.tools is not None else tuple(t.name for t in PARENT_TOOLS) + EXTRA_TOOL_NAMES
        if self.skills is None or not self.skills.for_model:
            names = tuple(n for n in names if n != SKILL_TOOL)
        hidden = policy.hidden_tools()
        root_only = ("task", *JOB_TOOL_NAMES)
        offered = [n for n in names if n not in hidden and not (depth > 0 and n in root_only)]
        types = [(d.name, d.description) for d in self.agents.values()]
        mcp = tuple(t for t in self.mcp_tools if not policy.hides(t.name))
        return (*(task_tool(types) if t.name == "task" else t for t in toolset(offered)), *mcp)

    def for_subagent(
        self,
        definition: AgentDefinition | None,
        *,
        system: Callable[[str], str],
        max_turns: int,
        max_model_calls: int,
    ) -> Self:
        """The options of a subagent of an agent running with these: the same settings, shared objects and tools
        (it drops ``task`` itself), its own system prompt (ours for a subagent), the run's *max_turns* and
        *max_model_calls*, no budget or ``max_parallel`` of its own; a custom type (*definition*) brings its
        prompt (made a system prompt by *system*), its tools and its cap on turns (at most *max_turns*)."""
        changes: dict[str, Any] = {"max_turns": max_turns, "max_model_calls": max_model_calls}
        changes.update(system=None, max_budget_usd=None, max_parallel=None, mcp_connect=None, mcp_refresh=None)
        if definition is not None:
            named = definition.tools or BASE_TOOL_NAMES
            builtin = tuple(n for n in named if not n.startswith("mcp__"))
            wanted = [n for n in named if n.startswith("mcp__")]
            mcp = tuple(t for t in self.mcp_tools if any(mcp_covers(n, t.name) for n in wanted))
            changes.update(system=system(definition.prompt), tools=builtin, mcp_tools=mcp)
            changes["max_turns"] = min(definition.max_turns or max_turns, max_turns)  # it lowers the run's cap
        return attrs.evolve(self, **changes)


_DEFAULTS = AgentOptions()
"""The record of an agent built without options (shared: a record never changes, and each agent fills in its
own hooks, approver and policy)."""


class OptionKeywords(TypedDict, total=False):
    """``Agent()``'s keywords that build an :class:`AgentOptions` (``max_turns``, ``hooks`` and ``approver`` are
    its named parameters, positional as they always were); each is the record's field of that name."""

    max_model_calls: int
    max_budget_usd: float | None
    max_parallel: int | None
    max_tokens: int
    compaction: CompactSettings | None
    tools: Iterable[str] | None
    mcp_tools: Iterable[Tool]
    mcp_connect: Connect | None
    mcp_refresh: Refresh | None
    system: str | None
    context: str
    bash_timeout: float
    bg_wait_ceiling: float
    sandbox: Sandbox | None
    read_dedup: bool
    permissions: Policy | None
    agents: Mapping[str, AgentDefinition] | None
    skills: Catalog | None
    compactor: Compactor | None
