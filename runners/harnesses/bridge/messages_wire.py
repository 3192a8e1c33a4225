"""The Anthropic Messages API as our `Model` seam sees it: a request in, chat messages out; a reply in,
the events (or the one JSON message) Claude Code reads.

The translation is lossless for what the job's model can use (text, tool calls, tool results) and
says what it drops: images become a short placeholder (our models read text), thinking blocks and
server-side tools (web search) are not offered, since a job's agent reaches only its workspace.
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
    event,
    require,
    text_of,
)

# The endpoint's paths for this API: the conversation, and Claude Code's token count (an estimate).
PATHS = {"/v1/messages": "answer", "/v1/messages/count_tokens": "count_tokens"}
KEY_HEADERS = ("x-api-key", "authorization")  # where a request carries the job's token (`Bearer ` before it, or not)


def chat_request(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(messages, tools) in the OpenAI chat format for a Messages API request body."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text_of(system, "system")})
    for i, msg in enumerate(as_list(body.get("messages"), "messages")):
        require(isinstance(msg, dict), f"messages[{i}] must be an object")
        role = msg.get("role")
        if role == "assistant":
            messages.append(_assistant(msg.get("content"), i))
        elif role == "user":
            messages.extend(_user(msg.get("content"), i))
        elif role == "system":  # Claude Code sends system reminders inside the conversation too
            messages.append({"role": "system", "content": _text_of(msg.get("content") or "", f"messages[{i}].content")})
        else:
            raise WireError(f"messages[{i}].role must be 'user', 'assistant' or 'system', got {role!r}")
    return messages, chat_tools(body.get("tools"))


def chat_tools(tools: Any) -> list[dict[str, Any]]:
    """Client tools as chat function tools; server tools (no `input_schema`) are left out."""
    out = []
    for i, tool in enumerate(as_list(tools or [], "tools")):
        require(isinstance(tool, dict), f"tools[{i}] must be an object")
        if "input_schema" not in tool:
            continue
        out.append({"type": "function", "function": {
            "name": as_str(tool.get("name"), f"tools[{i}].name"),
            "description": tool.get("description") or "",
            "parameters": tool["input_schema"],
        }})
    return out


def _assistant(content: Any, i: int) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts, calls = [], []
    for j, block in enumerate(as_list(content, f"messages[{i}].content")):
        require(isinstance(block, dict), f"messages[{i}].content[{j}] must be an object")
        kind = block.get("type")
        if kind == "text":
            texts.append(as_str(block.get("text"), f"messages[{i}].content[{j}].text"))
        elif kind == "tool_use":
            calls.append({"id": as_str(block.get("id"), "tool_use.id"), "type": "function", "function": {
                "name": as_str(block.get("name"), "tool_use.name"),
                "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
            }})
    msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
    if calls:
        msg["tool_calls"] = calls
    return msg


def _user(content: Any, i: int) -> list[dict[str, Any]]:
    """Tool results first (they answer the previous assistant turn), then the user's own text."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    results, texts = [], []
    for j, block in enumerate(as_list(content, f"messages[{i}].content")):
        require(isinstance(block, dict), f"messages[{i}].content[{j}] must be an object")
        kind = block.get("type")
        if kind == "tool_result":
            text = _text_of(block.get("content") or "", f"messages[{i}].content[{j}].content")
            if block.get("is_error"):
                text = f"[error] {text}"
            results.append({"role": "tool", "tool_call_id": as_str(block.get("tool_use_id"), "tool_use_id"), "content": text})
        elif kind == "text":
            texts.append(as_str(block.get("text"), f"messages[{i}].content[{j}].text"))
        elif kind in ("image", "document"):
            texts.append(IMAGE_PLACEHOLDER)
    out = results
    if texts:
        out.append({"role": "user", "content": "\n".join(texts)})
    return out


def _text_of(value: Any, where: str) -> str:
    return text_of(value, where, ("text",), ("image", "document"))


def reply_body(reply: AssistantMessage, model: str) -> dict[str, Any]:
    """The whole reply as one Messages API response (a request with `stream` false)."""
    content: list[dict[str, Any]] = []
    if reply.content:
        content.append({"type": "text", "text": reply.content})
    for call in reply.tool_calls:
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments_object(call.arguments)})
    return {
        "id": f"msg_{uuid.uuid4().hex}", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": "tool_use" if reply.tool_calls else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens,
                  "cache_read_input_tokens": reply.usage.cached_tokens, "cache_creation_input_tokens": 0},
    }


def events(reply: AssistantMessage, model: str) -> Iterator[bytes]:
    """The reply as the server-sent events of a streamed response, one content block at a time."""
    whole = reply_body(reply, model)
    start = dict(whole, content=[], stop_reason=None, usage=dict(whole["usage"], output_tokens=0))
    yield event("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            yield event("content_block_start", {"type": "content_block_start", "index": index,
                                                 "content_block": {"type": "text", "text": ""}})
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            yield event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"], ensure_ascii=False)}
        yield event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        yield event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield event("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                                   "usage": {"output_tokens": reply.usage.output_tokens}})
    yield event("message_stop", {"type": "message_stop"})


def error_body(kind: str, text: str) -> dict[str, Any]:
    """An error as the Messages API spells it (`invalid_request_error`, `api_error`, …)."""
    return {"type": "error", "error": {"type": kind, "message": text}}


__all__ = ["IMAGE_PLACEHOLDER", "KEY_HEADERS", "PATHS", "WireError", "chat_request", "chat_tools", "error_body", "events", "reply_body"]
