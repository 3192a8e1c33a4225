"""The status line appended to every tool result while the tab is on (Figure 8).

`[tab] 6 requirements (2 open) · 4 read-log entries (4 files) · 94 candidates · +L4 policies/travel.docx`
It states the tab's size and what changed since the previous status line: new entries, candidates
opened, new candidates. Without capture it states the requirements only (there is nothing else).
"""

from __future__ import annotations

from tab.config import TabConfig
from tab.state import Changes, TabState
from tab.tab_texts import Texts


def status_line(state: TabState, changes: Changes, config: TabConfig, texts: Texts) -> str:
    reqs = state.requirements
    parts = [texts.get(
        "status_requirements",
        requirements=texts.count(len(reqs), "requirement"),
        open=sum(r.status == "open" for r in reqs.values()),
    )]
    if config.capture:
        parts.append(texts.get(
            "status_log",
            entries=texts.count(len(state.entries), "entry"),
            files=texts.count(len(state.files), "file"),
        ))
        parts.append(texts.get("status_candidates", candidates=texts.count(len(state.candidates), "candidate")))
        shown = changes.entries[: config.status_paths]
        parts.extend(texts.get("status_new_entry", id=e.id, path=e.path) for e in shown)
        if len(changes.entries) > len(shown):
            parts.append(texts.get("status_more_entries", n=len(changes.entries) - len(shown)))
        if changes.opened:
            parts.append(texts.get("status_opened", candidates=texts.count(changes.opened, "candidate")))
        if changes.candidates:
            parts.append(texts.get("status_new_candidates", candidates=texts.count(changes.candidates, "candidate")))
    return f"{texts.get('status_prefix')} {texts.get('status_sep').join(parts)}"
