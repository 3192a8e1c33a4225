"""The real batch script on a real (single-node) Slurm: a sweep on the scripted model completes; a
cancelled sweep leaves no Ray behind and, resubmitted, completes with every job run once; a job
array splits the grid. Needs `.ci/slurm-up.sh` (Debian's slurm-wlm and munge)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.sweep.ledger import Ledger
from tests.conftest import compose_root, write_script

pytestmark = pytest.mark.slow  # one Slurm node: under xdist (--dist loadfile) this module's tests take turns on one worker
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def slurm() -> None:
    if shutil.which("sbatch") is None:
        pytest.skip(
            "Slurm is not installed: run .ci/slurm-up.sh (installs slurm-wlm and munge, starts a one-node cluster)"
        )
    up = subprocess.run([str(REPO / ".ci" / "slurm-up.sh")], capture_output=True, text=True, timeout=120)
    assert up.returncode == 0, f".ci/slurm-up.sh failed:\n{up.stderr}"


@pytest.fixture(scope="module")
def tasks() -> list[str]:
    cfg = compose_root(["benchmark=builtin", "benchmark.limit=null"])
    ids = [t.id for t in load_benchmark(cfg.benchmark).tasks()][:3]
    assert len(ids) == 3, ids
    return ids


def overrides(out: Path, script: Path, tasks: list[str], sweep: str, *extra: str) -> list[str]:
    return [
        "experiment=demo", "grid.benchmark=[builtin]", "benchmark.limit=null", "model=scripted",
        f"model.script={script}", "grid.method=[dci]", "grid.seed=[0]",
        f"grid.tasks=[{','.join(tasks)}]", "tracker=none", f"out={out}", f"sweep={sweep}", "cluster=slurm",
        "cluster.slurm.cpus_per_node=2", "cluster.slurm.time=00:15:00", "cluster.max_in_flight=2", *extra,
    ]


def launch(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "slurm.launch", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def job_id(launched: subprocess.CompletedProcess[str]) -> str:
    assert "submitted job " in launched.stdout, launched.stdout + launched.stderr
    return launched.stdout.split("submitted job ", 1)[1].split()[0]


def logs(sdir: Path, job: str) -> str:
    return "\n".join(
        f"== {p.name}\n{p.read_text()[-4000:]}" for p in sorted((sdir / "slurm").glob(f"{job}*.out"))
    )


def queued(job: str) -> bool:
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%i"], capture_output=True, text=True)
    return bool(out.stdout.strip())


def ray_processes(job: str) -> list[str]:
    """Command lines of live processes of this job's Ray (its temp dir is /tmp/rt-ray-<job>)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"/tmp/rt-ray-{job}" in text:
            found.append(text)
    return found


def ok_ids(sdir: Path) -> list[str]:
    return [e["job_id"] for e in Ledger(sdir).entries() if e["status"] == "ok"]


def assert_complete_once(sdir: Path, expected: int) -> None:
    jobs = sorted(d.name for d in sdir.iterdir() if (d / "job.json").exists())
    assert len(jobs) == expected
    ok = ok_ids(sdir)
    assert len(ok) == len(set(ok)), f"a job ran twice: {sorted(ok)}"
    assert sorted(ok) == jobs
    for name in jobs:
        assert read_json(sdir / name / "result.json")["stop_reason"] == "finished"
        assert (sdir / name / "scores.json").is_file()
        assert sum(m["role"] == "system" for m in JobRecord(sdir / name).trajectory()) == 1


def test_sweep_runs_as_a_slurm_job(slurm, tasks, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
                                                  {"content": "done"}])
    out = tmp_path / "out"
    launched = launch("--wait", *overrides(out, script, tasks[:2], "one"))
    job = job_id(launched)
    assert launched.returncode == 0, logs(out / "one", job)
    log = (out / "one" / "slurm" / f"{job}.out").read_text()
    assert f"job {job} ended with exit code 0" in launched.stdout
    assert_complete_once(out / "one", 2)
    assert "1 node(s) in the Ray cluster" in log and "done (exit 0)" in log
    assert (out / "one" / "slurm" / "sweep.sbatch").is_file()
    assert ray_processes(job) == []


def test_cancelled_sweep_resumes_without_duplicates(slurm, tasks, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 1"}}]},
                                                  {"content": "done"}])
    out = tmp_path / "out"
    sdir = out / "cancel"
    six = ("grid.seed=[0,1]", "cluster.max_in_flight=1")
    job = job_id(launch(*overrides(out, script, tasks, "cancel", *six)))
    # while it runs, before its jobs finish: under load this second launch took long enough for all
    # six to finish when it came after the first two, and there was nothing left to cancel
    again = launch(*overrides(out, script, tasks, "cancel", *six))
    assert again.returncode == 2 and f"job(s) {job}" in again.stderr  # one driver per sweep
    deadline = time.monotonic() + 180
    while len(ok_ids(sdir) if sdir.is_dir() else []) < 2:
        assert queued(job), "the job ended before it could be cancelled:\n" + logs(sdir, job)
        assert time.monotonic() < deadline, "no job finished in time"
        time.sleep(0.5)

    subprocess.run(["scancel", job], check=True)
    deadline = time.monotonic() + 60
    while queued(job):
        assert time.monotonic() < deadline, "the cancelled job did not end"
        time.sleep(0.5)
    first = ok_ids(sdir)
    assert 2 <= len(first) < 6
    deadline = time.monotonic() + 15  # Slurm removes a job from the queue as its processes are killed
    while ray_processes(job) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert ray_processes(job) == []
    assert "got SIGTERM" in (sdir / "slurm" / f"{job}.out").read_text()

    resumed = subprocess.run(["sbatch", "--wait", "--parsable", str(sdir / "slurm" / "sweep.sbatch")],
                             capture_output=True, text=True, timeout=300)
    second = resumed.stdout.strip()
    assert resumed.returncode == 0, logs(sdir, second)
    # a job in flight at the cancel may have finished its record after the driver's last ledger
    # line: the resume reconciles it (its line says so) and counts it complete
    late = sum(1 for e in Ledger(sdir).entries() if e.get("reconciled"))
    assert late <= 1
    assert (
        f"{len(first) + late} already complete, {6 - len(first) - late} to run"
        in (sdir / "slurm" / f"{second}.out").read_text()
    )
    assert_complete_once(sdir, 6)


def test_job_array_runs_one_slice_per_task(slurm, tasks, tmp_path):
    script = write_script(tmp_path / "s.jsonl", [{"content": "done"}])
    out = tmp_path / "out"
    launched = launch("--wait", *overrides(out, script, tasks[:2], "array", "cluster.slurm.array=2",
                                           "cluster.slurm.cpus_per_node=1"))
    job = job_id(launched)
    assert launched.returncode == 0, logs(out / "array", job)
    files = sorted((out / "array" / "slurm").glob(f"{job}_*.out"))
    assert [p.name for p in files] == [f"{job}_0.out", f"{job}_1.out"]
    for i, log in enumerate(files):
        text = log.read_text()
        assert f"grid.slice={i}/2" in text and "sweep array: 1 jobs, 0 already complete, 1 to run" in text, (
            text[-3000:]
        )
    assert_complete_once(out / "array", 2)
