"""A served model's replicas take as many jobs at once as they serve requests (issue 30 §4,
"embedded-model sweeps thrash"): eight jobs on one llama.cpp server, which answers one request at a
time, made calls of 60-105 s each (the queue at the server ran on the jobs' time limits), and the
sweep advised `model.concurrency=0`, which would only have queued more."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runners.job.identity import JobSpec
from runners.models.server import ServedModelConfig, ServerConfig
from tests.conftest import compose_root

REPO = Path(__file__).resolve().parents[3]


def test_the_kinds_slots_and_the_setting() -> None:
    from runners.sweep.model_servers import replica_slots

    assert replica_slots(ServedModelConfig(kind="llamacpp", name="m")) == 1
    assert replica_slots(ServedModelConfig(kind="vllm", name="m")) is None  # continuous batching: no cap
    assert replica_slots(ServedModelConfig(kind="vllm", name="m", server=ServerConfig(slots=64))) == 64
    assert replica_slots(ServedModelConfig(kind="llamacpp", name="m", server=ServerConfig(slots=0))) is None


def test_a_full_replica_takes_no_job_until_one_ends() -> None:
    from runners.sweep.model_servers import ReplicaPool

    pool = ReplicaPool({"m": ["a", "b"], "api": "https://x/v1", "s": None}, slots={"m": 1})
    assert pool.capacity("m") == 2 and pool.capacity("api") is None
    first, second = pool.acquire("m"), pool.acquire("m")
    assert {first, second} == {"a", "b"} and not pool.room("m")
    assert pool.room("api") and pool.room("s")
    pool.release("m", first)
    assert pool.room("m") and pool.acquire("m") == first


def test_the_first_waiting_job_whose_model_has_room_starts() -> None:
    from runners.sweep.scheduler import _Pending

    served, scripted = compose_root(["model=smollm2"]), compose_root(["model=scripted", "model.script=x"])
    specs = [JobSpec("served0", served, "t"), JobSpec("scripted0", scripted, "t"),
             JobSpec("served1", served, "t"), JobSpec("scripted1", scripted, "t")]
    pending = _Pending(specs)
    assert pending.pop(lambda m: m != "smollm2").job_id == "scripted0"  # the server is full: the next job of another model
    assert pending.pop(lambda m: True).job_id == "served0"
    pending.push(specs[0])  # lost with its actor: it goes first again
    assert [pending.pop(lambda m: True).job_id for _ in range(3)] == ["served0", "served1", "scripted1"]
    assert not pending and pending.pop(lambda m: True) is None


@pytest.mark.slow
def test_jobs_on_the_embedded_model_run_one_at_a_time_and_the_advice_is_right(tmp_path: Path) -> None:
    """The real embedded model (llama.cpp, one replica), three jobs, three allowed in flight: the
    jobs' episodes do not overlap (they did: each call queued behind the others' at the server),
    and the warning points at replicas, not at `model.concurrency=0`."""
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[builtin]", "benchmark.limit=3", "grid.method=[dci]",
           "model=smollm2", "model.max_tokens=48", "agent.max_turns=1", "judge=none", "tracker=jsonl", f"out={tmp_path}",
           "sweep=t", "cluster.max_in_flight=3", "report.live_every=0"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    windows = []
    for job in (tmp_path / "t").iterdir():
        if (job / "trajectory.jsonl").is_file():
            times = [json.loads(line)["time"] for line in (job / "trajectory.jsonl").open()]
            windows.append((min(times), max(times)))
    windows.sort()
    assert len(windows) == 3
    assert all(later[0] >= earlier[1] for earlier, later in zip(windows, windows[1:], strict=False)), windows
    log = r.stdout + r.stderr
    assert "so 1 of its jobs run at once, not 3" in log and "model.server.replicas=N" in log, log[-3000:]
    assert "model.concurrency=0" not in log
