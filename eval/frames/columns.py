"""Which fields of the record's types are columns of the frames, and why the others are not.

Every column below is derived from a dataclass's fields (or a TypedDict's keys), so a field added to the record becomes a
column by itself; a field that is not one is named in an `EXCLUDED` entry with the reason (a test
checks each field is one or the other).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from runners.core.job_status import STATUSES as JOB_STATUSES
from runners.core.messages import AssistantMessage, Usage
from runners.core.record_types import JobMeta, Result, Scores

# status: what a job's record says of it (docs/concepts: errored, failed, unscored): the one classification
STATUSES = JOB_STATUSES
# a job whose latest ledger entry (jobs.jsonl) is not ok has that entry's text in `failed_attempt`
AXES = ("benchmark", "harness", "method", "model", "seed", "task_id")  # what a job's cell and task are


@dataclass(frozen=True)
class Source:
    """A record type whose fields are columns, less the excluded ones (name -> why)."""

    cls: type
    excluded: dict[str, str]

    @property
    def fields(self) -> list[str]:
        """The type's fields (a dataclass) or keys (a TypedDict), in order."""
        return [f.name for f in dataclasses.fields(self.cls)] if dataclasses.is_dataclass(self.cls) else list(self.cls.__annotations__)

    @property
    def columns(self) -> list[str]:
        return [f for f in self.fields if f not in self.excluded]


JOB_META = Source(JobMeta, {
    "config": "the whole job config, nested: read it with `read_sweep(...).job(id).config`",
    "schema_version": "the record's format, not the job's",
})
RESULT = Source(Result, {
    "job_id": "job.json's",
    "sandbox": "job.json's (the sandbox the agent actually got)",
    "schema_version": "the record's format, not the job's",
})
SCORES = Source(Scores, {
    "task_id": "job.json's", "job_id": "job.json's", "benchmark": "job.json's",
    "metrics": "one column per metric",
    "items": "one row each in items_df",
    "schema_version": "the record's format, not the job's",
})
USAGE = Source(Usage, {})
ASSISTANT = Source(AssistantMessage, {
    "content": "the reply's text: `content_chars` counts it (read it in the trajectory)",
    "tool_calls": "`tools` names them, `tool` the first",
    "usage": "its fields are columns (`Usage`)",
    "extra": "provider-specific fields",
})
SOURCES = (JOB_META, RESULT, SCORES, USAGE, ASSISTANT)

# tab events (tab/state.py, tab/ops.py, tab/tab.py) by stage
EVENT_STAGES = {
    "read": "capture", "candidates": "capture",
    "add": "operation", "review": "operation", "resolve": "operation", "show": "operation",
    "resolve_refused": "check", "finish_check": "check",
}
