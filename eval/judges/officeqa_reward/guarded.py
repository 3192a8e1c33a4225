"""The OfficeQA reward rule with the direct-answer guard (commit 309dc01, the newest).

The answer is the *last* FINAL_ANSWER tag (the whole message without one). Before any matching,
the guard rejects an answer that is not a single direct value: several non-empty lines, more
than 250 characters, a different count of numbers than the ground truth (incidental years
aside), markup, numbers where the ground truth is text, or text that differs from a text ground
truth. Numbers are read after accounting parentheses become negatives and currency symbols go;
only well-formed thousands groups lose their commas; explicit units on both sides must agree.
A bracketed numeric list in the ground truth is matched in order, and a prediction's commas may
be regrouped to find the items ("[374,443,381,327]" answers "[374,443, 381,327]").
"""

from __future__ import annotations

import re

from eval.judges.officeqa_reward.lists import list_match, list_shape, prepare, segment
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


def guard(gt: str, pred: str) -> tuple[bool, str]:
    """Whether `pred` is one direct answer of the ground truth's shape (see module doc)."""
    pred = pred.strip()
    if not pred:
        return False, "empty answer"
    if len([line for line in pred.splitlines() if line.strip()]) > 1:
        return False, "multi-line answer"
    if len(pred) > MAX_DIRECT_CHARS:
        return False, f"answer longer than {MAX_DIRECT_CHARS} characters"
    gt_nums, pred_nums = read_numbers(gt, prepare), read_numbers(pred, prepare)
    if gt_nums:
        pred_nums = drop_context_years(gt, gt_nums, pred_nums)
        if len(pred_nums) != len(gt_nums):
            shape = list_shape(gt, gt_nums)
            if shape is None or not segment(pred, len(shape)):
                return False, f"expected {len(gt_nums)} number(s), the answer has {len(pred_nums)}"
        if _MARKUP.search(pred):
            return False, "markup around the answer value"
        return True, "direct answer"
    if pred_nums:
        return False, "numbers in the answer, the ground truth is text"
    if clean_text(gt, collapse_spaces=True) != clean_text(pred, collapse_spaces=True):
        return False, "a text answer must equal the ground truth"
    return True, "direct answer"


def match(gt: str, pred: str | None, tolerance: float) -> tuple[bool, str]:
    if not pred:
        return False, "empty answer"
    ok, why = guard(gt, pred)
    if not ok:
        return False, why
    if "unable to determine" in pred.lower():
        return False, "'unable to determine'"
    gt_nums, pred_nums = read_numbers(gt, prepare), read_numbers(pred, prepare)
    if gt_nums and pred_nums:
        listed = list_match(gt, pred, gt_nums, drop_context_years(gt, gt_nums, pred_nums), tolerance)
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
