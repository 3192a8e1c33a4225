"""The shapes of the record's documents that readers open on use: `tab.json`, `shown.json`,
`evaluator_view.json`, `extracted.json` and each line of `trajectory.jsonl` (job.json, result.json
and scores.json are typed in `record_types`).

Each is checked field by field with `field_checks` against what its writer writes (tab/state.py,
tab/ops.py, tab/shown.py, eval/judges/extract/session.py, the agent loop), so that the tables,
pages, frames and replay that index into it never meet another shape. What an older record lacks
is filled (`unattributed`, `settings`), as `record_types` fills older job and result documents.
"""

from __future__ import annotations

from typing import Any

from runners.core.field_checks import (
    AMOUNT,
    BOOL,
    COUNT,
    NUMBER,
    OBJECT,
    OBJECTS,
    STR,
    STRS,
    Check,
    check_each,
    check_fields,
    map_of,
    optional,
)
from runners.core.record_files import EXTRACTED, SHOWN, TAB, VIEW, plugin_file

# tab.json (tab/state.py `to_record`)
REQUIREMENT = {"id": STR, "text": STR, "status": STR, "entries": STRS, "reason": optional(STR), "turn_added": COUNT,
               "turn_resolved": optional(COUNT)}
ENTRY = {"id": STR, "path": STR, "command": STR, "turn": COUNT, "excerpt": STR, "chars": COUNT}
CANDIDATE = {"path": STR, "command": STR, "turn": COUNT}
UNATTRIBUTED = {"command": STR, "turn": COUNT, "text": STR, "chars": COUNT}
# each event kind's fields, as tab/state.py, tab/ops.py and tab/tab.py write them (readers index them)
EVENT = {"turn": COUNT, "kind": STR}
EVENTS: dict[str, dict[str, Check]] = {
    "read": {"entry": STR, "path": STR, "chars": COUNT, "opened": BOOL},
    "candidates": {"paths": STRS, "command": STR},
    "add": {"ids": STRS, "texts": STRS},
    "review": {"source": STR, "open": STRS, "lines": map_of(STRS), "candidates": map_of(STRS)},
    "resolve": {"id": STR, "status": STR, "entries": STRS, "reason": optional(STR), "previous": STR},
    "resolve_refused": {"id": STR, "why": STR},
    "show": {"entry": STR},
    "finish_check": {"case": STR, "text": STR},
}
EVENT_OPTIONAL = {"opened", "previous"}  # read with .get
TAB_LISTS = {"requirements": (REQUIREMENT, REQUIREMENT), "read_log": (ENTRY, ENTRY), "candidates": (CANDIDATE, CANDIDATE),
             "unattributed": (UNATTRIBUTED, ())}

# shown.json (tab/shown.py)
EXCERPT = {"turn": COUNT, "path": STR, "excerpt": STR}

# one message of trajectory.jsonl and of evaluator_view.json (the agent loop's chat format)
USAGE = {"input_tokens": COUNT, "output_tokens": COUNT, "cost": AMOUNT, "cached_tokens": COUNT}
FUNCTION = {"name": STR, "arguments": STR}
CONTENT: Check = ((lambda v: v is None or isinstance(v, str) or OBJECTS[0](v)), "a string, null or a list of objects")
MESSAGE = {"role": STR, "content": CONTENT, "tool_calls": OBJECTS, "tool_call_id": optional(STR), "name": optional(STR), "turn": COUNT,
           "time": NUMBER, "usage": OBJECT, "latency_s": AMOUNT, "chars": COUNT, "is_error": BOOL, "appendix": STR,
           "extra": OBJECT, "tools": OBJECTS}

# extracted.json (eval/judges/extract/session.py `kept_doc`)
EXTRACTED_FILE = {"path": STR, "text": STR, "error": STR, "clipped": COUNT}


def check_tab(doc: Any) -> dict[str, Any]:
    """tab.json, checked, with the lists an older record lacks filled (empty)."""
    check_fields(doc, TAB, {"settings": map_of(BOOL)})
    doc = {**{name: [] for name in (*TAB_LISTS, "events")}, **doc}
    for name, (fields, required) in TAB_LISTS.items():
        check_each(doc[name], f"{TAB} {name}", fields, required)
    for i, event in enumerate(check_each(doc["events"], f"{TAB} events", EVENT, EVENT)):
        fields = EVENTS.get(event["kind"], {})  # a kind this version does not write: its turn and kind
        check_fields(event, f"{TAB} events[{i}] ({event['kind']})", fields, set(fields) - EVENT_OPTIONAL)
    return doc


def check_shown(doc: Any) -> dict[str, Any]:
    check_fields(doc, SHOWN, {}, required=("excerpts",))
    check_each(doc["excerpts"], f"{SHOWN} excerpts", EXCERPT, EXCERPT)
    return doc


def check_plugin(name: str, doc: Any) -> dict[str, Any]:
    """A method plugin's record: the tab's and the shown log's checked whole, any other an object."""
    if name == "tab":
        return check_tab(doc)
    if name == "shown":
        return check_shown(doc)
    return check_fields(doc, plugin_file(name), {})


def check_message(doc: Any, what: str) -> dict[str, Any]:
    """One message: its fields, its tool calls' functions and its usage."""
    check_fields(doc, what, MESSAGE, required=("role",))
    for i, call in enumerate(doc.get("tool_calls") or []):
        check_fields(call.get("function"), f"{what} tool_calls[{i}].function", FUNCTION, required=("name",))
        check_fields(call, f"{what} tool_calls[{i}]", {"id": optional(STR)})
    if "usage" in doc:
        check_fields(doc["usage"], f"{what} usage", USAGE)
    return doc


def check_view(doc: Any) -> dict[str, Any]:
    check_fields(doc, VIEW, {"task": STR, "messages": OBJECTS, "final_answer": STR})
    for i, message in enumerate(doc.get("messages") or []):
        check_message(message, f"{VIEW} messages[{i}]")
    return doc


def check_extracted(doc: Any) -> dict[str, Any]:
    check_fields(doc, EXTRACTED, {"files": OBJECTS, "left_out": COUNT, "keep_chars": COUNT})
    check_each(doc.get("files") or [], f"{EXTRACTED} files", EXTRACTED_FILE, ("path",))
    return doc

