"""Sweep-level results kept across builds: a re-build recomputes only the analyses' results whose
inputs changed (Table 1's and Table 4's paired statistics: bootstrap intervals and permutation
p-values), and writes exactly what a build from scratch writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.report import paired, write_report
from eval.report.manifest import MANIFEST
from tests.test_report_incremental import CHANGED, _from_scratch, _rescore, _tree, sweep  # noqa: F401 (fixture)


@pytest.fixture()
def boots(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each bootstrap run, counted (by its number of pairs)."""
    calls: list[int] = []
    real = paired.bootstrap
    monkeypatch.setattr(paired, "bootstrap", lambda p, *a, **k: calls.append(p.n) or real(p, *a, **k))
    return calls


def test_unchanged_rebuild_recomputes_no_paired_statistic(sweep: Path, boots: list[int], monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    out = write_report(sweep)
    assert boots, "the sweep has paired comparisons"
    before = {p.name: p.read_bytes() for p in out.glob("table*.csv")}
    boots.clear()
    paired_again: list[str] = []
    real = paired.pairs_of
    monkeypatch.setattr(paired, "pairs_of", lambda a, b, m: paired_again.append(m) or real(a, b, m))
    write_report(sweep)
    assert boots == [] and paired_again == []  # not even the pairs: their jobs are unchanged
    assert {p.name: p.read_bytes() for p in out.glob("table*.csv")} == before


def test_rescored_job_recomputes_only_the_comparisons_it_is_in(sweep: Path, tmp_path: Path, boots: list[int]) -> None:  # noqa: F811
    write_report(sweep)
    everything = len(boots)
    boots.clear()
    _rescore(sweep, CHANGED)
    out = write_report(sweep)
    assert 0 < len(boots) < everything
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_damaged_kept_result_rebuilds_everything(sweep: Path, tmp_path: Path, boots: list[int]) -> None:  # noqa: F811
    out = write_report(sweep)
    everything = len(boots)
    path = out / MANIFEST
    first, rest = path.read_text().split("\n", 1)
    header = json.loads(first)
    assert header["results"], "the manifest keeps the paired statistics"
    header["results"] = {k: ["not", "numbers"] for k in header["results"]}
    path.write_text(json.dumps(header) + "\n" + rest)
    boots.clear()
    write_report(sweep)
    assert len(boots) == everything
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_kept_jobs_know_their_metric_names_without_aggregating(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from eval.report import build, stats
    from eval.report.manifest import Manifest, code_version

    out = write_report(sweep)
    key = {"code": code_version(), "baseline": "dci", "treatment": "runningtab"}
    loaded = build.load_stamped(sweep, Manifest.read(out, key), "dci", "runningtab")
    expected = stats.metric_names(build.load_stamped(sweep, Manifest(key), "dci", "runningtab").jobs)

    def aggregate(scores: object) -> None:
        raise AssertionError("aggregated a kept job's scores again")

    monkeypatch.setattr(stats, "aggregate", aggregate)
    assert stats.metric_names(loaded.jobs) == expected and expected


@pytest.fixture()
def rows(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The index rows rendered, by job id."""
    from eval.report import viewer_index

    seen: list[str] = []
    real = viewer_index.job_row
    monkeypatch.setattr(viewer_index, "job_row", lambda j, *a: seen.append(j.job_id) or real(j, *a))
    return seen


def test_index_rows_of_unchanged_jobs_are_kept(sweep: Path, tmp_path: Path, rows: list[str]) -> None:  # noqa: F811
    out = write_report(sweep)
    assert len(rows) > 10
    rows.clear()
    write_report(sweep)
    assert rows == []
    _rescore(sweep, CHANGED)
    write_report(sweep)
    assert rows == [CHANGED]  # its partners' links are unchanged
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_index_rows_follow_a_new_metric_column(sweep: Path, tmp_path: Path, rows: list[str]) -> None:  # noqa: F811
    out = write_report(sweep)
    everything = len(rows)
    path = sweep / CHANGED / "scores.json"
    scores = json.loads(path.read_text())
    scores["metrics"]["new_metric"] = 0.5  # a column every row gains
    path.write_text(json.dumps(scores))
    rows.clear()
    write_report(sweep)
    assert len(rows) == everything
    assert _tree(out) == _from_scratch(sweep, tmp_path)
