"""The report's numbers on a recorded sweep (tests/helpers/report_sweeps.py), each against a hand computation.

Pass patterns of sweep A (rubrics per task: t1 4, t2 2, t3 4):
  m1 dci        s0: 1100 10 0000 -> 3/10   s1: 1110 11 1000 -> 6/10
  m1 runningtab s0: 1111 11 1100 -> 8/10   s1: 1110 10 1110 -> 7/10
  m1 no_review  s0: 1100 11 1000 -> 5/10   s1: 1111 10 1100 -> 7/10
  m2 dci        s0: 1000 00 1100 -> 3/10   s1: 1000 10 1000 -> 3/10
  m2 runningtab s0: 1110 10 1100 -> 6/10   s1: 1111 11 (no t3) -> 6/6
"""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from eval.judges.metrics import aggregate
from eval.report import write_report
from eval.report.analyses import paired
from eval.report.analyses.figure5 import thirds
from eval.report.analyses.stats import parts
from eval.report.load import load_sweep
from tests.helpers.report_sweeps import PATTERNS, build_sweep_a

REPO = Path(__file__).resolve().parents[3]
SD = math.sqrt(2) / 2  # sample std of two values d apart is d * SD


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sdir = build_sweep_a(tmp_path_factory.mktemp("rep") / "a")
    return write_report(sdir)


def rows(report: Path, name: str) -> list[dict[str, str]]:
    with open(report / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def num(v: str) -> float | None:
    return None if v == "" else float(v)


def by(rs: list[dict[str, str]], *keys: str) -> dict[tuple[str, ...], dict[str, str]]:
    return {tuple(r[k] for k in keys): r for r in rs}


def test_table1_means_stds_and_best(report: Path) -> None:
    t = by(rows(report, "table1"), "benchmark", "model", "method")
    expected = {  # (rubric_pass_rate mean, std, tcr70 mean, std), percent
        ("wb", "m1", "dci"): (45.0, 30 * SD, 100 / 3, (200 / 3) * SD),  # 30, 60; tcr 0, 2/3
        ("wb", "m1", "runningtab"): (75.0, 10 * SD, 200 / 3, 0.0),  # 80, 70; tcr 2/3, 2/3
        ("wb", "m1", "runningtab_no_review"): (60.0, 20 * SD, 100 / 3, 0.0),  # 50, 70; tcr 1/3, 1/3
        ("wb", "m2", "dci"): (30.0, 0.0, 0.0, 0.0),
        ("wb", "m2", "runningtab"): (80.0, 40 * SD, 200 / 3, (200 / 3) * SD),  # 60, 100; tcr 1/3, 1
    }
    assert set(t) == set(expected) | {("qa", "m1", "dci"), ("qa", "m1", "runningtab"), ("wb", "m3", "dci")}
    m3 = t[("wb", "m3", "dci")]  # its one job never finished: a row that says so, with no numbers (issue 48)
    assert (m3["planned"], m3["results"], m3["unfinished"], m3["rubric_pass_rate"]) == ("1", "0", "1", "")
    for key, (pr, pr_sd, tcr, tcr_sd) in expected.items():
        r = t[key]
        assert num(r["rubric_pass_rate"]) == pytest.approx(pr) and num(r["rubric_pass_rate_std"]) == pytest.approx(pr_sd)
        assert num(r["tcr70"]) == pytest.approx(tcr) and num(r["tcr70_std"]) == pytest.approx(tcr_sd, abs=1e-9)
        assert r["acc0"] == ""
    assert t[("wb", "m2", "runningtab")]["results"] == "5" and t[("wb", "m1", "dci")]["seeds"] == "2"
    assert num(t[("qa", "m1", "dci")]["acc0"]) == 50.0 and num(t[("qa", "m1", "dci")]["acc1"]) == 100.0
    assert num(t[("qa", "m1", "runningtab")]["acc0"]) == 100.0
    best = {k: r["best"] for k, r in t.items()}
    assert best[("wb", "m1", "runningtab")] == "rubric_pass_rate;tcr70" and best[("wb", "m1", "dci")] == ""
    assert best[("wb", "m2", "runningtab")] == "rubric_pass_rate;tcr70"
    assert best[("qa", "m1", "dci")] == "" and best[("qa", "m1", "runningtab")] == "acc0"  # a tie (acc1) marks none
    assert num(t[("qa", "m1", "dci")]["cost_usd"]) == 0.0 and num(t[("qa", "m1", "dci")]["tokens_per_job"]) == 0.0
    md = (report / "table1.md").read_text()
    assert "**75.00 ± 7.07**" in md and "| 45.00 ± 21.21 |" in md
    assert "1 job(s) have no scores.json" in md  # the unfinished m3 job
    assert "- cost (USD): what the cell's scored jobs' replies cost at the model's prices, replies from the model-call cache included" in md
    assert "what the sweep paid providers is `spent`" in md  # the two totals name each other (issue 38 item 4)
    assert "wb · m2 · runningtab: 5 scored jobs for 2 seeds × 3 tasks" in md
    head = (report / "report.md").read_text().split("## ")[0]
    assert "1 job(s) without result.json (unfinished): wb__t1__dci__m3__s0" in head
    # the ledger: m3's last attempt failed; m1's failed once, then succeeded (not reported)
    assert "1 job(s) whose last attempt failed (jobs.jsonl): wb__t1__dci__m3__s0 (failed: RayActorError: died)" in head


def test_table1_paired_against_dci(report: Path) -> None:
    t = by(rows(report, "table1_vs_dci"), "benchmark", "model", "method", "metric")
    expected = {  # pairs, tasks, method, dci, diff
        ("wb", "m1", "runningtab", "rubric_pass_rate"): (6, 3, 75.0, 45.0, 30.0),  # 15/20 vs 9/20
        ("wb", "m1", "runningtab", "tcr70"): (6, 3, 200 / 3, 100 / 3, 100 / 3),
        ("wb", "m1", "runningtab_no_review", "rubric_pass_rate"): (6, 3, 60.0, 45.0, 15.0),  # 12/20
        ("wb", "m1", "runningtab_no_review", "tcr70"): (6, 3, 100 / 3, 100 / 3, 0.0),
        # m2: RunningTab lacks (t3, s1), so DCI is taken on the same 5 pairs: 12/16 vs 5/16.
        ("wb", "m2", "runningtab", "rubric_pass_rate"): (5, 3, 75.0, 31.25, 43.75),
        ("wb", "m2", "runningtab", "tcr70"): (5, 3, 60.0, 0.0, 60.0),
        ("qa", "m1", "runningtab", "acc0"): (2, 2, 100.0, 50.0, 50.0),
        ("qa", "m1", "runningtab", "acc1"): (2, 2, 100.0, 100.0, 0.0),
    }
    assert set(t) == set(expected)
    for key, (pairs, tasks, m, d, diff) in expected.items():
        r = t[key]
        assert (int(r["pairs"]), int(r["tasks"])) == (pairs, tasks)
        assert num(r["method_value"]) == pytest.approx(m) and num(r["dci_value"]) == pytest.approx(d)
        assert num(r["diff"]) == pytest.approx(diff)
        assert num(r["ci_low"]) <= num(r["diff"]) + 1e-9 <= num(r["ci_high"]) + 2e-9
    # Per-task tcr70 sums are equal for no_review and DCI (t1 1-1, t2 1-1, t3 0-0), so every swap of
    # the arms within tasks gives 0: p = 1. But t2's seeds disagree (s0 +1, s1 -1), so drawing seeds
    # within tasks moves the difference both ways.
    nr = t[("wb", "m1", "runningtab_no_review", "tcr70")]
    assert num(nr["p_value"]) == 1.0 and num(nr["ci_low"]) < 0.0 < num(nr["ci_high"])
    # runningtab rubric_pass_rate: per-task differences +2/20 (t1), 0 (t2), +4/20 (t3); of the 8 swap
    # patterns, 4 reach |6/20| -> p = 0.5. Rubric by rubric: 7 runs gained, 1 lost (t2 s1): (7-1)/20.
    rt = t[("wb", "m1", "runningtab", "rubric_pass_rate")]
    assert num(rt["p_value"]) == 0.5 and (rt["rubrics_gained"], rt["rubrics_lost"]) == ("7", "1")
    assert t[("wb", "m1", "runningtab", "tcr70")]["rubrics_gained"] == ""
    md = (report / "table1_vs_dci.md").read_text()
    assert "| +30.00 |" in md and "| 0.500 | +7 / -1 |" in md


def _task_seed_parts(method: str, model: str) -> dict[tuple[str, int], tuple[int, int]]:
    """(task, seed) -> (rubrics passed, rubrics) of sweep A, from its pass patterns."""
    out = {}
    for (me, mo, seed), tasks in PATTERNS.items():
        if (me, mo) == (method, model):
            out.update({(task, seed): (pattern.count("1"), len(pattern)) for task, pattern in tasks.items()})
    return out


def test_hierarchical_bootstrap_draws_tasks_then_their_seeds(tmp_path: Path) -> None:
    """The interval's ends are differences some draw gives (3 tasks with replacement, then 2 seeds with
    replacement within each drawn task: 12^3 draws, hand-enumerated), and the same seed gives the same."""
    sweep = load_sweep(build_sweep_a(tmp_path / "a"))
    rt = sweep.select(method="runningtab", model="m1", benchmark="wb")
    dci = sweep.select(method="dci", model="m1", benchmark="wb")
    a, b = _task_seed_parts("runningtab", "m1"), _task_seed_parts("dci", "m1")
    slots = [(t, s1, s2) for t in ("t1", "t2", "t3") for s1 in (0, 1) for s2 in (0, 1)]
    support = set()
    for draw in product(slots, repeat=3):
        keys = [(t, s) for t, s1, s2 in draw for s in (s1, s2)]
        den = sum(a[k][1] for k in keys)
        support.add(round((sum(a[k][0] for k in keys) - sum(b[k][0] for k in keys)) / den, 9))
    p = paired.compare(rt, dci, "rubric_pass_rate")
    assert p is not None and p.diff == pytest.approx(0.30) and (p.pairs, p.tasks) == (6, 3)
    assert round(p.low, 9) in support and round(p.high, 9) in support
    assert min(support) <= p.low < p.diff < p.high <= max(support)
    again = paired.compare(rt, dci, "rubric_pass_rate")
    assert again is not None and (again.low, again.high, again.p) == (p.low, p.high, p.p)
    other = paired.compare(rt, dci, "rubric_pass_rate", seed=1)
    assert other is not None and (other.low, other.high) != (p.low, p.high)
    # Drawing the seeds too spreads more than drawing tasks only (all seeds of a task together).
    pairs = paired.pairs_of(rt, dci, "rubric_pass_rate")
    assert pairs is not None
    sums = pairs.per_task()
    draws = np.random.default_rng(0).integers(0, 3, size=(2000, 3))
    s = sums[draws].sum(axis=1)
    task_only = np.percentile(s[:, 0] / s[:, 1] - s[:, 2] / s[:, 3], [2.5, 97.5])
    assert p.high - p.low > task_only[1] - task_only[0]


def test_parts_sum_to_the_aggregate(tmp_path: Path) -> None:
    sweep = load_sweep(build_sweep_a(tmp_path / "a"))
    scores = [j.scores for j in sweep.select(benchmark="wb", model="m2") if j.scores]
    agg = aggregate(scores)
    for m in ("rubric_pass_rate", "tcr70"):
        n = sum(parts(s)[m][0] for s in scores)
        d = sum(parts(s)[m][1] for s in scores)
        assert n / d == pytest.approx(agg[m])
    assert agg["rubric_pass_rate"] == pytest.approx((3 + 3 + 6 + 6) / 36)  # 18 passed of 36 rubrics


def test_table3_tab_contents(report: Path) -> None:
    t = by(rows(report, "table3"), "benchmark", "method", "model")
    assert set(t) == {("wb", "runningtab", "m1"), ("wb", "runningtab", "m2"), ("wb", "runningtab_no_review", "m1")}
    m1 = t[("wb", "runningtab", "m1")]
    # requirements 2,4,3,5,1,3 -> 3; entries 3,1,4,2,0,2 -> 2; files 2,1,4,2,0,2 -> 2;
    # chars 300,100,400,200,0,200 -> 200; candidates 10..60 -> 35
    assert [num(m1[c]) for c in ("jobs", "requirements", "read_log_entries", "distinct_files", "excerpt_chars", "candidates")] == [6, 3, 2, 2, 200, 35]
    # one job reviewed twice: 1 of 2 open shown beside a line, then 1 of 1 -> 2/3
    assert m1["jobs_reviewed"] == "1" and num(m1["review_coverage_pct"]) == pytest.approx(200 / 3)
    assert num(m1["added_before_check_pct"]) == 100.0
    for col in ("reviewed_pct", "showed_pct", "resolved_citing_pct", "opened_candidate_pct"):
        assert num(m1[col]) == pytest.approx(100 / 6), col
    m2 = t[("wb", "runningtab", "m2")]
    # requirements 1,1,2,2,9 -> 2; one 100-char entry each; candidates 0,0,5,5,5 -> 5; review 0 of 1
    assert [num(m2[c]) for c in ("jobs", "requirements", "read_log_entries", "distinct_files", "excerpt_chars", "candidates")] == [5, 2, 1, 1, 100, 5]
    assert num(m2["review_coverage_pct"]) == 0.0 and num(m2["reviewed_pct"]) == 20.0 and num(m2["showed_pct"]) == 0.0
    ab = t[("wb", "runningtab_no_review", "m1")]
    assert ab["jobs_reviewed"] == "0" and ab["review_coverage_pct"] == "" and num(ab["requirements"]) == 1


def test_figure5_gain_by_reading_third(report: Path) -> None:
    t = by(rows(report, "figure5"), "model", "third", "metric")
    # volume per task (dci + 2000 for runningtab, mean over both arms): t1 light, t2 middle, t3 heavy
    expected = {  # dci, runningtab over both seeds of the third's task
        ("m1", "light", "rubric_pass_rate"): (62.5, 87.5),  # dci 2+3 of 8, rt 4+3 of 8
        ("m1", "middle", "rubric_pass_rate"): (75.0, 75.0),  # dci 1+2 of 4, rt 2+1 of 4
        ("m1", "heavy", "rubric_pass_rate"): (12.5, 62.5),  # dci 0+1 of 8, rt 2+3 of 8
        ("m1", "light", "tcr70"): (50.0, 100.0),
        ("m1", "heavy", "tcr70"): (0.0, 50.0),
        ("m2", "light", "rubric_pass_rate"): (25.0, 87.5),
        ("m2", "middle", "rubric_pass_rate"): (25.0, 75.0),
        ("m2", "heavy", "rubric_pass_rate"): (37.5, 50.0),  # rt has only seed 0 for t3
    }
    for key, (d, r) in expected.items():
        row = t[key]
        assert (num(row["dci"]), num(row["runningtab"]), num(row["gain"])) == pytest.approx((d, r, r - d)), key
    assert num(t[("m1", "light", "rubric_pass_rate")]["min_chars"]) == 2000.0  # (1000+1000+3000+3000)/4
    assert num(t[("m2", "heavy", "rubric_pass_rate")]["max_chars"]) == pytest.approx((20000 * 2 + 22000) / 3)
    assert "qa · m1: 2 task(s)" in (report / "figure5.md").read_text()
    assert (report / "figure5_wb.png").stat().st_size > 1000


def test_thirds_split_as_equal_as_possible() -> None:
    vol = {f"t{i}": float(v) for i, v in enumerate([5, 1, 9, 3, 7, 2, 8])}
    assert thirds(vol) == [["t1", "t5", "t3"], ["t0", "t4"], ["t6", "t2"]]
    assert thirds({"a": 1.0, "b": 1.0}) == [["a"], ["b"], []]  # ties by id


def test_table4_ablations(report: Path) -> None:
    t = by(rows(report, "table4"), "benchmark", "model", "method")
    assert list(t) == [("wb", "m1", "dci"), ("wb", "m1", "runningtab"), ("wb", "m1", "runningtab_no_review")]
    ab = t[("wb", "m1", "runningtab_no_review")]
    assert (ab["capture"], ab["review"], ab["evidence_check"], ab["finish_check"]) == ("on", "off", "on", "on")
    assert num(ab["rubric_pass_rate"]) == 60.0 and num(ab["rubric_pass_rate_std"]) == pytest.approx(20 * SD)
    assert num(ab["rubric_pass_rate_vs_full"]) == pytest.approx(-15.0) and num(ab["tcr70_vs_full"]) == pytest.approx(-100 / 3)
    dci = t[("wb", "m1", "dci")]
    assert dci["capture"] == "—" and num(dci["rubric_pass_rate_vs_full"]) == pytest.approx(-30.0)
    assert num(t[("wb", "m1", "runningtab")]["rubric_pass_rate_vs_full"]) == 0.0
    # paired with the full tab: per task over both seeds no_review - full = 6-7, 3-3, 3-5 of 20 rubric
    # runs -> -15; of the 8 swap patterns, 4 reach |-3/20| -> p = 0.5
    assert num(ab["rubric_pass_rate_paired_vs_full"]) == pytest.approx(-15.0) and ab["rubric_pass_rate_pairs"] == "6"
    assert num(ab["rubric_pass_rate_p"]) == 0.5 and num(ab["rubric_pass_rate_ci_low"]) < -15.0 < num(ab["rubric_pass_rate_ci_high"])
    assert num(dci["rubric_pass_rate_paired_vs_full"]) == pytest.approx(-30.0) and dci["errored"] == "0"
    assert "p 0.500" in (report / "table4.md").read_text()


def test_analyses_without_inputs_are_skipped_with_a_reason(tmp_path: Path) -> None:
    sdir = tmp_path / "only_dci"
    from tests.helpers.report_sweeps import rubric_scores, write_job

    write_job(sdir, "wb", "t1", "dci", "m1", 0, rubric_scores(["a"], "1"))
    write_job(sdir, "wb", "t2", "todo", "m1", 0, None)
    out = write_report(sdir)
    md = (out / "report.md").read_text()
    assert "Skipped: no job has a tab" in md
    assert "Skipped: no ablation jobs" in md
    assert "Skipped: needs scored DCI and RunningTab jobs" in md
    assert (out / "table1.csv").exists() and (out / "index.html").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    md = (write_report(empty) / "report.md").read_text()
    assert "Skipped: no scored jobs" in md


@pytest.mark.slow
def test_cli_writes_the_report_and_a_tab_view(tmp_path: Path) -> None:
    sdir = build_sweep_a(tmp_path / "a")
    jid = "wb__t1__runningtab__m1__s0"
    done = subprocess.run([sys.executable, "-m", "eval.report", str(sdir), "--job", jid], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith(str(sdir / "report" / "index.html"))
    view = (sdir / "report" / f"tab_{jid}.md").read_text()
    assert "tab_add → r1, r2" in view and "+L3 a.md" in view and "finish check (open)" in view
    assert "review (tool)" in view and "r1 ← L1; r2 ← no line" in view
    bad = subprocess.run([sys.executable, "-m", "eval.report", str(sdir), "--job", "nope"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no job 'nope'" in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "eval.report", str(tmp_path / "absent")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "is not a directory" in missing.stderr


def test_table1_shows_the_variants_where_rubrics_went_unjudged(tmp_path: Path) -> None:
    """A Workspace-Bench judge left a rubric out (not judged): Table 1's rubric_pass_rate has no row
    for it, as the benchmark counts, and its note gives the variants beside it."""
    from eval.report.analyses import table1
    from tests.helpers.report_sweeps import rubric_scores, write_job

    sdir = tmp_path / "s"
    for seed, passed in ((0, "1100"), (1, "1110")):
        scores = rubric_scores(["a", "b", "c", "d"], passed)
        scores["items"][3]["judged"] = False  # left out of the judge's answer
        write_job(sdir, "wb", "t1", "dci", "m1", seed, scores)
    write_job(sdir, "wb", "t1", "runningtab", "m1", 0, rubric_scores(["a", "b", "c", "d"], "1111"))
    main = table1.build(load_sweep(sdir), tmp_path / "out").tables[0]
    assert "wb: 2 of 12 rubrics never judged (no row in rubric_pass_rate, failed in pass_rate), 0 extra row(s), 0 failed judge call(s)" in main.notes
    assert ("wb · m1 · dci: rubric_pass_rate counts the rows the judge wrote (2 unjudged rubric(s) without one, 0 extra row(s)); "
            "pass_rate 62.50 (over every rubric, unjudged as failed), pass_rate_judged 83.33 (over judged rubrics only), "
            "mean over 2 seed(s)") in main.notes
    row = {r[2]: r for r in main.rows}["dci"]
    assert float(row[main.columns.index("rubric_pass_rate")]) == pytest.approx(83.33, abs=0.01)  # 2/3 and 3/3 over the seeds
    assert not any("runningtab: rubric_pass_rate counts" in n for n in main.notes)


def test_the_rubrics_that_fail_most_across_tasks(tmp_path: Path) -> None:
    from tests.helpers.report_sweeps import build_sweep_b

    out = write_report(build_sweep_b(tmp_path / "b"))
    with open(out / "failing.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # sweep B: DCI passes rubric 4 only, RunningTab rubrics 2 and 4; every other rubric fails under both
    got = {int(r["index"]): (r["dci_failed"], r["runningtab_failed"]) for r in rows}
    assert got == {0: ("1", "1"), 1: ("1", "1"), 2: ("1", "0"), 3: ("1", "1"), 5: ("1", "1")}
    assert [int(r["index"]) for r in rows][-1] == 2  # failing under one method of two: last
    assert float(rows[0]["dci_failed_pct"]) == 100.0 and rows[0]["dci_runs"] == "1"


def test_a_chart_with_nothing_to_draw_is_not_drawn(tmp_path: Path) -> None:
    from eval.report.analyses.plots import grouped_bars

    assert grouped_bars(tmp_path / "none.png", "t", ["a", "b"], {"s": [None, None]}, "%") is None
    assert not (tmp_path / "none.png").exists()
    assert grouped_bars(tmp_path / "zeros.png", "t", ["a", "b"], {"s": [0.0, 0.0]}, "%") == tmp_path / "zeros.png"


def test_table1_counts_evaluator_failures_on_agent_files_and_unscored_jobs(tmp_path: Path) -> None:
    """Issue 25 (6): a job whose evaluator failed on the agent's files is a result (its unfinished
    checkpoints count 0); one whose judge failed otherwise is unscored and left out; the note says both."""
    from eval.report.analyses.table1 import build
    from tests.helpers.report_sweeps import write_job

    def cp(result: int, failure: dict | None = None) -> dict:
        doc = {"judge": "agentcompany", "metrics": {"success": float(result == 3), "score": result / 6},
               "items": [{"kind": "checkpoint", "index": i, "points": 1, "earned": int(i < result)} for i in range(3)]}
        return {**doc, "evaluator_failure": failure} if failure else doc

    sdir = tmp_path / "s"
    write_job(sdir, "tac", "t1", "dci", "m", 0, cp(3))
    write_job(sdir, "tac", "t2", "dci", "m", 0, cp(1, {"limit": "timeout", "agent_files_read": ["a.xlsx"], "checkpoints_done": 1}))
    write_job(sdir, "tac", "t4", "dci", "m", 0, cp(0, {"outcome": "raised", "error": "UnicodeDecodeError", "agent_files_read": ["link.txt"]}))
    write_job(sdir, "tac", "t3", "dci", "m", 0, None)  # finished, its judge failed (not on the agent's files)
    section = build(load_sweep(sdir), tmp_path / "out")
    notes = " ".join(section.tables[0].notes)
    row = dict(zip(section.tables[0].columns, section.tables[0].rows[0], strict=True))
    assert (row["planned"], row["results"], row["unscored"]) == (4, 3, 1)  # t1, t2 and t4 are results
    assert "1 job(s) have no scores.json and are left out: 1 unscored (its judge failed on evidence the agent cannot write" in notes
    assert ("2 scored job(s) whose evaluator failed on what the agent left (1 raised, 1 timeout; the checkpoints it did not "
            "finish count 0): tac · m · dci: 2") in notes
