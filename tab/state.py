"""What the tab holds: requirements, the read log, the candidates, and the events that built them.

Plain data kept by the environment, outside the context window. Only `tab_add` creates requirements;
the read log and the candidates are written from observations (see `tab/capture/`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("open", "done", "set_aside")


@dataclass
class Requirement:
    id: str
    text: str
    status: str = "open"
    entries: list[str] = field(default_factory=list)
    reason: str | None = None
    turn_added: int = 0
    turn_resolved: int | None = None


@dataclass
class Entry:
    """One read of file content: the excerpt exactly as the agent saw it (after the tool's truncation)."""

    id: str
    path: str
    command: str
    turn: int
    excerpt: str

    @property
    def chars(self) -> int:
        return len(self.excerpt)


@dataclass
class Candidate:
    path: str
    command: str
    turn: int


@dataclass
class Changes:
    """What changed since the last status line."""

    entries: list[Entry] = field(default_factory=list)
    opened: int = 0  # candidates that moved to the read log
    candidates: int = 0  # new candidates


class TabState:
    """The tab's content, with the events that let a report replay it turn by turn."""

    def __init__(self) -> None:
        self.requirements: dict[str, Requirement] = {}
        self.entries: dict[str, Entry] = {}
        self.candidates: dict[str, Candidate] = {}
        self.events: list[dict[str, Any]] = []
        self.files: set[str] = set()
        self.changes = Changes()
        self._seen: set[tuple[str, str]] = set()
        self.unattributed: list[dict[str, Any]] = []  # shown text no file is proven to hold: kept, never cited

    def event(self, turn: int, kind: str, **details: Any) -> None:
        self.events.append({"turn": turn, "kind": kind, **details})

    # --- requirements ---
    def add_requirement(self, text: str, turn: int) -> Requirement:
        req = Requirement(id=f"r{len(self.requirements) + 1}", text=text, turn_added=turn)
        self.requirements[req.id] = req
        return req

    def find_requirement(self, text: str) -> Requirement | None:
        """An existing requirement with the same text (case and spacing aside)."""
        key = " ".join(text.lower().split())
        return next((r for r in self.requirements.values() if " ".join(r.text.lower().split()) == key), None)

    def open_requirements(self) -> list[Requirement]:
        return [r for r in self.requirements.values() if r.status == "open"]

    # --- read log and candidates ---
    def add_read(self, path: str, command: str, turn: int, excerpt: str) -> Entry | None:
        """A new entry, or None when the excerpt is empty or repeats an entry of the same file."""
        if not excerpt.strip() or (path, excerpt) in self._seen:
            return None
        entry = Entry(id=f"L{len(self.entries) + 1}", path=path, command=command, turn=turn, excerpt=excerpt)
        self.entries[entry.id] = entry
        self._seen.add((path, excerpt))
        self.files.add(path)
        self.changes.entries.append(entry)
        opened = self.candidates.pop(path, None)
        if opened is not None:
            self.changes.opened += 1
        self.event(turn, "read", entry=entry.id, path=path, chars=entry.chars, opened=opened is not None)
        return entry

    def add_unattributed(self, text: str, command: str, turn: int) -> None:
        if text.strip():
            self.unattributed.append({"command": command, "turn": turn, "text": text, "chars": len(text)})

    def add_candidates(self, paths: list[str], command: str, turn: int) -> list[str]:
        """Add listed files that are neither read nor already candidates; returns those added."""
        new = [p for p in dict.fromkeys(paths) if p not in self.files and p not in self.candidates]
        for p in new:
            self.candidates[p] = Candidate(path=p, command=command, turn=turn)
        if new:
            self.changes.candidates += len(new)
            self.event(turn, "candidates", paths=new, command=command)
        return new

    def take_changes(self) -> Changes:
        changes, self.changes = self.changes, Changes()
        return changes

    # --- the record ---
    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TabState:
        """The state a `tab.json` record holds (what `to_record` wrote), e.g. to ask its review again."""
        state = cls()
        state.requirements = {r["id"]: Requirement(**r) for r in record["requirements"]}
        for e in record["read_log"]:
            entry = Entry(e["id"], e["path"], e["command"], e["turn"], e["excerpt"])
            state.entries[entry.id] = entry
            state.files.add(entry.path)
            state._seen.add((entry.path, entry.excerpt))
        state.candidates = {c["path"]: Candidate(**c) for c in record["candidates"]}
        state.unattributed = list(record.get("unattributed", []))  # records before issue 11 have none
        state.events = list(record["events"])
        return state

    def to_record(self, settings: dict[str, bool]) -> dict[str, Any]:
        return {
            "requirements": [asdict(r) for r in self.requirements.values()],
            "read_log": [{**asdict(e), "chars": e.chars} for e in self.entries.values()],
            "candidates": [asdict(c) for c in self.candidates.values()],
            "unattributed": list(self.unattributed),
            "events": list(self.events),
            "settings": dict(settings),
        }
