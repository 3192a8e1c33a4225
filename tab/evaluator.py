"""The trajectory judges read: the agent's work without the tab's traces (paper section 5).

Removed: calls to the tab operations (an assistant message left with neither calls nor text goes
too), their results, the status lines appended to tool results, the finish check (an environment
message, not the agent's doing; under a harness that stops by a call of its own, such as
mini-swe-agent's submit command, the check answers that call, and both go), the tab's block in the
system prompt and its tools in the tool list.
Everything else is kept as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tab.tools import TOOL_NAMES


def evaluator_view(
    messages: list[dict[str, Any]],
    status_prefix: str = "[tab]",
    stop_messages: Iterable[str] = (),
    system_block: str = "",
) -> list[dict[str, Any]]:
    stops = set(stop_messages)
    checked = {m.get("tool_call_id") for m in messages if m.get("role") == "tool" and m.get("content") in stops}
    removed: set[str] = set()
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            calls = msg["tool_calls"]
            keep = [c for c in calls if c.get("function", {}).get("name") not in TOOL_NAMES and c.get("id") not in checked]
            if len(keep) != len(calls):
                removed.update(c.get("id") for c in calls if c not in keep)
                msg = {k: v for k, v in msg.items() if k != "tool_calls"}
                if keep:
                    msg["tool_calls"] = keep
                elif not (msg.get("content") or "").strip():
                    continue
        elif role == "tool":
            if msg.get("tool_call_id") in removed or msg.get("name") in TOOL_NAMES:
                continue
            msg = _without_status(msg, status_prefix)
        elif role == "user" and msg.get("content") in stops:
            continue
        elif role == "system":
            msg = _without_block(msg, system_block)
        out.append(msg)
    return out


def _without_status(msg: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Cut the tab's status line out of the appendix (the environment joins it after a newline)."""
    content, appendix = msg.get("content"), msg.get("appendix") or ""
    if not isinstance(content, str) or not appendix or not content.endswith("\n" + appendix):
        return msg
    own = content[: -len(appendix) - 1]
    rest = "\n".join(line for line in appendix.split("\n") if not line.startswith(prefix))
    return {**msg, "content": f"{own}\n{rest}" if rest else own, "appendix": rest}


def _without_block(msg: dict[str, Any], block: str) -> dict[str, Any]:
    msg = dict(msg)
    content = msg.get("content")
    if block and isinstance(content, str) and block in content:
        msg["content"] = content.replace("\n\n" + block, "").replace(block, "")
    if isinstance(msg.get("tools"), list):
        msg["tools"] = [t for t in msg["tools"] if t.get("function", {}).get("name") not in TOOL_NAMES]
    return msg
