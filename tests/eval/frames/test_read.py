"""Reading a sweep for the frames: from S3 through the storage layer (against a real S3-compatible
server, moto's, on 127.0.0.1: the storage tests' fixture) and locally, bounded: records are the agent's to influence."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from eval.frames import items_df, jobs_df, read_sweep, tab_df, turns_df
from runners.core.record_files import JOB, TRAJECTORY
from runners.core.storage import S3Storage, S3StorageConfig

SAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "sweeps" / "sample"


@pytest.mark.slow
def test_a_sweep_stored_in_s3_gives_the_frames_of_its_local_folder(s3: str, tmp_path: Path) -> None:
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="runs", prefix="team/rt", endpoint_url=s3))
    for job in sorted(p for p in SAMPLE.iterdir() if (p / JOB).is_file()):
        assert storage.upload("sample", job) is None
    client = storage.client
    client.put_object(Bucket="runs", Key="team/rt/sample/../job.json", Body=b"{}")  # a key naming the folder above
    first = sorted(SAMPLE.glob("builtin-qa__qa-01__dci*"))[0].name
    client.put_object(Bucket="runs", Key=f"team/rt/sample/{first}/deliverable/x.txt", Body=b"agent's")
    into = tmp_path / "copy"
    sweep = read_sweep("s3://runs/team/rt/sample", endpoint_url=s3, into=into)
    local = read_sweep(SAMPLE)
    drop = ["failed_attempt"]  # the ledger stays with the sweep's driver; S3 keeps job folders
    assert jobs_df(sweep).drop(columns=drop).equals(jobs_df(local).drop(columns=drop))
    assert turns_df(sweep).equals(turns_df(local)) and items_df(sweep).equals(items_df(local))
    assert not (into / "job.json").exists()
    assert not (into / "sample" / first / "deliverable").exists()


def test_an_object_past_the_bound_is_not_read(s3: str, tmp_path: Path) -> None:
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="runs", prefix="p", endpoint_url=s3))
    job = sorted(p for p in SAMPLE.iterdir() if (p / JOB).is_file())[0]
    assert storage.upload("sample", job) is None
    sweep = read_sweep("s3://runs/p/sample", endpoint_url=s3, into=tmp_path, max_file_bytes=4096)
    assert not (tmp_path / "sample" / job.name / TRAJECTORY).exists()  # larger than 4 KiB: left in the bucket
    assert [j.job_id for j in sweep.jobs] == [job.name]


def test_links_and_oversized_records_are_skipped_not_followed(tmp_path: Path) -> None:
    sweep_dir = tmp_path / "s"
    shutil.copytree(SAMPLE, sweep_dir)
    jobs = sorted(p for p in sweep_dir.iterdir() if (p / JOB).is_file())
    outside = tmp_path / "outside"
    shutil.move(jobs[0], outside)
    os.symlink(outside, jobs[0])  # a job folder that is a link
    (jobs[1] / TRAJECTORY).unlink()
    os.symlink("/etc/passwd", jobs[1] / TRAJECTORY)  # a record document that is a link
    sweep = read_sweep(sweep_dir)
    assert list(sweep.broken) == [jobs[0].name, jobs[1].name] and len(sweep.jobs) == 10
    assert set(turns_df(sweep).job_id) == {j.job_id for j in sweep.jobs}
    small = read_sweep(sweep_dir, max_file_bytes=1024)
    assert small.jobs == [] and len(small.broken) == 12


def test_a_missing_folder_or_bad_address_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="give outputs/<sweep>"):
        read_sweep(tmp_path / "nope")
    with pytest.raises(ValueError, match="s3://BUCKET/PREFIX/SWEEP"):
        read_sweep("s3://bucket-only")


def test_records_of_any_shape_give_frames_and_never_stop_them(tmp_path: Path) -> None:
    """A record is what the agent influenced, and a bucket anyone may write: a document (or a
    trajectory line) of another shape is left out of the frames that read it, and named; the rest
    of its job stays (issue 50, 7: before, each frame took what fields it could of any shape)."""
    sweep_dir = tmp_path / "s"
    shutil.copytree(SAMPLE, sweep_dir)
    jobs = sorted(p for p in sweep_dir.iterdir() if (p / JOB).is_file() and "runningtab" in p.name)
    kept = (jobs[0] / TRAJECTORY).read_text().splitlines()
    lines = ["[1, 2]", '{"role": "assistant", "tool_calls": "bash", "content": 5, "usage": [1]}',
             '{"role": "assistant", "tool_calls": [{"function": "bash"}, 3], "usage": {"input_tokens": 7}}', *kept]
    (jobs[0] / TRAJECTORY).write_text("\n".join(lines) + "\n")
    scores = json.loads((jobs[0] / "scores.json").read_text())
    (jobs[0] / "scores.json").write_text(json.dumps(scores | {"items": [1, {"kind": "rubric", "passed": True}], "metrics": [0.5]}))
    (jobs[0] / "tab.json").write_text(json.dumps({"events": [3, {"kind": "read", "turn": 1}]}))
    (jobs[1] / "tab.json").write_text("[]")
    (jobs[1] / "scores.json").write_text(json.dumps(scores | {"items": {"kind": "rubric"}}))
    sweep = read_sweep(sweep_dir)
    turns = turns_df(sweep)
    assert len(turns.query("job_id == @jobs[0].name")) == sum('"assistant"' in line for line in kept)  # the three bad lines left out
    assert not {jobs[0].name, jobs[1].name} & set(items_df(sweep).job_id)  # scores of the wrong shape: unreadable
    assert not {jobs[0].name, jobs[1].name} & set(tab_df(sweep).job_id)
    rows = jobs_df(sweep).set_index("job_id").loc[[jobs[0].name, jobs[1].name]]
    assert set(rows.status) == {"unscored"} and rows.rubric_pass_rate_num.isna().all()  # unscored, never a 0
    named = sweep.unreadable()
    for job, doc in ((jobs[0], "trajectory.jsonl"), (jobs[0], "tab.json"), (jobs[0], "scores.json"), (jobs[1], "tab.json")):
        assert any(line.startswith(f"{job.name}: {doc} (") for line in named), named
