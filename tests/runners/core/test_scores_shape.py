"""A scores.json of the wrong shape (hand-edited, imported, half-written by another tool) is an
unreadable record, loud and unscored: never a crash of the report, never a rate of zero."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval.judges.metrics import aggregate
from eval.report.load import load_sweep
from runners.core.job_record import read_scores_of
from runners.core.record_types import RecordError

SAMPLE = Path(__file__).parents[2] / "fixtures" / "sweeps" / "sample"

BAD = {
    "an item that is not an object": {"items": ["passed"]},
    "items that are not a list": {"items": {"kind": "rubric"}},
    "a metric that is not a number": {"metrics": {"rubric_pass_rate": "high"}},
    "metrics that are not an object": {"metrics": [1.0]},
    "a schema version that is not a number": {"schema_version": "two"},
}


def _scored_job(sweep: Path) -> Path:
    return next(d for d in sorted(sweep.iterdir()) if (d / "scores.json").is_file()
                and any(i.get("kind") == "rubric" for i in json.loads((d / "scores.json").read_text())["items"]))


@pytest.mark.parametrize("change", BAD.values(), ids=list(BAD))
def test_a_scores_file_of_the_wrong_shape_is_a_record_error(tmp_path: Path, change: dict) -> None:
    job = tmp_path / "job"
    job.mkdir()
    doc = json.loads((_scored_job(SAMPLE) / "scores.json").read_text()) | change
    (job / "scores.json").write_text(json.dumps(doc))
    with pytest.raises(RecordError, match="scores.json"):
        read_scores_of(job)


def test_a_document_that_is_not_an_object_is_a_record_error(tmp_path: Path) -> None:
    (tmp_path / "scores.json").write_text("[1, 2]")
    with pytest.raises(RecordError, match="scores.json"):
        read_scores_of(tmp_path)


def test_the_report_counts_that_job_unscored_and_pools_the_others(tmp_path: Path) -> None:
    sweep = tmp_path / "s"
    shutil.copytree(SAMPLE, sweep)
    bad = _scored_job(sweep)
    doc = json.loads((bad / "scores.json").read_text())
    (bad / "scores.json").write_text(json.dumps(doc | {"items": [*doc["items"], "x", 3]}))
    loaded = load_sweep(sweep)
    by_id = {j.job_id: j for j in loaded.jobs}
    assert by_id[bad.name].scores is None
    others = [j.scores for j in loaded.jobs if j.scores is not None]
    assert len(others) == len([d for d in sweep.iterdir() if (d / "scores.json").is_file()]) - 1
    assert 0 < aggregate(others)["rubric_pass_rate"] <= 1
