"""What every analysis returns: tables (raw rows for CSV and W&B, formatted rows for Markdown and
HTML), figures, and notes; or the reason it was skipped."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Skip(Exception):
    """An analysis cannot run on this sweep (its inputs are missing); the message says why."""


@dataclass
class Table:
    """`rows` hold raw values (CSV, W&B); `display` optionally holds the Markdown/HTML cells.

    `best` marks (row, column) cells of `display` to emphasise (the best value of a column).
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    display: tuple[list[str], list[list[str]]] | None = None
    best: set[tuple[int, int]] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def shown(self) -> tuple[list[str], list[list[str]]]:
        """Columns and cells as text, for Markdown and HTML."""
        if self.display is not None:
            return self.display
        return self.columns, [[fmt(v) for v in r] for r in self.rows]

    def markdown(self, under: str = "") -> str:
        """The table as Markdown; `under`: the heading it is written under, which its own does not repeat."""
        cols, cells = self.shown()
        lines = [f"### {self.heading(under)}", "", "| " + " | ".join(_md(c) for c in cols) + " |", "|" + "---|" * len(cols)]
        for i, row in enumerate(cells):
            out = [f"**{_md(c)}**" if (i, j) in self.best and c else _md(c) for j, c in enumerate(row)]
            lines.append("| " + " | ".join(out) + " |")
        lines += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def heading(self, under: str = "") -> str:
        """The title, less the words of the section heading `under` that it starts with: under "Table 1: main
        results", "Table 1: main results (%, …)" is headed "(%, …)", not the same words twice."""
        if under and self.title.startswith(under) and self.title != under:
            return self.title[len(under) :].strip(" :;,—-")
        return self.title

    def write_csv(self, path: Path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(self.columns)
            w.writerows([["" if v is None else v for v in r] for r in self.rows])


@dataclass
class Figure:
    name: str
    title: str
    path: Path
    caption: str = ""


@dataclass
class Section:
    """One analysis: its tables and figures, or `skipped` with the reason."""

    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None


def fmt(v: Any, digits: int = 2) -> str:
    """A cell as text: floats with fixed digits, None and NaN as blank."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def pct(v: float | None) -> float | None:
    """A share in [0, 1] as percent, kept unrounded for the CSV."""
    return None if v is None else 100.0 * v


def percent(v: Any) -> str:
    """A job's metric (a share) as the tables show every metric: in %."""
    return f"{fmt(pct(v), 1)}%" if isinstance(v, int | float) else fmt(v)


def signed(v: float | None, digits: int = 2) -> str:
    """A difference as text, always with its sign (blank for None)."""
    return "" if v is None else f"{v:+.{digits}f}"


def p_text(p: float | None) -> str:
    """A p-value as text: three decimals, or `<0.001`."""
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
