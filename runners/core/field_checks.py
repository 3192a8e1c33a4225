"""A record document checked field by field before any reader indexes into it.

A record is read long after it was written, by code that trusts its shape: a table sums `cost`, a
page joins `deliverable`, the replay walks `read_log`. A document that a bucket anyone may write, a
hand edit or an import left in another shape must stop at its reader as one `RecordError` naming
the file and the field (the reader then skips and names the record), never as a `TypeError` deep
in an analysis. Each check is a predicate and the words that say what it wants.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

Check = tuple[Callable[[Any], bool], str]


class RecordError(ValueError):
    """A job directory lacks what the reader needs, or holds a document it cannot read."""


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _amount(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


STR: Check = (lambda v: isinstance(v, str), "a string")
BOOL: Check = (lambda v: isinstance(v, bool), "true or false")
INT: Check = (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number")
COUNT: Check = (_count, "an integer >= 0")
NUMBER: Check = (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number")
AMOUNT: Check = (_amount, "a number >= 0")
OBJECT: Check = (lambda v: isinstance(v, dict), "an object")


def optional(check: Check) -> Check:
    ok, what = check
    return (lambda v: v is None or ok(v)), f"{what} or null"


def list_of(check: Check) -> Check:
    ok, what = check
    return (lambda v: isinstance(v, list) and all(ok(x) for x in v)), f"a list of ({what})"


def map_of(check: Check) -> Check:
    """An object whose every value passes `check` (JSON's keys are strings)."""
    ok, what = check
    return (lambda v: isinstance(v, dict) and all(ok(x) for x in v.values())), f"an object of ({what})"


STRS = list_of(STR)
OBJECTS = list_of(OBJECT)


def shown(value: Any) -> str:
    """A value as a message shows it: short, whatever it holds."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def check_fields(doc: Any, what: str, checks: dict[str, Check], required: Iterable[str] = ()) -> dict[str, Any]:
    """`doc` itself once it is an object holding every `required` key and each of its `checks`' fields
    passes (a field it lacks is not checked); else a RecordError naming `what` and the field."""
    if not isinstance(doc, dict):
        raise RecordError(f"{what} is not a JSON object (it is {type(doc).__name__})")
    missing = [k for k in required if k not in doc]
    if missing:
        raise RecordError(f"{what} lacks {', '.join(f'`{k}`' for k in missing)}")
    for name, value in doc.items():  # a document's own fields: fewer than the checks, often
        check = checks.get(name)
        if check is not None and not check[0](value):
            raise RecordError(f"{what}: `{name}` should be {check[1]}, not {shown(value)}")
    return doc


def check_each(docs: Any, what: str, checks: dict[str, Check], required: Iterable[str] = ()) -> list[dict[str, Any]]:
    """A list whose every item passes `check_fields` (`what[i]` names the one that does not)."""
    if not isinstance(docs, list):
        raise RecordError(f"{what} should be a list, not {shown(docs)}")
    required = tuple(required)
    for i, doc in enumerate(docs):
        check_fields(doc, f"{what}[{i}]", checks, required)
    return docs
