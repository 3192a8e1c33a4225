"""Runtime context management: from the full message list to what the model sees (SPEC section 2).

Levels: 0 none; 1 each tool result capped at 50,000 characters; 2 capped at 20,000; 3 capped at
20,000 and, once more than 240,000 characters of original tool-result text have accumulated, the
tool results of all but the latest 12 turns become a placeholder and the counter restarts.

`manage_context` is pure: it recomputes everything from the full list on each call (one linear
pass, no copies of unchanged messages), so the saved trajectory stays complete and a resumed run
sees exactly what it saw before.
"""

from __future__ import annotations

from typing import Any

from envs import prompts
from envs.config import CONTEXT_LEVELS

CAPS = {1: 50_000, 2: 20_000, 3: 20_000}
COMPACT_AFTER = 240_000  # characters of original tool-result text since the last compaction
KEEP_TURNS = 12  # turns whose tool results survive a compaction
# Tools whose reply is already text the model received under the cap (the tab's read-log entry):
# cutting it again would show less than the entry holds.
UNCAPPED = frozenset({"tab_show"})

Message = dict[str, Any]


def manage_context(messages: list[Message], level: int) -> list[Message]:
    """What the model sees at `level` (0-3). Messages are OpenAI chat dicts; unchanged ones are shared.

    Turns are assistant rounds: each assistant message starts a turn and tool messages belong to
    the turn of the assistant message before them (user messages do not count).
    """
    if level not in CONTEXT_LEVELS:
        raise ValueError(f"context level {level!r}: choose one of 0, 1, 2, 3")
    if level == 0:
        return list(messages)
    turns = _turns(messages)
    cleared_through = _compaction_boundary(messages, turns) if level == 3 else 0
    cap = CAPS[level]
    out: list[Message] = []
    for msg, turn in zip(messages, turns, strict=True):
        content = msg.get("content")
        if msg.get("role") != "tool" or not isinstance(content, str):
            out.append(msg)
        elif turn <= cleared_through:
            out.append({**msg, "content": prompts.CONTEXT_PLACEHOLDER})
        elif msg.get("name") in UNCAPPED:
            out.append(msg)
        else:
            capped = cap_result(content, msg.get("appendix") or "", cap)
            out.append(msg if capped is content else {**msg, "content": capped})
    return out


def cap_result(content: str, appendix: str, cap: int) -> str:
    """The tool's own output cut to `cap` characters plus the alert; a plugin appendix (the tab's
    status line) is kept after the alert so that truncation never hides it."""
    own, tail = content, ""
    if appendix and content.endswith("\n" + appendix):
        own, tail = content[: -len(appendix) - 1], "\n" + appendix
    if len(own) <= cap:
        return content
    return own[:cap] + "\n" + prompts.CONTEXT_ALERT.format(k=cap // 1000) + tail


def _turns(messages: list[Message]) -> list[int]:
    turns, turn = [], 0
    for msg in messages:
        if msg.get("role") == "assistant":
            turn += 1
        turns.append(turn)
    return turns


def _compaction_boundary(messages: list[Message], turns: list[int]) -> int:
    """The last turn whose tool results are cleared (0: none). Checked at every turn's end, as the
    loop would between model calls; each compaction keeps the latest KEEP_TURNS turns' results."""
    counter = 0
    boundary = 0
    for i, msg in enumerate(messages):
        if msg.get("role") == "tool" and isinstance(msg.get("content"), str):
            counter += len(msg["content"])
        turn_ends = i + 1 == len(messages) or messages[i + 1].get("role") == "assistant"
        if turn_ends and counter > COMPACT_AFTER:
            boundary = max(boundary, turns[i] - KEEP_TURNS)
            counter = 0
    return boundary
