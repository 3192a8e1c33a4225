"""A job record's trajectory as ATIF (Harbor's Agent Trajectory Interchange Format, v1.8), and back.

ATIF steps follow our messages: the system prompt and every user message are a `system`/`user`
step; each assistant message is an `agent` step holding its tool calls, their results as the
step's observation, and its tokens and cost. What ATIF has no field for is kept in `extra`:

    step.extra.runningtab   the message's turn and time, a tool result's error flag, status line
                            (`appendix`) and size, a stop hook's message, the call's latency
    step.extra.tab          with the tab on, its state after the step: `status` (the status line the
                            agent saw), `read_log` (entries this turn added), `resolutions`
                            (requirements resolved this turn), `events` (the tab's events of the turn)
    root extra.runningtab   the job's ids and axes (job.json without its config)

`atif_read.messages()` turns ATIF back into our messages, every field checked: exactly ours for a
trajectory we wrote; for another harness's (Claude Code's, Codex's), the same shape with what it recorded.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

ATIF_VERSION = "ATIF-v1.8"
AGENT_NAME = "runningtab"
_STEP_KEYS = ("turn", "time", "stop_hook", "latency_s", "extra")
_RESULT_KEYS = ("is_error", "appendix", "chars", "turn", "time", "name")


def iso(t: Any) -> str | None:
    return datetime.fromtimestamp(float(t), UTC).isoformat() if isinstance(t, int | float) else None


def epoch(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as ATIF wants them (an object); a malformed string is kept whole."""
    import json

    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def _keep(m: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: m[k] for k in keys if k in m}


def tab_by_turn(tab: dict[str, Any] | None) -> dict[int, dict[str, Any]]:
    """The tab's changes per turn: read-log entries added, requirements resolved, events."""
    out: dict[int, dict[str, Any]] = {}
    if not tab:
        return out

    def at(turn: Any) -> dict[str, Any]:
        return out.setdefault(int(turn or 0), {"read_log": [], "resolutions": [], "events": []})

    for entry in tab.get("read_log", []):
        at(entry.get("turn"))["read_log"].append(entry)
    for req in tab.get("requirements", []):
        if req.get("turn_resolved") is not None:
            at(req["turn_resolved"])["resolutions"].append(
                {k: req.get(k) for k in ("id", "text", "status", "entries", "reason")})
    for ev in tab.get("events", []):
        at(ev.get("turn"))["events"].append(ev)
    return out


def to_atif(messages: list[dict[str, Any]], meta: dict[str, Any], tab: dict[str, Any] | None, model: str) -> dict[str, Any]:
    """The ATIF document of one job (`meta`: job.json's ids and axes)."""
    changes = tab_by_turn(tab)
    steps: list[dict[str, Any]] = []
    tools = None
    i = 0
    while i < len(messages):
        m = messages[i]
        role = m.get("role")
        step: dict[str, Any] = {"step_id": len(steps) + 1}
        if iso(m.get("time")):
            step["timestamp"] = iso(m.get("time"))
        if role in ("system", "user"):
            step.update(source=role, message=m.get("content") or "")
            tools = m.get("tools") or tools
        else:
            step.update(source="agent", message=m.get("content") or "", model_name=model)
            calls = m.get("tool_calls") or []
            if calls:
                step["tool_calls"] = [{"tool_call_id": c.get("id") or f"call-{i}-{n}", "function_name": (c.get("function") or {}).get("name") or "",
                                       "arguments": _arguments((c.get("function") or {}).get("arguments"))} for n, c in enumerate(calls)]
                ids = {c["tool_call_id"] for c in step["tool_calls"]}
                results = []
                while i + 1 < len(messages) and messages[i + 1].get("role") == "tool":
                    i += 1
                    r = messages[i]
                    res: dict[str, Any] = {"content": r.get("content") or "", "extra": {"runningtab": _keep(r, _RESULT_KEYS)}}
                    if r.get("tool_call_id") in ids:
                        res["source_call_id"] = r["tool_call_id"]
                    results.append(res)
                step["observation"] = {"results": results}
            usage = m.get("usage") or {}
            step["metrics"] = {"prompt_tokens": int(usage.get("input_tokens") or 0), "completion_tokens": int(usage.get("output_tokens") or 0),
                               "cost_usd": float(usage.get("cost") or 0.0)}
        extra: dict[str, Any] = {"runningtab": _keep(m, _STEP_KEYS)}
        if m.get("tools"):
            extra["runningtab"]["tools"] = True  # this message carried the tool schemas (agent.tool_definitions)
        if tab is not None and role == "assistant":
            turn = int(m.get("turn") or 0)
            status = [r["extra"]["runningtab"]["appendix"] for r in (step.get("observation") or {}).get("results", [])
                      if r["extra"]["runningtab"].get("appendix")]
            extra["tab"] = {"status": status[-1] if status else None, **changes.get(turn, {"read_log": [], "resolutions": [], "events": []})}
        step["extra"] = extra
        steps.append(step)
        i += 1
    tokens_in = sum(s.get("metrics", {}).get("prompt_tokens", 0) for s in steps)
    tokens_out = sum(s.get("metrics", {}).get("completion_tokens", 0) for s in steps)
    cost = sum(s.get("metrics", {}).get("cost_usd", 0.0) for s in steps)
    agent: dict[str, Any] = {"name": AGENT_NAME, "version": "1", "model_name": model, "extra": {"method": meta.get("method")}}
    if tools:
        agent["tool_definitions"] = tools
    return {
        "schema_version": ATIF_VERSION, "session_id": str(meta.get("job_id")), "agent": agent, "steps": steps,
        "final_metrics": {"total_prompt_tokens": tokens_in, "total_completion_tokens": tokens_out, "total_cost_usd": cost,
                          "total_steps": len(steps)},
        "extra": {"runningtab": {k: meta.get(k) for k in ("job_id", "benchmark", "task_id", "method", "model", "seed")}},
    }
