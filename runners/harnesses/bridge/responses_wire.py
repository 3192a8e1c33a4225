"""The OpenAI Responses API as our `Model` seam sees it (Codex CLI speaks nothing else): a request in,
chat messages out; a reply in, the event stream (or the one response object) Codex reads.

Function tools pass through; tools the job's model cannot run for the harness (web search, tool
namespaces of sub-agents) are not offered. Reasoning items the harness sends back are dropped: our
models' replies carry none.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from runners.core.messages import AssistantMessage
from runners.harnesses.bridge.wire_parts import (
    WireError,
    as_list,
    as_str,
    event,
    require,
    text_of,
)

PATHS = {"/v1/responses": "answer"}  # the endpoint's paths for this API
KEY_HEADERS = ("authorization",)  # where a request carries the job's token (`Bearer ` before it, or not)

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def chat_request(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) in the OpenAI chat format for a Responses API request body."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": as_str(body["instructions"], "instructions")})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for i, item in enumerate(as_list(items, "input")):
        require(isinstance(item, dict), f"input[{i}] must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = _ROLES.get(item.get("role"))
            require(role is not None, f"input[{i}].role must be one of {sorted(_ROLES)}")
            _append(messages, {"role": role, "content": _text_of(item.get("content"), f"input[{i}].content")})
        elif kind == "function_call":
            call = {"id": as_str(item.get("call_id"), f"input[{i}].call_id"), "type": "function", "function": {
                "name": as_str(item.get("name"), f"input[{i}].name"),
                "arguments": as_str(item.get("arguments", "{}"), f"input[{i}].arguments")}}
            last = messages[-1] if messages else None
            if last and last["role"] == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            elif last and last["role"] == "assistant":
                last["tool_calls"] = [call]
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else _text_of(output, f"input[{i}].output")
            messages.append({"role": "tool", "tool_call_id": as_str(item.get("call_id"), f"input[{i}].call_id"),
                             "content": text})
    return messages, chat_tools(body.get("tools"))


def chat_tools(tools: Any) -> list[dict[str, Any]]:
    out = []
    for i, tool in enumerate(as_list(tools or [], "tools")):
        require(isinstance(tool, dict), f"tools[{i}] must be an object")
        if tool.get("type") != "function":
            continue
        out.append({"type": "function", "function": {
            "name": as_str(tool.get("name"), f"tools[{i}].name"),
            "description": tool.get("description") or "",
            "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
        }})
    return out


def _append(messages: list[dict[str, Any]], msg: dict[str, Any]) -> None:
    """Consecutive system messages (Codex sends several) are joined into one."""
    if messages and msg["role"] == "system" and messages[-1]["role"] == "system":
        messages[-1]["content"] = f"{messages[-1]['content']}\n\n{msg['content']}"
    else:
        messages.append(msg)


def _text_of(value: Any, where: str) -> str:
    return text_of(value, where, ("input_text", "output_text", "text"), ("input_image", "input_file"))


def reply_body(reply: AssistantMessage, model: str, response_id: str | None = None) -> dict[str, Any]:
    """The whole reply as one Responses API response object."""
    output: list[dict[str, Any]] = []
    if reply.content:
        output.append({"type": "message", "id": f"msg_{uuid.uuid4().hex}", "status": "completed", "role": "assistant",
                       "content": [{"type": "output_text", "text": reply.content, "annotations": []}]})
    for call in reply.tool_calls:
        output.append({"type": "function_call", "id": f"fc_{uuid.uuid4().hex}", "call_id": call.id,
                       "name": call.name, "arguments": call.arguments, "status": "completed"})
    u = reply.usage
    return {
        "id": response_id or f"resp_{uuid.uuid4().hex}", "object": "response", "created_at": 0,
        "status": "completed", "model": model, "output": output,
        "usage": {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
                  "total_tokens": u.input_tokens + u.output_tokens,
                  "input_tokens_details": {"cached_tokens": u.cached_tokens},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }


def events(reply: AssistantMessage, model: str) -> Iterator[bytes]:
    """The reply as a Responses event stream: created, each output item added and done, completed."""
    whole = reply_body(reply, model)
    seq = iter(range(1 << 30))
    yield event("response.created", {"type": "response.created", "sequence_number": next(seq),
                                      "response": dict(whole, status="in_progress", output=[])})
    for index, item in enumerate(whole["output"]):
        started = dict(item, status="in_progress")
        if item["type"] == "message":
            started["content"] = []
        yield event("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq),
                                                    "output_index": index, "item": started})
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield event("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": next(seq),
                                                        "item_id": item["id"], "output_index": index,
                                                        "content_index": 0, "delta": text})
            yield event("response.output_text.done", {"type": "response.output_text.done", "sequence_number": next(seq),
                                                       "item_id": item["id"], "output_index": index,
                                                       "content_index": 0, "text": text})
        else:
            yield event("response.function_call_arguments.delta", {
                "type": "response.function_call_arguments.delta", "sequence_number": next(seq),
                "item_id": item["id"], "output_index": index, "delta": item["arguments"]})
        yield event("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(seq),
                                                   "output_index": index, "item": item})
    yield event("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": whole})


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": text, "code": kind}}


__all__ = ["KEY_HEADERS", "PATHS", "WireError", "chat_request", "chat_tools", "error_body", "events", "reply_body"]
