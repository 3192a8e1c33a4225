"""Paired statistics (eval.report.analyses.paired, eval.report.analyses.power) on synthetic sweeps whose true effect is known,
and errored / unsandboxed jobs in Tables 1 and 4.

The synthetic model: task t has a base score a_t and its own gain b_t (mean `effect`, spread `tau`);
each seed adds independent noise of sd `sigma` to each arm. The true effect is `effect`.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from eval.report import write_report
from eval.report.analyses import paired, power
from eval.report.load import load_sweep
from tests.helpers.report_sweeps import FULL, job_id, rubric_scores, write_job

NO_REVIEW = {**FULL, "review": False}


def synthetic_pairs(rng: np.random.Generator, tasks: int, seeds: int, effect: float, tau: float, sigma: float) -> paired.Pairs:
    """A continuous per-task metric (denominator 1): base a_t, gain b_t ~ N(effect, tau), seed noise sigma."""
    a = rng.normal(0.5, 0.15, tasks)
    b = effect + rng.normal(0.0, tau, tasks)
    ref = a[:, None] + rng.normal(0.0, sigma, (tasks, seeds))
    met = (a + b)[:, None] + rng.normal(0.0, sigma, (tasks, seeds))
    return paired.make_pairs([(f"t{t:03d}", met[t, s], 1.0, ref[t, s], 1.0) for t in range(tasks) for s in range(seeds)])


def rubric_sweep(sdir: Path, tasks: int, seeds: int, gains: dict[str, float], seed: int = 0, spread: float = 0.0) -> Path:
    """A Workspace-Bench-like sweep on disk: task t has 3-8 rubrics, DCI passes each with p_t, a method
    with p_t + its gain + the task's own N(0, spread) (clipped); `runningtab_no_review` jobs carry a
    tab with the review off."""
    rng = np.random.default_rng(seed)
    for t in range(tasks):
        n_rubrics, base = int(rng.integers(3, 9)), float(rng.uniform(0.2, 0.7))
        texts = [f"rubric {i}" for i in range(n_rubrics)]
        own = {m: g + float(rng.normal(0.0, spread)) if spread else g for m, g in gains.items()}
        for method, gain in {"dci": 0.0, **own}.items():
            settings = None if method == "dci" else NO_REVIEW if method == "runningtab_no_review" else FULL
            for s in range(seeds):
                passed = "".join("1" if x else "0" for x in rng.random(n_rubrics) < min(1.0, max(0.0, base + gain)))
                write_job(sdir, "wb", f"t{t:02d}", method, "m1", s, rubric_scores(texts, passed), tab_settings=settings)
                patch_result(sdir, job_id("wb", f"t{t:02d}", method, "m1", s), errored=False, sandbox="bwrap")
    return sdir


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """12 tasks × 3 seeds: RunningTab +25 points over DCI, the no-review ablation +10."""
    return rubric_sweep(tmp_path_factory.mktemp("pilot") / "p", 12, 3, {"runningtab": 0.25, "runningtab_no_review": 0.10})


def patch_result(sdir: Path, jid: str, **fields: Any) -> None:
    """Add the fields today's runner writes (`errored`, `sandbox`) to a test record's result.json."""
    path = sdir / jid / "result.json"
    result = json.loads(path.read_text())
    result.update(fields)
    path.write_text(json.dumps(result))


def csv_rows(report: Path, name: str) -> list[dict[str, str]]:
    with open(report / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def errored_sweep(sdir: Path) -> Path:
    """m1: dci and runningtab on t1, t2, seed 0; runningtab t2 errored (scored 0, like a missing key).
    m2: every dci job errored (scored 0), runningtab fine. Every m1 dci job ran unsandboxed."""
    texts = ["a", "b", "c", "d"]
    ok = {("m1", "dci", "t1"): "1100", ("m1", "dci", "t2"): "1000", ("m1", "runningtab", "t1"): "1110",
          ("m1", "runningtab", "t2"): "0000", ("m2", "dci", "t1"): "0000", ("m2", "dci", "t2"): "0000",
          ("m2", "runningtab", "t1"): "1000", ("m2", "runningtab", "t2"): "1100"}
    errored = {("m1", "runningtab", "t2"), ("m2", "dci", "t1"), ("m2", "dci", "t2")}
    for (model, method, task), pattern in ok.items():
        write_job(sdir, "wb", task, method, model, 0, rubric_scores(texts, pattern))
        jid = job_id("wb", task, method, model, 0)
        if (model, method, task) in errored:
            patch_result(sdir, jid, stop_reason="model_error", errored=True, error="AuthenticationError: no key", sandbox="bwrap")
        else:
            patch_result(sdir, jid, errored=False, sandbox="none" if (model, method) == ("m1", "dci") else "bwrap")
    return sdir


def test_table1_leaves_errored_jobs_out_and_counts_them(tmp_path: Path) -> None:
    out = write_report(errored_sweep(tmp_path / "e"))
    t = {(r["model"], r["method"]): r for r in csv_rows(out, "table1")}
    # m1 runningtab: only t1 (3 of 4) is a result; the errored t2 (0 of 4) is not averaged in.
    assert float(t[("m1", "runningtab")]["rubric_pass_rate"]) == pytest.approx(75.0)
    assert t[("m1", "runningtab")]["results"] == "1" and t[("m1", "runningtab")]["errored"] == "1"
    # m2 dci: every job errored: no mean at all (not a bold 0.00), and the row says why.
    assert t[("m2", "dci")]["rubric_pass_rate"] == "" and t[("m2", "dci")]["errored"] == "2"
    assert t[("m2", "dci")]["results"] == "0" and t[("m2", "dci")]["best"] == ""
    assert t[("m2", "runningtab")]["best"] == "rubric_pass_rate;tcr70"
    md = (out / "table1.md").read_text()
    (dci_m2,) = [line for line in md.splitlines() if line.startswith("| wb | m2 | dci |")]
    assert dci_m2 == "| wb | m2 | dci | 0 | 2 | 0 | 2: 2 errored | 0 |  |  |  |  |"  # seeds, planned, results, not results, unsandboxed; no numbers
    assert "3 errored job(s)" in md and "wb · m2 · dci: 2" in md
    paired = {(r["model"], r["method"], r["metric"]): r for r in csv_rows(out, "table1_vs_dci")}
    # the m1 pair on t2 is gone (its runningtab job errored); m2 has no DCI result to pair with
    assert paired[("m1", "runningtab", "rubric_pass_rate")]["pairs"] == "1"
    assert not any(k[0] == "m2" for k in paired)


def test_unsandboxed_jobs_are_marked_in_the_table_and_report(tmp_path: Path) -> None:
    out = write_report(errored_sweep(tmp_path / "e"))
    t = {(r["model"], r["method"]): r for r in csv_rows(out, "table1")}
    assert t[("m1", "dci")]["unsandboxed"] == "2" and t[("m1", "runningtab")]["unsandboxed"] == "0"
    md = (out / "report.md").read_text()
    assert "2 job(s) ran unsandboxed" in md and "wb · m1 · dci: 2" in md
    page = (out / "index.html").read_text()
    assert "2 job(s) ran unsandboxed" in page


def test_old_records_read_as_not_errored_and_unknown_sandbox(tmp_path: Path) -> None:
    sdir = tmp_path / "old"
    write_job(sdir, "wb", "t1", "dci", "m1", 0, rubric_scores(["a", "b"], "10"))  # no errored/sandbox fields
    out = write_report(sdir)
    (row,) = csv_rows(out, "table1")
    assert row["errored"] == "0" and row["unsandboxed"] == "0" and float(row["rubric_pass_rate"]) == 50.0
    md = (out / "table1.md").read_text()
    assert "errored" not in md and "unsandboxed" not in md


def test_table4_counts_errored_ablation_jobs_and_pairs_against_the_full_tab(tmp_path: Path) -> None:
    texts = ["a", "b", "c", "d"]
    runs = {"runningtab": {"t1": "1110", "t2": "1100"}, "runningtab_no_review": {"t1": "1100", "t2": "0000"},
            "dci": {"t1": "1000", "t2": "1000"}}
    settings = {"runningtab": FULL, "runningtab_no_review": NO_REVIEW, "dci": None}
    sdir = tmp_path / "ab"
    for method, by_task in runs.items():
        for task, pattern in by_task.items():
            write_job(sdir, "wb", task, method, "m1", 0, rubric_scores(texts, pattern), tab_settings=settings[method])
    patch_result(sdir, job_id("wb", "t2", "runningtab_no_review", "m1", 0), stop_reason="env_error", errored=True)
    out = write_report(sdir)
    t = {r["method"]: r for r in csv_rows(out, "table4")}
    ab = t["runningtab_no_review"]
    assert ab["errored"] == "1" and ab["seeds"] == "1"
    assert float(ab["rubric_pass_rate"]) == 50.0  # t1 only; the errored t2 (0 of 4) is not a result
    # paired on t1 only: 2/4 - 3/4; one task, two swap patterns, both as far from 0 -> p = 1
    assert float(ab["rubric_pass_rate_paired_vs_full"]) == pytest.approx(-25.0) and ab["rubric_pass_rate_pairs"] == "1"
    assert float(ab["rubric_pass_rate_p"]) == 1.0
    assert float(t["dci"]["rubric_pass_rate_paired_vs_full"]) == pytest.approx(-37.5) and t["dci"]["rubric_pass_rate_pairs"] == "2"
    assert t["runningtab"]["rubric_pass_rate_paired_vs_full"] == ""
    md = (out / "table4.md").read_text()
    assert "1 errored job(s)" in md and "wb · m1 · runningtab_no_review: 1" in md
    assert "-25.00 [-25.00, -25.00], p 1.000" in md


def test_intervals_cover_the_true_effect() -> None:
    """Over 200 synthetic sweeps each, the 95% interval covers the true gain in 90-99% of them:
    with the gain varying across tasks (tau) and with seed noise dominating (resampling seeds too is
    conservative there, but not past 99%)."""
    effect = 0.05
    for tasks, seeds, tau, sigma in ((20, 3, 0.08, 0.05), (12, 3, 0.0, 0.12)):
        rng = np.random.default_rng(1)
        covered = 0
        for r in range(200):
            low, high = paired.interval(synthetic_pairs(rng, tasks, seeds, effect, tau, sigma), seed=r)
            covered += low <= effect <= high
        assert 0.90 <= covered / 200 <= 0.99, (tasks, seeds, tau, sigma, covered)


def test_permutation_test_rarely_rejects_a_zero_effect_and_finds_a_real_one() -> None:
    for tasks in (10, 24):  # exact enumeration, then random flips
        rng = np.random.default_rng(2)
        null = [paired.flip_pvalue(synthetic_pairs(rng, tasks, 3, 0.0, 0.05, 0.1), flips=2000, seed=r) for r in range(200)]
        assert np.mean(np.array(null) < 0.05) <= 0.08, tasks
        assert 0.35 <= np.median(null) <= 0.65  # p is roughly uniform under the null
    rng = np.random.default_rng(3)
    real = [paired.flip_pvalue(synthetic_pairs(rng, 24, 3, 0.15, 0.05, 0.1), flips=2000, seed=r) for r in range(50)]
    assert np.mean(np.array(real) < 0.05) >= 0.95


def test_power_helper_matches_simulated_power() -> None:
    tau, sigma, seeds, effect = 0.05, 0.12, 3, 0.04
    truth = power.Components(tasks=0, pairs=0, diff=0.0, between=tau**2, within=2 * sigma**2, separable=True)
    need = power.tasks_needed(effect, truth, seeds)
    assert need is not None and power.power(effect, truth, need, seeds) >= 0.8 > power.power(effect, truth, need - 1, seeds)
    for tasks in (need, need // 2):
        rng = np.random.default_rng(4)
        hits = sum(paired.flip_pvalue(synthetic_pairs(rng, tasks, seeds, effect, tau, sigma), flips=1000, seed=r) < 0.05 for r in range(200))
        assert abs(hits / 200 - power.power(effect, truth, tasks, seeds)) <= 0.1, (tasks, hits)
    # More seeds only shrink the seed part: the task count needed falls, but not below tau's share.
    assert power.tasks_needed(effect, truth, 10) < need < power.tasks_needed(effect, truth, 1)
    # From a pilot's own pairs, the components come back close to the truth.
    est = power.components(synthetic_pairs(np.random.default_rng(5), 400, 3, effect, tau, sigma))
    assert est.within == pytest.approx(2 * sigma**2, rel=0.15) and est.between == pytest.approx(tau**2, abs=0.002)
    assert est.separable and est.tasks == 400 and est.pairs == 1200
    assert power.t_quantile(0.975, 10) == pytest.approx(2.228, abs=0.01)  # the table value
    for tasks in (11, 30, 100):  # no effect: the test's size, about alpha (the approximation is rougher below 10 tasks)
        assert power.power(1e-12, truth, tasks, seeds) == pytest.approx(0.05, abs=0.005)


def test_rubric_sweep_gain_is_found_and_pairs_rubric_by_rubric(pilot: Path) -> None:
    sweep = load_sweep(pilot)
    dci, rt = sweep.select(method="dci"), sweep.select(method="runningtab")
    p = paired.compare(rt, dci, "rubric_pass_rate")
    assert p is not None and (p.pairs, p.tasks) == (36, 12)
    assert p.p < 0.05 and 0 < p.low < p.diff < p.high
    pairs = paired.pairs_of(rt, dci, "rubric_pass_rate")
    assert pairs is not None and p.diff == pytest.approx((p.gained - p.lost) / pairs.values[:, 1].sum())
    assert paired.compare(rt, dci, "rubric_pass_rate") == p  # deterministic


def test_power_cli_on_a_pilot(pilot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert power.main([str(pilot), "--effect", "2", "--seeds", "1,3"]) == 0
    out = capsys.readouterr().out
    assert "wb · m1: runningtab − dci on rubric_pass_rate: pilot 12 tasks, 36 (task, seed) pairs" in out
    lines = [line for line in out.splitlines() if line.startswith("| 1 |") or line.startswith("| 3 |")]
    need = [int(line.split("|")[2].replace(",", "")) for line in lines]
    assert len(need) == 2 and need[0] >= need[1] >= 2
    # a bigger effect needs fewer tasks
    assert power.main([str(pilot), "--effect", "10", "--seeds", "1", "--method", "runningtab_no_review"]) == 0
    assert "runningtab_no_review − dci" in capsys.readouterr().out


def test_power_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert power.main([str(tmp_path / "absent"), "--effect", "2"]) == 2
    assert "is not a directory" in capsys.readouterr().err
    only_dci = tmp_path / "dci"
    for t in ("t1", "t2"):
        write_job(only_dci, "wb", t, "dci", "m1", 0, rubric_scores(["a"], "1"))
    assert power.main([str(only_dci), "--effect", "2"]) == 2
    err = capsys.readouterr().err
    assert "no 2+ tasks scored by both runningtab and dci" in err and "methods with results: dci" in err
    assert power.main([str(only_dci), "--effect", "2", "--seeds", "0"]) == 2
    assert "--seeds" in capsys.readouterr().err
    assert math.isfinite(power.t_quantile(0.975, 1))


def test_power_names_the_metric_it_searched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 50 item 9: "no 2+ tasks scored by both" did not say on which metric it looked."""
    one_task = tmp_path / "one"
    for method in ("dci", "runningtab"):
        write_job(one_task, "wb", "t1", method, "m1", 0, rubric_scores(["a"], "1"))
    assert power.main([str(one_task), "--effect", "2"]) == 2
    err = capsys.readouterr().err
    assert "with each benchmark's first metric (wb · m1: rubric_pass_rate; --metric NAME for another" in err, err
    assert power.main([str(one_task), "--effect", "2", "--metric", "tcr_at_70"]) == 2
    assert "with metric tcr_at_70 (--metric" in capsys.readouterr().err



def test_errored_jobs_are_in_no_analysis(tmp_path: Path) -> None:
    """Every analysis, not only Table 1, leaves an errored record out; the header says how many."""
    from eval.report.load import header_notes

    sweep = load_sweep(errored_sweep(tmp_path / "e"))
    assert len(sweep.jobs) == 8 and len(sweep.scored()) == 5 and not any(j.errored for j in sweep.scored())
    assert any(n.startswith("3 errored job(s)") for n in header_notes(sweep))
    md = (write_report(tmp_path / "e") / "report.md").read_text()
    assert "8 jobs, 5 scored." in md


def test_the_baseline_and_treatment_come_from_the_sweep_config(tmp_path: Path) -> None:
    """`report.baseline` in sweep.yaml (or --baseline) decides what the paired comparisons are against."""
    texts = ["a", "b", "c", "d"]
    sdir = tmp_path / "s"
    for task, (todo, tab) in {"t1": ("1000", "1110"), "t2": ("1100", "1111")}.items():
        write_job(sdir, "wb", task, "todo", "m1", 0, rubric_scores(texts, todo))
        write_job(sdir, "wb", task, "runningtab", "m1", 0, rubric_scores(texts, tab))
    (sdir / "sweep.yaml").write_text("report:\n  baseline: todo\n  treatment: runningtab\n")
    out = write_report(sdir)
    (row,) = [r for r in csv_rows(out, "table1_vs_todo") if r["metric"] == "rubric_pass_rate"]
    assert row["method"] == "runningtab" and float(row["diff"]) == pytest.approx(50.0) and row["pairs"] == "2"
    assert "minus TODO" in (out / "table1_vs_todo.md").read_text()
    assert not (out / "table1_vs_dci.csv").exists()
    # without the setting the comparison is against DCI, which this sweep does not have
    (sdir / "sweep.yaml").unlink()
    assert "the sweep has no DCI jobs" in (write_report(sdir) / "report.md").read_text()
    assert load_sweep(sdir, baseline="todo").baseline == "todo"
