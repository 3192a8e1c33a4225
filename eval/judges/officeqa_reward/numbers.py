"""Number reading shared by every version of the OfficeQA reward rule.

The benchmark reads an answer's numbers with one pattern (`-?\\d+\\.?\\d*%?`) after removing
thousands separators, and takes the 20 characters around each number as the context in which it
looks for unit words. The versions differ in how commas are removed (all of them, or only
well-formed thousands groups) and whether accounting parentheses and currency symbols are
normalised first; each version passes its own `prepare` step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

NUMBER = re.compile(r"-?\d+\.?\d*%?")
_UNIT_WORDS = ("trillion", "trillions", "billion", "billions", "million", "millions", "thousand", "thousands",
               "hundred", "hundreds", "percent", "percentage", "%")
_UNITS = (("trillion", r"\btrillions?\b"), ("billion", r"\bbillions?\b|\bb\b"), ("million", r"\bmillions?\b|\bm\b"),
          ("thousand", r"\bthousands?\b|\bk\b"))


@dataclass(frozen=True)
class Found:
    """One number of an answer and the lower-cased text around it."""

    value: float
    context: str

    @property
    def unit(self) -> str | None:
        return unit_in(self.context)


def unit_in(context: str) -> str | None:
    """The largest unit word near a number (the benchmark checks trillion first, then down)."""
    for name, pattern in _UNITS:
        if re.search(pattern, context):
            return name
    return None


def read_numbers(text: str, prepare: Callable[[str], str]) -> list[Found]:
    """Every number of `text` after the version's `prepare` (comma removal etc.)."""
    if not text:
        return []
    flat = prepare(text)
    out = []
    for m in NUMBER.finditer(flat):
        raw = m.group()
        if raw == "-":
            continue
        context = flat[max(0, m.start() - 20) : m.end() + 20].lower()
        out.append(Found(float(raw.rstrip("%")), context))
    return out


def is_year(x: float) -> bool:
    return 1900 <= x <= 2100 and x == int(x)


def significant_text(text: str) -> str:
    """The words of an answer once numbers, commas, unit words and punctuation are gone ("" if <2 chars)."""
    t = re.sub(r"-?\d+\.?\d*%?", "", text.replace("\u2212", "-").lower()).replace(",", "")
    for word in _UNIT_WORDS:
        t = re.sub(r"\b" + re.escape(word) + r"\b", "", t)
    t = re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", t)).strip()
    return t if len(t) >= 2 else ""


def text_agrees(gt: str, pred: str) -> bool:
    """A numeric match also needs the ground truth's words ("March" in "March 1977"), either way round."""
    g, p = significant_text(gt), significant_text(pred)
    if not g:
        return True
    return bool(p) and (g in p or p in g)


def relative_close(gt: float, pred: float, tolerance: float) -> bool:
    """|gt - pred| / |gt| <= tolerance; a ground truth of 0 needs exactly 0."""
    if gt == 0:
        return pred == 0
    return abs(gt - pred) / abs(gt) <= tolerance


def clean_text(text: str, collapse_spaces: bool) -> str:
    """Lower case, outer quotes and parentheticals ("(OASI)") removed: how text answers compare."""
    t = text.strip().lower().strip('"').strip("'")
    t = re.sub(r"\([^)]*\)", "", t)
    if collapse_spaces:
        t = re.sub(r"\s+", " ", t)
    return t.strip()
