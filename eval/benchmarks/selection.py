"""A reviewed selection of a benchmark's tasks: one decision per task, each with its reason.

A selection file is CSV with the header `uid,decision,reason` (lines starting with `#` are notes):
every task of the benchmark has a row, `include` or `exclude`, and a one-line reason, so the subset
can be reviewed line by line and a question added to or dropped from the benchmark cannot slip in or
out unnoticed. `selection: NAME` names a file shipped in `eval/benchmarks/selections/NAME.csv`; a
path names any other.
"""

from __future__ import annotations

import csv
from pathlib import Path

from eval.benchmarks.base import BenchmarkError
from runners.core.task import Task

SHIPPED = Path(__file__).resolve().parent / "selections"
DECISIONS = ("include", "exclude")
_SHOWN = 5


def selection_path(name: str) -> Path:
    """A shipped selection by name, else the path given."""
    shipped = SHIPPED / f"{name}.csv"
    if "/" not in name and not name.endswith(".csv"):
        if not shipped.is_file():
            have = sorted(p.stem for p in SHIPPED.glob("*.csv"))
            raise BenchmarkError(f"no shipped selection {name!r}; shipped: {', '.join(have)} (or give a path to a CSV file)")
        return shipped
    return Path(name).expanduser()


def read_selection(path: Path) -> dict[str, tuple[str, str]]:
    """{uid: (decision, reason)}; a malformed file is a BenchmarkError naming the line."""
    if not path.is_file():
        raise BenchmarkError(f"selection file {path} does not exist")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    reader = csv.DictReader(lines)
    if reader.fieldnames != ["uid", "decision", "reason"]:
        raise BenchmarkError(f"{path}: the header must be uid,decision,reason (it is {reader.fieldnames})")
    out: dict[str, tuple[str, str]] = {}
    for n, row in enumerate(reader, start=2):
        uid, decision, reason = ((row.get(k) or "").strip() for k in ("uid", "decision", "reason"))
        if not uid or decision not in DECISIONS or not reason:
            raise BenchmarkError(f"{path}: row {n} needs a uid, a decision ({' or '.join(DECISIONS)}) and a reason: {row}")
        if uid in out:
            raise BenchmarkError(f"{path}: {uid} is decided twice")
        out[uid] = (decision, reason)
    return out


def apply_selection(tasks: list[Task], name: str) -> list[Task]:
    """The included tasks, in the benchmark's order. The selection must decide exactly the tasks the
    benchmark has: one it does not decide was not reviewed, one it decides that is missing means the
    data is another version than the one reviewed."""
    path = selection_path(name)
    rows = read_selection(path)
    ids = [t.id for t in tasks]
    undecided = [i for i in ids if i not in rows]
    absent = [u for u in rows if u not in set(ids)]
    for what, which in (("has no decision for", undecided), ("decides", absent)):
        if which:
            more = " …" if len(which) > _SHOWN else ""
            tail = "" if which is undecided else " that the questions do not have"
            raise BenchmarkError(f"selection {path} {what} {len(which)} task(s){tail}: {', '.join(which[:_SHOWN])}{more}; "
                                 f"it was reviewed for other data ({len(rows)} tasks): prepare the data it names, or review a selection of your own")
    return [t for t in tasks if rows[t.id][0] == "include"]
