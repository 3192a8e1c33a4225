"""How the rule checks find a value in a text: numbers as numbers (within a tolerance), anything
else as whole words of the text reduced by `normalize` (case, punctuation, markup and thousands
separators ignored). Shared by the checks (eval/checks.py) and the report's value trails.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_NUM = re.compile(r"(?:(?<!\w)[-+])?\d+(?:\.\d+)?")
_NUMERIC_VALUE = re.compile(r"^\s*[-+−]?\s*[$€£¥]?\s*\d[\d,]*(?:\.\d+)?\s*%?\s*$")


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


def cell_matches(cell: str, value: Any, tolerance: float = 0.0) -> bool:
    num = as_number(value)
    if num is not None:
        nums = numbers_in(cell)
        return any(close(n, num, tolerance) for n in nums)
    return has_words(cell, str(value))
