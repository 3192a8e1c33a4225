"""W&B at scale (issue 15 item 4): one run per grid cell, written off the driver's loop, and one
summary run per sweep, never repeated by a re-run. Real wandb, offline; the offline run folders are
read back (their `.wandb` record log, and the tables they wrote)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eval.benchmarks import load_benchmark
from runners.config.runner import TrackerConfig
from runners.core.job_record import JobRecord
from runners.core.record_types import Cell, JobMeta
from runners.tracking.wandb_runs import WandbTracker
from tests.conftest import compose_root, write_script

pytestmark = pytest.mark.usefixtures("own_ray")  # their sweeps start their own local Ray

REPO = Path(__file__).resolve().parents[3]
SECRET = "sk-test-NEVER-IN-WANDB-5c3d"


# --------------------------------------------------------------------------- reading offline runs
def _records(path: Path) -> Iterator[Any]:
    """The protobuf records of a `run-*.wandb` file (LevelDB log: 7-byte header, 32 KiB blocks)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data, pos, buf = path.read_bytes(), 7, b""
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:  # a block's tail too short for a header is padding
            pos += 32768 - pos % 32768
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        buf += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            rec = pb.Record()
            rec.ParseFromString(buf)
            buf = b""
            yield rec


def _settled(folder: Path) -> list[Any]:
    """The run's records once wandb's service has written them all (its `exit` record): `finish()`
    returns before the offline log is flushed."""
    deadline = time.monotonic() + 120
    while True:
        recs = list(_records(next(folder.glob("run-*.wandb"))))
        if any(r.WhichOneof("record_type") == "exit" for r in recs) or time.monotonic() > deadline:
            return recs
        time.sleep(0.1)


def read_runs(wandb_dir: Path) -> list[dict[str, Any]]:
    """Each offline run folder: id, name, tags, config, summary and its tables (name -> rows)."""
    runs = []
    for folder in sorted(wandb_dir.glob("offline-run-*")):
        run: dict[str, Any] = {"folder": folder.name, "config": {}, "summary": {}, "tables": {}}
        for rec in _settled(folder):
            kind = rec.WhichOneof("record_type")
            if kind == "run":
                run.update(id=rec.run.run_id, name=rec.run.display_name, tags=list(rec.run.tags))
                run["config"] = {i.key: json.loads(i.value_json) for i in rec.run.config.update}
            elif kind == "summary":
                run["summary"].update({i.key: json.loads(i.value_json) for i in rec.summary.update if i.key})
        for t in folder.glob("files/media/table/*.table.json"):
            table = json.loads(t.read_text())
            run["tables"][t.name.rsplit("_", 2)[0]] = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
        runs.append(run)
    return runs


# --------------------------------------------------------------------------- records without a sweep
def write_record(sdir: Path, job_id: str, cell: Cell, task: str, passed: list[bool], key_env: str = "OPENAI_API_KEY") -> JobMeta:
    job = {"job_id": job_id, "benchmark": cell.benchmark, "task_id": task, "method": cell.method, "model": cell.model,
           "seed": cell.seed, "config": {"method": {"name": cell.method, "tab": {"capture": True, "review": False}},
                                         "model": {"api_key_env": key_env}}}
    d = sdir / job_id
    d.mkdir(parents=True)
    (d / "job.json").write_text(json.dumps(job))
    (d / "result.json").write_text(json.dumps({"job_id": job_id, "stop_reason": "finished", "turns": 3, "tokens_in": 100,
                                               "tokens_out": 10, "cost": 0.01, "wall_s": 2.0, "attempt": 1}))
    items = [{"kind": "rubric", "index": i, "text": f"r{i}", "passed": p} for i, p in enumerate(passed)]
    (d / "scores.json").write_text(json.dumps({"metrics": {"pass_rate": sum(passed) / len(passed)}, "items": items}))
    return JobMeta.from_json(job)


CELL_A, CELL_B = Cell("bench", "runningtab", "m", 0), Cell("bench", "dci", "m", 0)


@pytest.fixture
def records(tmp_path: Path) -> tuple[Path, dict[str, Cell], dict[str, JobMeta]]:
    sdir = tmp_path / "sw"
    plan, jobs = {}, {}
    for cell in (CELL_A, CELL_B):
        for k in range(3):
            job_id = f"{cell.name}__t{k}"
            plan[job_id] = cell
            jobs[job_id] = write_record(sdir, job_id, cell, f"t{k}", [True, k % 2 == 0])
    return sdir, plan, jobs


def tracker(sdir: Path, plan: dict[str, Cell]) -> WandbTracker:
    return WandbTracker(TrackerConfig(kind="wandb", mode="offline"), "sw", sdir, plan)


def test_a_cell_run_is_written_once_its_last_job_has_finished(records) -> None:
    sdir, plan, jobs = records
    tr = tracker(sdir, plan)
    a = [j for j in jobs if plan[j] == CELL_A]
    for job_id in a[:2]:
        tr.log_job(jobs[job_id], None, {"read_log_entries": 4})
    tr.wait()
    assert read_runs(sdir / "wandb") == []  # two of three jobs: nothing written yet
    tr.log_job(jobs[a[2]], None, {"read_log_entries": 4})
    tr.wait()
    [run] = read_runs(sdir / "wandb")
    assert run["name"] == CELL_A.name and run["config"]["partial"] is False
    for key, value in {"benchmark": "bench", "method": "runningtab", "model": "m", "seed": 0,
                       "tab_capture": True, "tab_review": False, "ablation": True}.items():
        assert run["config"][key] == value
    assert sorted(r["task_id"] for r in run["tables"]["tasks"]) == ["t0", "t1", "t2"]
    assert len(run["tables"]["rubrics"]) == 6 and all(r["tab/read_log_entries"] == 4 for r in run["tables"]["tasks"])
    items = [i for j in a for i in json.loads((sdir / j / "scores.json").read_text())["items"]]
    assert run["summary"]["pass_rate"] == pytest.approx(sum(i["passed"] for i in items) / len(items))  # pooled
    assert run["summary"]["rubric_pass_rate"] == run["summary"]["pass_rate"]  # the headline: every rubric judged once here
    assert run["summary"]["turns_total"] == 9 and run["summary"]["stop/finished"] == 3
    assert tr.logged() == set(a)


def test_an_incomplete_cell_is_written_partial_and_completed_by_the_next_run(records) -> None:
    sdir, plan, jobs = records
    b = [j for j in jobs if plan[j] == CELL_B]
    first = tracker(sdir, plan)
    first.log_job(jobs[b[0]], None, {})
    first.flush()
    [run] = read_runs(sdir / "wandb")
    assert run["config"]["partial"] is True and len(run["tables"]["tasks"]) == 1

    again = tracker(sdir, plan)  # the next invocation: the job already in W&B is not tracked again
    assert again.logged() == {b[0]}
    for job_id in b[1:]:
        again.log_job(jobs[job_id], None, {})
    again.wait()
    runs = read_runs(sdir / "wandb")
    assert len(runs) == 2 and len({r["id"] for r in runs}) == 1  # the same W&B run, rewritten whole
    latest = max(runs, key=lambda r: len(r["tables"]["tasks"]))
    assert latest["config"]["partial"] is False and len(latest["tables"]["tasks"]) == 3
    again.flush()
    assert len(read_runs(sdir / "wandb")) == 2  # nothing left to write


def test_log_job_never_waits_for_wandb(records) -> None:
    sdir, plan, jobs = records
    tr = tracker(sdir, plan)
    entered, release = threading.Event(), threading.Event()
    real_init = tr.wandb.init

    def slow_init(**kw: Any) -> Any:
        entered.set()
        release.wait()
        return real_init(**kw)

    tr.wandb = type("W", (), {"init": staticmethod(slow_init), "Table": tr.wandb.Table, "Settings": tr.wandb.Settings})
    for job_id in [j for j in jobs if plan[j] == CELL_A]:
        tr.log_job(jobs[job_id], None, {})  # the third queues the cell's run, which blocks in init
    assert entered.wait(60)
    for job_id in [j for j in jobs if plan[j] == CELL_B]:
        tr.log_job(jobs[job_id], None, {})  # returns although the writer is stuck
    release.set()
    tr.wait()
    assert sorted(r["name"] for r in read_runs(sdir / "wandb")) == sorted([CELL_A.name, CELL_B.name])


def test_a_failed_cell_write_costs_nothing_and_is_written_again_by_flush(records) -> None:
    sdir, plan, jobs = records
    tr = tracker(sdir, plan)
    real_table, calls = tr.wandb.Table, []

    def table_failing_once(**kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("W&B is down")
        return real_table(**kw)

    tr.wandb = type("W", (), {"init": staticmethod(tr.wandb.init), "Table": staticmethod(table_failing_once), "Settings": tr.wandb.Settings})
    for job_id in [j for j in jobs if plan[j] == CELL_A]:
        tr.log_job(jobs[job_id], None, {})
    tr.wait()
    assert tr.logged() == set()  # the failed write is not taken for a written cell
    tr.flush()
    written = [r for r in read_runs(sdir / "wandb") if r["tables"]]
    assert [r["name"] for r in written] == [CELL_A.name] and len(written[0]["tables"]["tasks"]) == 3
    assert tr.logged() == {j for j in jobs if plan[j] == CELL_A}


def test_the_summary_run_is_logged_once_until_its_tables_change(records) -> None:
    sdir, plan, _ = records
    tables = {"table1": (["method", "pass_rate"], [["dci", 0.5], ["runningtab", 0.75]])}
    tracker(sdir, plan).log_summary(tables)
    tracker(sdir, plan).log_summary(tables)  # a re-run of the finished sweep
    assert len(read_runs(sdir / "wandb")) == 1
    tracker(sdir, plan).log_summary({"table1": (["method", "pass_rate"], [["dci", 0.5], ["runningtab", 1.0]])})
    runs = read_runs(sdir / "wandb")
    assert len(runs) == 2 and len({r["id"] for r in runs}) == 1


# --------------------------------------------------------------------------- a real sweep
@pytest.mark.slow
def test_sweep_logs_one_run_per_cell_and_a_rerun_adds_none(tmp_path: Path) -> None:
    """Two tasks a cell are enough to tell a run per cell (5) from a run per job (9)."""
    tasks = [t.id for t in load_benchmark(compose_root(["benchmark=builtin"]).benchmark).tasks()][:2]
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}, {"content": "done"}])
    cmd = [sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
           "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[dci,runningtab]", "grid.seed=[0,1]",
           f"grid.tasks=[{','.join(tasks)}]", "tracker=wandb", f"out={tmp_path / 'out'}", "sweep=cells"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline", "OPENAI_API_KEY": SECRET}
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    sdir = tmp_path / "out" / "cells"
    jobs = [JobRecord(d).meta for d in sdir.iterdir() if (d / "job.json").is_file()]
    assert len(jobs) == 8
    cells = Counter(Cell.of_job(j) for j in jobs)
    runs = read_runs(sdir / "wandb")
    assert len(runs) == len(cells) + 1 == 5  # a run per cell and the sweep's summary, not one per job
    by_name = {r["name"]: r for r in runs}
    for cell, n in cells.items():
        run = by_name[cell.name]
        assert {k: run["config"][k] for k in ("benchmark", "method", "model", "seed")} == {
            "benchmark": cell.benchmark, "method": cell.method, "model": cell.model, "seed": cell.seed}
        assert run["config"]["tab"] is (cell.method == "runningtab") and "tab_capture" in run["config"]
        assert sorted(row["task_id"] for row in run["tables"]["tasks"]) == sorted(tasks) and n == len(tasks)
        assert run["summary"]["jobs"] == n and run["summary"]["partial"] is False
        assert {"turns_mean", "tokens_in_total", "tokens_out_total", "cost_total", "wall_s_total"} <= set(run["summary"])
        assert sum(v for k, v in run["summary"].items() if k.startswith("stop/")) == n
        assert run["tables"]["rubrics"] and {row["task_id"] for row in run["tables"]["rubrics"]} == set(tasks)
    summary = by_name["cells-summary"]
    assert "table1" in summary["tables"]
    for p in sdir.rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p

    again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "8 already complete, 0 to run" in again.stderr
    assert len(read_runs(sdir / "wandb")) == 5  # no cell logged again, no second summary run


def test_the_spend_is_a_live_run_of_its_own_per_cell(records) -> None:
    """`log_spend` (the sweep's watch, every minute) steps one run, `<sweep>-spend`, with each cell's
    spend and spend expected at completion; `flush` closes it."""
    sdir, plan, _ = records
    tr = tracker(sdir, plan)
    for spent in (0.5, 1.25):
        tr.log_spend({"spent": spent, "expected": 4.0, "cells": {CELL_A.name: {"spent": spent, "expected": 3.0}}})
    tr.flush()
    [run] = read_runs(sdir / "wandb")
    assert run["name"] == "sw-spend"
    steps = [{"/".join(i.nested_key) or i.key: json.loads(i.value_json) for i in rec.history.item}
             for rec in _settled(sdir / "wandb" / run["folder"]) if rec.WhichOneof("record_type") == "history"]
    assert [s["spend/total"] for s in steps] == [0.5, 1.25] and {s[f"expected/{CELL_A.name}"] for s in steps} == {3.0}


def test_the_closing_line_counts_runs_by_id_not_by_folder(records) -> None:
    """A cell written partial and then completed keeps two folders of one run (issue 38 item 3: 12
    folders for 8 cells); the line counts runs, says why the folders are more, and names the sync."""
    sdir, plan, jobs = records
    b = [j for j in jobs if plan[j] == CELL_B]
    first = tracker(sdir, plan)
    first.log_job(jobs[b[0]], None, {})
    first.flush()
    again = tracker(sdir, plan)
    for job_id in b[1:]:
        again.log_job(jobs[job_id], None, {})
    again.log_spend({"spent": 0.5, "expected": 1.0, "cells": {}})
    again.flush()
    again.log_summary({"table1": (["method"], [["dci"]])})
    line = again.closing_line()
    folders = [p for p in (sdir / "wandb").iterdir() if p.name.startswith("offline-run-")]
    assert len(folders) == 4 and len({r["id"] for r in read_runs(sdir / "wandb")}) == 3
    assert line is not None and line.startswith("W&B: 3 runs (1 cell, summary, spend) in 4 folders")
    assert line.endswith(f"saved offline in {sdir / 'wandb'}; upload them with: wandb sync {sdir / 'wandb'}")
