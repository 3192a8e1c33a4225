"""Expected values of a rubric, and where they went: shown to the agent (in a workspace file's
content it received: the shown log), kept in the deliverable, stored in the read log.

A rubric's expected values are the quoted strings of its text (quotes: "…", “…”, `…`, 「…」, 『…』,
‘…’), its dates (2024-12 is one value) and its numbers outside quotes (currency sign, thousands
separators and percent kept; `Q3` or `r2` are not numbers), plus, for built-in rubrics whose scores
item carries its machine check, the check's values (`values`, `cells`, `names`, an answer's
`value`; an `absent` check names values that must *not* appear and is left out). A value is found
in a text the way the rule checks find it (`eval.judges.rule.matching.text_has`): numbers as numbers, anything
else as whole words of the text reduced by `eval.judges.rule.matching.normalize`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from eval.judges.rule.matching import as_number, normalize, numbers_in
from eval.report.load import Job

_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|`([^`\n]{1,200})`|「([^」\n]{1,200})」|『([^』\n]{1,200})』|‘([^’\n]{1,200})’')
_NUMBER = re.compile(r"(?<![\w.,])[-−]?[$€£¥]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?(?![\w])|(?<![\w.,])[-−]?[$€£¥]?\d+(?:\.\d+)?%?(?![\w])")
_DATE = re.compile(r"(?<![\w.])\d{4}[-/]\d{1,2}(?:[-/]\d{1,2})?(?!\w)")
_CHECK_KEYS = ("values", "cells", "names")


@dataclass(frozen=True)
class Value:
    """One expected value; `span` is where it sits in the rubric text (None when from a check)."""

    text: str
    number: float | None
    span: tuple[int, int] | None = None

    @property
    def key(self) -> str:
        return f"n:{self.number!r}" if self.number is not None else "t:" + normalize(self.text)


def text_values(text: str) -> list[Value]:
    """Quoted strings, dates and numbers outside the quotes, in the order they appear."""
    out: list[Value] = []
    quoted: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None)
        start = m.start() + 1
        quoted.append(m.span())
        if inner.strip():
            out.append(Value(inner, as_number(inner), (start, start + len(inner))))
    for m in _DATE.finditer(text):
        if not any(a <= m.start() < b for a, b in quoted):
            quoted.append(m.span())
            out.append(Value(m.group(), None, m.span()))
    for m in _NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in quoted):
            continue
        num = as_number(m.group().replace("−", "-"))
        if num is not None:
            out.append(Value(m.group(), num, m.span()))
    return sorted(out, key=lambda v: v.span or (0, 0))


def check_values(check: Any) -> list[Value]:
    """The values a machine check expects to find (sub-checks included, `absent` left out).

    Only a check object carries values; a scores item that names just the check's type has none.
    """
    if not isinstance(check, dict) or check.get("type") == "absent":
        return []
    out: list[Value] = []
    for key in _CHECK_KEYS:
        for v in check.get(key) or []:
            out.append(Value(str(v), as_number(v)))
    if check.get("type") == "answer" and check.get("value") is not None:
        out.append(Value(str(check["value"]), as_number(check["value"])))
    for sub in check.get("checks") or []:
        out.extend(check_values(sub))
    return out


def rubric_values(item: dict[str, Any]) -> list[Value]:
    """A rubric item's expected values, deduplicated (text first, then the check's; a check value
    written out in the text gets its span there)."""
    text = str(item.get("text", ""))
    seen: dict[str, Value] = {}
    for v in text_values(text):
        seen.setdefault(v.key, v)
    for v in check_values(item.get("check")):
        at = text.lower().find(v.text.lower()) if v.text.strip() else -1
        seen.setdefault(v.key, Value(v.text, v.number, (at, at + len(v.text)) if at >= 0 else None))
    return list(seen.values())


class Haystack:
    """A text prepared for many value look-ups, as `eval.judges.rule.matching.text_has` would answer them.

    Trajectories run to megabytes, so nothing is extracted up front: text values are looked up as
    whole words in the normalized text (built once, on first use: `has_words` would normalize it for
    every value), and a number only in the windows around the places where its digits occur
    (thousands separators allowed), read with `numbers_in`.
    """

    WINDOW = 64
    MAX_WINDOWS = 2000

    def __init__(self, text: str) -> None:
        self.raw = unicodedata.normalize("NFKC", text)  # fullwidth digits become digits
        self._numbers: dict[float, bool] = {}

    @cached_property
    def words(self) -> str:
        """The text reduced by `normalize`, padded so that whole words match as `has_words` does."""
        return f" {normalize(self.raw)} "

    @cached_property
    def all_numbers(self) -> set[float]:
        return set(numbers_in(self.raw))

    def has(self, v: Value) -> bool:
        if v.number is None:
            needle = normalize(v.text)
            return bool(needle) and f" {needle} " in self.words
        if v.number not in self._numbers:
            self._numbers[v.number] = self._has_number(v.number)
        return self._numbers[v.number]

    def _has_number(self, x: float) -> bool:
        for k, m in enumerate(_digits(x).finditer(self.raw)):
            if k == self.MAX_WINDOWS:  # a common short number: reading every number once is cheaper
                return x in self.all_numbers
            a = self.raw.rfind(" ", max(0, m.start() - self.WINDOW), m.start()) + 1 or max(0, m.start() - self.WINDOW)
            b = self.raw.find(" ", m.end(), m.end() + self.WINDOW)
            window = self.raw[a : b if b >= 0 else m.end() + self.WINDOW]
            if any(n == x for n in numbers_in(window)):
                return True
        return False


@lru_cache(maxsize=4096)
def _digits(x: float) -> re.Pattern[str]:
    """Where `x` may be written: its digits, thousands separators allowed (55000 -> 5,?5,?0,?0,?0)."""
    whole, _, frac = f"{abs(x):.10f}".rstrip("0").partition(".")
    return re.compile(",?".join(whole) + (r"\." + frac if frac else ""))


def shown(job: Job) -> str | None:
    """The workspace content the agent was shown (its shown log's excerpts, `tab/shown.py`): what a
    value must be in to count as shown. Never harness text, paths, error messages, listings or the
    prompt. None for a record written before the shown log existed."""
    excerpts = job.shown
    return None if excerpts is None else "\n".join(str(e.get("excerpt", "")) for e in excerpts)


def observation(m: dict[str, Any]) -> str:
    """What one tool result returned to the agent, its plugin appendix (a status line) left out."""
    content, appendix = str(m.get("content") or ""), str(m.get("appendix") or "")
    return content[: len(content) - len(appendix)] if appendix and content.endswith(appendix) else content


def deliverable(job: Job) -> str:
    """The deliverable as judges read it: every delivered file's text (as the judges kept it in the
    record, eval/judges/extract/session.py), and the final answer."""
    texts = job.deliverable_texts()
    texts.append((job.result.final_answer if job.result else "") or str(job.view.get("final_answer") or ""))
    return "\n".join(texts)


def read_log(job: Job) -> str:
    return "\n".join(str(e.get("excerpt", "")) for e in (job.tab or {}).get("read_log", []))


def rubric_items(job: Job) -> list[dict[str, Any]]:
    return [i for i in (job.scores or {}).get("items", []) if i.get("kind") == "rubric"]


def mask(text: str, values: list[Value]) -> tuple[str, dict[str, Value]]:
    """The rubric text with each of `values` that has a span replaced by [V1], [V2], … in order,
    and the value behind each label."""
    out, last, labels = [], 0, {}
    for v in sorted((v for v in values if v.span), key=lambda v: v.span or (0, 0)):
        assert v.span is not None
        if v.span[0] < last:
            continue  # overlaps a value already masked
        label = f"[V{len(labels) + 1}]"
        labels[label] = v
        out.append(text[last : v.span[0]] + label)
        last = v.span[1]
    return "".join(out) + text[last:], labels
