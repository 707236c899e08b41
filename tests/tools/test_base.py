"""Tests for tools/base.py: schemas, input checking, the registry and run_tool."""

from __future__ import annotations

import pytest

from tools import (
    BASE_TOOL_NAMES,
    BASE_TOOLS,
    PARENT_TOOLS,
    REGISTRY,
    Tool,
    ToolOutput,
    Workspace,
    check_input,
    run_tool,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "count": {"type": "integer", "minimum": 1},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
    },
    "required": ["name"],
}


class TestCheckInput:
    def test_valid_input_passes(self) -> None:
        """Input that fits the schema gives None."""
        assert check_input(SCHEMA, {"name": "x", "count": 2, "ratio": 0.5, "flag": True}) is None

    def test_optional_keys_may_be_absent(self) -> None:
        """Only the required keys must be present."""
        assert check_input(SCHEMA, {"name": "x"}) is None

    @pytest.mark.parametrize(("value", "kind"), [([], "list"), ("x", "str"), (None, "NoneType"), (3, "int")])
    def test_non_object_is_refused(self, value: object, kind: str) -> None:
        """Input that is not a dict is refused, naming its type."""
        assert check_input(SCHEMA, value) == f"input must be an object (got {kind})"

    def test_missing_required(self) -> None:
        """A missing required key is named."""
        assert check_input(SCHEMA, {"count": 1}) == "missing required parameter 'name'"

    def test_unknown_key(self) -> None:
        """An unknown key is named along with the expected ones."""
        assert check_input(SCHEMA, {"name": "x", "size": 1}) == (
            "unknown parameter 'size' (expected name, count, ratio, flag)"
        )

    def test_wrong_type(self) -> None:
        """A value of the wrong JSON type is refused with the value shown."""
        assert check_input(SCHEMA, {"name": 5}) == "'name' must be string (got 5)"

    def test_bool_is_not_an_integer(self) -> None:
        """True is refused where an integer is expected, although bool subclasses int."""
        assert check_input(SCHEMA, {"name": "x", "count": True}) == "'count' must be integer (got True)"

    def test_bool_is_not_a_number(self) -> None:
        """False is refused where a number is expected."""
        assert check_input(SCHEMA, {"name": "x", "ratio": False}) == "'ratio' must be number (got False)"

    def test_float_is_not_an_integer(self) -> None:
        """2.0 is refused where an integer is expected."""
        assert check_input(SCHEMA, {"name": "x", "count": 2.0}) == "'count' must be integer (got 2.0)"

    def test_int_is_a_number(self) -> None:
        """An integer is accepted where a number is expected."""
        assert check_input(SCHEMA, {"name": "x", "ratio": 3}) is None

    def test_min_length(self) -> None:
        """An empty string is refused under minLength 1."""
        assert check_input(SCHEMA, {"name": ""}) == "'name' must not be empty"

    def test_minimum(self) -> None:
        """An integer below the minimum is refused with the bound and the value."""
        assert check_input(SCHEMA, {"name": "x", "count": 0}) == "'count' must be >= 1 (got 0)"


def _schema(name: str) -> dict[str, object]:
    return dict(REGISTRY[name].input_schema)


class TestToolsets:
    def test_base_names(self) -> None:
        """The base toolset is exactly the five file and shell tools, in order."""
        assert tuple(t.name for t in BASE_TOOLS) == BASE_TOOL_NAMES
        assert BASE_TOOL_NAMES == ("bash", "read_file", "write_file", "edit_file", "glob")

    def test_parent_adds_task_and_the_job_tools(self) -> None:
        """The parent toolset is the base toolset plus task, TaskOutput and TaskStop."""
        assert [t.name for t in PARENT_TOOLS] == [*BASE_TOOL_NAMES, "task", "TaskOutput", "TaskStop"]

    @pytest.mark.parametrize(
        ("name", "properties", "required", "path_param"),
        [
            (
                "bash",
                {"command": "string", "timeout": "number", "description": "string", "run_in_background": "boolean"},
                ["command"],
                None,
            ),
            ("read_file", {"path": "string", "limit": "integer"}, ["path"], "path"),
            ("write_file", {"path": "string", "content": "string"}, ["path", "content"], "path"),
            (
                "edit_file",
                {"path": "string", "old_text": "string", "new_text": "string"},
                ["path", "old_text", "new_text"],
                "path",
            ),
            ("glob", {"pattern": "string"}, ["pattern"], None),
        ],
    )
    def test_schema_contract(
        self, name: str, properties: dict[str, str], required: list[str], path_param: str | None
    ) -> None:
        """Each tool's parameter names, types and required keys are the contract's."""
        schema = _schema(name)
        assert schema["type"] == "object"
        assert {k: v["type"] for k, v in schema["properties"].items()} == properties  # type: ignore[attr-defined]
        assert schema["required"] == required
        assert REGISTRY[name].path_param == path_param
        assert REGISTRY[name].description.strip()

    def test_read_file_limit_is_at_least_one(self) -> None:
        """read_file's limit has minimum 1."""
        assert _schema("read_file")["properties"]["limit"]["minimum"] == 1  # type: ignore[index]

    def test_api_schema_shape(self) -> None:
        """Tool.schema is the Messages API's name/description/input_schema dict."""
        schema = REGISTRY["glob"].schema
        assert set(schema) == {"name", "description", "input_schema"}
        assert schema["name"] == "glob"


def _call(workspace: Workspace, name: str, tool_input: object) -> ToolOutput:
    return run_tool(BASE_TOOLS, name, workspace, tool_input)


class TestRunTool:
    def test_unknown_tool_names_it_and_the_choices(self, workspace: Workspace) -> None:
        """An unknown tool is an error result naming it and the tools available."""
        out = _call(workspace, "rm_rf", {})
        assert out == ToolOutput(
            "Error: unknown tool 'rm_rf' (available: bash, read_file, write_file, edit_file, glob)",
            is_error=True,
        )

    @pytest.mark.parametrize(
        ("name", "tool_input", "text"),
        [
            ("bash", {}, "Error: bash: missing required parameter 'command'"),
            ("bash", {"command": ["ls"]}, "Error: bash: 'command' must be string (got ['ls'])"),
            (
                "bash",
                {"command": "ls", "cwd": "/"},
                "Error: bash: unknown parameter 'cwd' (expected command, timeout, description, run_in_background)",
            ),
            ("bash", {"command": "ls", "timeout": "5"}, "Error: bash: 'timeout' must be number (got '5')"),
            ("bash", "ls", "Error: bash: input must be an object (got str)"),
            ("read_file", {"limit": 3}, "Error: read_file: missing required parameter 'path'"),
            ("read_file", {"path": "a", "limit": True}, "Error: read_file: 'limit' must be integer (got True)"),
            ("read_file", {"path": "a", "limit": 0}, "Error: read_file: 'limit' must be >= 1 (got 0)"),
            ("read_file", {"path": "a", "limit": "5"}, "Error: read_file: 'limit' must be integer (got '5')"),
            ("read_file", {"path": None}, "Error: read_file: 'path' must be string (got None)"),
            ("write_file", {"path": "a"}, "Error: write_file: missing required parameter 'content'"),
            ("write_file", {"path": "a", "content": 5}, "Error: write_file: 'content' must be string (got 5)"),
            (
                "edit_file",
                {"path": "a"},
                "Error: edit_file: missing required parameter 'old_text', 'new_text'",
            ),
            ("edit_file", [], "Error: edit_file: input must be an object (got list)"),
            ("glob", {"pattern": "*", "path": "."}, "Error: glob: unknown parameter 'path' (expected pattern)"),
            ("glob", None, "Error: glob: input must be an object (got NoneType)"),
        ],
    )
    def test_bad_arguments_are_error_results(
        self, workspace: Workspace, name: str, tool_input: object, text: str
    ) -> None:
        """Input that does not fit the schema never reaches the handler and comes back as an error result."""
        assert _call(workspace, name, tool_input) == ToolOutput(text, is_error=True)

    def test_handler_exception_becomes_error_result(self, workspace: Workspace) -> None:
        """An exception from a handler is reported with the tool name, type and message."""

        def broken(ws: Workspace) -> ToolOutput:
            raise RuntimeError("boom")

        tools = [Tool("broken", "Always fails.", {"type": "object", "properties": {}}, broken)]
        assert run_tool(tools, "broken", workspace, {}) == ToolOutput(
            "Error: broken: RuntimeError: boom", is_error=True
        )

    def test_keyboard_interrupt_passes(self, workspace: Workspace) -> None:
        """KeyboardInterrupt in a handler is not swallowed."""

        def interrupted(ws: Workspace) -> ToolOutput:
            raise KeyboardInterrupt

        tools = [Tool("slow", "Interrupted.", {"type": "object", "properties": {}}, interrupted)]
        with pytest.raises(KeyboardInterrupt):
            run_tool(tools, "slow", workspace, {})

    def test_outside_path_is_an_error_result(self, workspace: Workspace) -> None:
        """A file tool given a path outside a confined workspace returns the boundary error."""
        out = _call(workspace, "read_file", {"path": "../secret.txt"})
        assert out == ToolOutput(f"Error: ../secret.txt is outside the workspace ({workspace.root})", is_error=True)

    def test_tool_without_handler_is_unknown(self, workspace: Workspace) -> None:
        """task has no handler in tools/, so run_tool reports it as unknown instead of crashing."""
        out = run_tool(PARENT_TOOLS, "task", workspace, {"prompt": "x"})
        assert out.is_error
        assert out.text.startswith("Error: unknown tool 'task'")
