"""An episode's totals become the job's `result.json` field by field, by name (runners/job/run.py):
each field is declared once, on the episode, and a field added to the episode or to the record
without the other fails here."""

from __future__ import annotations

from dataclasses import fields

from runners.agent.episode import EpisodeResult
from runners.core.record_types import Result

# What the job, not its episode, writes into result.json: which attempt, what the workspace and the
# sandbox left (runners/job/run.py `_deliver`) and what was paid (runners/job/model.py `record_fields`).
JOB_FIELDS = {"job_id", "attempt", "earlier_errors", "schema_version", "sandbox", "limits_hit", "deliverable", "deleted",
              "left_out", "left_out_rest", "spend", "cached_calls", "budget_usd"}


def test_every_field_of_a_result_comes_from_the_episode_or_the_job() -> None:
    totals = set(EpisodeResult().totals())
    record = {f.name for f in fields(Result)}
    assert totals == {f.name for f in fields(EpisodeResult)} - {"messages"}
    assert totals <= record, f"episode totals result.json lacks: {sorted(totals - record)}"
    assert not totals & JOB_FIELDS
    assert record == totals | JOB_FIELDS, f"say where these come from: {sorted(record - totals - JOB_FIELDS)}"
