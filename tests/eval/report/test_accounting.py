"""Issue 48's accounting (eval/report/analyses/accounting.py): every planned job of a Table 1 row is
a result or a not-result of a named kind; the paired comparison drops a pair when either side is not
a result; a method whose not-results differ from its baseline's by more than a few jobs is flagged."""

from __future__ import annotations

from pathlib import Path

from eval.report.analyses import accounting
from eval.report.analyses.table1 import build
from eval.report.load import load_sweep
from runners.core.job_status import Planned, read_plan, write_plan
from tests.eval.report.test_stats import patch_result
from tests.helpers.report_sweeps import job_id, rubric_scores, write_job

TEXTS = ["a", "b", "c", "d"]


def _sweep(tmp_path: Path, rt: dict[str, str | None], dci: dict[str, str | None], planned_only: int = 0) -> Path:
    """Tasks t0.. with a pass pattern each (None: no scores); `planned_only` more tasks of runningtab never started."""
    sdir = tmp_path / "s"
    for method, patterns in (("runningtab", rt), ("dci", dci)):
        for task, pattern in patterns.items():
            write_job(sdir, "wb", task, method, "m", 0, None if pattern is None else rubric_scores(TEXTS, pattern))
    plan = [Planned(job_id("wb", t, me, "m", 0), "wb", "dci", "m", me, t, 0) for me, ps in (("runningtab", rt), ("dci", dci)) for t in ps]
    plan += [Planned(f"late{i}", "wb", "dci", "m", "runningtab", f"late{i}", 0) for i in range(planned_only)]
    write_plan(sdir, plan)
    return sdir


def test_every_planned_job_is_counted_by_kind(tmp_path: Path) -> None:
    sdir = _sweep(tmp_path, {"t0": "1111", "t1": "1100", "t2": None, "t3": "0000"}, {"t0": "1000", "t1": "1000", "t2": "1000", "t3": "1000"},
                  planned_only=1)
    patch_result(sdir, job_id("wb", "t3", "runningtab", "m", 0), stop_reason="env_error", error="the sandbox did not start")
    rows = accounting.by_row(load_sweep(sdir))
    rt = rows[("wb", "dci", "m", "runningtab")]
    assert (rt.planned, rt.results, rt.errored, rt.unscored, rt.unfinished, rt.not_started) == (5, 2, 1, 1, 0, 1)
    assert rt.text() == "3: 1 errored, 1 unscored, 1 not started" and rows[("wb", "dci", "m", "dci")].text() == "0"


def test_a_pair_is_dropped_when_either_side_is_not_a_result_and_a_gap_is_flagged(tmp_path: Path) -> None:
    """RunningTab fails t2 and t3 in ways that are not results (unscored, errored) and never starts a
    fifth job: those pairs are not compared, and the gap of 3 against DCI's 0 is flagged in the note."""
    sdir = _sweep(tmp_path, {"t0": "1111", "t1": "1111", "t2": None, "t3": "0000"}, {"t0": "0000", "t1": "0000", "t2": "1111", "t3": "1111"},
                  planned_only=1)
    patch_result(sdir, job_id("wb", "t3", "runningtab", "m", 0), stop_reason="model_error", error="503")
    section = build(load_sweep(sdir), tmp_path / "out")
    main, paired = section.tables[0], next(t for t in section.tables if t.name == "table1_vs_dci")
    row = next(dict(zip(paired.columns, r, strict=True)) for r in paired.rows if r[paired.columns.index("metric")] == "rubric_pass_rate")
    assert (row["pairs"], row["tasks"], row["diff"]) == (2, 2, 100.0)  # only t0 and t1: both sides results
    (flag,) = [n for n in main.notes if "planned job(s) are not results" in n]
    assert flag.startswith("wb · m · runningtab: 3 of 5 planned job(s) are not results (3: 1 errored, 1 unscored, 1 not started), "
                           "against 0 of 4 for dci"), flag
    within = _sweep(tmp_path / "few", {"t0": "1111", "t1": None}, {"t0": "0000", "t1": "0000"})
    assert not [n for n in build(load_sweep(within), tmp_path / "out2").tables[0].notes if "planned job(s) are not results" in n]  # 1 is a few


def test_a_planned_job_whose_record_is_unreadable_is_unfinished_not_unstarted(tmp_path: Path) -> None:
    sdir = _sweep(tmp_path, {"t0": "1111", "t1": "1111"}, {"t0": "1111", "t1": "1111"})
    (sdir / job_id("wb", "t1", "runningtab", "m", 0) / "result.json").write_text("[not a result")
    sweep = load_sweep(sdir)
    assert job_id("wb", "t1", "runningtab", "m", 0) in sweep.broken
    rt = accounting.by_row(sweep)[("wb", "dci", "m", "runningtab")]
    assert (rt.planned, rt.results, rt.unfinished, rt.not_started) == (2, 1, 1, 0)


def test_a_sweep_budget_drops_the_pair_together_and_a_job_budget_stop_stays_a_result(tmp_path: Path) -> None:
    """Issue 48: the sweep's budget (no agent's doing) stops RunningTab's t1 while DCI's t1 finished,
    and holds back both jobs of t2: t1's and t2's pairs are not compared, each counted where it went.
    RunningTab's t3, stopped at its own `budget.job_usd` (a record of before, `budget` with a
    `budget_usd`), is a result scored on what it left: its pair stays."""
    sdir = _sweep(tmp_path, {"t0": "1111", "t1": "1111", "t3": "0000"}, {"t0": "0000", "t1": "0000", "t3": "1111"})
    patch_result(sdir, job_id("wb", "t1", "runningtab", "m", 0), stop_reason="budget", budget_usd=None,
                 error="the sweep's budget (budget.sweep_usd) was spent")
    patch_result(sdir, job_id("wb", "t3", "runningtab", "m", 0), stop_reason="budget", budget_usd=1.0)
    write_plan(sdir, [*read_plan(sdir),
                      *(Planned(job_id("wb", "t2", me, "m", 0), "wb", "dci", "m", me, "t2", 0) for me in ("runningtab", "dci"))])
    sweep = load_sweep(sdir)
    rows = accounting.by_row(sweep)
    rt, dci = rows[("wb", "dci", "m", "runningtab")], rows[("wb", "dci", "m", "dci")]
    assert (rt.planned, rt.results, rt.errored, rt.not_started) == (4, 2, 1, 1)
    assert (dci.planned, dci.results, dci.errored, dci.not_started) == (4, 3, 0, 1)
    section = build(sweep, tmp_path / "out")
    paired = next(t for t in section.tables if t.name == "table1_vs_dci")
    row = next(dict(zip(paired.columns, r, strict=True)) for r in paired.rows if r[paired.columns.index("metric")] == "rubric_pass_rate")
    assert (row["pairs"], row["tasks"], row["diff"]) == (2, 2, 0.0)  # t0 (+100) and t3 (-100): t1 and t2 went together
    assert not [n for n in section.tables[0].notes if "planned job(s) are not results" in n]  # 2 against 1: a few
