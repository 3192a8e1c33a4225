"""Every wording of the recovery probe, by name (changed here, never in the logic)."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "system": (
        "You are helping to complete a task over an organization's files. One requirement of the task "
        "is given with some of its values masked as [V1], [V2], ... Recover each masked value. Answer "
        "with a single JSON object mapping each mask to its value, e.g. {\"[V1]\": \"55,000\"}; use "
        "null for a value you cannot determine. Write nothing else."
    ),
    "task": "Task:\n{task}",
    "requirement": "Requirement (values masked):\n{requirement}",
    "ask": "Give the values of {labels} as a JSON object.",
    "review_header": (
        "The tab kept beside the agent during the task lists these lines of files it read that share "
        "words with the requirement (entry id, path, line):"
    ),
    "review_line": "{id} {path}: {line}",
    "review_empty": "(no line of the read log shares words with the requirement)",
    "review_show": (
        "You can open any read-log entry with tab_show(entry_id) to see the full text stored for it. "
        "Open the entries you need, then answer."
    ),
    "log_header": "The read log kept beside the agent during the task (every file excerpt it read):",
    "log_entry": "=== {id} {path} (turn {turn}, via: {command}) ===\n{excerpt}",
    "log_cut": "[read log cut here: {left} more characters not shown]",
    "show_unknown": "No read-log entry {entry_id!r}; entries are {ids}.",
    "show_limit": "No more entries can be opened; answer now with the JSON object.",
    "tool_show": "Return the stored excerpt of one read-log entry.",
    "tool_show_entry_id": "The read-log entry id, e.g. L2.",
}


def text(name: str, **fields: object) -> str:
    return TEXTS[name].format(**fields) if fields else TEXTS[name]
