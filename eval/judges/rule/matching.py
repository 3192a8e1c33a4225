"""How the rule checks find a value in a text: numbers as numbers (within a tolerance), anything
else as whole words of the text reduced by `normalize` (case, punctuation, markup and thousands
separators ignored). Shared by the checks (eval/judges/rule/check_kinds.py) and the report's value trails.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_NUM = re.compile(r"(?:(?<!\w)[-+])?\d+(?:\.\d+)?")
_NUMERIC_VALUE = re.compile(r"^\s*[-+−]?\s*[$€£¥]?\s*\d[\d,]*(?:\.\d+)?\s*%?\s*$")
_CURRENCY = r"(?:[$€£¥₹]|(?:USD|EUR|GBP|CNY|RMB|JPY|CHF|yuan)(?![A-Za-z]))"
_CELL_NUMBER = re.compile(
    rf"(?P<sign>[-+])?\s*{_CURRENCY}?\s*(?P<sign2>[-+])?\s*"
    r"(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?: \d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    rf"\s*%?\s*{_CURRENCY}?",
    re.IGNORECASE,
)
CELL_SLACK = 100


def normalize(text: str, case_sensitive: bool = False) -> str:
    """Text reduced to words: NFKC, thousands separators dropped, punctuation and markup to single
    spaces (decimal points and % kept), lower case unless asked not to.
    "**Article 4:** Water" → "article 4 water"; "¥2,000 yuan" → "2000 yuan"; "26 °C" → "26 c"."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2212", "-").replace("\u2018", "'").replace("\u2019", "'")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    text = re.sub(r"[^\w%@+#.]+|_+", " ", text).strip()
    return text if case_sensitive else text.lower()


def has_words(haystack: str, needle: str, case_sensitive: bool = False) -> bool:
    """Whether `needle` occurs in `haystack` as whole words, after `normalize` of both."""
    n = normalize(needle, case_sensitive)
    return bool(n) and f" {n} " in f" {normalize(haystack, case_sensitive)} "


def numbers_in(text: str) -> list[float]:
    """Numbers in a text, thousands separators removed (1,234.5 → 1234.5; 'Supplier-15' → 15)."""
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return [float(m) for m in _NUM.findall(text)]


def as_number(value: Any) -> float | None:
    """The number a check value stands for, or None when it is text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and _NUMERIC_VALUE.match(value):
        nums = numbers_in(value.replace("−", "-").replace(" ", ""))
        return nums[0] if len(nums) == 1 else None
    return None


def close(a: float, b: float, tolerance: float) -> bool:
    if b == 0:
        return a == 0
    return abs(a - b) / abs(b) <= tolerance + 1e-12


def text_has(text: str, value: Any, case_sensitive: bool = False, tolerance: float = 0.0) -> bool:
    """Whether `value` appears in `text` (numbers compared as numbers)."""
    num = as_number(value)
    if num is not None:
        return any(close(n, num, tolerance) for n in numbers_in(text))
    return has_words(text, str(value), case_sensitive)


def cell_number(cell: str) -> float | None:
    """The number a table cell holds when the cell is that number and nothing else, written with a
    sign or accounting parentheses, thousands separators (comma or space), a currency symbol or
    code, or a percent sign: "55,000", "¥55,000", "55 000 CNY", "12.5%", "(1,200.50)" → -1200.5.
    A number inside text ("PO 15 of 55,000", "41.5 hours") is not the cell's number."""
    s = unicodedata.normalize("NFKC", cell).replace("\u2212", "-").strip()
    negative = s.startswith("(") and s.endswith(")")
    m = _CELL_NUMBER.fullmatch(s[1:-1].strip() if negative else s)
    if m is None:
        return None
    x = float(re.sub(r"[ ,]", "", m["number"]))
    return -x if negative or "-" in (m["sign"] or "") + (m["sign2"] or "") else x


def cell_matches(cell: str, value: Any, tolerance: float = 0.0) -> bool:
    """Whether one cell is `value`: a number must be the cell's number (`cell_number`); text must
    be words of a cell that holds at most `CELL_SLACK` characters besides it (a cell holding a
    whole document is not the cell of any value)."""
    num = as_number(value)
    if num is not None:
        got = cell_number(cell)
        return got is not None and close(got, num, tolerance)
    want = normalize(str(value))
    return has_words(cell, str(value)) and len(normalize(cell)) - len(want) <= CELL_SLACK


def row_matches(row: list[str], values: list[Any], tolerance: float = 0.0) -> bool:
    """Whether each value matches a cell of its own (a value never shares its cell with another):
    a matching of values to distinct cells, found by augmenting paths."""
    fits = [[j for j, cell in enumerate(row) if cell_matches(cell, v, tolerance)] for v in values]
    owner: dict[int, int] = {}

    def place(i: int, tried: set[int]) -> bool:
        for j in fits[i]:
            if j not in tried:
                tried.add(j)
                if j not in owner or place(owner[j], tried):
                    owner[j] = i
                    return True
        return False

    return all(fits) and all(place(i, set()) for i in range(len(values)))
