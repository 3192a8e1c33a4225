"""What the model is given: the system-prompt block (Figure 6) and the operations as tools (Figure 7).

Both follow the switches: no review → no tab_review and no word of it; no capture → no read log,
so neither tab_review nor tab_show, and tab_resolve takes no entries.
"""

from __future__ import annotations

from typing import Any

from envs.protocol import function_schema
from tab.config import TabConfig
from tab.tab_texts import Texts

TOOL_NAMES = ("tab_add", "tab_review", "tab_resolve", "tab_show")


def offered(config: TabConfig) -> list[str]:
    """The operations this configuration gives the model, in order."""
    names = ["tab_add"]
    if config.reviews:
        names.append("tab_review")
    names.append("tab_resolve")
    if config.capture:
        names.append("tab_show")
    return names


def system_block(config: TabConfig, texts: Texts) -> str:
    ops = offered(config)
    lines = [texts.get("system_intro" if config.capture else "system_intro_nocapture")]
    lines.append(texts.get("system_op_add"))
    if "tab_review" in ops:
        lines.append(texts.get("system_op_review"))
    lines.append(texts.get("system_op_resolve" if config.capture else "system_op_resolve_nocapture"))
    if "tab_show" in ops:
        lines.append(texts.get("system_op_show"))
    lines.append(texts.get("system_guide" if "tab_review" in ops else "system_guide_noreview"))
    return "\n".join(lines)




def schemas(config: TabConfig, texts: Texts) -> list[dict[str, Any]]:
    ops = offered(config)
    out = [
        function_schema(
            "tab_add", texts.get("tool_add"),
            {"requirements": {"type": "array", "items": {"type": "string"},
                              "description": texts.get("tool_add_requirements")}},
            ["requirements"],
        )
    ]
    if "tab_review" in ops:
        out.append(function_schema("tab_review", texts.get("tool_review"), {}, []))
    resolve_props: dict[str, Any] = {
        "id": {"type": "string", "description": texts.get("tool_resolve_id")},
        "status": {"type": "string", "enum": ["done", "set_aside"], "description": texts.get("tool_resolve_status")},
    }
    if config.capture:
        resolve_props["entries"] = {
            "type": "array", "items": {"type": "string"}, "description": texts.get("tool_resolve_entries"),
        }
        description = texts.get("tool_resolve_checked" if config.evidence_check else "tool_resolve")
    else:
        description = texts.get("tool_resolve_nocapture")
    resolve_props["reason"] = {"type": "string", "description": texts.get("tool_resolve_reason")}
    out.append(function_schema("tab_resolve", description, resolve_props, ["id", "status"]))
    if "tab_show" in ops:
        out.append(function_schema(
            "tab_show", texts.get("tool_show"),
            {"entry_id": {"type": "string", "description": texts.get("tool_show_entry_id")}}, ["entry_id"],
        ))
    return out
