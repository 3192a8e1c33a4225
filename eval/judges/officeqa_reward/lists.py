"""Reading numbers and bracketed lists the way the newest OfficeQA reward rule (309dc01) does.

A list's commas are ambiguous: "[374,443, 381,327]" is two items with thousands separators,
"[44.00,231.52]" two items without a space. The rule therefore splits the text at every comma and
tries each way of regrouping the pieces into exactly as many items as the ground truth has
numbers; an item is valid when it is one number (a thousands group may not have a space next to
its commas). The ground truth must itself regroup into its own numbers to count as a list.
"""

from __future__ import annotations

import functools
import re

from eval.judges.officeqa_reward.numbers import Found, is_year, relative_close

_CURRENCY = "$£€¥₹¢₩₽"
_BODY = r"\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?"
_ACCOUNTING = re.compile(rf"\(\s*([{_CURRENCY}])?\s*({_BODY})\s*\)")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)")
_ITEM = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?")
_BRACKETS = re.compile(r"\[([^\[\]]+)\]")


def _base(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2212", "-")).strip()


def money(text: str) -> str:
    """Accounting parentheses as a minus sign (a bare year in parentheses stays), currency symbols dropped."""

    def negative(m: re.Match[str]) -> str:
        if m.group(1) is None and is_year(float(m.group(2).replace(",", ""))):
            return m.group(0)
        return f"-{m.group(2)}"

    return re.sub(f"[{re.escape(_CURRENCY)}]", "", _ACCOUNTING.sub(negative, text))


def prepare(text: str) -> str:
    """The text numbers are read from: normalised, money-formatted, thousands commas removed."""
    return _THOUSANDS.sub(lambda m: m.group().replace(",", ""), money(_base(text)))


def bracket_body(text: str) -> str | None:
    """The inside of the text's only bracketed list, when what is around it has no digits."""
    t = _base(text)
    found = list(_BRACKETS.finditer(t))
    if len(found) != 1:
        return None
    outside = t[: found[0].start()] + t[found[0].end() :]
    return None if re.search(r"\d", outside) else found[0].group(1)


def _item(raw: str) -> float | None:
    item = raw.strip()
    if not item or ("," in item and re.search(r"\s,|,\s", item)):
        return None
    item = money(_base(item))
    return float(item.rstrip("%").replace(",", "")) if _ITEM.fullmatch(item) else None


def segment(text: str, n: int) -> list[tuple[float, ...]]:
    """Every distinct way of reading `text` (its list, else all of it) as exactly `n` comma-separated numbers."""
    if n < 2:
        return []
    body = bracket_body(text) or _base(text)
    pieces = body.split(",")
    if len(pieces) < n:
        return []

    @functools.cache
    def ways(start: int, left: int) -> tuple[tuple[float, ...], ...]:
        if left == 0:
            return ((),) if start == len(pieces) else ()
        out = []
        for end in range(start + 1, len(pieces) - left + 2):
            value = _item(",".join(pieces[start:end]))
            if value is not None:
                out.extend((value, *rest) for rest in ways(end, left - 1))
        return tuple(out)

    return list(dict.fromkeys(ways(0, n)))


def list_shape(gt: str, gt_nums: list[Found]) -> list[Found] | None:
    """The ground truth's numbers when it is a bracketed list of them (its own regrouping agrees)."""
    body = bracket_body(gt)
    if body is None or len(gt_nums) < 2:
        return None
    values = tuple(g.value for g in gt_nums)
    return gt_nums if values in segment(body, len(gt_nums)) else None


def _in_order(gt_nums: list[Found], pred: list[Found], tol: float) -> bool:
    if len(gt_nums) != len(pred):
        return False
    for g, p in zip(gt_nums, pred, strict=True):
        if g.unit is not None and p.unit is not None and g.unit != p.unit:
            return False
        if not relative_close(g.value, p.value, tol):
            return False
    return True


def list_match(gt: str, pred: str, gt_nums: list[Found], pred_nums: list[Found], tol: float) -> tuple[bool, str] | None:
    """The ordered list verdict, or None when the ground truth is not a bracketed numeric list."""
    shape = list_shape(gt, gt_nums)
    if shape is None:
        return None
    readings = segment(pred, len(shape))
    for values in readings:
        if _in_order(shape, [Found(v, "") for v in values], tol):
            return True, f"list match ({len(values)} items in order)"
    if _in_order(shape, pred_nums, tol):
        return True, f"list match (all {len(shape)} numbers in order)"
    return False, f"list mismatch: expected {[g.value for g in shape]}, read {[p.value for p in pred_nums]} or {readings[:3]}"
