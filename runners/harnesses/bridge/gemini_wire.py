"""Google's Gemini API (`generateContent`, `streamGenerateContent`) as our `Model` seam sees it: a
request in, chat messages out; a reply in, the response (or its server-sent events) Gemini CLI reads.

A request is `systemInstruction`, `contents` (turns of role `user` or `model`, each a list of parts)
and `tools` (`functionDeclarations`). A model turn's `text` parts become the assistant's text (its
`thought` parts are left out: the model's own reasoning is not sent back to it) and its
`functionCall` parts its tool calls, by the `id` the endpoint gave each; a user turn's
`functionResponse` parts become tool results (answered by that `id`), its other text a user message.
Images and files become the placeholder (our models read text); Google's own tools (search, code
execution) are not offered, and the generation settings are the job model's, not the request's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from runners.core.messages import AssistantMessage
from runners.harnesses.bridge.wire_parts import (
    IMAGE_PLACEHOLDER,
    WireError,
    arguments_object,
    as_list,
    as_str,
    require,
)

# The endpoint's paths for this API: the model is named in the path (`-m` on Gemini CLI's command line).
PATHS = {"/v1beta/models/{model}:generateContent": "answer", "/v1beta/models/{model}:streamGenerateContent": "stream"}
KEY_HEADERS = ("x-goog-api-key",)  # where a request carries the job's token
_MEDIA = ("inlineData", "fileData")
_STATUS = {"authentication_error": (401, "UNAUTHENTICATED"), "invalid_request_error": (400, "INVALID_ARGUMENT")}


def chat_request(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) in the OpenAI chat format for a Gemini API request body."""
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction")
    if system:
        text = system if isinstance(system, str) else _texts(_parts(system, "systemInstruction"), "systemInstruction")
        messages.append({"role": "system", "content": text})
    for i, turn in enumerate(as_list(body.get("contents"), "contents")):
        require(isinstance(turn, dict), f"contents[{i}] must be an object")
        parts = _parts(turn, f"contents[{i}]")
        role = turn.get("role", "user")
        if role == "model":
            messages.append(_assistant(parts, i))
        elif role == "user":
            messages.extend(_user(parts, i))
        else:
            raise WireError(f"contents[{i}].role must be 'user' or 'model', got {role!r}")
    return messages, chat_tools(body.get("tools"))


def chat_tools(tools: Any) -> list[dict[str, Any]]:
    """The function declarations as chat function tools (their schema whole: `parametersJsonSchema`,
    or `parameters` in the API's own schema, its type names in lower case)."""
    out = []
    for i, tool in enumerate(as_list(tools or [], "tools")):
        require(isinstance(tool, dict), f"tools[{i}] must be an object")
        for j, fn in enumerate(as_list(tool.get("functionDeclarations") or [], f"tools[{i}].functionDeclarations")):
            where = f"tools[{i}].functionDeclarations[{j}]"
            require(isinstance(fn, dict), f"{where} must be an object")
            schema = fn.get("parametersJsonSchema") or _lower_types(fn.get("parameters")) or {"type": "object", "properties": {}}
            out.append({"type": "function", "function": {"name": as_str(fn.get("name"), f"{where}.name"),
                                                          "description": fn.get("description") or "", "parameters": schema}})
    return out


def _parts(turn: dict[str, Any], where: str) -> list[dict[str, Any]]:
    parts = as_list(turn.get("parts"), f"{where}.parts")
    for j, part in enumerate(parts):
        require(isinstance(part, dict), f"{where}.parts[{j}] must be an object")
    return parts


def _texts(parts: list[dict[str, Any]], where: str) -> str:
    """The turn's text: its text parts (not the model's thoughts) joined, media as the placeholder."""
    out = []
    for j, part in enumerate(parts):
        if "text" in part and not part.get("thought"):
            out.append(as_str(part["text"], f"{where}.parts[{j}].text"))
        elif any(k in part for k in _MEDIA):
            out.append(IMAGE_PLACEHOLDER)
    return "\n".join(out)


def _assistant(parts: list[dict[str, Any]], i: int) -> dict[str, Any]:
    calls = []
    for j, part in enumerate(parts):
        if "functionCall" in part:
            call, where = part["functionCall"], f"contents[{i}].parts[{j}].functionCall"
            require(isinstance(call, dict), f"{where} must be an object")
            args = call.get("args") or {}
            require(isinstance(args, dict), f"{where}.args must be an object")
            calls.append({"id": as_str(call.get("id", ""), f"{where}.id"), "type": "function", "function": {
                "name": as_str(call.get("name"), f"{where}.name"), "arguments": json.dumps(args, ensure_ascii=False)}})
    msg: dict[str, Any] = {"role": "assistant", "content": _texts(parts, f"contents[{i}]") or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _user(parts: list[dict[str, Any]], i: int) -> list[dict[str, Any]]:
    """Tool results first (they answer the previous model turn), then the user's own text."""
    results = []
    for j, part in enumerate(parts):
        if "functionResponse" in part:
            answer, where = part["functionResponse"], f"contents[{i}].parts[{j}].functionResponse"
            require(isinstance(answer, dict), f"{where} must be an object")
            results.append({"role": "tool", "tool_call_id": as_str(answer.get("id", ""), f"{where}.id"),
                            "content": _result_text(answer.get("response"), answer.get("parts"))})
    text = _texts([p for p in parts if "functionResponse" not in p], f"contents[{i}]")
    return [*results, {"role": "user", "content": text}] if text or not results else results


def _result_text(response: Any, parts: Any) -> str:
    """A function response as text: Gemini CLI's `output`, `[error] …` before its `error`, else the
    whole object as JSON; media it holds as the placeholder."""
    if isinstance(response, dict) and response and set(response) <= {"output", "error"} and all(isinstance(v, str) for v in response.values()):
        lines = [f"[error] {response['error']}"] if "error" in response else []
        text = "\n".join([*lines, *([response["output"]] if "output" in response else [])])
    else:
        text = "" if response is None else json.dumps(response, ensure_ascii=False)
    return "\n".join(t for t in (text, IMAGE_PLACEHOLDER if isinstance(parts, list) and parts else "") if t)


def _lower_types(schema: Any) -> Any:
    """The API's own schema (`"type": "OBJECT"`) as JSON Schema (`"object"`), recursively."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def reply_body(reply: AssistantMessage, model: str) -> dict[str, Any]:
    """The whole reply as one `GenerateContentResponse`."""
    parts: list[dict[str, Any]] = [{"text": reply.content}] if reply.content else []
    parts += [{"functionCall": {"id": c.id, "name": c.name, "args": arguments_object(c.arguments)}} for c in reply.tool_calls]
    u = reply.usage
    return {"candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": u.input_tokens, "candidatesTokenCount": u.output_tokens,
                              "totalTokenCount": u.input_tokens + u.output_tokens, "cachedContentTokenCount": u.cached_tokens},
            "modelVersion": model, "responseId": uuid.uuid4().hex}


def events(reply: AssistantMessage, model: str) -> Iterator[bytes]:
    """The reply as `streamGenerateContent?alt=sse` sends it: data lines of `GenerateContentResponse`s
    (here one, the whole reply, with its finish reason and usage)."""
    yield f"data: {json.dumps(reply_body(reply, model), ensure_ascii=False)}\r\n\r\n".encode()


def error_body(kind: str, text: str) -> dict[str, Any]:
    """An error as the Gemini API spells it (`{"error": {"code", "message", "status"}}`)."""
    code, status = _STATUS.get(kind, (500, "INTERNAL"))
    return {"error": {"code": code, "message": text, "status": status}}


__all__ = ["IMAGE_PLACEHOLDER", "KEY_HEADERS", "PATHS", "WireError", "chat_request", "chat_tools", "error_body", "events",
           "reply_body"]
