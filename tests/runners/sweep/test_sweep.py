"""Sweeps through the real entry point and real local Ray: records, resume, SIGKILL, failures."""

from __future__ import annotations

import json
import os
import signal
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
from tests.helpers import shared_ray

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def three_tasks() -> list[str]:
    cfg = compose_root(["benchmark=builtin"])
    return [t.id for t in load_benchmark(cfg.benchmark).tasks()][:3]


def sweep_cmd(out: Path, script: Path, tasks: list[str], *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
        "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[dci,runningtab]", "grid.seed=[0,1]", f"grid.tasks=[{','.join(tasks)}]",
        "tracker=jsonl", f"out={out}", "sweep=t", "cluster.max_in_flight=2", *extra,
    ]


def wait_for_orphan_actors(timeout: float = 60) -> None:
    """Ray's workers notice their driver is gone within seconds; a job they were finishing may
    complete its record meanwhile (a complete record, which the re-run must then skip). Only the
    tests' shared Ray is looked at: other sweeps on the machine (another xdist worker's) have actors too."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for pid in shared_ray.pids():
            try:
                alive.append(Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::EpisodeActor"))
            except OSError:
                continue
        if not any(alive):
            return
        time.sleep(0.5)


def ok_ids(sdir: Path) -> list[str]:
    return [e["job_id"] for e in Ledger(sdir).entries() if e["status"] == "ok"]


def test_sweep_resume_after_sigkill(tmp_path: Path, three_tasks: list[str]) -> None:
    script = write_script(
        tmp_path / "s.jsonl",
        [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls; sleep 1"}}]}, {"content": "done"}],
    )
    cmd = sweep_cmd(tmp_path / "out", script, three_tasks)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sdir = tmp_path / "out" / "t"
    deadline = time.monotonic() + 180
    while len(ok_ids(sdir) if sdir.exists() else []) < 3:
        assert proc.poll() is None, "the sweep ended before it could be killed"
        assert time.monotonic() < deadline, "no job finished in time"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    wait_for_orphan_actors()
    # complete at the kill: those the driver logged, and any whose actor finished its record first
    first = {d.name for d in sdir.iterdir() if (d / "result.json").exists() and (d / "scores.json").exists()}
    assert set(ok_ids(sdir)) <= first and 3 <= len(first) < 12
    logged, before = len(Ledger(sdir).entries()), set(ok_ids(sdir))

    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = [d for d in sdir.iterdir() if d.is_dir() and (d / "job.json").exists()]
    assert len(jobs) == 12
    later = [e for e in Ledger(sdir).entries()[logged:] if e["status"] == "ok"]
    second = [e["job_id"] for e in later if not e.get("reconciled")]  # the jobs the re-run ran
    assert first.isdisjoint(second) and len(set(second)) == len(second)
    assert first | set(second) == {d.name for d in jobs}
    # every job reached the ledger, also one that finished after the kill (reconciled on resume)
    assert set(ok_ids(sdir)) == {d.name for d in jobs}
    assert {e["job_id"] for e in later if e.get("reconciled")} == first - before
    for d in jobs:
        assert read_json(d / "result.json")["stop_reason"] == "finished"
        assert "pass_rate" in read_json(d / "scores.json")["metrics"] or "acc1" in read_json(d / "scores.json")["metrics"]
        assert sum(m["role"] == "system" for m in JobRecord(d).trajectory()) == 1
    assert "dci" in done.stdout and "runningtab" in done.stdout

    again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 to run" in again.stderr, again.stderr[-3000:]
    assert len(Ledger(sdir).entries()) == logged + len(later)  # nothing to run, nothing to reconcile


def test_bad_axis_value_lists_valid_names(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "runners.sweep", "grid.method=[dci,nope]", "model=scripted", f"out={tmp_path}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert r.returncode != 0
    assert "unknown method 'nope'" in r.stderr and "runningtab" in r.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("experiment", "groups"),
    [("demo", 3 * 2), ("paper_main", 3 * 5 * 3 * 3), ("paper_ablation", 5 * 3)],
)
def test_presets_compose(experiment: str, groups: int) -> None:
    from hydra import initialize_config_dir

    from runners.config.schema import CONF_DIR
    from runners.sweep.grid import cells

    root = compose_root([f"experiment={experiment}"])
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        configs = cells(root, [], experiment)
    assert len(configs) == groups
    assert len({(c.benchmark.label, c.method.name, c.model.id, c.seed) for c in configs}) == groups
    if experiment.startswith("paper"):
        assert all(c.agent.max_turns == 300 and c.agent.time_limit_s == 3600 and c.agent.context_level == 3 for c in configs)
        assert {c.env.sandbox for c in configs} == {"bwrap"}


@pytest.mark.parametrize("experiment", ["paper_main", "paper_ablation"])
def test_paper_presets_refuse_to_start_without_bubblewrap(tmp_path: Path, experiment: str) -> None:
    """No bwrap on PATH: the paper presets stop before anything runs, with the install hint."""
    keys = {k: "sk-dummy" for k in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY")}
    env = {**os.environ, **keys, "PATH": str(tmp_path), "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "runners.sweep", f"experiment={experiment}", f"out={tmp_path / 'o'}"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "env.sandbox=bwrap" in r.stderr and "bubblewrap" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()


def test_narrowing_override(tmp_path: Path) -> None:
    from hydra import initialize_config_dir

    from runners.config.schema import CONF_DIR
    from runners.sweep.grid import cells

    root = compose_root(["experiment=paper_main"])
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        configs = cells(root, ["method=runningtab", "agent.max_turns=7"], "paper_main")
    assert len(configs) == 3 * 3 * 3
    assert {c.method.name for c in configs} == {"runningtab"}
    assert {c.agent.max_turns for c in configs} == {7}


def test_ledger_json(tmp_path: Path) -> None:
    led = Ledger(tmp_path)
    led.append({"job_id": "a", "status": "ok"})
    assert json.loads((tmp_path / "jobs.jsonl").read_text())["job_id"] == "a"
