"""The OfficeQA reward rule before the direct-answer guard (commits 0da20e9 and 460ad51).

Both take the *first* FINAL_ANSWER tag (its whole content, over several lines if need be) or,
without a tag, the whole message; a prediction matches when *some* number of it is within
tolerance of the ground truth (every ground-truth number, for a multi-number answer), ignoring
unit words and incidental years, and the ground truth's words appear; text answers match by
substring. So a hedged "2,602 or 2,628" passes. The two commits differ only in how commas are
removed before numbers are read: 0da20e9 drops every comma (so "[44.00,231.52]" reads as
44.00231 and 52), 460ad51 only commas inside thousands groups.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from eval.judges.officeqa_reward.numbers import (
    Found,
    clean_text,
    is_year,
    read_numbers,
    relative_close,
    significant_text,
    text_agrees,
)

_FIRST_TAG = re.compile(r"<FINAL_ANSWER>\s*(.*?)\s*</FINAL_ANSWER>", re.S | re.I)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def extract(message: str) -> str | None:
    """The first tag's content; the whole message when there is no tag; None for an empty tag or message."""
    if not message:
        return None
    m = _FIRST_TAG.search(message)
    if m is None:
        return message
    return m.group(1).strip() or None


def drop_all_commas(text: str) -> str:
    return text.replace("\u2212", "-").replace(",", "")


def drop_thousands_commas(text: str) -> str:
    return _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text.replace("\u2212", "-"))


def match(gt: str, pred: str | None, tolerance: float, prepare: Callable[[str], str]) -> tuple[bool, str]:
    if not pred:
        return False, "empty answer"
    gt_nums, pred_nums = read_numbers(gt, prepare), read_numbers(pred, prepare)
    if gt_nums and pred_nums:
        if len(gt_nums) > 1:
            return _all_present(gt, pred, gt_nums, pred_nums, tolerance)
        return _one_present(gt, pred, gt_nums[0], pred_nums, tolerance)
    g, p = clean_text(gt, collapse_spaces=False), clean_text(pred, collapse_spaces=False)
    return (True, "text match") if g in p else (False, f"text {gt!r} not in {pred!r}")


def _all_present(gt: str, pred: str, gt_nums: list[Found], pred_nums: list[Found], tol: float) -> tuple[bool, str]:
    keep_years = any(is_year(g.value) for g in gt_nums)
    candidates = [p for p in pred_nums if keep_years or not is_year(p.value)]
    missing = [g.value for g in gt_nums
               if not any(relative_close(g.value, p.value, tol) and text_agrees(gt, pred) for p in candidates)]
    if missing:
        return False, f"found {len(gt_nums) - len(missing)}/{len(gt_nums)} numbers; missing {missing}"
    return True, f"all {len(gt_nums)} numbers found"


def _one_present(gt: str, pred: str, g: Found, pred_nums: list[Found], tol: float) -> tuple[bool, str]:
    skip_years = not (is_year(g.value) or significant_text(gt))
    for p in pred_nums:
        if skip_years and is_year(p.value):
            continue
        if relative_close(g.value, p.value, tol) and text_agrees(gt, pred):
            return True, f"numeric match {p.value:g} ~ {g.value:g}"
    return False, f"no number within {tol:.2%} of {g.value:g}"
