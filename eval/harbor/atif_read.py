"""Our messages from an ATIF document (ours, or another harness's: Claude Code's, Codex's), checked.

An ATIF file of a Harbor trial came through the agent's container: every field is checked for the
type ATIF gives it before it becomes a message, and the first one that is not is an `AtifError`
naming where it is (`steps[3].tool_calls[0].tool_call_id`), so that the import refuses the trial
in one line instead of writing a record a reader would trip on. What ATIF has no field for comes
back from `extra.runningtab` (atif.py), under the same checks.
"""

from __future__ import annotations

import json
import math
from typing import Any

from eval.harbor.atif import epoch

SOURCES = ("system", "user", "agent")


class AtifError(ValueError):
    """An ATIF document that is not one; the message says where."""


def _obj(v: Any, where: str, optional: bool = True) -> dict[str, Any]:
    if v is None and optional:
        return {}
    if not isinstance(v, dict):
        raise AtifError(f"{where}: expected an object, got {type(v).__name__}")
    return v


def _list(v: Any, where: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise AtifError(f"{where}: expected a list, got {type(v).__name__}")
    return v


def _str(v: Any, where: str, default: str | None = "") -> str | None:
    if v is None:
        return default
    if not isinstance(v, str):
        raise AtifError(f"{where}: expected a string, got {type(v).__name__}")
    return v


def _count(v: Any, where: str) -> int:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise AtifError(f"{where}: expected a count (an integer >= 0), got {v!r:.40}")
    return v


def _number(v: Any, where: str, optional: bool = False) -> float | None:
    """A finite number >= 0, as written (an int stays an int); missing: None if `optional`, else 0.0."""
    if v is None:
        return None if optional else 0.0
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise AtifError(f"{where}: expected a number >= 0, got {v!r:.40}")
    return v


def _text(v: Any, where: str) -> str:
    """A message: a string, or a list of content parts whose text is joined."""
    if v is None or isinstance(v, str):
        return v or ""
    if not isinstance(v, list):
        raise AtifError(f"{where}: expected a string or a list of content parts, got {type(v).__name__}")
    return "\n".join(_str(_obj(p, f"{where}[{n}]", False).get("text"), f"{where}[{n}].text") or ""
                     for n, p in enumerate(_list(v, where)))


def _turn(d: dict[str, Any], where: str, default: Any) -> Any:
    """`d["turn"]` (an integer, or null as written), else `default`."""
    if "turn" not in d:
        return default
    v = d["turn"]
    if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
        raise AtifError(f"{where}: expected an integer, got {v!r:.40}")
    return v


def _arguments(v: Any, where: str) -> str:
    args = _obj(v, where, False)
    if set(args) == {"_raw"}:  # a malformed argument string kept whole by the export
        return _str(args["_raw"], f"{where}._raw") or ""
    return json.dumps(args, ensure_ascii=False)


def messages(doc: Any) -> list[dict[str, Any]]:
    """Our messages from the ATIF document `doc`; AtifError at the first field that is not ATIF's."""
    doc = _obj(doc, "the document", False)
    if "steps" not in doc:
        raise AtifError("no `steps`: not an ATIF trajectory")
    tool_definitions = _obj(doc.get("agent"), "agent").get("tool_definitions")
    out: list[dict[str, Any]] = []
    for n, raw in enumerate(_list(doc["steps"], "steps")):
        at = f"steps[{n}]"
        step = _obj(raw, at, False)
        ours = _obj(_obj(step.get("extra"), f"{at}.extra").get("runningtab"), f"{at}.extra.runningtab")
        source = step.get("source")
        if source not in SOURCES:
            raise AtifError(f"{at}.source: expected one of {', '.join(SOURCES)}, got {source!r:.40}")
        text = _text(step.get("message"), f"{at}.message")
        time = _number(ours["time"], f"{at}.extra.runningtab.time", True) if "time" in ours else \
            epoch(_str(step.get("timestamp"), f"{at}.timestamp"))
        base = {"turn": _turn(ours, f"{at}.extra.runningtab.turn", _turn({"turn": step.get("step_id")}, f"{at}.step_id", None)), "time": time}
        if source in ("system", "user"):
            m: dict[str, Any] = {"role": source, "content": text, **base}
            if "stop_hook" in ours:
                m["stop_hook"] = ours["stop_hook"]
            if ours.get("tools") and tool_definitions:
                m["tools"] = _list(tool_definitions, "agent.tool_definitions")
            out.append(m)
            continue
        metrics = _obj(step.get("metrics"), f"{at}.metrics")
        m = {"role": "assistant", "content": text,
             "usage": {"input_tokens": _count(metrics.get("prompt_tokens"), f"{at}.metrics.prompt_tokens"),
                       "output_tokens": _count(metrics.get("completion_tokens"), f"{at}.metrics.completion_tokens"),
                       "cost": float(_number(metrics.get("cost_usd"), f"{at}.metrics.cost_usd") or 0.0)}}
        names: dict[str, str] = {}
        calls = []
        for k, c in enumerate(_list(step.get("tool_calls"), f"{at}.tool_calls")):
            cat = f"{at}.tool_calls[{k}]"
            c = _obj(c, cat, False)
            cid = _str(c.get("tool_call_id"), f"{cat}.tool_call_id", None)
            name = _str(c.get("function_name"), f"{cat}.function_name", None)
            if cid is None or name is None:
                raise AtifError(f"{cat}: a tool call needs its tool_call_id and function_name")
            names[cid] = name
            calls.append({"id": cid, "type": "function", "function": {"name": name, "arguments": _arguments(c.get("arguments"), f"{cat}.arguments")}})
        if calls:
            m["tool_calls"] = calls
        if "latency_s" in ours:
            m["latency_s"] = _number(ours["latency_s"], f"{at}.extra.runningtab.latency_s", True)
        if "extra" in ours:
            m["extra"] = ours["extra"]
        out.append({**m, **base})
        observation = _obj(step.get("observation"), f"{at}.observation")
        for k, r in enumerate(_list(observation.get("results"), f"{at}.observation.results")):
            rat = f"{at}.observation.results[{k}]"
            r = _obj(r, rat, False)
            rx = _obj(_obj(r.get("extra"), f"{rat}.extra").get("runningtab"), f"{rat}.extra.runningtab")
            call_id = _str(r.get("source_call_id"), f"{rat}.source_call_id", None)
            tool = {"role": "tool", "tool_call_id": call_id,
                    "name": _str(rx.get("name"), f"{rat}.extra.runningtab.name", names.get(call_id or "", "")),
                    "content": _text(r.get("content"), f"{rat}.content"), "is_error": bool(rx.get("is_error", False))}
            if "appendix" in rx:
                tool["appendix"] = _str(rx["appendix"], f"{rat}.extra.runningtab.appendix", None)
            if "chars" in rx:
                tool["chars"] = _count(rx["chars"], f"{rat}.extra.runningtab.chars")
            time = _number(rx["time"], f"{rat}.extra.runningtab.time", True) if "time" in rx else base["time"]
            out.append({**tool, "turn": _turn(rx, f"{rat}.extra.runningtab.turn", base["turn"]), "time": time})
    return out
