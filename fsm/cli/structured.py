"""``--json-schema``: the final answer as JSON that matches a schema, ``structured_output`` in the result.

Claude Code offers the model a ``StructuredOutput`` tool whose input schema is the user's and ends the run when a
call of it validates. agentfsm keeps its six tools and asks for the answer itself instead: the root's system
prompt gets :func:`instructions`, and a ``Stop`` hook (:func:`stop_hook`) checks the final text with
``jsonschema``; an answer that is not JSON, or does not match, is sent back to the model with the validator's
message (Claude Code's wording, ``Output does not match required schema: …``), at most :data:`RETRIES` times.
:func:`structured` reads the final text once more for the result: the value, or why there is none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fsm.errors import ConfigError
from fsm.policy.hooks import Hook, HookEvent

__all__ = ["RETRIES", "instructions", "load_schema", "stop_hook", "structured"]

RETRIES = 3
"""How many times an answer that does not match is sent back before the run ends without one."""


def load_schema(text: str) -> dict[str, Any]:
    """The JSON Schema ``--json-schema`` gives (JSON text), checked to be one.

    Raises:
        ConfigError: not JSON, not an object, or not a valid schema.
    """
    import jsonschema

    try:
        schema = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--json-schema is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(schema, dict):
        raise ConfigError(f"--json-schema must be a JSON object, a JSON Schema (got {text[:60]!r})")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"--json-schema is not a valid JSON Schema: {exc.message}") from None
    return schema


def instructions(schema: Mapping[str, Any]) -> str:
    """What the root's system prompt says of the answer's form."""
    return (
        "Your final answer must be a single JSON value that matches this JSON Schema, and nothing else: no prose "
        f"before or after it, no code fence.\nJSON Schema: {json.dumps(schema, ensure_ascii=False)}"
    )


def structured(text: str, schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The JSON value of the final answer *text* (a code fence around it is allowed) and None; or None and why
    it does not do (Claude Code's wording for a mismatch)."""
    import jsonschema

    body = text.strip()
    if body.startswith("```"):
        body = body.partition("\n")[2].rstrip().removesuffix("```")
    try:
        value = json.loads(body)
    except ValueError:
        return None, "Output is not JSON: the final answer must be only the JSON value"
    errors = sorted(jsonschema.validators.validator_for(schema)(schema).iter_errors(value), key=lambda e: e.path)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "root"
        return None, f"Output does not match required schema: {where}: {errors[0].message}"
    return value, None


def _final_text(messages: list[dict[str, Any]]) -> str:
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    content = last.get("content", "") if last else ""
    return (
        content if isinstance(content, str) else "".join(b.get("text", "") for b in content if b.get("type") == "text")
    )


def stop_hook(schema: Mapping[str, Any]) -> Hook:
    """A ``Stop`` hook that sends a final answer that does not match *schema* back, at most :data:`RETRIES`
    times in a process."""
    sent = [0]

    def json_schema(event: HookEvent) -> str | None:
        if event.outcome not in (None, "end_turn") or sent[0] >= RETRIES:
            return None
        _, problem = structured(_final_text(event.messages), schema)
        if problem is None:
            return None
        sent[0] += 1
        return f"{problem}. Answer again with only the JSON value."

    return json_schema
