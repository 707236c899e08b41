"""The contract corpus: ``claude -p`` command lines a script author writes, each with the fake model's script.

Each :class:`Scenario` is one command line (flags, stdin, settings, workspace files) and the model's side of the
conversation in harness-neutral steps (:mod:`tests.e2e.contract.harness` turns them into each CLI's tool words):

- ``{"text": "done"}`` a final text; ``{"thinking": "…", "text": "…"}`` with a thinking block first;
- ``{"call": "Bash", "input": {"command": "echo hi"}}`` one tool call (``Bash``, ``Read``, ``Write``, ``Edit``,
  ``Agent``; file paths relative to the workspace), ``{"calls": [...]}`` several at once;
- ``{"structured": {...}}`` the final answer of a ``--json-schema`` run;
- ``{"status": 500, "message": "…"}`` an API error (every retry gets it too), ``{"raw": "…"}`` a body sent as is;
- ``{"unless_model": "haiku", "status": 529, "then": {...}}`` the error unless the request names that model;
- ``"wait": SECONDS`` in any step: the request is answered that late (a slow model, to interrupt).

Step N answers the main agent's request that holds N assistant messages; ``sub`` does the same for subagents.
``before`` lists command lines run first in the same workspace and home (to resume or continue a session).
"""

from __future__ import annotations

import json
from typing import Any

from attrs import field, frozen

from tests.e2e.contract.harness import SUBTASK

__all__ = ["SCENARIOS", "Scenario", "by_name"]

STREAM = ("--output-format", "stream-json", "--verbose")
BYPASS = ("--dangerously-skip-permissions",)
DONE = {"text": "done"}


def _settings(**hooks: list[dict[str, Any]]) -> str:
    return json.dumps({"hooks": hooks})


def _hook(command: str, matcher: str | None = None) -> list[dict[str, Any]]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        group["matcher"] = matcher
    return [group]


def _mode(mode: str) -> tuple[str, str]:
    return ("--permission-mode", mode)


def _user(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def _control(subtype: str, request_id: str, **fields: Any) -> str:
    return (
        json.dumps({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}})
        + "\n"
    )


@frozen
class Scenario:
    """One command line of the corpus and the model's script for it."""

    name: str
    argv: tuple[str, ...]
    """The arguments after the program name; ``{session}`` and ``{assistant_uuid}`` are filled in (harness.run)."""
    script: tuple[dict[str, Any], ...] = (DONE,)
    sub: tuple[dict[str, Any], ...] = ()
    """The script of every subagent."""
    stdin: str | tuple[str | None, ...] | None = None
    """Text for stdin, or pieces of it where None waits until the model has been asked (harness.run)."""
    files: dict[str, str] = field(factory=lambda: {"a.txt": "hello\n"})
    before: tuple[tuple[tuple[str, ...], str | None], ...] = ()
    """(argv, stdin) runs made first, in the same workspace and home."""
    why: str = ""
    """What the scenario checks, in a few words."""

    SESSION = "5f0c3c1e-2b7a-4c1d-9e8f-0a1b2c3d4e5f"
    """The session id ``before`` runs create (``--session-id {session}``)."""


BASH = {"call": "Bash", "input": {"command": "echo hi"}}
READ = {"call": "Read", "input": {"file_path": "a.txt"}}
WRITE = {"call": "Write", "input": {"file_path": "b.txt", "content": "new\n"}}
EDIT = {"call": "Edit", "input": {"file_path": "a.txt", "old_string": "hello", "new_string": "howdy"}}
AGENT = {"call": "Agent", "input": {"prompt": f"{SUBTASK} count the files", "subagent_type": "general-purpose"}}
SCHEMA = json.dumps({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
TOUCH = {"call": "Bash", "input": {"command": "touch made.txt"}}
FAILS = {"call": "Bash", "input": {"command": "exit 3"}}
MISSING = {"call": "Read", "input": {"file_path": "nope.txt"}}
NOT_FOUND = {"call": "Edit", "input": {"file_path": "a.txt", "old_string": "absent", "new_string": "x"}}
REVIEWER = json.dumps({"reviewer": {"description": "Reviews code", "prompt": "You review."}})
FIRST = (("-p", "first", "--session-id", "{session}", *STREAM), None)
LOOP = tuple([BASH] * 8)

SKILLS = {
    "a.txt": "hello\n",
    ".claude/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets someone.\nargument-hint: [name]\n---\n"
    "Say hello to $ARGUMENTS.\n",
    ".claude/skills/survey/SKILL.md": "---\nname: survey\ndescription: Surveys a topic.\ncontext: fork\n---\n"
    f"{SUBTASK} survey $ARGUMENTS and report.\n",
    ".claude/commands/deploy.md": "Deploy to $ARGUMENTS.\n",
}
"""A workspace with two skills (one forked) and a command; the forked body starts a subagent's script."""

SCENARIOS: tuple[Scenario, ...] = (
    # Output formats
    Scenario("text_plain", ("-p", "hi")),
    Scenario("json_plain", ("-p", "hi", "--output-format", "json")),
    Scenario("stream_plain", ("-p", "hi", *STREAM)),
    Scenario("stream_without_verbose", ("-p", "hi", "--output-format", "stream-json"), why="a usage error"),
    Scenario("text_tool_then_answer", ("-p", "hi", *BYPASS), script=(BASH, DONE)),
    Scenario("json_tool_then_answer", ("-p", "hi", "--output-format", "json", *BYPASS), script=(BASH, DONE)),
    # Tools
    Scenario("tool_bash", ("-p", "run it", *STREAM, *BYPASS), script=(BASH, DONE)),
    Scenario("tool_bash_fails", ("-p", "run it", *STREAM, *BYPASS), script=(FAILS, DONE)),
    Scenario("tool_read", ("-p", "read it", *STREAM), script=(READ, DONE)),
    Scenario("tool_read_missing", ("-p", "read it", *STREAM), script=(MISSING, DONE)),
    Scenario("tool_write", ("-p", "write it", *STREAM, *BYPASS), script=(WRITE, DONE)),
    Scenario("tool_edit", ("-p", "edit it", *STREAM, *BYPASS), script=(READ, EDIT, DONE)),
    Scenario("tool_edit_not_found", ("-p", "edit it", *STREAM, *BYPASS), script=(READ, NOT_FOUND, DONE)),
    Scenario("tool_two_at_once", ("-p", "both", *STREAM, *BYPASS), script=({"calls": [READ, BASH]}, DONE)),
    Scenario("subagent", ("-p", "delegate", *STREAM, *BYPASS), script=(AGENT, DONE), sub=({"text": "3 files"},)),
    Scenario("subagent_json", ("-p", "delegate", "--output-format", "json", *BYPASS), script=(AGENT, DONE),
             sub=({"text": "3 files"},)),
    # Permission modes and rules
    Scenario("mode_default_write_denied", ("-p", "write it", *STREAM), script=(WRITE, DONE)),
    Scenario("mode_default_bash_denied", ("-p", "run it", *STREAM),
             script=(TOUCH, DONE)),
    Scenario("mode_accept_edits", ("-p", "write it", *STREAM, *_mode("acceptEdits")), script=(WRITE, DONE)),
    Scenario("mode_plan", ("-p", "write it", *STREAM, *_mode("plan")), script=(WRITE, DONE)),
    Scenario("mode_dont_ask", ("-p", "write it", *STREAM, *_mode("dontAsk")), script=(WRITE, DONE)),
    Scenario("mode_bypass", ("-p", "write it", *STREAM, *_mode("bypassPermissions")), script=(WRITE, DONE)),
    Scenario("mode_auto", ("-p", "write it", *STREAM, *_mode("auto")), script=(WRITE, DONE)),
    Scenario("skip_permissions_bash", ("-p", "run it", *STREAM, *BYPASS),
             script=(TOUCH, DONE)),
    Scenario("allowed_tools_rule", ("-p", "run it", *STREAM, "--allowedTools", "Bash(touch:*)"),
             script=(TOUCH, DONE)),
    Scenario("disallowed_tools_rule", ("-p", "run it", *STREAM, *BYPASS, "--disallowedTools", "Bash(touch:*)"),
             script=(TOUCH, DONE)),
    Scenario("settings_deny_rule", ("-p", "write it", *STREAM, *BYPASS, "--settings",
                                    json.dumps({"permissions": {"deny": ["Write"]}})), script=(WRITE, DONE)),
    # Flags of the audit
    Scenario("fallback_model", ("-p", "hi", *STREAM, "--fallback-model", "haiku"),
             script=({"unless_model": "haiku", "status": 529, "message": "Overloaded", "then": DONE},)),
    Scenario("json_schema", ("-p", "who", "--output-format", "json", "--json-schema", SCHEMA),
             script=({"structured": {"name": "Ada"}}, DONE)),
    Scenario("json_schema_stream", ("-p", "who", *STREAM, "--json-schema", SCHEMA),
             script=({"structured": {"name": "Ada"}}, DONE)),
    Scenario("no_session_persistence", ("-p", "hi", *STREAM, "--no-session-persistence")),
    Scenario("session_id", ("-p", "hi", *STREAM, "--session-id", "0d6f4b8e-1c2a-4e3b-8f5d-6a7b8c9d0e1f")),
    Scenario("resume", ("-p", "again", *STREAM, "--resume", "{session}"), before=(FIRST,), script=(DONE, DONE)),
    Scenario("fork_session", ("-p", "again", *STREAM, "--resume", "{session}", "--fork-session"), before=(FIRST,),
             script=(DONE, DONE)),
    Scenario("resume_session_at", ("-p", "again", *STREAM, "--resume", "{session}", "--resume-session-at",
                                   "{assistant_uuid}"), before=(FIRST,), script=(DONE, DONE)),
    Scenario("continue_no_session", ("-p", "hi", "-c", *STREAM)),
    Scenario("continue_after_session", ("-p", "again", "-c", *STREAM), before=(FIRST,), script=(DONE, DONE)),
    Scenario("include_hook_events", ("-p", "run it", *STREAM, *BYPASS, "--include-hook-events", "--settings",
                                     _settings(PreToolUse=_hook("echo checked", "Bash"))), script=(BASH, DONE)),
    Scenario("stream_json_input", ("-p", "--input-format", "stream-json", *STREAM), stdin=_user("one") + _user("two"),
             script=(DONE, DONE)),
    Scenario("stream_json_input_without_p", ("--input-format", "stream-json", *STREAM), stdin=_user("one")),
    Scenario("interrupt_slow_reply", ("--input-format", "stream-json", *STREAM),
             stdin=(_user("one"), None, _control("interrupt", "req_1")), script=({"text": "late", "wait": 10.0},)),
    Scenario("control_set_permission_mode", ("--input-format", "stream-json", *STREAM),
             stdin=_control("set_permission_mode", "req_1", mode="acceptEdits") + _user("write it"),
             script=(WRITE, DONE)),
    Scenario("control_unknown_request", ("--input-format", "stream-json", *STREAM),
             stdin=_control("frobnicate", "req_1") + _user("one")),
    Scenario("replay_user_messages", ("-p", "--input-format", "stream-json", *STREAM, "--replay-user-messages"),
             stdin=_user("one")),
    Scenario("effort", ("-p", "hi", *STREAM, "--effort", "high")),
    Scenario("thinking_reply", ("-p", "hi", *STREAM, "--max-thinking-tokens", "2000"),
             script=({"thinking": "let me see", "text": "done"},)),
    Scenario("betas", ("-p", "hi", *STREAM, "--betas", "files-api-2025-04-14")),
    Scenario("model_alias", ("-p", "hi", "--output-format", "json", "--model", "sonnet")),
    Scenario("agent_flag", ("-p", "hi", *STREAM, "--agent", "reviewer", "--agents",
                            REVIEWER)),
    Scenario("agents_custom_subagent", ("-p", "delegate", *STREAM, *BYPASS, "--agents",
                                        REVIEWER),
             script=({"call": "Agent", "input": {"prompt": f"{SUBTASK} review", "subagent_type": "reviewer"}}, DONE),
             sub=({"text": "fine"},)),
    Scenario("bare", ("-p", "hi", *STREAM, "--bare")),
    Scenario("max_turns_50", ("-p", "hi", *STREAM, "--max-turns", "50"), script=(BASH, DONE)),
    Scenario("max_turns_small", ("-p", "loop", *STREAM, *BYPASS, "--max-turns", "2"), script=LOOP),
    Scenario("max_turns_small_json", ("-p", "loop", "--output-format", "json", *BYPASS, "--max-turns", "1"),
             script=LOOP),
    Scenario("max_turns_not_a_number", ("-p", "hi", "--max-turns", "many"), why="a usage error"),
    Scenario("unknown_option", ("-p", "hi", "--no-such-flag"), why="a usage error"),
    Scenario("output_format_invalid", ("-p", "hi", "--output-format", "xml"), why="a usage error"),
    Scenario("permission_mode_invalid", ("-p", "hi", "--permission-mode", "wild"), why="a usage error"),
    Scenario("option_value_missing", ("-p", "hi", "--model"), why="a usage error"),
    Scenario("prompt_before_p", ("hi", "-p", *STREAM)),
    Scenario("piped_stdin_with_prompt", ("-p", "summarize", *STREAM), stdin="CONTEXT\n"),
    Scenario("stdin_only_prompt", ("-p", *STREAM), stdin="hi from stdin\n"),
    Scenario("system_prompts", ("-p", "hi", *STREAM, "--append-system-prompt", "Be brief.")),
    # API errors
    Scenario("api_500", ("-p", "hi", *STREAM), script=({"status": 500, "message": "Internal server error"},)),
    Scenario("api_500_text", ("-p", "hi"), script=({"status": 500, "message": "Internal server error"},)),
    Scenario("api_529", ("-p", "hi", *STREAM), script=({"status": 529, "message": "Overloaded"},)),
    Scenario("api_400_prompt_too_long", ("-p", "hi", *STREAM),
             script=({"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"},)),
    Scenario("api_400_json", ("-p", "hi", "--output-format", "json"),
             script=({"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"},)),
    Scenario("api_401", ("-p", "hi", *STREAM), script=({"status": 401, "message": "invalid x-api-key"},)),
    Scenario("api_malformed_reply", ("-p", "hi", *STREAM), script=({"raw": "<html>bad gateway</html>",
                                                                   "content_type": "text/html"},)),
    Scenario("api_error_after_a_tool", ("-p", "run it", *STREAM, *BYPASS),
             script=(BASH, {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum"})),
    # Skills
    Scenario("skills_listed_and_loaded", ("-p", "hi", *STREAM, *BYPASS), files=SKILLS,
             script=({"call": "Skill", "input": {"skill": "greet", "args": "Bob"}}, DONE)),
    Scenario("skill_forked_by_the_model", ("-p", "hi", *STREAM, *BYPASS), files=SKILLS,
             script=({"call": "Skill", "input": {"skill": "survey", "args": "the repo"}}, DONE),
             sub=({"text": "surveyed"},)),
    Scenario("skill_forked_typed", ("-p", "/survey the repo", *STREAM, *BYPASS), files=SKILLS,
             sub=({"text": "surveyed"},), why="/name of a context: fork skill runs a subagent, no main turn"),
    Scenario("skill_typed_inline", ("-p", "/greet Alice", *STREAM, *BYPASS), files=SKILLS),
    # Hooks
    Scenario("hook_pre_tool_use_deny", ("-p", "run it", *STREAM, *BYPASS, "--settings", _settings(PreToolUse=_hook(
        "printf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", "
        "\"permissionDecisionReason\": \"no bash here\"}}'", "Bash"))), script=(BASH, DONE)),
    Scenario("hook_pre_tool_use_exit_2", ("-p", "run it", *STREAM, *BYPASS, "--settings", _settings(PreToolUse=_hook(
        "echo 'blocked by policy' >&2; exit 2", "Bash"))), script=(BASH, DONE)),
    Scenario("hook_post_tool_use", ("-p", "run it", *STREAM, *BYPASS, "--settings", _settings(PostToolUse=_hook(
        "printf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"additionalContext\": "
        "\"checked\"}}'", "Bash"))), script=(BASH, DONE)),
    Scenario("hook_stop_blocks_once", ("-p", "hi", *STREAM, "--settings", _settings(Stop=_hook(
        "test -f .stopped || { touch .stopped; echo 'say more' >&2; exit 2; }"))), script=(DONE, DONE)),
    Scenario("hook_user_prompt_submit", ("-p", "hi", *STREAM, "--settings", _settings(UserPromptSubmit=_hook(
        "echo 'the build is green'")))),
    Scenario("hook_user_prompt_submit_blocks", ("-p", "hi", *STREAM, "--settings", _settings(UserPromptSubmit=_hook(
        "echo 'no prompts today' >&2; exit 2")))),
    Scenario("hook_user_prompt_submit_decision_block", ("-p", "hi", *STREAM, "--settings", _settings(
        UserPromptSubmit=_hook("printf '%s' '{\"decision\": \"block\", \"reason\": \"not today\"}'")))),
)  # fmt: skip


def by_name(name: str) -> Scenario:
    """The scenario called *name*."""
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(name)
