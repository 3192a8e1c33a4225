"""Issue 50 (7): a record of any shape never ends a reader in a traceback. The three readers of
finished records (`eval.frames`, `python -m eval.report`, `python -m eval.replay`), each run as a
user runs it over a real sweep with one hostile document: each finishes, leaves out what it cannot
read, and names the job and the document (the 12 reader runs of the issue: 7 ended in tracebacks)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval.frames import items_df, jobs_df, read_sweep, tab_df, turns_df
from eval.replay.sweep import main as replay_main
from eval.report.__main__ import main as report_main

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "sweeps" / "sample"
JOB = "builtin-workspace__ws-02-purchase-order-summary__runningtab__scripted__s0__68c2a0b096"  # failed rubrics: its shown log is read
HOSTILE = {
    "job.json": "[" * 200_000 + "]" * 200_000,
    "tab.json": json.dumps({"requirements": 5, "read_log": "L1", "candidates": None, "events": {"kind": "read"}, "settings": []}),
    "shown.json": json.dumps({"excerpts": {"turn": "one", "path": 5}}),
    "result.json": json.dumps({"stop_reason": 5, "turns": "x", "tokens_in": "many", "cost": "free", "deliverable": "out.md"}),
}
SKIPS_THE_JOB = ("job.json", "result.json")  # what a job is and how it ended: without them, no job
READS = {"frames": {"job.json", "result.json", "tab.json"},  # the frames never read the shown log
         "report": set(HOSTILE), "replay": {"job.json", "result.json", "tab.json"}}


@pytest.fixture
def hostile(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, str]:
    name = request.param
    sweep = tmp_path / "out" / "sample"
    shutil.copytree(SAMPLE, sweep)
    (sweep / JOB / name).write_text(HOSTILE[name])
    return sweep, name


def _named(text: str, name: str) -> bool:
    return any(JOB in line and name in line for line in text.splitlines())


@pytest.mark.parametrize("hostile", list(HOSTILE), indirect=True)
def test_the_frames_skip_and_name_a_record_they_cannot_read(hostile: tuple[Path, str]) -> None:
    sweep_dir, name = hostile
    sweep = read_sweep(sweep_dir)
    jobs, items, turns, tab = (f(sweep) for f in (jobs_df, items_df, turns_df, tab_df))
    assert len(jobs) == 11 + (name not in SKIPS_THE_JOB)
    if name in SKIPS_THE_JOB:
        assert list(sweep.broken) == [JOB] and JOB not in set(jobs.job_id) | set(items.job_id) | set(turns.job_id)
        assert name in sweep.broken[JOB]
    if name == "tab.json":
        assert JOB not in set(tab.job_id) and set(tab.job_id) and _named("\n".join(sweep.unreadable()), name)
    if name not in READS["frames"]:
        assert JOB in set(tab.job_id) and not sweep.unreadable()


@pytest.mark.parametrize("hostile", list(HOSTILE), indirect=True)
def test_the_report_is_written_and_names_a_record_it_cannot_read(hostile: tuple[Path, str], capsys: pytest.CaptureFixture) -> None:
    sweep_dir, name = hostile
    assert report_main([str(sweep_dir), "--workers", "0"]) == 0
    report = (sweep_dir / "report" / "report.md").read_text()
    assert _named(report, name), report[:2000]
    assert "failed with" not in report  # no analysis fell over it
    assert _named((sweep_dir / "report" / "index.html").read_text(), name)


@pytest.mark.parametrize("hostile", list(HOSTILE), indirect=True)
def test_the_replay_names_a_record_it_cannot_read(hostile: tuple[Path, str], capsys: pytest.CaptureFixture) -> None:
    sweep_dir, name = hostile
    assert replay_main([str(sweep_dir), "--out", str(sweep_dir.parent / "replay")]) == 0
    summary = capsys.readouterr().out
    replayed = [json.loads(line)["job_id"] for line in (sweep_dir.parent / "replay" / "replay.jsonl").read_text().splitlines()]
    if name in READS["replay"]:
        assert JOB not in replayed and _named(summary, name), summary
    else:
        assert JOB in replayed
    assert len(replayed) == 5 + (name not in READS["replay"])  # every other tab job replayed
