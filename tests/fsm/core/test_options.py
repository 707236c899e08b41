"""Tests for fsm.core.options: AgentOptions' checks and defaults, and what it means for one agent and its subagents."""

from __future__ import annotations

import ast
import inspect
import itertools
import math
import textwrap
from typing import get_type_hints

import attrs
import pytest

from fsm.core.options import AgentOptions, OptionKeywords
from fsm.core.subagents import AgentDefinition
from fsm.errors import ConfigError
from fsm.policy.chain import deny_unattended
from fsm.policy.hooks import Hooks
from fsm.policy.judge import Policy
from fsm.policy.rules import parse_rule
from tools import BASE_TOOL_NAMES, PARENT_TOOLS, REGISTRY
from tools.sandbox import Sandbox

REVIEWER = AgentDefinition("reviewer", "Reviews code.", "You review.", ("read_file",), None, 3)


class TestAgentOptions:
    def test_defaults(self) -> None:
        """A record made with no arguments holds the documented defaults."""
        options = AgentOptions()
        assert (options.max_turns, options.max_model_calls, options.max_budget_usd) == (30, 200, None)
        assert (options.max_parallel, options.max_tokens, options.tools, options.system) == (None, 8000, None, None)
        assert (options.context, options.bash_timeout, options.sandbox) == ("", 120, None)
        assert (options.permissions, options.hooks, options.approver, options.agents) == (None, None, None, {})

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("max_turns", 31, "max_turns must be 1..30 (got 31)"),
            ("max_turns", 0, "max_turns must be 1..30 (got 0)"),
            ("max_turns", True, "max_turns must be 1..30 (got True)"),
            ("max_turns", 2.5, "max_turns must be 1..30 (got 2.5)"),
            ("max_model_calls", 0, "max_model_calls must be an integer >= 1 (got 0)"),
            ("max_model_calls", "5", "max_model_calls must be an integer >= 1 (got '5')"),
            ("max_budget_usd", 0, "max_budget_usd must be a number of dollars > 0, or None (got 0)"),
            ("max_budget_usd", -1.5, "max_budget_usd must be a number of dollars > 0, or None (got -1.5)"),
            ("max_budget_usd", math.inf, "max_budget_usd must be a number of dollars > 0, or None (got inf)"),
            ("max_budget_usd", True, "max_budget_usd must be a number of dollars > 0, or None (got True)"),
            ("max_parallel", 9, "max_parallel must be 1..8 (got 9)"),
            ("max_parallel", 0, "max_parallel must be 1..8 (got 0)"),
            ("max_tokens", 0, "max_tokens must be at least 1 (got 0)"),
            ("max_tokens", "8000", "max_tokens must be at least 1 (got '8000')"),
            ("bash_timeout", 0, "bash_timeout must be a number of seconds > 0 (got 0)"),
            ("bash_timeout", "soon", "bash_timeout must be a number of seconds > 0 (got 'soon')"),
            ("system", 3, "system must be a string or None (got 3)"),
            ("context", None, "context must be a string (got None)"),
            ("sandbox", "bwrap", "sandbox must be a tools.sandbox.Sandbox or None (got 'bwrap')"),
            ("permissions", "default", "permissions must be a Policy or None (got 'default')"),
            ("hooks", [], "hooks must be a Hooks registry or None (got [])"),
            ("approver", True, "approver must be a callable or None (got True)"),
        ],
    )
    def test_bad_values_are_refused_naming_field_and_value(self, field: str, value: object, message: str) -> None:
        """A value out of range or of the wrong kind raises ConfigError naming the field, the expectation and it."""
        with pytest.raises(ConfigError) as info:
            AgentOptions(**{field: value})
        assert str(info.value) == message

    def test_unknown_tools_are_listed_with_the_tools_there_are(self) -> None:
        """A tool name no tool has is refused, with every unknown name and the available ones."""
        with pytest.raises(ConfigError) as info:
            AgentOptions(tools=["bash", "grep", "curl"])
        assert str(info.value) == (
            "unknown tool(s) grep, curl (available: bash, read_file, write_file, edit_file, glob, task, TaskOutput, "
            "TaskStop, TodoWrite, Skill)"
        )

    def test_a_config_error_is_a_value_error(self) -> None:
        """Callers that catch ValueError catch a bad option too."""
        with pytest.raises(ValueError, match="max_turns"):
            AgentOptions(max_turns=45)

    def test_values_are_normalised(self) -> None:
        """Tools become a tuple, a whole-dollar budget a float, and the agent types a dict of their own."""
        types = {"reviewer": REVIEWER}
        options = AgentOptions(tools=["bash", "glob"], max_budget_usd=2, agents=types)
        assert options.tools == ("bash", "glob")
        assert options.max_budget_usd == 2.0 and isinstance(options.max_budget_usd, float)
        assert options.agents == types and options.agents is not types
        assert AgentOptions(agents=None).agents == {}

    def test_frozen(self) -> None:
        """A record never changes; attrs.evolve makes a changed copy, checked again."""
        options = AgentOptions()
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            options.max_turns = 5  # type: ignore[misc]
        with pytest.raises(ConfigError, match=r"^max_turns must be 1\.\.30 \(got 99\)$"):
            attrs.evolve(options, max_turns=99)

    def test_each_check_says_what_it_checks(self) -> None:
        """A field's validator reprs as its expectation, so a debugger print is informative."""
        fields = attrs.fields(AgentOptions)
        assert repr(fields.max_turns.validator) == "<must be 1..30>"
        assert repr(fields.max_parallel.validator) == "<must be 1..8 or None>"
        assert repr(fields.max_budget_usd.validator) == "<must be a number of dollars > 0, or None>"

    def test_every_field_has_a_docstring(self) -> None:
        """Each field is followed by a string saying what it is, in the source."""
        body = ast.parse(textwrap.dedent(inspect.getsource(AgentOptions))).body[0].body  # type: ignore[attr-defined]
        documented = {
            node.target.id
            for node, after in itertools.pairwise(body)
            if isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        }
        assert documented == {f.name for f in attrs.fields(AgentOptions)}


class TestOf:
    def test_without_a_record_the_keywords_make_one(self) -> None:
        """of(None, ...) is AgentOptions(...)."""
        assert AgentOptions.of(None, max_turns=5, tools=["bash"]) == AgentOptions(max_turns=5, tools=("bash",))

    def test_nothing_given_is_the_defaults(self) -> None:
        """of(None) with no keywords is a record of the defaults (one shared record: none ever changes)."""
        assert AgentOptions.of(None) == AgentOptions() and AgentOptions.of(None) is AgentOptions.of(None)

    def test_keywords_replace_the_records_fields(self) -> None:
        """Given keywords replace only those fields of the record; no keywords give the record itself."""
        hooks = Hooks()
        base = AgentOptions(max_turns=5, hooks=hooks, context="ctx")
        assert AgentOptions.of(base) is base
        changed = AgentOptions.of(base, max_turns=7)
        assert (changed.max_turns, changed.hooks, changed.context) == (7, hooks, "ctx")

    def test_replacements_are_checked(self) -> None:
        """A bad keyword beside a good record is refused as in a new record."""
        with pytest.raises(ConfigError, match=r"^max_parallel must be 1\.\.8 \(got 12\)$"):
            AgentOptions.of(AgentOptions(), max_parallel=12)


class TestCheckPriced:
    def test_a_budget_with_an_unpriced_model_is_refused(self) -> None:
        """A USD budget needs a price for the agent's model; the message says what to do."""

        class Named:
            model = "no-such-model"

        with pytest.raises(ConfigError) as info:
            AgentOptions(max_budget_usd=1).check_priced(Named())
        assert str(info.value) == (
            "max_budget_usd needs the price of model 'no-such-model', and genai-prices has none; "
            "use a model it prices, or set no USD budget"
        )

    def test_a_custom_types_model_counts(self) -> None:
        """A custom subagent type's model needs a price too."""
        typed = AgentOptions(max_budget_usd=1, agents={"r": attrs.evolve(REVIEWER, model="nope-model")})
        with pytest.raises(ConfigError, match="'nope-model'"):
            typed.check_priced(object())

    def test_no_budget_needs_no_price(self) -> None:
        """Without a USD budget any model will do, and a model without a name is priced per reply."""

        class Named:
            model = "no-such-model"

        AgentOptions().check_priced(Named())
        AgentOptions(max_budget_usd=1).check_priced(object())


class TestToolset:
    def test_default_tools_at_the_root(self) -> None:
        """Without tools the root offers PARENT_TOOLS, task included, and TodoWrite (Skill only with skills)."""
        assert AgentOptions().toolset(Policy(), depth=0) == (*PARENT_TOOLS, REGISTRY["TodoWrite"])

    def test_below_the_root_task_is_dropped(self) -> None:
        """A subagent is never offered task."""
        assert tuple(t.name for t in AgentOptions().toolset(Policy(), depth=1)) == (*BASE_TOOL_NAMES, "TodoWrite")

    def test_a_bare_deny_rule_hides_its_tool(self) -> None:
        """A tool a bare deny rule names is not offered."""
        policy = Policy(deny=(parse_rule("Bash"),))
        assert [t.name for t in AgentOptions(tools=["bash", "glob"]).toolset(policy, depth=0)] == ["glob"]

    def test_task_lists_the_custom_types(self) -> None:
        """With custom subagent types, the task tool's description names each one."""
        (task,) = AgentOptions(tools=["task"], agents={"reviewer": REVIEWER}).toolset(Policy(), depth=0)
        assert "reviewer: Reviews code." in task.description
        assert "reviewer" not in AgentOptions(tools=["task"]).toolset(Policy(), depth=0)[0].description


class TestForSubagent:
    def test_shares_the_settings_drops_the_roots_own(self) -> None:
        """A subagent gets the shared objects and tools, the run's limits, and no system, budget or max_parallel."""
        hooks, policy = Hooks(), Policy()
        root = AgentOptions(
            hooks=hooks,
            permissions=policy,
            approver=deny_unattended,
            system="root prompt",
            max_budget_usd=1,
            max_parallel=2,
            tools=["bash", "task"],
            context="ctx",
        )
        child = root.for_subagent(None, system=str.upper, max_turns=12, max_model_calls=40)
        assert (child.hooks, child.permissions, child.approver) == (hooks, policy, deny_unattended)
        assert (child.tools, child.context, child.system) == (("bash", "task"), "ctx", None)
        limits = (child.max_turns, child.max_model_calls, child.max_budget_usd, child.max_parallel)
        assert limits == (12, 40, None, None)

    def test_a_custom_type_brings_its_prompt_tools_and_cap(self) -> None:
        """A custom type's prompt becomes the system prompt (through *system*), with its tools and turn cap."""
        child = AgentOptions().for_subagent(REVIEWER, system=str.upper, max_turns=12, max_model_calls=40)
        assert (child.system, child.tools, child.max_turns) == ("YOU REVIEW.", ("read_file",), 3)

    def test_a_custom_type_without_tools_or_cap_takes_the_base_ones(self) -> None:
        """A type naming no tools gets the five base tools, and no cap keeps the run's."""
        plain = attrs.evolve(REVIEWER, tools=None, max_turns=None)
        child = AgentOptions().for_subagent(plain, system=str, max_turns=12, max_model_calls=40)
        assert (child.tools, child.max_turns) == (BASE_TOOL_NAMES, 12)


class TestOptionKeywords:
    def test_pinned_to_the_records_fields(self) -> None:
        """Agent()'s keywords are the record's fields except its three named parameters."""
        named = {"max_turns", "hooks", "approver"}
        fields = {f.name for f in attrs.fields(AgentOptions)}
        assert set(get_type_hints(OptionKeywords)) == fields - named

    def test_sandbox_field_takes_a_sandbox(self) -> None:
        """A Sandbox is a good sandbox value."""
        assert AgentOptions(sandbox=Sandbox()).sandbox == Sandbox()
