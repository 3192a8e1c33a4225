"""Issue 36 (6, 8): what `eval.import atif` and `eval.export atif` read is a file someone else wrote
(a Harbor trial came through the agent's container). A job id from any file is checked against the
project's id form before it names a folder, every write stays inside `--out`, a hostile trial is
refused with one line while the good ones are imported whole, and the exit code says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eval.harbor import harbor_files as hf
from runners.core.job_record import Trajectory, write_meta, write_result
from runners.core.record_types import JobMeta, Result

REPO = Path(__file__).resolve().parents[3]
GOOD_ID = "builtin-qa__q1__dci__scripted__s0__0123456789"


def cli(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def atif(steps: list[Any] | Any) -> dict[str, Any]:
    return {"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "x", "version": "1"}, "steps": steps}


GOOD_STEPS = [
    {"step_id": 1, "source": "user", "message": "What is 2+2?"},
    {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"command": "echo 4"}}],
     "observation": {"results": [{"source_call_id": "c1", "content": "4"}]}, "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.001}},
    {"step_id": 3, "source": "agent", "message": "4"},
]


def trial(root: Path, name: str, job_id: str = GOOD_ID, trajectory: Any = None, result: dict[str, Any] | None = None,
          meta: dict[str, Any] | None = None, raw_trajectory: bytes | None = None) -> Path:
    """A trial directory as `eval.export atif` (or our verifier under a `harbor run`) leaves it."""
    d = root / name
    record = d / hf.RECORD
    record.mkdir(parents=True)
    doc = JobMeta(job_id, "builtin-qa", "q1", "dci", "scripted", 0, {}, "bwrap").to_json() | (meta or {})
    (record / "job.json").write_text(json.dumps(doc))
    (record / "result.json").write_text(json.dumps(Result(job_id, "finished", turns=2, final_answer="4").to_json()))
    (record / "scores.json").write_text(json.dumps({"judge": "rule", "task_id": "q1", "kind": "answer", "metrics": {"correct": 1.0}, "items": []}))
    (d / "agent").mkdir()
    if raw_trajectory is not None:
        (d / hf.TRAJECTORY).write_bytes(raw_trajectory)
    else:
        (d / hf.TRAJECTORY).write_text(json.dumps(atif(GOOD_STEPS) if trajectory is None else trajectory))
    (d / hf.TRIAL_RESULT).write_text(json.dumps({"trial_name": name, "started_at": "2026-01-01T00:00:00+00:00", **(result or {})}))
    return d


def test_readable_ids_have_the_checked_form(compose_cfg: Any) -> None:
    from runners.core.job_ids import check_job_id
    from runners.job.identity import readable_id

    cfg = compose_cfg(["benchmark=builtin", "model=scripted"])
    for task_id in ("q1", "a task/with odd: chars", "../../x", "/etc/passwd"):
        rid = readable_id(cfg, task_id, "0123456789abcdef")
        assert check_job_id(rid, "job.json") == rid
    for bad in ("../x", "..", ".", "/abs/id", "a/b", "", "x" * 300, "-rf", ".hidden", 7, None, "a\nb", "é"):
        with pytest.raises(ValueError, match="job id"):
            check_job_id(bad, "job.json")


@pytest.mark.parametrize("job_id", ["../escaped", "/ABS/escaped", "a/../../escaped"])
def test_import_never_writes_outside_out(tmp_path: Path, job_id: str) -> None:
    job_id = job_id.replace("/ABS", str(tmp_path))
    src = tmp_path / "trials"
    trial(src, "bad", job_id=job_id)
    trial(src, "good")
    out = tmp_path / "area" / "out"
    r = cli("eval.import", "atif", str(src), "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == [GOOD_ID], r.stdout + r.stderr
    assert not (tmp_path / "area" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "not a job id" in r.stdout + r.stderr and "1 job record(s)" in r.stdout and "1 refused" in r.stdout, r.stdout


def finished_job(root: Path, job_id: str) -> Path:
    d = root / ("job-" + str(abs(hash(job_id))))
    d.mkdir(parents=True)
    write_meta(d, JobMeta(job_id, "builtin-qa", "q1", "dci", "scripted", 0, {}, "bwrap"))
    traj = Trajectory(d)
    traj({"role": "user", "content": "hi", "turn": 0, "time": 1.0})
    traj.close()
    write_result(d, Result(job_id, "finished", turns=1))
    return d


@pytest.mark.parametrize("job_id", ["../escaped", "/ABS/escaped"])
def test_export_never_writes_outside_out(tmp_path: Path, job_id: str) -> None:
    job_id = job_id.replace("/ABS", str(tmp_path))
    finished_job(tmp_path / "sweep", job_id)
    finished_job(tmp_path / "sweep", GOOD_ID)
    out = tmp_path / "area" / "out"
    r = cli("eval.export", "atif", str(tmp_path / "sweep"), "--out", str(out))
    assert sorted(p.name for p in out.iterdir()) == [GOOD_ID], r.stdout + r.stderr
    assert not (tmp_path / "area" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert r.returncode == 1 and "Traceback" not in r.stderr and "not a job id" in r.stdout + r.stderr, r.stderr


def deep(n: int) -> Any:
    doc: Any = "x"
    for _ in range(n):
        doc = [doc]
    return doc


HOSTILE = {
    "steps not a list": atif({"a": 1}),
    "a step not an object": atif(["hello"]),
    "source of another type": atif([{"step_id": 1, "source": ["user"], "message": "x"}]),
    "message a number": atif([{"step_id": 1, "source": "user", "message": 5}]),
    "tool call without its id": atif([{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"function_name": "bash", "arguments": {}}]}]),
    "arguments a list": atif([{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c", "function_name": "bash", "arguments": [1]}]}]),
    "metrics as text": atif([{"step_id": 1, "source": "agent", "message": "", "metrics": {"prompt_tokens": "many"}}]),
    "negative cost": atif([{"step_id": 1, "source": "agent", "message": "", "metrics": {"cost_usd": -5}}]),
    "observation results not a list": atif([{"step_id": 1, "source": "agent", "message": "", "observation": {"results": "no"}}]),
    "extra runningtab not an object": atif([{"step_id": 1, "source": "user", "message": "x", "extra": {"runningtab": [1]}}]),
    "deep nesting in extra": atif([{"step_id": 1, "source": "agent", "message": "", "extra": {"runningtab": {"extra": deep(500)}}}]),
    "not an object": [1, 2],
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_trajectory_is_refused_in_one_line_and_the_good_trial_imported(tmp_path: Path, kind: str) -> None:
    src = tmp_path / "trials"
    trial(src, "bad", job_id=GOOD_ID.replace("0123456789", "badbadbad0"), trajectory=HOSTILE[kind])
    trial(src, "good")
    out = tmp_path / "out"
    r = cli("eval.import", "atif", str(src), "--out", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert [p.name for p in out.iterdir()] == [GOOD_ID]  # no torn record, no temporary folder left
    refused = [line for line in r.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 1 and "bad" in refused[0] and "trajectory.json" in refused[0], r.stdout
    assert "1 job record(s)" in r.stdout.splitlines()[-1] and "1 refused" in r.stdout.splitlines()[-1]
    good = out / GOOD_ID
    assert {"job.json", "result.json", "scores.json", "trajectory.jsonl"} <= {p.name for p in good.iterdir()}
    assert [json.loads(x)["role"] for x in (good / "trajectory.jsonl").read_text().splitlines()] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize("kind", ["deep json", "huge", "not json", "result with wrong types", "job with wrong types", "harbor result wrong types"])
def test_hostile_files_of_a_trial_are_refused(tmp_path: Path, kind: str) -> None:
    src = tmp_path / "trials"
    bad_id = GOOD_ID.replace("0123456789", "badbadbad0")
    if kind == "deep json":
        trial(src, "bad", job_id=bad_id, raw_trajectory=b"[" * 200_000 + b"]" * 200_000)
    elif kind == "huge":  # a sparse file: its size is read, its bytes never are
        d = trial(src, "bad", job_id=bad_id)
        os.truncate(d / hf.TRAJECTORY, 300 << 20)
    elif kind == "not json":
        trial(src, "bad", job_id=bad_id, raw_trajectory=b"\xff\xfe not json")
    elif kind == "result with wrong types":
        d = trial(src, "bad", job_id=bad_id)
        (d / hf.RECORD / "result.json").write_text(json.dumps({"stop_reason": "finished", "tokens_in": "lots", "deliverable": 3}))
    elif kind == "job with wrong types":
        trial(src, "bad", job_id=bad_id, meta={"task_id": {"x": 1}, "seed": "zero"})
    else:
        trial(src, "bad", job_id="harbor-trial", meta={"sandbox": "container"},
              result={"config": ["not", "a", "dict"], "agent_result": {"n_input_tokens": "ten", "cost_usd": float("nan")}})
    trial(src, "good")
    out = tmp_path / "out"
    r = cli("eval.import", "atif", str(src), "--out", str(out))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert [p.name for p in out.iterdir()] == [GOOD_ID], r.stdout
    refused = [line for line in r.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 1 and "/bad" in refused[0], r.stdout


def test_a_reimport_replaces_a_record_whole(tmp_path: Path) -> None:
    """A record already in --out is replaced in one rename: nothing of the old one stays beside the new."""
    src = tmp_path / "trials"
    trial(src, "good")
    out = tmp_path / "out"
    assert cli("eval.import", "atif", str(src), "--out", str(out)).returncode == 0
    (out / GOOD_ID / "stale.json").write_text("{}")
    r = cli("eval.import", "atif", str(src), "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (out / GOOD_ID / "stale.json").exists() and sorted(p.name for p in out.iterdir()) == [GOOD_ID]
