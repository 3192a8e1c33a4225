"""The endpoint accepts only the continuation of its own conversation.

Every command a harness runs shares its uid, so it can read the job's token and post requests of its
own. A request is taken only when it continues what the endpoint holds: its history up to the last
reply is that history (the same messages, the replies as they were handed out), what follows holds
tool results only for call ids handed out in that reply and not yet answered, each once, and no
reply the endpoint never gave. A harness that rewrites its history (compaction) is recognised by its
own marker (`Harness.compaction_marker`) before the summary the model wrote for it, never by the
length of what it sent; a harness that leaves an answer without a tool call out of its history
(`Harness.keeps_answers` False: mini-swe-agent) may leave out the last one. Anything else is refused (`NotContinuation`, a 400 the harness sees) and
recorded.

The call ids handed to the harness are minted here, unguessable, and mapped back to the model's own:
a forged result must name an id only the harness's own memory holds.
"""

from __future__ import annotations

import secrets
from typing import Any

from envs.protocol import ToolCall
from runners.core.messages import AssistantMessage
from runners.harnesses.bridge.wire_parts import WireError


class NotContinuation(WireError):
    """A request that does not continue the job's conversation: refused, and recorded."""


class Continuation:
    """What the harness has been told so far (`held`, in its own view), and the calls it still owes."""

    def __init__(self, compaction_marker: str = "", keeps_answers: bool = True) -> None:
        """`keeps_answers` False: the harness leaves a reply that called none of its tools out of its
        history and answers it with a message of its own (mini-swe-agent's format error)."""
        self.marker = compaction_marker
        self.keeps_answers = keeps_answers
        self.held: list[dict[str, Any]] = []
        self.pending: dict[str, str] = {}  # id handed out -> the model's own id, of calls not yet answered
        self.ids: dict[str, str] = {}  # every id handed out -> the model's own
        self.replies: list[str] = []  # the text of each reply handed out (a compaction's summary is one)
        self.started = False

    def take(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
        """The messages new since the last reply (tool call ids the model's own), and whether the
        harness compacted its history; raises `NotContinuation` for anything else."""
        if not self.started:
            _require(not any(m["role"] in ("assistant", "tool") for m in messages),
                     "the first request of the job holds replies the endpoint never gave")
            self.started = True
            self.held = list(messages)
            return list(messages), False
        at = self._compaction(messages)
        if at is not None:
            new, compacted = messages[at:], True
            _require(not any(m["role"] in ("assistant", "tool") for m in new),
                     "a compacted history continues with replies the endpoint never gave")
        else:
            new, compacted = self._after_held(messages), False
        out, pending = [], {} if compacted else dict(self.pending)
        for msg in new:
            if msg["role"] == "tool":
                handed = msg.get("tool_call_id", "")
                _require(handed in pending, f"a tool result for call id {handed!r}, which the endpoint did not hand out "
                                            "or which was answered already")
                msg = {**msg, "tool_call_id": pending.pop(handed)}
            else:
                _require(msg["role"] != "assistant", "the request holds a reply the endpoint never gave")
            out.append(msg)
        self.held, self.pending = list(messages), pending  # taken whole, or not at all
        return out, compacted

    def hand_out(self, reply: AssistantMessage) -> AssistantMessage:
        """The reply as the harness gets it: each tool call under an id minted for it."""
        calls = []
        for call in reply.tool_calls:
            minted = f"call_{secrets.token_urlsafe(12)}"
            self.pending[minted] = self.ids[minted] = call.id
            calls.append(ToolCall(minted, call.name, call.arguments))
        handed = AssistantMessage(reply.content, calls, reply.usage, reply.latency_s, reply.extra)
        self.held.append(_as_chat(handed))
        if (reply.content or "").strip():
            self.replies.append(reply.content.strip())
        return handed

    def _after_held(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What follows the held conversation in `messages`. Its messages must be the held ones, in
        order; system messages aside (a harness may word its system prompt anew on each request, and
        they never enter our copy but as new ones)."""
        held = [m for m in self.held if m["role"] != "system"]
        sent = [i for i, m in enumerate(messages) if m["role"] != "system"]
        if not self.keeps_answers and held and held[-1]["role"] == "assistant" and not held[-1].get("tool_calls") and (
                len(sent) < len(held) or _key(messages[sent[len(held) - 1]]) != _key(held[-1])):
            held = held[:-1]  # its last answer, left out
        _require(len(sent) >= len(held), "the request holds fewer messages than the job's conversation")
        for k, (mine, i) in enumerate(zip(held, sent, strict=False)):
            _require(_key(mine) == _key(messages[i]), f"message {k} differs from the job's conversation as the endpoint holds it")
        new = messages[sent[len(held) - 1] + 1:] if held else messages
        _require(any(m["role"] != "system" for m in new), "the request does not continue the job's conversation (it holds no new message)")
        return new

    def _compaction(self, messages: list[dict[str, Any]]) -> int | None:
        """Where the harness's summary of its compacted history begins, if it does: a user message with
        the harness's own marker, not held already, holding the text of a reply handed out (the summary
        the model wrote when the harness asked for one). A marker alone is text anyone can send."""
        if not self.marker:
            return None
        held = {_key(m) for m in self.held}
        return next((i for i, m in enumerate(messages) if m["role"] == "user" and _key(m) not in held
                     and self.marker in (text := str(m.get("content") or "")) and any(r in text for r in self.replies[-3:])),
                    None)


def _as_chat(reply: AssistantMessage) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in reply.tool_calls]
    return msg


def _key(msg: dict[str, Any]) -> tuple[Any, ...]:
    """What must be the same for a message to be the one held: its role and text; a reply's calls by
    id (minted here, unguessable) and name, not by their arguments (a harness may keep the arguments
    it ran a call with: Gemini CLI's `grep_search` adds the `context` it chose; what the model is sent
    is our own copy); a tool result's call id (a harness may clear an old result's text to save
    context)."""
    role = msg.get("role")
    if role == "tool":
        return role, msg.get("tool_call_id")
    calls = tuple((c.get("id"), c.get("function", {}).get("name")) for c in msg.get("tool_calls") or [])
    return role, (msg.get("content") or "").strip(), calls


def _require(ok: bool, text: str) -> None:
    if not ok:
        raise NotContinuation(text)
