"""The harness as an axis of the report, on constructed records of two harnesses (no binaries needed):
Table 1 has a row per harness, a method is paired with the baseline of its own harness only, and the
leaderboard ranks harness × model. A record from before the field reads as our own loop.

Pass patterns (rubric pass rate, one seed, tasks t1 t2 with 2 rubrics each):
  dci   m1 dci 10 00 -> 25%   runningtab 11 10 -> 75%     m2 dci 11 00 -> 50%
  codex m1 dci 11 11 -> 100%  runningtab 11 01 -> 75%     m2 runningtab 00 00 -> 0%
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from eval.report import write_report
from runners.core.record_types import Cell, JobMeta
from runners.tracking.cells import cell_config
from tests.helpers.report_sweeps import rubric_scores, write_job

PATTERNS = {
    ("dci", "m1", "dci"): {"t1": "10", "t2": "00"},
    ("dci", "m1", "runningtab"): {"t1": "11", "t2": "10"},
    ("dci", "m2", "dci"): {"t1": "11", "t2": "00"},
    ("codex", "m1", "dci"): {"t1": "11", "t2": "11"},
    ("codex", "m1", "runningtab"): {"t1": "11", "t2": "01"},
    ("codex", "m2", "runningtab"): {"t1": "00", "t2": "00"},
}


def _sweep(sdir: Path, patterns: dict[tuple[str, str, str], dict[str, str]]) -> Path:
    scratch = sdir.parent / "scratch"
    for (harness, model, method), tasks in patterns.items():
        for task, passed in tasks.items():
            d = write_job(scratch, "wb", task, method, model, 0, rubric_scores([f"{task} {i}" for i in range(2)], passed))
            if harness != "dci":  # as the runner writes it: the field, and the id that differs
                job = json.loads((d / "job.json").read_text())
                job |= {"job_id": f"{job['job_id']}__{harness}", "harness": harness,
                        "config": {**job["config"], "agent": {"harness": harness}}}
                (d / "job.json").write_text(json.dumps(job))
                d = d.rename(d.with_name(job["job_id"]))
            sdir.mkdir(parents=True, exist_ok=True)
            shutil.move(d, sdir / d.name)
    return sdir


def _rows(report: Path, name: str) -> list[dict[str, str]]:
    with open(report / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_table1_pairs_within_each_harness_and_the_leaderboard_ranks_harness_by_model(tmp_path: Path) -> None:
    report = write_report(_sweep(tmp_path / "sw", PATTERNS))
    t1 = {(r["harness"], r["model"], r["method"]): float(r["rubric_pass_rate"]) for r in _rows(report, "table1")}
    assert t1 == {(h, mo, me): pytest.approx(v) for (h, mo, me), v in {
        ("dci", "m1", "dci"): 25.0, ("dci", "m1", "runningtab"): 75.0, ("dci", "m2", "dci"): 50.0,
        ("codex", "m1", "dci"): 100.0, ("codex", "m1", "runningtab"): 75.0, ("codex", "m2", "runningtab"): 0.0}.items()}
    assert [r["harness"] for r in _rows(report, "table1")] == ["dci"] * 3 + ["codex"] * 3  # our own loop first
    paired = {(r["harness"], r["model"], r["method"]): r for r in _rows(report, "table1_vs_dci") if r["metric"] == "rubric_pass_rate"}
    assert set(paired) == {("dci", "m1", "runningtab"), ("codex", "m1", "runningtab")}  # codex m2 has no codex baseline
    assert float(paired[("dci", "m1", "runningtab")]["diff"]) == pytest.approx(50.0)
    assert float(paired[("codex", "m1", "runningtab")]["diff"]) == pytest.approx(-25.0)
    assert paired[("codex", "m1", "runningtab")]["pairs"] == "2"

    board = {(r["harness"], r["method"]): (r["m1"], r["m2"]) for r in _rows(report, "leaderboard")}
    assert board == {("dci", "dci"): ("25.0", "50.0"), ("dci", "runningtab"): ("75.0", ""),
                     ("codex", "dci"): ("100.0", ""), ("codex", "runningtab"): ("75.0", "0.0")}  # blank: no result, never 0
    assert {r["metric"] for r in _rows(report, "leaderboard")} == {"rubric_pass_rate"}
    md = (report / "leaderboard.md").read_text()
    assert "| wb | rubric_pass_rate | codex | dci | **100.00** |" in md  # the best of the m1 column
    index = (report / "index.html").read_text()
    assert "Leaderboard: harness × model" in index and "codex · runningtab" in index  # the jobs table names the harness


def test_a_report_of_our_own_loop_alone_has_no_harness_column_and_no_leaderboard(tmp_path: Path) -> None:
    report = write_report(_sweep(tmp_path / "sw", {k: v for k, v in PATTERNS.items() if k[0] == "dci"}))
    assert "harness" not in _rows(report, "table1")[0] and "harness" not in _rows(report, "table1_vs_dci")[0]
    assert not (report / "leaderboard.csv").exists() and "Leaderboard" not in (report / "report.md").read_text()


def test_a_record_before_the_field_reads_as_its_config_says_else_our_own_loop() -> None:
    old = {"job_id": "j", "benchmark": "b", "task_id": "t", "method": "dci", "model": "m", "seed": 0, "config": {}}
    assert JobMeta.from_json(old).harness == "dci"
    assert JobMeta.from_json({**old, "config": {"agent": {"harness": "codex"}}}).harness == "codex"
    assert JobMeta.from_json({**old, "harness": "claude_code"}).harness == "claude_code"
    assert JobMeta.from_json(JobMeta("j", "b", "t", "dci", "m", 0, harness="codex").to_json()).harness == "codex"


def test_a_cell_of_a_production_harness_is_named_and_keyed_by_it() -> None:
    ours, theirs = Cell("wb", "runningtab", "m", 0), Cell("wb", "runningtab", "m", 0, "codex")
    assert ours.name == "wb__runningtab__m__s0"  # our own loop's cells keep their names (W&B runs, spend)
    assert theirs.name == "wb__codex__runningtab__m__s0"
    assert Cell.of_job(JobMeta("j", "wb", "t", "runningtab", "m", 0, harness="codex")) == theirs
    assert cell_config(theirs, {}, "sw", False)["harness"] == "codex" and cell_config(ours, {}, "sw", False)["harness"] == "dci"


def test_figure5_compares_a_harness_s_methods_among_themselves(tmp_path: Path) -> None:
    """Figure 5's gain is a method minus the baseline of its own harness (the other analyses keep a
    production harness's method apart the same way: `Job.harness_method`)."""
    from eval.report.analyses import figure5
    from eval.report.load import load_sweep

    by = figure5._pairs(load_sweep(_sweep(tmp_path / "sw", PATTERNS)))
    assert set(by) == {("wb", "m1"), ("wb", "codex · m1")}  # m2 has no pair in either harness
    assert {j.harness for js in by[("wb", "codex · m1")].values() for j in js} == {"codex"}
    assert {j.harness for js in by[("wb", "m1")].values() for j in js} == {"dci"}
