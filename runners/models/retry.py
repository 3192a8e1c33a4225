"""When to retry an OpenAI-compatible request, and for how long to wait."""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Mapping

# 408 request timeout, 409 conflict (OpenAI: "try again"), 425 too early, 429 rate limit,
# 5xx server faults, Cloudflare's 52x, Anthropic-style 529 overloaded.
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})

# What providers say when the prompt does not fit (OpenAI, DeepSeek, vLLM, llama.cpp, Gemini,
# OpenRouter, Anthropic-compatible proxies). Matched case-insensitively on the error body.
_CONTEXT = re.compile(
    "|".join(
        [
            r"context_length_exceeded",
            r"maximum context length",
            r"context length",
            r"context window",
            r"exceeds? the context",
            r"prompt is too long",
            r"input is too long",
            r"too many tokens",
            r"reduce the length of the messages",
            r"input token count .* exceeds",
            r"requested tokens .* exceed",
        ]
    ),
    re.IGNORECASE,
)

MAX_RETRY_AFTER_S = 600.0


def is_context_length(status: int, body: str) -> bool:
    """A request that can never succeed as sent because the prompt is too long for the model."""
    return status >= 400 and bool(_CONTEXT.search(body))


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait the server asked for: `retry-after-ms`, or `Retry-After` in seconds or as a date."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return min(max(float(ms) / 1000.0, 0.0), MAX_RETRY_AFTER_S)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return min(max(when - (time.time() if now is None else now), 0.0), MAX_RETRY_AFTER_S)


def backoff_s(attempt: int, base_s: float, max_s: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: half fixed, half random, so clients do not retry in step."""
    delay = min(max_s, base_s * (2**attempt))
    return delay / 2 + (rng or random).uniform(0, delay / 2)
