"""The four operations (tab_add, tab_review, tab_resolve, tab_show) and their replies (Figure 8).

Refusals come back as error results that say what was wrong and what to do instead; nothing the
model sends ends the run. Every operation leaves an event, so analyses can replay how the agent
used the tab.
"""

from __future__ import annotations

import json
import re
from typing import Any

from envs.protocol import ToolResult
from tab.config import TabConfig
from tab.match import clip, requirement_words
from tab.review import ExcerptIndex, RequirementReview, review
from tab.state import Entry, TabState
from tab.tab_texts import Texts

_ENTRY_ID = re.compile(r"^\s*[lL]?(\d+)\s*$")
_REQ_ID = re.compile(r"^\s*[rR]?(\d+)\s*$")


class Operations:
    def __init__(self, state: TabState, index: ExcerptIndex, config: TabConfig, texts: Texts) -> None:
        self.state, self.index, self.config, self.texts = state, index, config, texts

    # --- tab_add ---
    def add(self, args: dict[str, Any], turn: int) -> ToolResult:
        t = self.texts
        items = [s for s in (" ".join(str(x).split()) for x in _as_list(args.get("requirements"))) if s]
        if not items:
            return ToolResult(t.get("error_add_empty"), is_error=True)
        added, notes = [], []
        for text in items:
            existing = self.state.find_requirement(text)
            if existing is not None:
                notes.append(t.get("add_duplicate", id=existing.id, text=text))
            else:
                added.append(self.state.add_requirement(text, turn))
        self.state.event(turn, "add", ids=[r.id for r in added], texts=[r.text for r in added])
        lines = [t.get("add_header", requirements=t.count(len(added), "requirement"))]
        lines += [t.get("add_line", id=r.id, text=r.text) for r in added]
        lines += notes
        lines.append(t.get("add_open", open=len(self.state.open_requirements())))
        return ToolResult("\n".join(lines))

    # --- tab_review ---
    def reviews(self, turn: int, source: str) -> list[RequirementReview]:
        items = review(self.state, self.index, self.config.review_lines, self.config.review_candidates)
        self.state.event(
            turn, "review", source=source, open=[i.requirement.id for i in items],
            lines={i.requirement.id: [m.entry for m in i.lines] for i in items},
            candidates={i.requirement.id: i.candidates for i in items},
        )
        return items

    def review_body(self, items: list[RequirementReview]) -> list[str]:
        t, out = self.texts, []
        for item in items:
            out.append(t.get("review_requirement", id=item.requirement.id, text=item.requirement.text))
            for m in item.lines:
                line = clip(m.line, item.words, self.config.line_chars)
                out.append(t.get("review_line", id=m.entry, path=m.path, line=line))
            if not item.lines:
                out.append(t.get("review_no_line"))
            if item.candidates:
                out.append(t.get("review_candidates", paths=", ".join(item.candidates)))
        return out

    def review(self, args: dict[str, Any], turn: int) -> ToolResult:
        t = self.texts
        if not self.state.requirements:
            return ToolResult(t.get("review_no_requirements"))
        items = self.reviews(turn, "tool")
        if not items:
            return ToolResult(t.get("review_none_open", requirements=t.count(len(self.state.requirements), "requirement")))
        header = t.get("review_header", requirements=t.count(len(items), "requirement"))
        return ToolResult("\n".join([header, *self.review_body(items)]))

    # --- tab_resolve ---
    def resolve(self, args: dict[str, Any], turn: int) -> ToolResult:
        t, state = self.texts, self.state
        rid = _normalize(args.get("id"), _REQ_ID, "r")
        status = args.get("status")
        req = state.requirements.get(rid)
        if req is None:
            if not state.requirements:
                return self._refuse(turn, rid, "unknown_requirement", t.get("error_no_requirements", id=rid))
            ids = self._ids("r", len(state.requirements))
            return self._refuse(turn, rid, "unknown_requirement", t.get("error_unknown_requirement", id=rid, ids=ids))
        if status not in ("done", "set_aside"):
            return self._refuse(turn, rid, "bad_status", t.get("error_status", status=status))
        reason = str(args.get("reason") or "").strip() or None
        entries = [_normalize(e, _ENTRY_ID, "L") for e in _as_list(args.get("entries"))] if self.config.capture else []
        entries = list(dict.fromkeys(e for e in entries if e))
        if status == "set_aside":
            if not reason:
                return self._refuse(turn, rid, "no_reason", t.get("error_no_reason", id=rid))
            entries = []
        elif self.config.checks_evidence:
            refusal = self._evidence(req.id, req.text, entries)
            if refusal:
                return self._refuse(turn, rid, *refusal)
        previous = req.status
        req.status, req.entries, req.reason, req.turn_resolved = status, entries, reason, turn
        state.event(turn, "resolve", id=rid, status=status, entries=entries, reason=reason, previous=previous)
        if status == "set_aside":
            lines = [t.get("resolve_set_aside", id=rid, reason=reason)]
        elif entries:
            lines = [t.get("resolve_done", id=rid, entries=", ".join(entries))]
        else:
            lines = [t.get("resolve_done_bare", id=rid)]
        if previous != "open":
            lines.append(t.get("resolve_again", previous=previous))
        still = state.open_requirements()
        if still:
            lines.append(t.get("resolve_left", open=len(still), ids=", ".join(r.id for r in still)))
        else:
            n = len(state.requirements)
            lines.append(t.get("resolve_all_one") if n == 1 else t.get("resolve_all", requirements=t.count(n, "requirement")))
        return ToolResult(" ".join(lines))

    def _evidence(self, rid: str, text: str, entries: list[str]) -> tuple[str, str] | None:
        """Why a `done` lacks evidence, or None when it is grounded in the read log."""
        t = self.texts
        if not entries:
            return "no_entries", t.get(self._key("error_no_entries"), id=rid)
        missing = [e for e in entries if e not in self.state.entries]
        if missing:
            ids = self._ids("L", len(self.state.entries))
            return "unknown_entries", t.get("error_unknown_entries", missing=", ".join(missing), ids=ids)
        words = requirement_words(text)
        if words and not any(self.index.supports(e, words) for e in entries):
            return "no_shared_words", t.get(self._key("error_no_shared_words"), entries=", ".join(entries), id=rid, text=text)
        return None

    def _key(self, key: str) -> str:
        """A refusal's wording: without `tab_review` when the ablation does not offer it."""
        return key if self.config.review else f"{key}_no_review"

    def _refuse(self, turn: int, rid: str, why: str, message: str) -> ToolResult:
        self.state.event(turn, "resolve_refused", id=rid, why=why)
        return ToolResult(message, is_error=True)

    # --- tab_show ---
    def entry(self, value: Any) -> tuple[str, Entry | None]:
        """The entry an id names, forgivingly (`l2`, `2` → `L2`): (normalized id, entry or None)."""
        eid = _normalize(value, _ENTRY_ID, "L")
        return eid, self.state.entries.get(eid)

    def show(self, args: dict[str, Any], turn: int) -> ToolResult:
        t = self.texts
        eid, entry = self.entry(args.get("entry_id"))
        if entry is None:
            ids = self._ids("L", len(self.state.entries))
            return ToolResult(t.get("error_unknown_entry", id=eid, ids=ids), is_error=True)
        self.state.event(turn, "show", entry=eid)
        header = t.get("show_header", id=eid, path=entry.path, turn=entry.turn, chars=entry.chars, command=entry.command)
        return ToolResult(f"{header}\n{entry.excerpt}")

    def _ids(self, prefix: str, n: int) -> str:
        if n == 0:
            return self.texts.get("ids_none")
        if n == 1:
            return f"{prefix}1"
        return self.texts.get("ids_range", first=f"{prefix}1", last=f"{prefix}{n}")


def _as_list(value: Any) -> list[Any]:
    """A list argument, also when a model sent one string or a JSON-encoded list."""
    if value is None:
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
                if isinstance(parsed, list):
                    return parsed
            except json.JSONDecodeError:
                pass
        return [text] if text else []
    return list(value) if isinstance(value, list | tuple) else [value]


def _normalize(value: Any, pattern: re.Pattern[str], prefix: str) -> str:
    """`L2`, `l2`, `2` → `L2`; anything else is kept as given (and then reported as unknown)."""
    text = str(value if value is not None else "").strip()
    m = pattern.match(text)
    return f"{prefix}{int(m.group(1))}" if m else text
