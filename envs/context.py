"""Runtime context management: from the full message list to what the model sees (SPEC section 2).

Levels: 0 none; 1 each tool result capped at 50,000 characters; 2 capped at 20,000; 3 capped at
20,000 and, once more than 240,000 characters of original tool-result text have accumulated, the
tool results of all but the latest 12 turns become a placeholder and the counter restarts.

`manage_context` is pure: it recomputes everything from the full list on each call (one linear
pass, no copies of unchanged messages), so the saved trajectory stays complete and a resumed run
sees exactly what it saw before. `ContextView` gives the same result for a list that only grows
(the loop's) while doing work only for the new messages and the ones a compaction clears, and
keeps each message's view the same object from call to call (the model client caches its JSON).
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from envs import harness_texts
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
    _check_level(level)
    if level == 0:
        return list(messages)
    turns = _turns(messages)
    cleared_through = _compaction_boundary(messages, turns) if level == 3 else 0
    return [_render(msg, turn, cleared_through, CAPS[level]) for msg, turn in zip(messages, turns, strict=True)]


class ContextView:
    """`[project(m) for m in manage_context(messages, level)]`, kept up to date as `messages` grows.

    Each call processes only the messages added since the last one (plus those a compaction clears
    now), so an episode costs linear, not quadratic, time. Messages must not change once added; a
    list that is not an extension of the previous one is recomputed from scratch.
    """

    def __init__(self, level: int, project: Callable[[Message], Message] = lambda m: m) -> None:
        _check_level(level)
        self.level, self.project = level, project
        self.cap = CAPS.get(level)
        self._reset()

    def _reset(self) -> None:
        self._src: list[Message] = []
        self._turns: list[int] = []
        self._out: list[Message] = []
        self._committed = 0  # messages whose successor is known: their counter step is final
        self._counter = self._boundary = 0  # state after the committed messages
        self._shown = 0  # the boundary `_out` renders

    def __call__(self, messages: list[Message]) -> list[Message]:
        n0 = len(self._src)
        if len(messages) < n0 or not all(map(operator.is_, messages, self._src)):  # in C: ~half the generator's CPU
            self._reset()
            n0 = 0
        turn = self._turns[-1] if self._turns else 0
        for msg in messages[n0:]:
            if msg.get("role") == "assistant":
                turn += 1
            self._src.append(msg)
            self._turns.append(turn)
            self._out.append(self.project(self._render(msg, turn)))
        if self.level == 3 and messages:
            self._show(self._advance(messages))
        return list(self._out)

    def _render(self, msg: Message, turn: int) -> Message:
        return msg if self.cap is None else _render(msg, turn, self._shown, self.cap)

    def _advance(self, messages: list[Message]) -> int:
        """Commit the counter through all but the last message; the boundary as if a turn ended there."""
        last = len(messages) - 1
        for i in range(self._committed, last):
            self._step(messages[i], self._turns[i], messages[i + 1].get("role") == "assistant")
        self._committed = last
        counter, boundary = self._counter, self._boundary
        self._step(messages[last], self._turns[last], True)
        provisional = self._boundary
        self._counter, self._boundary = counter, boundary
        return provisional

    def _step(self, msg: Message, turn: int, turn_ends: bool) -> None:
        if msg.get("role") == "tool" and isinstance(msg.get("content"), str):
            self._counter += len(msg["content"])
        if turn_ends and self._counter > COMPACT_AFTER:
            self._boundary = max(self._boundary, turn - KEEP_TURNS)
            self._counter = 0

    def _show(self, boundary: int) -> None:
        """Re-render the messages whose turn lies between the shown boundary and the new one."""
        if boundary == self._shown:
            return
        lo, hi = sorted((self._shown, boundary))
        self._shown = boundary
        for i in range(bisect_right(self._turns, lo), bisect_right(self._turns, hi)):
            msg = self._src[i]
            if msg.get("role") == "tool" and isinstance(msg.get("content"), str):
                self._out[i] = self.project(self._render(msg, self._turns[i]))


def _check_level(level: int) -> None:
    if level not in CONTEXT_LEVELS:
        raise ValueError(f"context level {level!r}: choose one of 0, 1, 2, 3")


def _render(msg: Message, turn: int, cleared_through: int, cap: int) -> Message:
    content = msg.get("content")
    if msg.get("role") != "tool" or not isinstance(content, str):
        return msg
    if turn <= cleared_through:
        return {**msg, "content": harness_texts.CONTEXT_PLACEHOLDER}
    if msg.get("name") in UNCAPPED:
        return msg
    capped = cap_result(content, msg.get("appendix") or "", cap)
    return msg if capped is content else {**msg, "content": capped}


def cap_result(content: str, appendix: str, cap: int) -> str:
    """The tool's own output cut to `cap` characters plus the alert; a plugin appendix (the tab's
    status line) is kept after the alert so that truncation never hides it."""
    own, tail = content, ""
    if appendix and content.endswith("\n" + appendix):
        own, tail = content[: -len(appendix) - 1], "\n" + appendix
    if len(own) <= cap:
        return content
    return own[:cap] + "\n" + harness_texts.CONTEXT_ALERT.format(k=cap // 1000) + tail


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
