"""The fence around what the agent under test wrote, inside a judge's prompt.

Deliverable text, the agent's messages and its tool calls are hostile input to a judge: they can
hold a forged rubric section, an "instruction to the evaluator" or a ready-made verdict. The LLM
judges put all of it, as one JSON value, between two markers that the text cannot forge: the
marker carries a digest of the fenced text itself, so text holding its own closing marker would
have to contain a SHA-256 fixed point. The digest, unlike a random nonce, gives the same prompt
for the same evidence, which the judge cache and re-scoring rely on. JSON inside the fence keeps
the agent's line breaks escaped, so a forged heading is never a heading of the prompt.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

TAG_HEX = 24  # digest characters in the marker (96 bits)


@dataclass(frozen=True)
class Fenced:
    """`text`: the payload between `start` and `end`, each on its own line."""

    start: str
    end: str
    text: str


def fence(data: Any) -> Fenced:
    """`data` as JSON inside markers derived from that JSON."""
    payload = json.dumps(data, ensure_ascii=False)
    tag = "untrusted-" + hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:TAG_HEX]
    start, end = f"<{tag}>", f"</{tag}>"
    return Fenced(start, end, f"{start}\n{payload}\n{end}")
