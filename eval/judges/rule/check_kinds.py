"""The check language of native rubrics and checkpoints, scored without an LLM.

A check is a JSON object with a `type`. Paths are workspace-relative and may be globs; a file is
looked up in the agent's deliverable first, then in the original workspace (unless the agent
deleted it). When `file` matches several files their text (or tables) are pooled; when `file` is
left out, the task's `output` is used (a file, or every deliverable file under a folder). Files are
read through the job's extraction session (eval/judges/extract/session.py: out of process, within limits); a
check that reads a file that is unreadable fails with the reason.

  contains  {file?, values: [..], case_sensitive?: false, tolerance?: 0}
            every value appears in the text. Numeric values ("55,000", 55000, "¥55,000", "12.5%")
            match a number in the text within the relative tolerance; text values match as whole
            words after `normalize` (case, punctuation, markup, thousands separators ignored).
  absent    {file?, values: [..]}        no value appears (the file must exist).
  order     {file?, values: [..]}        the values appear in this order.
  headings  {file?, values: [..], ordered?: true}
            each value is part of a heading (markdown `#`, docx Title/Heading, pptx slide title).
  row       {file?, cells: [..], tolerance?: 0}
            one table row holds every value, each in a cell of its own: a number must be the
            cell's number (`eval.judges.rule.matching.cell_number`), text must be words of a cell that holds
            little else (`eval.judges.rule.matching.cell_matches`).
  row_count {file?, equals?: n, min?: n, max?: n}    data rows (header excluded) of the largest table.
  columns   {file?, names: [..]}         a table header holds every name (case-insensitive).
  exists    {path, min_bytes?: 0}        a file exists in the final workspace.
  same_as   {path, source}               the file is byte-identical to the original `source`.
  file_count {dir, equals?: n, min?: n, max?: n, pattern?: "*"}  files under `dir` (recursive).
  answer    {value, tolerance?: 0}       the final answer matches (OfficeQA reward rule).
  all / any {checks: [..]}               every / at least one sub-check passes.

The checks that read content (contains, absent, order, headings, row, row_count, columns) also
take `max_copied_files` (default 20): they fail when the deliverable files they read reproduce
more workspace files than that, which is a dump of the workspace, not an answer (eval/judges/rule/bulk.py).
"""

from __future__ import annotations

import glob
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eval.judges.extract.extracted import Extracted, Table
from eval.judges.extract.session import Extractions, current
from eval.judges.officeqa_reward import extract_final_answer, score_answer
from eval.judges.rule.bulk import MAX_COPIED_FILES, workspace_index
from eval.judges.rule.final_files import FinalFiles
from eval.judges.rule.matching import has_words, normalize, row_matches, text_has


class CheckError(ValueError):
    """A check object is malformed (unknown type, missing field)."""


@dataclass(frozen=True)
class Outcome:
    passed: bool
    reason: str


@dataclass
class Context:
    """What a check can look at: the task's files as the agent left them, and its final answer."""

    files: FinalFiles
    output: str
    final_message: str
    copied: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)
    extractions: Extractions = field(default_factory=current)  # the scoring's session when there is one


def _files(ctx: Context, check: dict[str, Any]) -> list[str]:
    pattern = check.get("file") or ctx.output
    return ctx.files.match(pattern)


def _read(ctx: Context, check: dict[str, Any]) -> tuple[list[Extracted], str]:
    """(each matching file as read, '' or a failure reason: none matches, or one is unreadable)."""
    rels = _files(ctx, check)
    if not rels:
        return [], f"no file matches {check.get('file') or ctx.output!r}"
    got = [ctx.extractions.get(*ctx.files.locate(r)) for r in rels]
    return got, "; ".join(f"{r} is unreadable: {e.error}" for r, e in zip(rels, got, strict=True) if e.error)


def _texts(ctx: Context, check: dict[str, Any]) -> tuple[str, str]:
    """(pooled text, '' or a failure reason)."""
    got, err = _read(ctx, check)
    return "\n".join(e.text for e in got), err


def _tables(ctx: Context, check: dict[str, Any]) -> tuple[list[Table], str]:
    got, err = _read(ctx, check)
    return [t for e in got for t in e.tables], err


def _bulk(ctx: Context, check: dict[str, Any]) -> str:
    """'' or why the deliverable files this check reads are a dump of the workspace: they reproduce
    more than `max_copied_files` workspace files (eval/judges/rule/bulk.py). Files the agent left untouched
    are the workspace's own and are not judged for copying."""
    rels = tuple(r for r in _files(ctx, check) if r in ctx.files.delivered)
    if not rels:
        return ""
    if rels not in ctx.copied:
        text = "\n".join(_texts(ctx, {"file": glob.escape(r)})[0] for r in rels)
        ctx.copied[rels] = workspace_index(ctx.files.originals()).copied(text)
    copied, limit = ctx.copied[rels], int(check.get("max_copied_files", MAX_COPIED_FILES))
    if len(copied) <= limit:
        return ""
    return f"bulk copy: the deliverable reproduces {len(copied)} workspace files (more than {limit}), e.g. {copied[:3]}"


def _values(check: dict[str, Any], key: str = "values") -> list[Any]:
    values = check.get(key)
    if not isinstance(values, list) or not values:
        raise CheckError(f"check {check.get('type')!r} needs a non-empty list {key!r}")
    return values


def _contains(ctx: Context, c: dict[str, Any]) -> Outcome:
    text, err = _texts(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    cs, tol = bool(c.get("case_sensitive", False)), float(c.get("tolerance", 0.0))
    missing = [v for v in _values(c) if not text_has(text, v, cs, tol)]
    return Outcome(not missing, f"missing {missing}" if missing else "all values found")


def _absent(ctx: Context, c: dict[str, Any]) -> Outcome:
    text, err = _texts(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    found = [v for v in _values(c) if text_has(text, v, bool(c.get("case_sensitive", False)))]
    return Outcome(not found, f"found {found}" if found else "none found")


def _order(ctx: Context, c: dict[str, Any]) -> Outcome:
    text, err = _texts(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    norm, pos = f" {normalize(text)} ", 0
    for v in _values(c):
        want = f" {normalize(str(v))} "
        i = norm.find(want, pos)
        if i < 0:
            return Outcome(False, f"{v!r} {'missing' if want not in norm else 'out of order'}")
        pos = i + 1
    return Outcome(True, "in order")


def _headings(ctx: Context, c: dict[str, Any]) -> Outcome:
    got, err = _read(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    heads = [h for e in got for h in e.headings]
    pos = 0
    for v in _values(c):
        idx = [i for i, h in enumerate(heads) if has_words(h, str(v))]
        if not idx:
            return Outcome(False, f"no heading contains {v!r}")
        if c.get("ordered", True):
            later = [i for i in idx if i >= pos]
            if not later:
                return Outcome(False, f"heading {v!r} out of order")
            pos = later[0] + 1
    return Outcome(True, "headings found")


def _row(ctx: Context, c: dict[str, Any]) -> Outcome:
    tables, err = _tables(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    cells, tol = _values(c, "cells"), float(c.get("tolerance", 0.0))
    for table in tables:
        for row in table:
            if row_matches(row, cells, tol):
                return Outcome(True, f"row {row}")
    return Outcome(False, f"no row holds {cells}" + ("" if tables else " (no table found)"))


def _bounds(n: int, c: dict[str, Any], what: str) -> Outcome:
    if "equals" in c and n != c["equals"]:
        return Outcome(False, f"{n} {what}, expected {c['equals']}")
    if "min" in c and n < c["min"]:
        return Outcome(False, f"{n} {what}, expected at least {c['min']}")
    if "max" in c and n > c["max"]:
        return Outcome(False, f"{n} {what}, expected at most {c['max']}")
    return Outcome(True, f"{n} {what}")


def _row_count(ctx: Context, c: dict[str, Any]) -> Outcome:
    tables, err = _tables(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    return _bounds(max((len(t) - 1 for t in tables if t), default=0), c, "data rows")


def _columns(ctx: Context, c: dict[str, Any]) -> Outcome:
    tables, err = _tables(ctx, c)
    err = err or _bulk(ctx, c)
    if err:
        return Outcome(False, err)
    names = [normalize(str(n)) for n in _values(c, "names")]
    for t in tables:
        header = [normalize(h) for h in t[0]] if t else []
        if all(n in header for n in names):
            return Outcome(True, f"header {t[0]}")
    return Outcome(False, f"no table header holds {names}")


def _exists(ctx: Context, c: dict[str, Any]) -> Outcome:
    rels = ctx.files.match(_required(c, "path"))
    big = [r for r in rels if ctx.files.path(r).stat().st_size >= int(c.get("min_bytes", 0))]
    return Outcome(bool(big), f"found {big[:3]}" if big else f"no file {c['path']!r}")


def _same_as(ctx: Context, c: dict[str, Any]) -> Outcome:
    rels = ctx.files.match(_required(c, "path"))
    src = ctx.files.original(_required(c, "source"))
    if not rels:
        return Outcome(False, f"no file {c['path']!r}")
    if src is None:
        raise CheckError(f"same_as: source {c['source']!r} is not in the task's workspace")
    same = ctx.files.path(rels[0]).read_bytes() == src.read_bytes()
    return Outcome(same, "identical" if same else "content differs from the original")


def _file_count(ctx: Context, c: dict[str, Any]) -> Outcome:
    d = _required(c, "dir").rstrip("/")
    rels = ctx.files.match(f"{d}/**/{c.get('pattern', '*')}")
    return _bounds(len(rels), c, f"files under {d}/")


def _answer(ctx: Context, c: dict[str, Any]) -> Outcome:
    pred = extract_final_answer(ctx.final_message)
    ok, reason = score_answer(str(_required(c, "value")), pred, float(c.get("tolerance", 0.0)))
    return Outcome(ok, reason)


def _all(ctx: Context, c: dict[str, Any]) -> Outcome:
    outs = [run_check(ctx, s) for s in _values(c, "checks")]
    bad = [o.reason for o in outs if not o.passed]
    return Outcome(not bad, "; ".join(bad) if bad else "all passed")


def _any(ctx: Context, c: dict[str, Any]) -> Outcome:
    outs = [run_check(ctx, s) for s in _values(c, "checks")]
    good = [o.reason for o in outs if o.passed]
    return Outcome(bool(good), good[0] if good else "; ".join(o.reason for o in outs))


def _required(c: dict[str, Any], key: str) -> Any:
    if c.get(key) in (None, ""):
        raise CheckError(f"check {c.get('type')!r} needs field {key!r}")
    return c[key]


CHECKS: dict[str, Callable[[Context, dict[str, Any]], Outcome]] = {
    "contains": _contains,
    "absent": _absent,
    "order": _order,
    "headings": _headings,
    "row": _row,
    "row_count": _row_count,
    "columns": _columns,
    "exists": _exists,
    "same_as": _same_as,
    "file_count": _file_count,
    "answer": _answer,
    "all": _all,
    "any": _any,
}


REQUIRED: dict[str, tuple[str, ...]] = {
    "contains": ("values",), "absent": ("values",), "order": ("values",), "headings": ("values",),
    "row": ("cells",), "row_count": (), "columns": ("names",), "exists": ("path",), "same_as": ("path", "source"),
    "file_count": ("dir",), "answer": ("value",), "all": ("checks",), "any": ("checks",),
}


def validate(check: dict[str, Any]) -> None:
    """Fail early on an unknown check type (sub-checks included)."""
    kind = check.get("type")
    if kind not in CHECKS:
        raise CheckError(f"unknown check type {kind!r}; valid types: {', '.join(CHECKS)}")
    for key in REQUIRED[kind]:
        if check.get(key) in (None, "", []):
            raise CheckError(f"check {kind!r} needs field {key!r}")
    if kind in ("all", "any"):
        for sub in _values(check, "checks"):
            validate(sub)
    if "tolerance" in check and not (isinstance(check["tolerance"], int | float) and math.isfinite(check["tolerance"])):
        raise CheckError(f"check {kind!r}: 'tolerance' must be a number")
    limit = check.get("max_copied_files", 0)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise CheckError(f"check {kind!r}: 'max_copied_files' must be a whole number >= 0, got {limit!r}")


def run_check(ctx: Context, check: dict[str, Any]) -> Outcome:
    validate(check)
    return CHECKS[check["type"]](ctx, check)
