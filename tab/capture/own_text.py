"""Whether a line of output is a file's own text: the check every credited line passes.

A text file's own text is what it holds: one of its lines (a `12:` / `nl` line number aside) or a
fragment of one of at least 8 characters with a letter. A count or sum ('30'), a rewritten line, a
list's repr are not.

A document (docx, xlsx, pptx, pdf: `documents.py`) has no text to quote, only paragraphs and cells,
and a script prints them in its own layout. A line is the document's own text when it is one of its
paragraphs or a fragment of them (spacing aside), or a row of its cells in any common layout (tabs,
commas, `|`, aligned columns, a Python tuple or list): every field is a cell of one and the same row
(numbers compared by value, `1200` = `1200.0`; empty cells, `None` and `NaN` aside). A lone cell
counts when it has a letter or at least 4 characters. So `('Finance', 1200, 1350)` is credited and
`Finance<TAB>150` (a difference the script computed) or `total 4500` is not.
"""

from __future__ import annotations

import re
from functools import cached_property

NUMBERED = re.compile(r"^\s*\d+(?::|-|\t| {2,})")
MIN_FRAGMENT = 8  # a shorter piece of a line (a count, a sum) proves nothing about the file
MIN_CELL = 4  # a lone cell without a letter must be this long ('2024', '1350'; not '3')
_FIELDS = re.compile(r"\t|\s*\|\s*|\s{2,}|,\s*")
_EMPTY = frozenset({"", "None", "nan", "NaN", "NaT", "<NA>"})
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


class OwnText:
    """A file's own text, for checking output lines against it (cheap for text: a set of lines)."""

    def __init__(self, text: str, document: bool = False) -> None:
        self.text = text
        self.document = document
        self.lines = frozenset(t.strip() for t in text.split("\n"))

    def holds(self, line: str) -> bool:
        for form in (line.strip(), NUMBERED.sub("", line, count=1).strip()):
            if form in self.lines or (_fragment(form) and form in self.text):
                return True
            if self.document and form and (_fragment(form) and " ".join(form.split()) in self._flat or self._row(form)):
                return True
        return False

    @cached_property
    def _flat(self) -> str:
        return " ".join(self.text.split())

    @cached_property
    def _cells(self) -> dict[str, set[int]]:
        """Each cell (by key) → the rows that hold it."""
        index: dict[str, set[int]] = {}
        for i, row in enumerate(self.text.split("\n")):
            for cell in row.split("\t"):
                index.setdefault(_key(cell), set()).add(i)
        return index

    def _row(self, form: str) -> bool:
        if form[:1] in "([" and form[-1:] in ")]":
            form = form[1:-1]
        keys = [k for k in (_key(f) for f in _FIELDS.split(form)) if k not in _EMPTY]
        if not keys or (len(keys) == 1 and not (any(c.isalpha() for c in keys[0]) or len(keys[0]) >= MIN_CELL)):
            return False
        rows = self._cells.get(keys[0])
        for k in keys[1:]:
            if not rows:
                return False
            rows = rows & self._cells.get(k, set())
        return bool(rows)


def _fragment(form: str) -> bool:
    return len(form) >= MIN_FRAGMENT and any(c.isalpha() for c in form)


def _key(field: str) -> str:
    """A cell as compared: spaces and quotes around it removed, a number by its value."""
    field = field.strip()
    if len(field) >= 2 and field[0] == field[-1] and field[0] in "'\"":
        field = field[1:-1].strip()
    if _NUMBER.fullmatch(field):
        try:
            return repr(float(field))
        except ValueError:
            return field
    return field


def own_lines(excerpt: str, own: OwnText | None) -> tuple[str, str]:
    """The excerpt split into lines the file holds and lines it does not. A file whose text cannot be
    read cheaply (a binary a converter showed, over 2 MB) keeps every line."""
    if own is None:
        return excerpt, ""
    kept, lost = [], []
    for line in excerpt.split("\n"):
        (kept if not line.strip() or own.holds(line) else lost).append(line)
    return "\n".join(kept).strip("\n"), "\n".join(lost).strip("\n")
