"""Every fault at the model boundary ends clean: the installed CLI against a misbehaving fake Messages API.

Each scenario is one ``agentfsm -p … --output-format json`` run against its own fake server and workspace,
then ``agentfsm sessions show`` on the session the result names. Every one must exit 0 or 1, print the
result object on stdout with Claude Code's subtype and its error line in ``errors``, nothing on stderr, and
leave a journal that ``sessions show`` reads (run in this process: the same command without a second
startup). The runs are started together by a module fixture (three at a time; each process mostly waits
for ``import anthropic``), and each scenario is its own test.
"""

from __future__ import annotations

import io
import json
import re
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen

from fsm.cli import sessions
from fsm.cli.app import build_parser
from fsm.cli.result import SUBTYPES
from fsm.model.reply import CUT_CALL
from fsm.testing import text, text_reply, tool_reply, tool_use
from tests.e2e.conftest import Run, base_env, run_agentfsm
from tests.e2e.fake_server import FakeAnthropic, Hang, Raw, Recorded, Status

BASE_URL_HINT = "check ANTHROPIC_BASE_URL"


def results_of(request: Recorded) -> list[dict[str, Any]]:
    """The tool_result blocks the request's last message sends (without the request's cache marker)."""
    return [
        {k: v for k, v in b.items() if k != "cache_control"}
        for b in request.messages[-1]["content"]
        if b.get("type") == "tool_result"
    ]


def one_error_result(start: str) -> Callable[[list[Recorded], Path], None]:
    """A check: the second request answers the one tool call with an error result starting with *start*."""

    def check(requests: list[Recorded], project: Path) -> None:
        (result,) = results_of(requests[1])
        assert result["is_error"] is True and result["content"].startswith(start), result

    return check


def unique_ids(requests: list[Recorded], project: Path) -> None:
    """A check: the last request's tool_use ids are unique and each is answered once, in order."""
    messages = requests[-1].messages
    ids = [b["id"] for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    answers = [
        b["tool_use_id"]
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(set(ids)) == len(ids) and answers == ids, (ids, answers)


def cut_not_written(requests: list[Recorded], project: Path) -> None:
    """A check: the cut write_file never ran, and the model was told why."""
    assert not (project / "f.py").exists()
    assert results_of(requests[1]) == [
        {"type": "tool_result", "tool_use_id": "w1", "content": CUT_CALL, "is_error": True}
    ]


@frozen
class Scenario:
    """One fault: what the server does, and how the run must end."""

    name: str
    script: list[Any]
    code: int
    reason: str
    """The result's ``outcome`` (ours; ``terminal_reason`` is Claude Code's)."""
    stderr: str | None = None
    """A regex the result's one error line must match (text mode prints it); None: no error at all."""
    args: tuple[str, ...] = ()
    retries: int = 0
    """How many ``system``/``api_retry`` messages the stream holds (checked in the stream-json runs, PICKED)."""
    check: Callable[[list[Recorded], Path], None] | None = field(default=None, eq=False)
    refused_port: bool = False
    """Point ANTHROPIC_BASE_URL at a closed port instead of the fake server."""


def message(**fields: Any) -> str:
    """A complete message body with *fields* replaced, as raw JSON."""
    body = {
        "id": "msg_raw",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [text("hi")],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return json.dumps({**body, **fields})


MALFORMED = r"^malformed reply: "
SCENARIOS = [
    # -- a 200 whose body is not a message -----------------------------------------------------------------
    Scenario(
        "html_page",
        [Raw("<html><body>proxy login required</body></html>", "text/html")],
        1,
        "model_error",
        r"^the model API answered 200 with text/html, not a message \('<html><body>proxy login.*'\); "
        + BASE_URL_HINT
        + "$",
    ),
    Scenario("empty_body", [Raw("")], 1, "model_error", r"^the model API answered 200 with an empty body"),
    Scenario(
        "json_null",
        [Raw("null")],
        1,
        "model_error",
        r"^the model API answered 200 with JSON null, not a "
        r"message object",
    ),
    Scenario("json_array", [Raw("[1,2]")], 1, "model_error", r"^the model API answered 200 with JSON \[1, 2\]"),
    Scenario("json_string", [Raw('"hello"')], 1, "model_error", r'^the model API answered 200 with JSON "hello"'),
    Scenario(
        "invalid_json",
        [Raw('{"content": [')],
        1,
        "model_error",
        r"^the model API answered 200 with application/json that is not JSON",
    ),
    Scenario(
        "error_object_200",
        [Raw(json.dumps({"type": "error", "error": {"message": "upstream down"}}))],
        1,
        "model_error",
        MALFORMED + r'the body is an error, not a message \("upstream down"\)$',
    ),
    # -- a message with bad types ----------------------------------------------------------------------------
    Scenario(
        "content_not_a_list",
        [{"content": "hi"}],
        1,
        "model_error",
        MALFORMED + "expected an object with a content list",
    ),
    Scenario(
        "content_missing",
        [Raw(json.dumps({"type": "message", "role": "assistant"}))],
        1,
        "model_error",
        MALFORMED + "expected an object with a content list",
    ),
    Scenario(
        "usage_string",
        [text_reply("hi") | {"usage": {"input_tokens": "lots"}}],
        1,
        "model_error",
        MALFORMED + r'usage\.input_tokens must be a non-negative integer \(got "lots"\)$',
    ),
    Scenario(
        "usage_negative",
        [text_reply("hi") | {"usage": {"output_tokens": -5}}],
        1,
        "model_error",
        MALFORMED + r"usage\.output_tokens must be a non-negative integer \(got -5\)$",
    ),
    Scenario(
        "usage_not_an_object", [Raw(message(usage=[1]))], 1, "model_error", MALFORMED + r"usage must be an object"
    ),
    Scenario(
        "block_not_an_object",
        [{"content": ["hi"]}],
        1,
        "model_error",
        MALFORMED + r'content\[0\] is not a content block \(got "hi"\)$',
    ),
    Scenario(
        "text_without_text",
        [{"content": [{"type": "text"}]}],
        1,
        "model_error",
        MALFORMED + r"text content\[0\] has no text",
    ),
    Scenario(
        "tool_use_without_id",
        [{"content": [{"type": "tool_use", "name": "bash", "input": {}}]}],
        1,
        "model_error",
        MALFORMED + r"tool_use content\[0\] needs a string id \(got null\)$",
    ),
    Scenario(
        "stop_reason_a_number",
        [text_reply("hi", stop_reason=5)],
        1,
        "model_error",  # type: ignore[arg-type]
        MALFORMED + r"stop_reason must be a string \(got 5\)$",
    ),
    Scenario("unknown_block_kept", [{"content": [{"type": "mystery", "x": 1}, text("fine")]}], 0, "end_turn"),
    # -- tool calls that must not run ------------------------------------------------------------------------
    Scenario(
        "tool_input_null",
        [tool_reply(tool_use("bash", None, id="b1")), text_reply("ok")],
        0,
        "end_turn",
        check=one_error_result("Error: bash: input must be an object (got null)"),
    ),
    Scenario(
        "tool_input_string",
        [tool_reply(tool_use("bash", "ls", id="b1")), text_reply("ok")],
        0,
        "end_turn",
        check=one_error_result('Error: bash: input must be an object (got "ls")'),
    ),
    Scenario(
        "tool_input_list",
        [tool_reply(tool_use("glob", [1, 2], id="g1")), text_reply("ok")],
        0,
        "end_turn",
        check=one_error_result("Error: glob: input must be an object (got [1, 2])"),
    ),
    Scenario(
        "duplicate_ids_in_a_reply",
        [
            tool_reply(tool_use("glob", {"pattern": "*"}, id="dup"), tool_use("glob", {"pattern": "*.py"}, id="dup")),
            text_reply("ok"),
        ],
        0,
        "end_turn",
        check=unique_ids,
    ),
    Scenario(
        "duplicate_ids_across_replies",
        [
            tool_reply(tool_use("glob", {"pattern": "*"}, id="dup")),
            tool_reply(tool_use("glob", {"pattern": "*"}, id="dup")),
            text_reply("ok"),
        ],
        0,
        "end_turn",
        check=unique_ids,
    ),
    Scenario(
        "cut_write_file",
        [
            tool_reply(
                tool_use("write_file", {"path": "f.py", "content": "def f():\n return 1 +"}, id="w1"),
                stop_reason="max_tokens",
            ),
            text_reply("redone in parts"),
        ],
        0,
        "end_turn",
        check=cut_not_written,
    ),
    Scenario(
        "cut_text",
        [text_reply("half an answ", stop_reason="max_tokens")],
        1,
        "max_tokens",
        r"^the reply was cut at the max_tokens limit \(8000\); raise --max-tokens$",
    ),
    Scenario(
        "blank_task_prompt",
        [tool_reply(tool_use("task", {"prompt": "  \n "}, id="t1")), text_reply("ok")],
        0,
        "end_turn",
        check=one_error_result("Error: task: 'prompt' must not be blank"),
    ),
    Scenario(
        "task_input_null",
        [tool_reply(tool_use("task", None, id="t1")), text_reply("ok")],
        0,
        "end_turn",
        check=one_error_result("Error: task: input must be an object (got null)"),
    ),
    Scenario(
        "refusal", [text_reply("no", stop_reason="refusal")], 1, "refusal", r"^the model refused to answer this prompt$"
    ),
    Scenario(
        "context_window_stop",
        [text_reply("", stop_reason="model_context_window_exceeded")],
        1,
        "context_window",
        r"^the conversation filled the model's context window; go on from an earlier "
        r"transition with time travel",
    ),
    # -- statuses and time ---------------------------------------------------------------------------------
    Scenario(
        "prompt_too_long",
        [Status(400, "prompt is too long: 210000 tokens > 200000 maximum")],
        1,
        "context_window",
        r"^the conversation no longer fits the model's context window \(prompt is too "
        r"long: 210000 tokens > 200000 maximum\); go on from an earlier transition",
    ),
    Scenario(
        "rate_limited_no_retries",
        [Status(429, "slow down", (("retry-after", "120"),))],
        1,
        "model_error",
        r"^the model API answered 429: slow down$",
        args=("--max-retries", "0"),
    ),
    Scenario(
        "rate_limited_then_ok",
        [Status(429, "slow down", (("retry-after", "3"),)), text_reply("ok")],
        0,
        "end_turn",
        retries=1,
    ),
    Scenario(
        "overloaded_persistent",
        [Status(529, "overloaded")] * 3,
        1,
        "model_error",
        r"^the model API answered 529: overloaded$",
        retries=2,
    ),
    Scenario("overloaded_then_ok", [Status(529, "overloaded"), text_reply("ok")], 0, "end_turn"),
    Scenario(
        "bad_gateway_html",
        [Raw("<html>\n<h1>502 Bad Gateway</h1>\n</html>", "text/html", 502)],
        1,
        "model_error",
        r"^the model API answered 502: text/html \('<html> <h1>502 Bad Gateway</h1> </html>'\)$",
        args=("--max-retries", "0"),
    ),
    Scenario(
        "unauthorized",
        [Status(401, "invalid x-api-key")],
        1,
        "model_error",
        r"^authentication failed \(401: invalid x-api-key\); check ANTHROPIC_API_KEY$",
    ),
    Scenario(
        "model_not_found",
        [Status(404, "model: claude-nope")],
        1,
        "model_error",
        r"^the model API answered 404: model: claude-nope$",
    ),
    Scenario(
        "hung_server",
        [Hang()],
        1,
        "model_error",
        r"^the model did not answer within 1 s at http://127",
        args=("--timeout", "1", "--max-retries", "0"),
    ),
    Scenario(
        "connection_refused",
        [],
        1,
        "model_error",
        r"^cannot reach the model at http://127\.0\.0\.1:\d+",
        args=("--max-retries", "0"),
        refused_port=True,
    ),
]


@frozen
class Outcome:
    """What one scenario did: the run, ``sessions show`` of its session, and the requests the server got."""

    run: Run
    show: Run | None
    requests: list[Recorded]
    project: Path


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _play(scenario: Scenario, root: Path, output: str = "json") -> Outcome:
    project = root / f"{scenario.name}-{output}"
    project.mkdir()
    with FakeAnthropic(list(scenario.script)) as fake:
        url = f"http://127.0.0.1:{_closed_port()}" if scenario.refused_port else fake.url
        env = base_env(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test")

        def agentfsm(*args: str) -> Run:
            return run_agentfsm(project, env, *args)

        run = agentfsm("-p", "do the thing", "--output-format", output, *scenario.args)
        requests = list(fake.messages_requests)
    show = None
    lines = run.stdout.splitlines()
    if lines:
        try:
            session = json.loads(lines[-1]).get("session_id")
        except ValueError:
            session = None
        if session:
            show = _show(session, project)
    return Outcome(run, show, requests, project)


def _show(session: str, project: Path) -> Run:
    """``agentfsm sessions show SESSION`` in *project*, in this process (the command without the startup)."""
    out = io.StringIO()
    args = build_parser().parse_args(["sessions", "show", session, "--cwd", str(project)])
    code = sessions.command(args, out=out)  # its errors are raised, and fail the test
    return Run(code, out.getvalue(), "")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Every scenario played once in json mode, three at a time."""
    root = tmp_path_factory.mktemp("faults")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {s.name: pool.submit(_play, s, root) for s in SCENARIOS}
        yield {name: future.result() for name, future in futures.items()}


def _assert_clean(scenario: Scenario, outcome: Outcome) -> dict[str, Any]:
    run = outcome.run
    assert run.stderr == "", run.stderr  # json modes: errors go in the result, as Claude Code's
    assert run.code == scenario.code, (run.code, run.stdout)
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["type"] == "result" and result["outcome"] == scenario.reason, result
    assert result["subtype"] == SUBTYPES[scenario.reason]  # a failed call is Claude Code's success + is_error
    assert result["is_error"] is (scenario.code == 1)
    errors = result.get("errors", [])
    if scenario.stderr is None:
        assert errors == [], errors
    else:
        assert len(errors) == 1 and re.search(scenario.stderr, errors[0]), errors
    assert outcome.show is not None and outcome.show.code == 0, outcome.show
    assert outcome.show.stdout.startswith(f"Session {result['session_id']} ") and not outcome.show.stderr
    return result


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_fault_ends_clean(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    """The run exits 0/1 with the result object (at most one error line in it), nothing on stderr, and a readable
    journal."""
    outcome = outcomes[scenario.name]
    _assert_clean(scenario, outcome)
    if scenario.check is not None:
        scenario.check(outcome.requests, outcome.project)


def test_more_than_35_scenarios() -> None:
    """README's claim: more than 35 fault scenarios, each with a distinct name."""
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS) > 35


PICKED = [
    "html_page",
    "hung_server",
    "cut_write_file",
    "tool_input_null",
    "prompt_too_long",
    "rate_limited_then_ok",
    "overloaded_persistent",
]


@pytest.mark.parametrize("name", PICKED)
def test_stream_json_ends_with_the_result(name: str, tmp_path: Path) -> None:
    """In stream-json every stdout line is JSON and the last is the result object, whatever the fault; each retry
    is a system/api_retry message, and a failed call ends with the synthetic assistant message."""
    scenario = next(s for s in SCENARIOS if s.name == name)
    outcome = _play(scenario, tmp_path, "stream-json")
    _assert_clean(scenario, outcome)
    events = [json.loads(line) for line in outcome.run.stdout.splitlines()]
    assert events[0]["type"] == "system" and events[-1]["type"] == "result"
    assert {e["type"] for e in events[1:-1]} <= {"transition", "assistant", "user", "system"}
    assert sum(e.get("subtype") == "api_retry" for e in events) == scenario.retries
    assistants = [e for e in events if e["type"] == "assistant"]
    failed = scenario.reason in ("model_error", "context_window")
    assert bool(assistants) and (assistants[-1]["message"]["model"] == "<synthetic>") is failed
