"""Every wording of the tab, by name: system block, tool descriptions, replies, status line, finish check.

A config overrides any of them through `TabConfig.texts` (same name, same `{fields}` or fewer, checked
by `validate_overrides`), so a wording change never touches logic; `Texts` is the wording in force.
Nouns are `singular|plural`. Reconstructed from the paper's Figures 6-9 as the text describes them
(SPEC section 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter

TEXTS: dict[str, str] = {
    # --- system prompt block (Figure 6) ---
    "system_intro": (
        "## The tab\n"
        "Beside you, the environment keeps a tab for this task, outside your context window: the "
        "requirements you state (r1, r2, ...), a read log of the file content you have seen (entries "
        "L1, L2, ..., captured automatically from your read and bash calls, each with the path, the "
        "command and the text you saw), and the candidates: files that appeared in a listing but that you "
        "have not opened. A status line starting with [tab] after each tool result shows its state and "
        "what changed. Its operations:"
    ),
    "system_intro_nocapture": (
        "## The tab\n"
        "Beside you, the environment keeps a tab for this task, outside your context window: the "
        "requirements you state (r1, r2, ...) and how you resolved each. A status line starting with "
        "[tab] after each tool result shows its state. Its operations:"
    ),
    "system_op_add": "- tab_add(requirements): state what the task asks for; returns their ids.",
    "system_op_review": (
        "- tab_review(): show each open requirement beside the read-log lines that share its words and "
        "the unopened candidates whose names match it."
    ),
    "system_op_resolve": (
        "- tab_resolve(id, status, entries, reason): mark a requirement done, citing the read-log entries "
        "where its content was found, or set it aside with the reason no file supplies it."
    ),
    "system_op_resolve_nocapture": (
        "- tab_resolve(id, status, reason): mark a requirement done once your deliverable covers it, or "
        "set it aside with the reason it cannot be met."
    ),
    "system_op_show": "- tab_show(entry_id): return the stored excerpt of a read-log entry.",
    "system_guide": (
        "Use the tab as follows. At the start, before opening any file, state every requirement of the "
        "task with tab_add: each fact, figure and element the deliverable must contain. After exploring, "
        "call tab_review and look at what it shows for each open requirement. Before finishing, resolve "
        "every requirement with tab_resolve."
    ),
    "system_guide_noreview": (
        "Use the tab as follows. At the start, before opening any file, state every requirement of the "
        "task with tab_add: each fact, figure and element the deliverable must contain. Before finishing, "
        "resolve every requirement with tab_resolve."
    ),
    # --- tool descriptions (Figure 7) ---
    "tool_add": (
        "Add the requirements of the task to the tab: each fact, figure and element the deliverable must "
        "contain, one per item. Call it at the start, before opening files; you can add more later. "
        "Returns the new ids (r1, r2, ...)."
    ),
    "tool_add_requirements": (
        "One requirement per item, stated concretely, e.g. 'Section on reimbursement standards with the "
        "amounts per grade'."
    ),
    "tool_review": (
        "For each open requirement, show the read-log entries that have a line sharing its words (entry id, "
        "path, that line) and the unopened candidate files whose names share its words. Call it after "
        "exploring, and again before finishing."
    ),
    "tool_resolve": (
        "Resolve a requirement. status 'done' cites the read-log entries (L1, L2, ...) where its content "
        "was found; status 'set_aside' gives the reason no file supplies it. A requirement can be resolved "
        "again."
    ),
    "tool_resolve_checked": (
        "Resolve a requirement. status 'done' must cite at least one read-log entry (L1, L2, ...) where "
        "its content was found: the cited entries must exist and one of them must share words with the "
        "requirement. status 'set_aside' must give the reason no file supplies it. A requirement can be "
        "resolved again."
    ),
    "tool_resolve_nocapture": (
        "Resolve a requirement. status 'done' once your deliverable covers it; status 'set_aside' must "
        "give the reason it cannot be met. A requirement can be resolved again."
    ),
    "tool_resolve_id": "The requirement id, e.g. r3.",
    "tool_resolve_status": "'done' or 'set_aside'.",
    "tool_resolve_entries": "The read-log entry ids where its content was found, e.g. [\"L2\"].",
    "tool_resolve_reason": "Why it is set aside (required for set_aside); an optional note for done.",
    "tool_show": "Return the stored excerpt of one read-log entry, exactly as you saw it.",
    "tool_show_entry_id": "The read-log entry id, e.g. L2.",
    # --- nouns (singular|plural) ---
    "noun_requirement": "requirement|requirements",
    "noun_entry": "read-log entry|read-log entries",
    "noun_file": "file|files",
    "noun_candidate": "candidate|candidates",
    # --- status line (Figure 8) ---
    "status_prefix": "[tab]",
    "status_sep": " · ",
    "status_requirements": "{requirements} ({open} open)",
    "status_log": "{entries} ({files})",
    "status_candidates": "{candidates}",
    "status_new_entry": "+{id} {path}",
    "status_more_entries": "+{n} more",
    "status_opened": "{candidates} opened",
    "status_new_candidates": "+{candidates}",
    # --- replies of the operations (Figure 8) ---
    "add_header": "Added {requirements} to the tab:",
    "add_line": "{id}: {text}",
    "add_duplicate": "{id} already states {text!r}; not added again.",
    "add_open": "{open} open.",
    "review_header": "Review of the {requirements} still open:",
    "review_requirement": "{id} [open] {text}",
    "review_line": "  {id} {path}: {line}",
    "review_no_line": "  (no read-log line shares its words yet)",
    "review_candidates": "  unopened: {paths}",
    "review_none_open": "No open requirement: {requirements} resolved.",
    "review_no_requirements": "The tab has no requirement yet: state them with tab_add first.",
    "resolve_done": "{id} done, citing {entries}.",
    "resolve_done_bare": "{id} done.",
    "resolve_set_aside": "{id} set aside ({reason}).",
    "resolve_again": "(It was {previous} before.)",
    "resolve_left": "{open} still open: {ids}.",
    "resolve_all": "All {requirements} are resolved.",
    "resolve_all_one": "The one requirement is resolved.",
    "show_header": "{id} {path} (turn {turn}, {chars} characters, from: {command})",
    # --- refusals and errors ---
    "error_unavailable": "{name} is not available in this configuration of the tab.",
    "error_unknown_tool": "The tab has no operation {name!r}; it has {names}.",
    "error_add_empty": "tab_add needs a non-empty list of requirement texts, e.g. {{\"requirements\": [\"...\"]}}.",
    "error_unknown_requirement": "No requirement {id!r}. The tab has {ids}.",
    "error_no_requirements": "No requirement {id!r}: the tab has no requirement yet; state them with tab_add.",
    "error_status": "status must be 'done' or 'set_aside', not {status!r}.",
    "error_no_entries": (
        "Not resolved: {id} can be marked done only with evidence. Cite at least one read-log entry whose "
        "excerpt holds its content, e.g. entries=[\"L2\"] (tab_review shows the matching ones), or set it "
        "aside with a reason."
    ),
    "error_no_entries_no_review": (
        "Not resolved: {id} can be marked done only with evidence. Cite at least one read-log entry whose "
        "excerpt holds its content, e.g. entries=[\"L2\"], or set it aside with a reason."
    ),
    "error_unknown_entries": "Not resolved: no read-log entry {missing}. The read log has {ids}.",
    "error_no_shared_words": (
        "Not resolved: none of the cited entries ({entries}) shares a word with {id} ({text!r}). Cite the "
        "entry where its content was found (tab_review shows the matching ones), or set it aside with a "
        "reason."
    ),
    "error_no_shared_words_no_review": (
        "Not resolved: none of the cited entries ({entries}) shares a word with {id} ({text!r}). Cite the "
        "entry where its content was found, or set it aside with a reason."
    ),
    "error_no_reason": "Not resolved: set_aside needs a reason saying why no file supplies {id}.",
    "error_unknown_entry": "No read-log entry {id!r}. The read log has {ids}.",
    "ids_none": "none yet",
    "ids_range": "{first} to {last}",
    # --- finish check (Figure 9) ---
    "finish_none": (
        "Before you finish: the tab has no requirement recorded. State the requirements of the task with "
        "tab_add (each fact, figure and element the deliverable must contain), resolve each with "
        "tab_resolve, citing the read-log entry where its content was found or setting it aside with a "
        "reason, and make sure your deliverable covers them. Then finish."
    ),
    "finish_none_nocapture": (
        "Before you finish: the tab has no requirement recorded. State the requirements of the task with "
        "tab_add (each fact, figure and element the deliverable must contain), resolve each with "
        "tab_resolve, and make sure your deliverable covers them. Then finish."
    ),
    "finish_open_header": "Before you finish: {requirements} on the tab still open:",
    "finish_open_line": "{id}: {text}",
    "finish_open_footer": (
        "Resolve each with tab_resolve (done, citing the entry where its content was found, or set aside "
        "with a reason) and make sure your deliverable covers it. Then finish."
    ),
    "finish_open_footer_nocapture": (
        "Resolve each with tab_resolve (done, or set aside with a reason) and make sure your deliverable "
        "covers it. Then finish."
    ),
    "finish_resolved_header": "All {requirements} on the tab are resolved:",
    "finish_resolved_header_one": "The one requirement on the tab is resolved:",
    "finish_done_line": "{id} done ({entries}): {text}",
    "finish_done_line_bare": "{id} done: {text}",
    "finish_set_aside_line": "{id} set aside ({reason}): {text}",
    "finish_resolved_footer": "Make sure your deliverable covers each of them, then finish.",
}


def _fields(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in Formatter().parse(template) if name}


def validate_overrides(overrides: Mapping[str, str]) -> None:
    """Raise ValueError when an override names no wording or uses fields its default does not have."""
    for name, text in overrides.items():
        if name not in TEXTS:
            raise ValueError(f"tab.texts.{name}: no such wording; the names are: {', '.join(sorted(TEXTS))}")
        if not isinstance(text, str):
            raise ValueError(f"tab.texts.{name} must be a string, got {type(text).__name__}")
        try:
            extra = _fields(text) - _fields(TEXTS[name])
        except ValueError as e:
            raise ValueError(f"tab.texts.{name} is not a valid format string ({e}); write braces as {{{{ }}}}") from e
        if extra:
            raise ValueError(
                f"tab.texts.{name} uses {sorted(extra)}, which this wording does not provide; "
                f"it may use {sorted(_fields(TEXTS[name])) or 'no fields'}"
            )
        if name.startswith("noun_") and text.count("|") != 1:
            raise ValueError(f"tab.texts.{name} must be 'singular|plural', got {text!r}")


class Texts:
    """The wording in force: `texts.get("add_header", requirements=...)`."""

    def __init__(self, overrides: Mapping[str, str] | None = None) -> None:
        overrides = dict(overrides or {})
        validate_overrides(overrides)
        self._texts = {**TEXTS, **overrides}

    def get(self, key: str, /, **fields: object) -> str:
        template = self._texts[key]
        return template.format(**fields) if fields or "{" in template else template

    def count(self, n: int, noun: str) -> str:
        """'1 requirement', '6 requirements' (the noun's forms come from the wording)."""
        singular, plural = self._texts[f"noun_{noun}"].split("|")
        return f"{n} {singular if n == 1 else plural}"
