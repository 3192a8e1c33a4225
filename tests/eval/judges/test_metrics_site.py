"""Workspace-Bench's Rubric Pass Rate equals the benchmark site's own numbers.

The site publishes `detailed_rubrics_pass_table_all_runs.csv` (github.com/workspace-bench/
workspace-bench.github.io at commit 950a8e32135b5c44751748cf13948426fd4125cd): per setting, the
share of passed rubric rows on easy, medium and hard tasks and in total, to 4 decimals.
Workspace-Bench-Lite has 245 easy, 991 medium and 620 hard rubrics. The four percentages pin down
each level's exact (passed, rows): the test recovers them, checks them against the committed
fixture, then scores records with those counts through `eval.judges.metrics.aggregate` and
compares with what the site printed. The rows are the judge's rows: fewer than the rubrics when
some were left unjudged, more when the judge wrote a row for a repeated or out-of-range index.
"""

from __future__ import annotations

import csv
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from eval.judges.metrics import aggregate

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "workspace_bench_site_rubric_counts.csv"
SOURCE = ("workspace-bench/workspace-bench.github.io", "detailed_rubrics_pass_table_all_runs.csv",
          "950a8e32135b5c44751748cf13948426fd4125cd")
RUBRICS = {"easy": 245, "medium": 991, "hard": 620}


def published() -> list[dict[str, str]]:
    with FIXTURE.open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def percent(passed: int, rows: int) -> Decimal:
    """A share as the site prints it: percent, 4 decimals."""
    return (Decimal(passed) * 100 / Decimal(rows)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)


def fits(value: str, max_rows: int) -> list[tuple[int, int]]:
    """Every (passed, rows) with 1 <= rows <= max_rows that prints as `value`."""
    v = Decimal(value)
    return [(p, n) for n in range(1, max_rows + 1) for p in {int(v * n / 100) + d for d in (-1, 0, 1)}
            if 0 <= p <= n and percent(p, n) == v]


def recover(row: dict[str, str]) -> list[tuple[tuple[int, int], ...]]:
    """The per-level counts that give all four percentages; a level's rows stay below twice its
    rubrics (at twice, doubling every count would fit any setting)."""
    levels = [fits(row[k], 2 * n - 1) for k, n in RUBRICS.items()]
    return [(e, m, h) for e in levels[0] for m in levels[1] for h in levels[2]
            if percent(e[0] + m[0] + h[0], e[1] + m[1] + h[1]) == Decimal(row["total"])]


def level_scores(passed: int, rows: int, rubrics: int) -> dict[str, Any]:
    """A judged task of `rubrics` rubrics whose judge wrote `rows` rows, `passed` of them passing:
    unjudged rubrics when there are fewer rows, rows for repeated indices when there are more."""
    judged = min(rows, rubrics)
    items = [{"kind": "rubric", "index": i, "passed": i < passed, "judged": i < judged} for i in range(rubrics)]
    extra = [{"index": i % rubrics, "passed": judged + k < passed, "reason": "repeated index"}
             for k, i in enumerate(range(rows - judged))]
    return {"items": items, "extra_rows": extra}


def test_the_fixture_is_the_published_file_and_its_counts_are_the_only_ones() -> None:
    rows = published()
    assert len(rows) == 45 and SOURCE[2].startswith("950a8e3")
    for row in rows:
        found = recover(row)
        assert len(found) == 1, (row["setting_name"], found)
        counts = tuple(int(row[f"{k}_{c}"]) for k in RUBRICS for c in ("passed", "rows"))
        assert tuple(x for pair in found[0] for x in pair) == counts, row["setting_name"]


def test_rubric_pass_rate_equals_the_site_in_every_setting() -> None:
    agree = 0
    for row in published():
        levels = {k: level_scores(int(row[f"{k}_passed"]), int(row[f"{k}_rows"]), n) for k, n in RUBRICS.items()}
        for k, scores in levels.items():
            assert percent(round(aggregate([scores])["rubric_pass_rate"] * 10**8), 10**8) == Decimal(row[k]), (row["setting_name"], k)
        total = aggregate(list(levels.values()))["rubric_pass_rate"]
        assert percent(round(total * 10**8), 10**8) == Decimal(row["total"]), row["setting_name"]
        agree += 1
    assert agree == 45


def test_the_site_pools_over_rows_not_over_every_rubric() -> None:
    """Counted from the recovered rows: 23 settings judged every rubric once, 10 wrote fewer rows
    and 12 more; the pass rate over every rubric (unjudged as failed) is another number in 10."""
    kinds = {"equal": 0, "fewer": 0, "more": 0}
    differs = []
    for row in published():
        levels = {k: level_scores(int(row[f"{k}_passed"]), int(row[f"{k}_rows"]), n) for k, n in RUBRICS.items()}
        rows = sum(int(row[f"{k}_rows"]) for k in RUBRICS)
        kinds["equal" if rows == 1856 else "fewer" if rows < 1856 else "more"] += 1
        agg = aggregate(list(levels.values()))
        if rows < 1856:
            differs.append(round((agg["rubric_pass_rate"] - agg["pass_rate"]) * 100, 2))
    assert kinds == {"equal": 23, "fewer": 10, "more": 12}
    assert len(differs) == 10 and max(differs) == pytest.approx(4.18)
