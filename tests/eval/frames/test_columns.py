"""The frames cannot drift from the record: every field of the record's types is a column or is
excluded with a reason, and the frames of a real sweep carry those columns."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest

from eval.frames import items_df, jobs_df, read_sweep, tab_df, turns_df
from eval.frames.columns import (
    ASSISTANT,
    JOB_META,
    RESULT,
    SCORES,
    SOURCES,
    STATUSES,
    USAGE,
    Source,
)

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sweeps" / "sample"


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.cls.__name__)
def test_every_field_of_a_record_type_is_a_column_or_excluded_with_a_reason(source: Source) -> None:
    names = set(source.fields)
    assert set(source.excluded) <= names, f"stale exclusions: {set(source.excluded) - names}"
    assert all(why.strip() for why in source.excluded.values())
    assert set(source.columns) | set(source.excluded) == names


def test_a_field_added_to_the_result_becomes_a_column() -> None:
    @dataclasses.dataclass(frozen=True)
    class Grown(RESULT.cls):  # type: ignore[misc,valid-type]
        new_field: int = 0

    assert "new_field" in Source(Grown, RESULT.excluded).columns


def test_the_frames_of_a_real_sweep_carry_every_recorded_field() -> None:
    sweep = read_sweep(SAMPLE)
    jobs = jobs_df(sweep)
    assert len(jobs) == 12 and set(jobs.status) == {"result"} and set(jobs.status) <= set(STATUSES)
    assert set(JOB_META.columns) | set(RESULT.columns) | set(SCORES.columns) <= set(jobs.columns)
    assert jobs.set_index("job_id").loc[sweep.jobs[0].job_id, "cost"] == sweep.jobs[0].result.cost
    turns = turns_df(sweep)
    assert set(USAGE.columns) | set(ASSISTANT.columns) | {"tool", "turn"} <= set(turns.columns)
    assert turns.groupby("job_id").cost.sum().round(9).to_dict() == jobs.set_index("job_id").cost.round(9).to_dict()
    items = items_df(sweep)
    assert set(items.kind) == {"rubric", "checkpoint", "answer"} and not items.query("kind == 'rubric'").passed.all()
    tab = tab_df(sweep)
    assert set(tab.method) == {"runningtab"} and {"capture", "check"} <= set(tab.stage)


def test_each_job_says_what_its_record_makes_it(tmp_path: Path) -> None:
    from tests.eval.frames.test_docs_example import spoil

    sweep = tmp_path / "s"
    shutil.copytree(SAMPLE, sweep)
    spoil(sweep)
    jobs = jobs_df(read_sweep(sweep)).set_index("job_id")
    workspace = sorted(j for j in jobs.index if "workspace" in j)
    assert list(jobs.loc[workspace, "status"]) == ["unfinished", "unscored", "errored", "result"]
    assert jobs.loc[workspace[2], "error"] == "the sandbox died" and jobs.loc[workspace[2], "errored"]
    assert jobs.loc[workspace[3], "failed_attempt"] == "failed: the actor died"
    assert jobs.failed_attempt.notna().sum() == 1 and (jobs.status == "result").sum() == 9
    items = items_df(sweep)
    assert set(items.job_id) == set(jobs.index[jobs.status.isin(["result", "errored"])])  # the errored job was scored
    assert set(items.job_id[items.errored]) == {workspace[2]}


def test_a_planned_job_that_never_started_is_a_row_of_its_own(tmp_path: Path) -> None:
    """Issue 48: the frames count what Table 1 counts: planned, results and each kind of not-result."""
    from eval.frames import accounting_df
    from runners.core.job_status import Planned, read_plan, write_plan

    sweep = tmp_path / "s"
    shutil.copytree(SAMPLE, sweep)
    first = read_sweep(sweep).jobs[0]
    recorded = Planned(first.job_id, first.benchmark, first.harness, first.model, first.method, first.task_id, first.seed)
    never = Planned("never-ran", first.benchmark, first.harness, first.model, first.method, "t-late", 3)
    write_plan(sweep, [recorded, never])
    assert read_plan(sweep) == [recorded, never]
    jobs = jobs_df(read_sweep(sweep)).set_index("job_id")
    assert len(jobs) == 13 and jobs.loc["never-ran", "status"] == "not_started" and jobs.loc["never-ran", "seed"] == 3
    rows = accounting_df(read_sweep(sweep)).set_index(["benchmark", "model", "method"])
    row = rows.loc[(first.benchmark, first.model, first.method)]
    assert (row.planned, row.results, row.not_started, row.errored) == (3, 2, 1, 0)
    assert rows.planned.sum() == 13 and rows.results.sum() == 12


def test_without_pandas_the_frames_say_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed: `import pandas` raises ImportError
    with pytest.raises(ImportError, match=r"pip install -e '\.\[frames\]'"):
        jobs_df(read_sweep(SAMPLE))
