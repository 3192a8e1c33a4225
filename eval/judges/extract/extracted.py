"""What reading one deliverable file gives judges (`Extracted`), the bounds' bookkeeping, and the
markdown view (pipe tables, `#` headings) that every text format shares.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from eval.config import ExtractLimits

Table = list[list[str]]
_HEADING = re.compile(r"^#{1,6}([^\S\n].*)$", re.M)  # linear: the old `^(#{1,6})\s+(.+?)\s*#*\s*$` backtracked in O(n^3)


class Unreadable(Exception):
    """The file cannot be read within the limits (or at all); the message says why."""


@dataclass(frozen=True)
class Extracted:
    """One file as judges read it; `error` says why it is unreadable (then the rest is empty)."""

    text: str = ""
    tables: list[Table] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    error: str = ""

    def shown(self) -> str:
        """The text, or the reason it is unreadable, for a judge that reads files as text."""
        return f"(unreadable: {self.error})" if self.error else self.text

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error} if self.error else {"text": self.text, "tables": self.tables, "headings": self.headings}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Extracted:
        if doc.get("error"):
            return cls(error=str(doc["error"]))
        return cls(str(doc.get("text", "")), list(doc.get("tables") or []), list(doc.get("headings") or []))


class Budget:
    """Table cells and rows still allowed for one file; `take` raises `Unreadable` past either."""

    def __init__(self, limits: ExtractLimits) -> None:
        self.limits, self.cells, self.rows = limits, 0, 0

    def take(self, cells: int, rows: int = 1) -> None:
        self.cells += cells
        self.rows += rows
        if self.cells > self.limits.cells:
            raise Unreadable(f"more than {self.limits.cells:,} table cells")
        if self.rows > self.limits.rows:
            raise Unreadable(f"more than {self.limits.rows:,} table rows")


def cell_str(value: object) -> str:
    """A spreadsheet cell as text: integers without '.0', dates as ISO dates."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def check_chars(text: str, limits: ExtractLimits) -> None:
    if len(text) > limits.text_chars:
        raise Unreadable(f"more than {limits.text_chars:,} characters of text")


def markdown_tables(text: str, budget: Budget | None = None) -> list[Table]:
    """Pipe tables (`| a | b |`) in markdown text; the `|---|` separator row is dropped."""
    tables: list[Table] = []
    current: Table = []
    for line in text.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|") or (s.count("|") >= 2 and current):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) or not any(cells):
                if budget is not None:
                    budget.take(len(cells))
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def markdown_headings(text: str) -> list[str]:
    """`#` headings in order, closing `#`s and blanks stripped as the pattern `\\s+(.+?)\\s*#*\\s*$` would."""
    out = []
    for m in _HEADING.finditer(text):
        rest = m.group(1)
        body = rest.lstrip()
        if body:
            out.append(body[0] + body[1:].rstrip().rstrip("#").rstrip())
        elif len(rest) > 1:
            out.append("")  # the old pattern gave a blank heading for two blanks or more
    return out
