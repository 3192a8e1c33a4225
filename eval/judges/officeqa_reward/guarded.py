"""The OfficeQA reward rule with the direct-answer guard (commits 23c8760 to 309dc01, May-June 2026).

The answer is the *last* FINAL_ANSWER tag (the whole message without one). Before any matching,
the guard rejects an answer that is not a single direct value: several non-empty lines, more than
250 characters, a different count of numbers than the ground truth, numbers where the ground truth
is text, or text that differs from a text ground truth. The versions differ in the rest (`Rules`):

    23c8760  the first guard: a purely numeric ground truth also rejects any prose around the
             value ("The answer is 2,602."); then the earlier rule's lenient matching (legacy.py)
    6da3ee1  the same guard, plus numbers in an answer to a text ground truth rejected; whitespace
             collapsed before numbers are read; explicit units on both sides must agree; an
             answer saying "unable to determine" fails
    6158125  as 6da3ee1, with accounting parentheses as negatives and currency symbols dropped
    309dc01  the newest: the prose check replaced by a markup check, incidental years left out of
             the count, thousands groups only when well-formed, bracketed numeric lists matched
             in order with the prediction's commas regrouped (lists.py)

Without ordered lists, every ground-truth number of a list must appear somewhere (any order).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from eval.judges.officeqa_reward import legacy, lists
from eval.judges.officeqa_reward.numbers import (
    Found,
    clean_text,
    is_year,
    read_numbers,
    relative_close,
    significant_text,
    text_agrees,
)

MAX_DIRECT_CHARS = 250
_TAG = re.compile(r"<FINAL_ANSWER>\s*(.*?)\s*</FINAL_ANSWER>", re.S | re.I)
_MARKUP = re.compile(r"<[^>]*>")
_PLAIN_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


@dataclass(frozen=True)
class Rules:
    """What one guarded version does (module doc)."""

    prepare: Callable[[str], str]  # the text numbers are read from
    prose_guard: bool  # a purely numeric ground truth rejects prose (23c8760-6158125)
    text_guard_numbers: bool  # numbers in an answer to a text ground truth are rejected (6da3ee1 on)
    newest: bool  # 309dc01: markup guard, years out of the count, ordered lists
    first_guard: bool = False  # 23c8760: the unstripped length counts; the earlier lenient matching


def _plain_thousands(text: str) -> str:
    return _PLAIN_THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)


def prepare_6da3ee1(text: str) -> str:
    """Unicode minus and runs of whitespace normalised, then every thousands-like group unpunctuated."""
    return _plain_thousands(re.sub(r"\s+", " ", text.replace("\u2212", "-")).strip())


def prepare_6158125(text: str) -> str:
    """As 6da3ee1, with accounting parentheses and currency symbols normalised first."""
    return _plain_thousands(lists.money(re.sub(r"\s+", " ", text.replace("\u2212", "-")).strip()))


R23C8760 = Rules(legacy.drop_thousands_commas, prose_guard=True, text_guard_numbers=False, newest=False, first_guard=True)
R6DA3EE1 = Rules(prepare_6da3ee1, prose_guard=True, text_guard_numbers=True, newest=False)
R6158125 = Rules(prepare_6158125, prose_guard=True, text_guard_numbers=True, newest=False)
R309DC01 = Rules(lists.prepare, prose_guard=False, text_guard_numbers=True, newest=True)


def extract(message: str) -> str | None:
    """The last tag's content; the whole message when there is no tag; None for an empty message."""
    if not message:
        return None
    tags = _TAG.findall(message)
    return tags[-1].strip() if tags else message


def units_agree(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def drop_context_years(gt: str, gt_nums: list[Found], pred_nums: list[Found]) -> list[Found]:
    """Prediction numbers without incidental years, unless the ground truth is (or names) a year."""
    if len(gt_nums) == 1:
        keep = is_year(gt_nums[0].value) or bool(significant_text(gt))
    else:
        keep = any(is_year(g.value) for g in gt_nums)
    return pred_nums if keep else [p for p in pred_nums if not is_year(p.value)]


def guard(gt: str, pred: str, rules: Rules = R309DC01) -> tuple[bool, str]:
    """Whether `pred` is one direct answer of the ground truth's shape (see module doc)."""
    raw_length = len(pred)
    pred = pred.strip()
    if not pred:
        return False, "empty answer"
    if len([line for line in pred.splitlines() if line.strip()]) > 1:
        return False, "multi-line answer"
    if (raw_length if rules.first_guard else len(pred)) > MAX_DIRECT_CHARS:
        return False, f"answer longer than {MAX_DIRECT_CHARS} characters"
    gt_nums, pred_nums = read_numbers(gt, rules.prepare), read_numbers(pred, rules.prepare)
    if gt_nums:
        if rules.newest:
            pred_nums = drop_context_years(gt, gt_nums, pred_nums)
        if len(pred_nums) != len(gt_nums):
            shape = lists.list_shape(gt, gt_nums) if rules.newest else None
            if shape is None or not lists.segment(pred, len(shape)):
                return False, f"expected {len(gt_nums)} number(s), the answer has {len(pred_nums)}"
        if rules.prose_guard and not significant_text(gt) and significant_text(pred):
            return False, f"prose around a numeric answer ({significant_text(pred)!r})"
        if rules.newest and _MARKUP.search(pred):
            return False, "markup around the answer value"
        return True, "direct answer"
    if pred_nums and rules.text_guard_numbers:
        return False, "numbers in the answer, the ground truth is text"
    if clean_text(gt, collapse_spaces=True) != clean_text(pred, collapse_spaces=True):
        return False, "a text answer must equal the ground truth"
    return True, "direct answer"


def match(gt: str, pred: str | None, tolerance: float, rules: Rules = R309DC01) -> tuple[bool, str]:
    if not pred:
        return False, "empty answer"
    ok, why = guard(gt, pred, rules)
    if not ok:
        return False, why
    if rules.first_guard:
        return legacy.match(gt, pred, tolerance, prepare=rules.prepare)
    if "unable to determine" in pred.lower():
        return False, "'unable to determine'"
    gt_nums, pred_nums = read_numbers(gt, rules.prepare), read_numbers(pred, rules.prepare)
    if gt_nums and pred_nums:
        if rules.newest:
            listed = lists.list_match(gt, pred, gt_nums, drop_context_years(gt, gt_nums, pred_nums), tolerance)
            if listed is not None:
                return listed
        if len(gt_nums) > 1:
            return _all_present(gt, pred, gt_nums, pred_nums, tolerance)
        return _one_present(gt, pred, gt_nums[0], pred_nums, tolerance)
    g, p = clean_text(gt, collapse_spaces=True), clean_text(pred, collapse_spaces=True)
    return (True, "text match") if g in p else (False, f"text {gt!r} not in {pred!r}")


def _close(g: Found, p: Found, tol: float) -> bool:
    return units_agree(g.unit, p.unit) and relative_close(g.value, p.value, tol)


def _all_present(gt: str, pred: str, gt_nums: list[Found], pred_nums: list[Found], tol: float) -> tuple[bool, str]:
    keep_years = any(is_year(g.value) for g in gt_nums)
    candidates = [p for p in pred_nums if keep_years or not is_year(p.value)]
    missing = [g.value for g in gt_nums if not any(_close(g, p, tol) and text_agrees(gt, pred) for p in candidates)]
    if missing:
        return False, f"found {len(gt_nums) - len(missing)}/{len(gt_nums)} numbers; missing {missing}"
    return True, f"all {len(gt_nums)} numbers found"


def _one_present(gt: str, pred: str, g: Found, pred_nums: list[Found], tol: float) -> tuple[bool, str]:
    skip_years = not (is_year(g.value) or significant_text(gt))
    for p in pred_nums:
        if skip_years and is_year(p.value):
            continue
        if _close(g, p, tol) and text_agrees(gt, pred):
            return True, f"numeric match {p.value:g} ~ {g.value:g}"
    return False, f"no number within {tol:.2%} of {g.value:g} (with compatible units)"
