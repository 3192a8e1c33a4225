"""Which rubrics fail most, across tasks, under each method: per benchmark, every rubric or checkpoint
that failed somewhere, with how often it failed under each method (over models and seeds), the
rubrics that fail most first. Where Table 1 says how much a method passes, this says what it misses.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from eval.report.load import Sweep
from eval.report.method_names import method_key
from eval.report.section import Section, Skip, Table, pct

TOP = 25  # rubrics shown per benchmark
TEXT_CHARS = 120
ITEM_KINDS = ("rubric", "checkpoint")

Rubric = tuple[str, str, int]  # (benchmark, task, item index)


def build(sweep: Sweep, out: Path) -> Section:
    runs: dict[Rubric, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    texts: dict[Rubric, str] = {}
    for j in sweep.scored():
        for item in (j.scores or {}).get("items", []):
            if item.get("kind") in ITEM_KINDS:
                key = (j.benchmark, j.task_id, int(item.get("index", -1)))
                runs[key][j.method].append(item.get("passed") is True)
                texts.setdefault(key, str(item.get("text", "")))
    if not runs:
        raise Skip("no scored job has rubric or checkpoint items")
    methods = sorted({m for per in runs.values() for m in per}, key=method_key)
    columns = ["benchmark", "task", "index", "text"]
    for m in methods:
        columns += [f"{m}_failed", f"{m}_runs", f"{m}_failed_pct"]
    head = ["benchmark", "task", "#", "rubric", *(f"{m}: failed" for m in methods)]
    rows, shown, notes = [], [], []
    for bench in sorted({k[0] for k in runs}):
        keys = [k for k in runs if k[0] == bench]
        failing = [k for k in keys if any(not ok for oks in runs[k].values() for ok in oks)]
        failing.sort(key=lambda k: (-_worst(runs[k]), -_failures(runs[k]), k[1], k[2]))
        if len(failing) > TOP:
            notes.append(f"{bench}: the {TOP} rubrics that fail most of the {len(failing)} that failed at least once (all in failing.csv)")
        for n, k in enumerate(failing):
            row: list = [*k, texts[k]]
            cells = [k[0], k[1], str(k[2]), _short(texts[k])]
            for m in methods:
                oks = runs[k].get(m, [])
                failed = sum(not ok for ok in oks)
                row += [failed, len(oks), pct(failed / len(oks)) if oks else None]
                cells.append(f"{failed}/{len(oks)} ({pct(failed / len(oks)):.0f}%)" if oks else "")
            rows.append(row)
            if n < TOP:
                shown.append(cells)
    if not rows:
        raise Skip("no rubric or checkpoint failed in any scored job")
    title = "Rubrics that fail most, across tasks: failed runs / runs under each method (over models and seeds)"
    table = Table("failing", title, columns, rows, display=(head, shown), notes=notes)
    return Section("failing", "Rubrics that fail most", tables=[table])


def _worst(per_method: dict[str, list[bool]]) -> float:
    """The highest failure share of the rubric under any method."""
    return max((sum(not ok for ok in oks) / len(oks) for oks in per_method.values() if oks), default=0.0)


def _failures(per_method: dict[str, list[bool]]) -> int:
    return sum(not ok for oks in per_method.values() for ok in oks)


def _short(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"
