"""The job record's file names and its schema version: spelled here and nowhere else.

A job directory holds `job.json` (what ran: `JobMeta`), `trajectory.jsonl` (every message, appended
as it happens), `<plugin>.json` (each plugin's record, `tab.json` for the tab; `shown.json`, the workspace content the agent
was shown, for every job), `evaluator_view.json`
(what judges may read), `deliverable/` (the files the agent created or changed), `result.json`
(written last: `Result`), `scores.json` (the judge's verdict) and `extracted.json` (the text the
judges read out of each deliverable file, written with the scores: what the report reads instead of
parsing the deliverable).

`SCHEMA_VERSION` counts changes of these documents' shape. Version 1 is every record written before
the field existed; readers fill what it lacks, so old sweeps stay readable.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envs.safeio import (
    write_json as write_json,  # the one atomic JSON write, re-exported
)

SCHEMA_VERSION = 3  # 3: result.json's left_out and left_out_rest; names that are not UTF-8 as \udcXX escapes
JOB = "job.json"
RESULT = "result.json"
SCORES = "scores.json"
EXTRACTED = "extracted.json"
VIEW = "evaluator_view.json"
TRAJECTORY = "trajectory.jsonl"
DELIVERABLE = "deliverable"
TAB = "tab.json"  # the tab plugin's record (`plugin_file("tab")`)
SHOWN = "shown.json"  # the shown log every job keeps (`plugin_file("shown")`: tab/shown.py)


def plugin_file(name: str) -> str:
    """The file a method plugin's record is written to."""
    return f"{name}.json"


MAX_DEPTH = 64  # the record's documents nest under 12 levels; deeper would take readers that recurse past Python's limit
KEEP_DEPTH = MAX_DEPTH - 16  # what the writers keep (`bounded`): a message or an item sits inside a document
DEEPER = f"[nested deeper than {KEEP_DEPTH} levels: not kept]"
_NESTED = (dict, list)


def _within(doc: Any, limit: int) -> bool:
    """Whether `doc` nests at most `limit` levels (breadth first, containers only: one pass)."""
    level, depth = ([doc] if type(doc) in _NESTED else []), 0
    while level:
        depth += 1
        if depth > limit:
            return False
        level = [c for v in level for c in (v.values() if type(v) is dict else v) if type(c) in _NESTED]
    return True


def parse_json(text: str | bytes) -> Any:
    """One JSON document nested at most `MAX_DEPTH` levels: a ValueError for anything else (json's
    `JSONDecodeError` for text that is not JSON). Every reader of a record's documents parses here:
    a document is what a bucket, a hand or an import may have written."""
    try:
        doc = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    if not _within(doc, MAX_DEPTH):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    return doc


def bounded(doc: Any) -> Any:
    """`doc` as the record keeps it: itself when it nests at most `KEEP_DEPTH` levels, else a copy
    whose containers past that depth are `DEEPER`. What reaches a record from outside (a harness's
    tool schemas, a server's extra reply fields) may nest as deep as its parser allowed; every
    record the writers write is then one `parse_json` reads back."""
    if _within(doc, KEEP_DEPTH):
        return doc
    root: Any = {} if type(doc) is dict else []
    stack = [(doc, root, 1)]
    while stack:  # a copy without recursion: the document may be deeper than Python's stack
        src, dst, depth = stack.pop()
        for key, value in (src.items() if type(src) is dict else enumerate(src)):
            if type(value) in _NESTED:
                if depth >= KEEP_DEPTH:
                    value = DEEPER
                else:
                    copy: Any = {} if type(value) is dict else []
                    stack.append((value, copy, depth + 1))
                    value = copy
            if type(dst) is dict:
                dst[key] = value
            else:
                dst.append(value)
    return root


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return parse_json(f.read())
