"""Every wording of the recovery probe, by name (changed here, never in the logic).

What the tab itself says (its review, `tab_show` and its replies) is the tab's own wording
(`tab/tab_texts.py`, with the job's overrides), shown through `tab.recorded.RecordedTab`.
"""

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
        "The tab kept beside the agent during the task, asked to review this requirement over what the "
        "agent read (tab_review), replies:"
    ),
    "review_show": (
        "You can open any read-log entry with tab_show(entry_id) to see the full text stored for it. "
        "Open the entries you need, then answer."
    ),
    "log_header": "The read log kept beside the agent during the task (every file excerpt it read):",
    "log_entry": "=== {id} {path} (turn {turn}, via: {command}) ===\n{excerpt}",
    "log_cut": "[read log cut here: {left} more characters not shown]",
    "show_limit": "No more entries can be opened; answer now with the JSON object.",
}


def text(name: str, **fields: object) -> str:
    return TEXTS[name].format(**fields) if fields else TEXTS[name]
