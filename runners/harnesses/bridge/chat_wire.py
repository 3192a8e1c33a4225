"""The OpenAI Chat Completions API as our `Model` seam sees it, for a harness that speaks it (our own
models' format: a request's messages and tools pass through checked; a reply becomes one
`chat.completion`, or its chunks when streamed).

Content given as parts is read as its text parts (an image becomes the placeholder); a tool call's
arguments pass on as the model wrote them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from runners.core.messages import AssistantMessage
from runners.harnesses.bridge.wire_parts import (
    WireError,
    as_list,
    as_str,
    require,
    text_of,
)

PATHS = {"/v1/chat/completions": "answer"}  # the endpoint's paths for this API
KEY_HEADERS = ("authorization",)  # where a request carries the job's token (`Bearer ` before it, or not)
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


def chat_request(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) of a Chat Completions request body, each message checked and kept to what
    our models read."""
    messages: list[dict[str, Any]] = []
    for i, msg in enumerate(as_list(body.get("messages"), "messages")):
        require(isinstance(msg, dict), f"messages[{i}] must be an object")
        role = _ROLES.get(msg.get("role"))
        require(role is not None, f"messages[{i}].role must be one of {sorted(_ROLES)}")
        out: dict[str, Any] = {"role": role, "content": _text_of(msg.get("content"), f"messages[{i}].content")}
        if role == "assistant" and msg.get("tool_calls"):
            out["tool_calls"] = [_call(c, f"messages[{i}].tool_calls[{j}]") for j, c in enumerate(as_list(msg["tool_calls"], "tool_calls"))]
            out["content"] = out["content"] or None
        if role == "tool":
            out["tool_call_id"] = as_str(msg.get("tool_call_id"), f"messages[{i}].tool_call_id")
        messages.append(out)
    return messages, chat_tools(body.get("tools"))


def chat_tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for i, tool in enumerate(as_list(tools or [], "tools")):
        require(isinstance(tool, dict) and isinstance(tool.get("function"), dict), f"tools[{i}] must be a function tool")
        fn = tool["function"]
        out.append({"type": "function", "function": {"name": as_str(fn.get("name"), f"tools[{i}].function.name"),
                                                      "description": fn.get("description") or "",
                                                      "parameters": fn.get("parameters") or {"type": "object", "properties": {}}}})
    return out


def _call(call: Any, where: str) -> dict[str, Any]:
    require(isinstance(call, dict) and isinstance(call.get("function"), dict), f"{where} must be a function call")
    fn = call["function"]
    return {"id": as_str(call.get("id"), f"{where}.id"), "type": "function",
            "function": {"name": as_str(fn.get("name"), f"{where}.function.name"),
                         "arguments": as_str(fn.get("arguments", "{}"), f"{where}.function.arguments")}}


def _text_of(value: Any, where: str) -> str:
    return "" if value is None else text_of(value, where, ("text",), ("image_url", "input_audio", "file"))


def reply_body(reply: AssistantMessage, model: str) -> dict[str, Any]:
    """The whole reply as one `chat.completion`."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in reply.tool_calls]
    u = reply.usage
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
                      "total_tokens": u.input_tokens + u.output_tokens,
                      "prompt_tokens_details": {"cached_tokens": u.cached_tokens}}}


def events(reply: AssistantMessage, model: str) -> Iterator[bytes]:
    """The reply as `chat.completion.chunk`s (a role chunk, the text, each tool call whole, the finish
    with the usage), then `[DONE]`, as the API streams them (data lines, no event names)."""
    whole = reply_body(reply, model)
    head = {"id": whole["id"], "object": "chat.completion.chunk", "created": whole["created"], "model": model}
    choice = whole["choices"][0]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if reply.content:
        deltas.append({"content": reply.content})
    deltas += [{"tool_calls": [{"index": k, **call}]} for k, call in enumerate(choice["message"].get("tool_calls") or [])]
    for delta in deltas:
        yield _data({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield _data({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}], "usage": whole["usage"]})
    yield b"data: [DONE]\n\n"


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": text, "code": kind}}


def _data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


__all__ = ["KEY_HEADERS", "PATHS", "WireError", "chat_request", "chat_tools", "error_body", "events", "reply_body"]
