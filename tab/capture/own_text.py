"""Whether a line of output is a file's own text: the check every credited line passes.

A text file's own text is what it holds: one of its lines (a `12:` / `nl` line number aside) or a
fragment of one of at least 8 characters with a letter. A count or sum ('30'), a rewritten line, a
list's repr are not.

A document (docx, xlsx, pptx, pdf: `documents.py`) has no text to quote, only paragraphs and cells,
and a script prints them in its own layout. A line is the document's own text when it is one of its
paragraphs or a fragment of them (all spacing aside), or a row of its cells in any common layout (tabs,
commas, `|`, aligned columns, a Python tuple or list): every field is a cell of one and the same row
(numbers compared by value, `1200` = `1200.0`; empty cells, `None` and `NaN` aside). A lone cell
counts when it has a letter or at least 4 characters. Cells one space apart (pandas' narrow columns)
are regrouped into the row's cells; a day count that can be a date (xlsx stores dates so) also reads
as that date (`2023-01-31`, `datetime.datetime(2023, 1, 31, 0, 0)`). So `('Finance', 1200, 1350)` is
credited and `Finance<TAB>150` (a difference the script computed) or `total 4500` is not.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import cached_property

NUMBERED = re.compile(r"^\s*\d+(?::|-|\t| {2,})")
MIN_FRAGMENT = 8  # a shorter piece of a line (a count, a sum) proves nothing about the file
MIN_CELL = 4  # a lone cell without a letter must be this long ('2024', '1350'; not '3')
_FIELDS = re.compile(r"\t|\s*\|\s*|\s{2,}|,\s*")
_EMPTY = frozenset({"", "None", "nan", "NaN", "NaT", "<NA>", "..."})  # '...': a column pandas elides
MAX_CELL_WORDS = 12
_EXCEL_EPOCH = date(1899, 12, 30)
_FIRST_SERIAL, _LAST_SERIAL = 18264, 73050  # 1950-01-01 .. 2099-12-31
# datetime.datetime(2023, 1, 31, 0, 0), datetime.date(2023, 1, 31), Timestamp('2023-01-31 00:00:00') → 2023-01-31
_DATE_REPR = re.compile(r"(?:datetime\.)?(?:datetime|date)\((\d{4}), (\d{1,2}), (\d{1,2})(?:, 0)*\)")
_MIDNIGHT = re.compile(r"(?:Timestamp\(')?(\d{4}-\d{2}-\d{2})[ T]00:00:00(?:'\))?")
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
            if self.document and form and (_fragment(form) and "".join(form.split()) in self._bare or self._row(form)):
                return True
        return False

    @cached_property
    def _bare(self) -> str:
        """The text with no spacing at all: converters space paragraphs and cells their own way
        (docx2txt joins a table row's cells with nothing between them)."""
        return "".join(self.text.split())

    @cached_property
    def _cells(self) -> dict[str, set[int]]:
        """Each cell (by key) → the rows that hold it; a number that can be a spreadsheet date (a day
        count from 1950 to 2099, as xlsx stores dates) is also that date, as readers print it."""
        index: dict[str, set[int]] = {}
        for i, row in enumerate(self.text.split("\n")):
            for cell in row.split("\t"):
                key = _key(cell)
                index.setdefault(key, set()).add(i)
                if (day := _serial_date(key)) is not None:
                    index.setdefault(day, set()).add(i)
        return index

    def _row(self, form: str) -> bool:
        form = _DATE_REPR.sub(lambda m: f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}", form)
        form = _MIDNIGHT.sub(r"\1", form)
        if form[:1] in "([" and form[-1:] in ")]":
            form = form[1:-1]
        if self._one_row([_key(f) for f in _FIELDS.split(form)]):
            return True
        return self._one_row(self._segments(form.split()))

    def _segments(self, words: list[str]) -> list[str]:
        """Words regrouped into cells, longest first (pandas sets cells one space apart when a column
        is wide: `Engineering  Salaries 2023-01-31`); [] when some word belongs to no cell."""
        keys, i = [], 0
        while i < len(words):
            for j in range(min(len(words), i + MAX_CELL_WORDS), i, -1):
                key = _key(" ".join(words[i:j]))
                if key in self._cells or key in _EMPTY:
                    keys.append(key)
                    i = j
                    break
            else:
                return []
        return keys

    def _one_row(self, keys: list[str]) -> bool:
        """Whether these cells (empty ones aside) are all in one row; a lone cell needs a letter or 4 characters."""
        keys = [k for k in keys if k not in _EMPTY]
        if not keys or (len(keys) == 1 and not (any(c.isalpha() for c in keys[0]) or len(keys[0]) >= MIN_CELL)):
            return False
        rows = self._cells.get(keys[0])
        for k in keys[1:]:
            if not rows:
                return False
            rows = rows & self._cells.get(k, set())
        return bool(rows)


def _serial_date(key: str) -> str | None:
    try:
        days = float(key)
    except ValueError:
        return None
    if not (_FIRST_SERIAL <= days <= _LAST_SERIAL) or days != int(days):
        return None
    return (_EXCEL_EPOCH + timedelta(days=int(days))).isoformat()


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
    """The excerpt split into lines the file holds and lines it does not. A text file too big to
    compare (`own` None: over 2 MB) keeps every line."""
    if own is None:
        return excerpt, ""
    kept, lost = [], []
    for line in excerpt.split("\n"):
        (kept if not line.strip() or own.holds(line) else lost).append(line)
    return "\n".join(kept).strip("\n"), "\n".join(lost).strip("\n")
