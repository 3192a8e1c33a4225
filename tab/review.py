"""The review: for each open requirement, the read-log lines and unopened candidates that share its words.

Excerpts are tokenized once, lazily (the capture stays cheap), into an inverted index from word to
(entry, line); a requirement's lines are then counted from the postings of its own words. Ranking:
more shared words first, then the earlier entry, then the earlier line — deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tab.match import path_words, requirement_words, supports, word_set
from tab.state import Entry, Requirement, TabState

_LINE_NUMBER = re.compile(r"^\s*\d+[:\-\t]")  # `12:` of grep -n / nl, not a word of the line


@dataclass
class LineMatch:
    entry: str
    path: str
    line: str
    shared: int


@dataclass
class RequirementReview:
    requirement: Requirement
    words: frozenset[str]
    lines: list[LineMatch] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)


_SHIFT = 24  # a posting is one int: entry << _SHIFT | line


class ExcerptIndex:
    """Word → (entry, line) postings over the read log, built as entries arrive."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._lines: list[list[str]] = []
        self._words: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = {}
        self._pending: list[Entry] = []
        self._position: dict[str, int] = {}
        self._path_words: dict[str, frozenset[str]] = {}
        self._line_words: list[list[frozenset[str]]] = []

    def add(self, entry: Entry) -> None:
        self._pending.append(entry)

    def _ensure(self) -> None:
        for entry in self._pending:
            e = len(self._entries)
            lines = entry.excerpt.split("\n")
            all_words: set[str] = set()
            line_words = [word_set(_LINE_NUMBER.sub("", line, count=1)) for line in lines]
            self._line_words.append(line_words)
            header = _header(entry.path, line_words)
            for i, ws in enumerate(line_words):
                all_words |= ws
                if header is not None and i > header:
                    ws = ws | line_words[header]  # a data row ranks with its columns' names
                posting = e << _SHIFT | i
                for w in ws:
                    self._postings.setdefault(w, []).append(posting)
            self._entries.append(entry)
            self._lines.append(lines)
            self._words.append(frozenset(all_words))
            self._position[entry.id] = e
        self._pending.clear()

    def supports(self, entry_id: str, words: frozenset[str]) -> bool:
        """Whether a line of the entry's excerpt grounds the requirement (the evidence check, `supports`)."""
        self._ensure()
        e = self._position.get(entry_id)
        return e is not None and any(supports(words, ws) for ws in self._line_words[e])

    def best_lines(self, words: frozenset[str], limit: int) -> list[LineMatch]:
        """Each matching entry's best line, best entries first."""
        self._ensure()
        counts: Counter[int] = Counter()
        for w in words:
            counts.update(self._postings.get(w, ()))
        best: dict[int, tuple[int, int]] = {}  # entry → (shared words, line)
        for posting, n in counts.items():
            e, i = posting >> _SHIFT, posting & ((1 << _SHIFT) - 1)
            old = best.get(e)
            if old is None or n > old[0] or (n == old[0] and i < old[1]):  # ties: the earlier line
                best[e] = (n, i)
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:limit]
        return [
            LineMatch(self._entries[e].id, self._entries[e].path, self._lines[e][i], n) for e, (n, i) in ranked
        ]

    def candidates(self, paths: list[str]) -> CandidateIndex:
        """An index over the current candidates' path words (built once per review)."""
        for p in paths:
            if p not in self._path_words:
                self._path_words[p] = path_words(p)
        return CandidateIndex(paths, self._path_words)


TABULAR = (".csv", ".tsv", ".xlsx", ".xls", ".xlsm", ".ods")


def _header(path: str, line_words: list[frozenset[str]]) -> int | None:
    """The header row of a table's excerpt (its first line with words), None for other files."""
    if not path.lower().endswith(TABULAR):
        return None
    return next((i for i, ws in enumerate(line_words) if ws), None)


class CandidateIndex:
    def __init__(self, paths: list[str], words_of: dict[str, frozenset[str]]) -> None:
        self.paths = paths
        self.postings: dict[str, list[int]] = {}
        for k, p in enumerate(paths):
            for w in words_of[p]:
                self.postings.setdefault(w, []).append(k)

    def matching(self, words: frozenset[str], limit: int) -> list[str]:
        """Paths sharing the most words first, then in listing order."""
        counts: Counter[int] = Counter()
        for w in words:
            counts.update(self.postings.get(w, ()))
        ranked = sorted(counts.items(), key=lambda kn: (-kn[1], kn[0]))[:limit]
        return [self.paths[k] for k, _ in ranked]


def requirement_review(
    req: Requirement, words: frozenset[str], index: ExcerptIndex, unopened: CandidateIndex, lines: int, candidates: int
) -> RequirementReview:
    """One requirement's review, matched on `words` (its content words)."""
    if not words:
        return RequirementReview(req, words)
    return RequirementReview(req, words, index.best_lines(words, lines), unopened.matching(words, candidates))


def review(state: TabState, index: ExcerptIndex, lines: int, candidates: int) -> list[RequirementReview]:
    """The review of every open requirement, in id order."""
    unopened = index.candidates(list(state.candidates))
    return [
        requirement_review(req, requirement_words(req.text), index, unopened, lines, candidates)
        for req in state.open_requirements()
    ]
