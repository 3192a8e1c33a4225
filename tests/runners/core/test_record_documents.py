"""The record's documents checked field by field by their one reader (`JobRecord`), as scores.json
already was (issue 50, 7): a document of another shape is one RecordError naming the file and the
field, never a TypeError in the analysis that trusted it; a record our writers wrote always passes."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from runners.core.document_checks import EVENTS
from runners.core.job_record import JobRecord, Trajectory, read_result, write_view
from runners.core.record_files import DEEPER
from runners.core.record_types import (
    JOB_FIELDS,
    RESULT_FIELDS,
    JobMeta,
    RecordError,
    Result,
)

SAMPLE = Path(__file__).parents[2] / "fixtures" / "sweeps" / "sample"
TAB_JOB = "builtin-workspace__ws-02-purchase-order-summary__runningtab__scripted__s0__68c2a0b096"


@pytest.fixture
def job(tmp_path: Path) -> Path:
    d = tmp_path / TAB_JOB
    shutil.copytree(SAMPLE / TAB_JOB, d)
    return d


def _edit(path: Path, change: dict) -> None:
    path.write_text(json.dumps(json.loads(path.read_text()) | change))


def test_every_field_of_job_json_and_result_json_is_checked() -> None:
    """A field added to JobMeta or Result gets its check, or this fails."""
    assert {f.name for f in dataclasses.fields(JobMeta)} == set(JOB_FIELDS)
    assert {f.name for f in dataclasses.fields(Result)} == set(RESULT_FIELDS)


def test_every_record_of_a_real_sweep_passes_every_check() -> None:
    for d in sorted(p for p in SAMPLE.iterdir() if p.is_dir()):
        record = JobRecord(d)
        assert record.meta.job_id == d.name and record.result.stop_reason == "finished"
        assert record.view["messages"] and record.extracted is not None and record.plugin("shown") is not None
        assert record.trajectory() and record.skipped_lines == []
        if "__runningtab__" in d.name:
            assert {e["kind"] for e in record.plugin("tab")["events"]} <= set(EVENTS)


WRONG_JOB = {"seed": "zero", "task_id": {"x": 1}, "config": [1], "harness": 3, "sandbox": 5, "job_id": None}
WRONG_RESULT = {"stop_reason": 5, "turns": "x", "tokens_in": -1, "cost": "free", "wall_s": float("nan"), "deliverable": "out.md",
                "deleted": [1], "left_out_rest": "no", "earlier_errors": ["x"], "limits_hit": "all", "budget_usd": [2]}


@pytest.mark.parametrize(("field", "value"), WRONG_JOB.items())
def test_a_job_json_field_of_the_wrong_type_is_named(job: Path, field: str, value: object) -> None:
    _edit(job / "job.json", {field: value})
    with pytest.raises(RecordError, match=f"job.json.*`{field}`"):
        _ = JobRecord(job).meta


@pytest.mark.parametrize(("field", "value"), WRONG_RESULT.items())
def test_a_result_json_field_of_the_wrong_type_is_named(job: Path, field: str, value: object) -> None:
    _edit(job / "result.json", {field: value})
    with pytest.raises(RecordError, match=f"result.json.*`{field}`"):
        _ = JobRecord(job).result
    with pytest.raises(RecordError):  # a resume never takes it for unfinished (and never clears it)
        read_result(job)


def test_a_null_is_the_field_s_default_and_an_older_record_is_filled(job: Path) -> None:
    _edit(job / "result.json", {"cost": None, "deliverable": None, "schema_version": 1})
    result = JobRecord(job).result
    assert result.cost == 0.0 and result.deliverable == []
    doc = json.loads((job / "job.json").read_text())
    (job / "job.json").write_text(json.dumps({k: v for k, v in doc.items() if k not in ("harness", "config", "schema_version")}))
    assert JobRecord(job).meta.harness == "dci" and JobRecord(job).meta.config == {}


@pytest.mark.parametrize("name", ["job.json", "result.json", "tab.json", "shown.json", "evaluator_view.json", "extracted.json"])
def test_a_document_nested_too_deep_is_a_record_error_not_a_recursion_error(job: Path, name: str) -> None:
    reads = {"job.json": lambda r: r.meta, "result.json": lambda r: r.result, "tab.json": lambda r: r.plugin("tab"),
             "shown.json": lambda r: r.plugin("shown"), "evaluator_view.json": lambda r: r.view, "extracted.json": lambda r: r.extracted}
    for depth in (65, 990, 200_000):  # past the bound; about Python's limit (json.loads passes, json.dumps would not); past both
        (job / name).write_text('{"a": ' * depth + "1" + "}" * depth)
        with pytest.raises(RecordError, match="nested deeper than 64 levels"):
            reads[name](JobRecord(job))


TAB_WRONG = {
    "the document": ([], "tab.json is not a JSON object"),
    "a list": ({"read_log": "L1"}, "tab.json read_log should be a list"),
    "an entry's field": ({"read_log": [{"id": "L1", "path": 5, "command": "", "turn": 1, "excerpt": "x", "chars": 1}]},
                         r"read_log\[0\]: `path` should be a string"),
    "an entry's missing field": ({"read_log": [{"id": "L1", "path": "a", "turn": 1}]}, r"read_log\[0\] lacks `command`"),
    "a requirement": ({"requirements": [{"id": "r1", "text": "t", "status": "open", "entries": "L1", "reason": None, "turn_added": 0, "turn_resolved": None}]},
                      r"requirements\[0\]: `entries` should be a list"),
    "an event's turn": ({"events": [{"kind": "add", "turn": "one", "ids": [], "texts": []}]}, r"events\[0\]: `turn`"),
    "a review's lines": ({"events": [{"kind": "review", "turn": 1, "source": "tool", "open": ["r1"], "lines": ["L1"], "candidates": {}}]},
                         r"events\[0\] \(review\): `lines`"),
    "a resolve without its status": ({"events": [{"kind": "resolve", "turn": 1, "id": "r1", "entries": [], "reason": None}]},
                                     r"events\[0\] \(resolve\) lacks `status`"),
    "the settings": ({"settings": {"capture": "yes"}}, "`settings` should be an object of"),
}


@pytest.mark.parametrize("doc, message", TAB_WRONG.values(), ids=list(TAB_WRONG))
def test_a_tab_json_of_another_shape_is_named_to_its_field(job: Path, doc: object, message: str) -> None:
    (job / "tab.json").write_text(json.dumps(doc))
    with pytest.raises(RecordError, match=message):
        JobRecord(job).plugin("tab")


def test_a_tab_json_of_an_older_version_is_filled_and_an_unknown_event_kind_kept(job: Path) -> None:
    tab = json.loads((job / "tab.json").read_text())
    del tab["unattributed"], tab["settings"]
    tab["events"].append({"kind": "a_later_kind", "turn": 9, "anything": [1]})
    (job / "tab.json").write_text(json.dumps(tab))
    read = JobRecord(job).plugin("tab")
    assert read["unattributed"] == [] and read["events"][-1]["kind"] == "a_later_kind"


@pytest.mark.parametrize(("name", "doc", "message"), [
    ("shown.json", {"excerpts": {"turn": 1}}, "shown.json excerpts should be a list"),
    ("shown.json", {"excerpts": [{"turn": 1, "path": "a"}]}, r"excerpts\[0\] lacks `excerpt`"),
    ("shown.json", [], "shown.json is not a JSON object"),
    ("evaluator_view.json", {"messages": "x"}, "`messages` should be a list"),
    ("evaluator_view.json", {"messages": [{"role": "tool", "content": {"a": 1}}]}, r"messages\[0\]: `content`"),
    ("evaluator_view.json", {"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 5}}]}]},
     r"tool_calls\[0\].function: `name`"),
    ("extracted.json", {"files": [{"path": "a", "text": ["x"]}]}, r"files\[0\]: `text`"),
    ("extracted.json", [1], "extracted.json is not a JSON object"),
])
def test_the_other_documents_of_another_shape_are_named_to_their_field(job: Path, name: str, doc: object, message: str) -> None:
    (job / name).write_text(json.dumps(doc))
    record = JobRecord(job)
    with pytest.raises(RecordError, match=message):
        {"shown.json": lambda: record.plugin("shown"), "evaluator_view.json": lambda: record.view,
         "extracted.json": lambda: record.extracted}[name]()


def test_a_trajectory_line_that_is_not_a_message_is_skipped_and_said(job: Path) -> None:
    lines = (job / "trajectory.jsonl").read_text().splitlines()
    bad = ["[1]", '{"role": "assistant", "usage": {"input_tokens": "many"}}', "[" * 100_000 + "]" * 100_000,
           '{"role": "tool", "content": "x", "turn": -1}', '{"role": "assistant", "tool_calls": [{"function": {"name": "bash", "arguments": {}}}]}']
    (job / "trajectory.jsonl").write_text("\n".join([lines[0], *bad, *lines[1:]]) + "\n")
    record = JobRecord(job)
    assert record.trajectory() == [json.loads(line) for line in lines]
    assert [s.split(":")[0] for s in record.skipped_lines] == ["line 2", "line 3", "line 4", "line 5", "line 6"]
    assert "`input_tokens` should be an integer >= 0" in record.skipped_lines[1] and "nested deeper" in record.skipped_lines[2]


def _deep(depth: int) -> dict:
    doc: dict = {"type": "string"}
    for _ in range(depth):
        doc = {"type": "object", "properties": {"x": doc}}
    return doc


def test_what_reaches_a_record_from_outside_is_kept_within_what_its_readers_read(tmp_path: Path) -> None:
    """A harness's tool schema (the system message's `tools`, agent-side) or a server's extra reply
    field may nest as deep as its parser allowed: the writers keep the record readable (the deep part
    a note), so no agent can make its own record unreadable and its job unscored."""
    system = {"role": "system", "content": "s", "tools": [{"type": "function", "function": {"name": "t", "parameters": _deep(300)}}]}
    reply = {"role": "assistant", "content": "ok", "extra": {"annotations": _deep(300)}, "turn": 1}
    trajectory = Trajectory(tmp_path)
    for m in (system, reply):
        trajectory(m)
    trajectory.close()
    write_view(tmp_path, {"task": "t", "messages": [system, reply], "final_answer": ""})
    record = JobRecord(tmp_path)
    read = record.trajectory()
    assert record.skipped_lines == [] and [m["role"] for m in read] == ["system", "assistant"]
    assert DEEPER in json.dumps(read) and [m["role"] for m in record.view["messages"]] == ["system", "assistant"]
    assert read[1]["extra"]["annotations"]["properties"]["x"]["type"] == "object"  # the shallow part kept as it was
