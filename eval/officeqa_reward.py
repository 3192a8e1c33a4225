"""The OfficeQA Pro reward rule, version `OFFICEQA_RULE`.

Follows the benchmark's reward function (databricks/officeqa `reward.py`, commit 0da20e9: Unicode
minus, thousands separators, percent signs, unit words, year filtering, relative tolerance with
ground truth 0 needing exactly 0, text answers by normalised substring) with the stricter rules
of SPEC section 5 that the Pro protocol adds:

- the answer is the content of the *last* `<FINAL_ANSWER>…</FINAL_ANSWER>` of the final message
  (no tag → 0);
- a multi-line answer, or one longer than `MAX_ANSWER_CHARS`, scores 0;
- accounting parentheses mean a negative number (`(1,234)` → -1234), currency symbols are dropped;
- the prediction must hold as many numbers as the ground truth (after dropping incidental years
  when the ground truth is not a year), matched in order — so a hedged "2,602 or 2,628" scores 0;
- a bracketed list `[a, b, c]` must be answered by a bracketed list of the same length, matched
  element by element in order;
- unit words (thousand, million, billion, trillion; k/M/B suffixes) scale a number only when both
  sides carry one; otherwise the bare numbers are compared ("2,602 million" matches "2602").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

OFFICEQA_RULE = "officeqa-pro-reward/runningtab-1 (databricks/officeqa reward.py@0da20e9 + SPEC §5 strictness)"
MAX_ANSWER_CHARS = 300
TOLERANCES = {"acc0": 0.0, "acc1": 0.01}

_TAG = re.compile(r"<FINAL_ANSWER>(.*?)</FINAL_ANSWER>", re.S | re.I)
_UNITS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12}
_NUMBER = re.compile(
    r"(?:(?<![\w.])-)?\d+(?:\.\d+)?(?P<pct>\s*%)?"
    r"(?:\s*(?P<word>thousand|million|billion|trillion)s?\b|(?P<suffix>k|mn|m|bn|b)\b)?",
    re.I,
)
_UNIT_WORDS = r"\b(?:thousands?|millions?|billions?|trillions?|hundreds?|percent|percentage|dollars?|usd|nominal|approximately|about|roughly)\b"


@dataclass(frozen=True)
class Num:
    value: float
    unit: float | None


def extract_final_answer(message: str | None) -> str | None:
    """The content of the last FINAL_ANSWER tag, stripped; None when there is none."""
    matches = _TAG.findall(message or "")
    return matches[-1].strip() if matches else None


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2212", "-").replace("\u2012", "-").replace("\u2013", "-").replace("\u2014", "-")
    text = re.sub(r"[$€£¥]", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)

    def paren(m: re.Match[str]) -> str:
        num = m.group(1)
        return m.group(0) if _is_year(float(num)) else f"-{num}"

    return re.sub(r"\(\s*(\d+(?:\.\d+)?)\s*\)", paren, text)


def _is_year(x: float) -> bool:
    return 1900 <= x <= 2100 and x == int(x)


def numbers(text: str) -> list[Num]:
    """The numbers of an answer with their unit multipliers (after normalisation)."""
    out = []
    for m in _NUMBER.finditer(_normalize(text)):
        raw = m.group(0)
        value = float(re.match(r"-?\d+(?:\.\d+)?", raw).group(0))  # type: ignore[union-attr]
        unit = (m.group("word") or m.group("suffix") or "").lower()
        out.append(Num(value, _UNITS.get(unit)))
    return out


def _text_part(text: str) -> str:
    """What is left of an answer once numbers, unit words and punctuation are removed."""
    t = _NUMBER.sub(" ", _normalize(text).lower())
    t = re.sub(r"\([^)]*\)", " ", t)
    t = re.sub(_UNIT_WORDS, " ", t)
    t = re.sub(r"[^\w\s]", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _plain_text(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).lower().strip().strip("\"'")
    t = re.sub(r"\([^)]*\)", " ", t)
    t = re.sub(r"[^\w\s%.-]", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _close(gt: float, pred: float, tolerance: float) -> bool:
    if gt == 0:
        return pred == 0
    return abs(gt - pred) / abs(gt) <= tolerance + 1e-12


def _num_match(g: Num, p: Num, tolerance: float) -> bool:
    if g.unit is not None and p.unit is not None:
        return _close(g.value * g.unit, p.value * p.unit, tolerance)
    return _close(g.value, p.value, tolerance)


def _scalar(gt: str, pred: str, tolerance: float) -> tuple[bool, str]:
    gt_nums = numbers(gt)
    if not gt_nums:
        ok = _plain_text(gt) in _plain_text(pred)
        return ok, "text match" if ok else f"text {gt!r} not in {pred!r}"
    gt_text = _text_part(gt)
    pred_nums = numbers(pred)
    if not (gt_text or any(_is_year(n.value) for n in gt_nums)):
        pred_nums = [n for n in pred_nums if not _is_year(n.value)]
    if len(pred_nums) != len(gt_nums):
        return False, f"expected {len(gt_nums)} number(s), the answer has {len(pred_nums)}"
    for g, p in zip(gt_nums, pred_nums, strict=True):
        if not _num_match(g, p, tolerance):
            return False, f"{p.value:g} is not within {tolerance:.2%} of {g.value:g}"
    if gt_text and gt_text not in _text_part(pred):
        return False, f"numbers match but the text {gt_text!r} is missing"
    return True, "numeric match"


def _list_items(text: str) -> list[str]:
    inner = text.strip()[1:-1]
    return [s.strip() for s in re.split(r";|,(?!\d{3}(?:\D|$))", inner) if s.strip()]


def _is_list(text: str) -> bool:
    t = text.strip()
    return t.startswith("[") and t.endswith("]")


def score_answer(ground_truth: str, predicted: str | None, tolerance: float = 0.0) -> tuple[bool, str]:
    """Whether `predicted` (the tag's content) answers `ground_truth` within `tolerance`, and why."""
    if predicted is None:
        return False, "no <FINAL_ANSWER> tag in the final message"
    pred = predicted.strip()
    if not pred:
        return False, "empty answer"
    if "\n" in pred:
        return False, "multi-line answer"
    if len(pred) > MAX_ANSWER_CHARS:
        return False, f"answer longer than {MAX_ANSWER_CHARS} characters"
    gt = ground_truth.strip()
    if _is_list(gt):
        if not _is_list(pred):
            return False, "the ground truth is a bracketed list, the answer is not"
        g_items, p_items = _list_items(gt), _list_items(pred)
        if len(g_items) != len(p_items):
            return False, f"list of {len(p_items)} items, expected {len(g_items)}"
        for i, (g, p) in enumerate(zip(g_items, p_items, strict=True)):
            ok, why = _scalar(g, p, tolerance)
            if not ok:
                return False, f"item {i}: {why}"
        return True, "list match"
    return _scalar(gt, pred, tolerance)
