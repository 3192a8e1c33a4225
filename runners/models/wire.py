"""The OpenAI chat-completions wire format: request bodies out, `AssistantMessage`s in."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from envs.protocol import ToolCall
from runners.core.messages import AssistantMessage, Usage
from runners.models.config import ApiModelConfig
from runners.models.pricing import PricingError, price_of

log = logging.getLogger(__name__)

# Message keys every OpenAI-compatible server understands; anything else in a reply is a provider
# extra and goes to `AssistantMessage.extra`.
_STANDARD = frozenset({"role", "content", "tool_calls", "function_call"})
_STANDARD_CALL = frozenset({"id", "type", "function", "index"})
TOOL_CALL_EXTRA = "tool_call_extra"


class MalformedReply(ValueError):
    """A 200 reply that is not a chat completion (no choices, not JSON): worth a retry."""


def request_body(cfg: ApiModelConfig, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON body: model, messages, tools, the sampling fields that are set, then `extra_body`."""
    body: dict[str, Any] = {"model": cfg.name, "messages": wire_messages(messages, cfg.echo_extra)}
    if tools:  # "auto" is OpenAI's default, but llama.cpp ignores the tools unless it is sent
        body["tools"] = tools
        body["tool_choice"] = "auto"
    for key in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(cfg, key)
        if value is not None:
            body[key] = value
    body.update(cfg.extra_body)
    return body


def wire_messages(messages: list[dict[str, Any]], echo: list[str]) -> list[dict[str, Any]]:
    """Messages as the provider wants them back: null assistant content as "", `extra` fields listed in `echo`
    restored on the message, per-tool-call extras (e.g. Gemini thought signatures) on their calls."""
    out = []
    for m in messages:
        if m.get("role") == "assistant" and m.get("content") is None:
            m = {**m, "content": ""}  # llama.cpp's server (pydantic) refuses a null content
        if "extra" not in m:
            out.append(m)
            continue
        m = dict(m)
        extra = m.pop("extra") or {}
        for key in echo:
            if key in extra:
                m[key] = extra[key]
        per_call = extra.get(TOOL_CALL_EXTRA) or {}
        if per_call and m.get("tool_calls"):
            m["tool_calls"] = [{**c, **per_call.get(c.get("id"), {})} for c in m["tool_calls"]]
        out.append(m)
    return out


def parse_reply(data: Any, cfg: ApiModelConfig, new_id: Callable[[], str]) -> AssistantMessage:
    """One chat completion to an `AssistantMessage`; tool-call arguments stay the raw text."""
    try:
        return _parse(data, cfg, new_id)
    except (AttributeError, TypeError, KeyError, IndexError) as e:
        raise MalformedReply(f"reply is not a chat completion ({type(e).__name__}: {e}): "
                             f"{json.dumps(data)[:300]}") from None


def _parse(data: Any, cfg: ApiModelConfig, new_id: Callable[[], str]) -> AssistantMessage:
    if not isinstance(data, dict) or not data.get("choices"):
        raise MalformedReply(f"reply has no choices: {json.dumps(data)[:300]}")
    choice = data["choices"][0]
    msg = choice.get("message") or {}
    calls, call_extra = [], {}
    for tc in msg.get("tool_calls") or []:
        call = _tool_call(tc, new_id)
        calls.append(call)
        more = {k: v for k, v in tc.items() if k not in _STANDARD_CALL and v is not None}
        if more:
            call_extra[call.id] = more
    extra = {k: v for k, v in msg.items() if k not in _STANDARD and v not in (None, "", [], {})}
    if call_extra:
        extra[TOOL_CALL_EXTRA] = call_extra
    if choice.get("finish_reason"):
        extra["finish_reason"] = choice["finish_reason"]
    return AssistantMessage(content=_text(msg.get("content")), tool_calls=calls, usage=_usage(data, cfg), extra=extra)


def _tool_call(tc: dict[str, Any], new_id: Callable[[], str]) -> ToolCall:
    fn = tc.get("function") or {}
    args = fn.get("arguments")
    if args is None:
        args = ""
    elif not isinstance(args, str):  # a few servers send an object; the wire format is text
        args = json.dumps(args, ensure_ascii=False)
    return ToolCall(id=str(tc.get("id") or new_id()), name=str(fn.get("name") or ""), arguments=args)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def _usage(data: dict[str, Any], cfg: ApiModelConfig) -> Usage:
    """Tokens and cost at the model's price (runners/models/pricing.py); cached input tokens as
    OpenAI and Gemini report them (`prompt_tokens_details.cached_tokens`) or DeepSeek does
    (`prompt_cache_hit_tokens`)."""
    u = data.get("usage") or {}
    tin, tout = max(0, int(u.get("prompt_tokens") or 0)), max(0, int(u.get("completion_tokens") or 0))  # a count, whatever was sent
    details = u.get("prompt_tokens_details")
    cached = max(0, int((details.get("cached_tokens") if isinstance(details, dict) else None) or u.get("prompt_cache_hit_tokens") or 0))
    try:
        cost = price_of(cfg).cost(tin, cached, tout)
    except PricingError as e:  # checked before the run (runners/preflight/config_checks.py); an edit since must not lose the reply
        log.warning("%s: the reply is counted at no cost", e)
        cost = 0.0
    return Usage(input_tokens=tin, output_tokens=tout, cost=cost, cached_tokens=cached)
