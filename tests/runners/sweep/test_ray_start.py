"""Ray starts in the background while the driver opens the tracker and reconciles (issue 38.5):
the records are the same as when Ray was up before the driver's work began, and Ctrl-C during
Ray's start stops the sweep cleanly, leaves nothing running, and its command resumes it.

Both sweeps start a local Ray of their own (the order of the start is what is tested), so the
session's shared one is hidden (`own_ray`)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runners.sweep.ledger import Ledger
from tests.conftest import write_script
from tests.runners.sweep.test_signals import wait_gone
from tests.runners.sweep.test_startup import content

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]
REPO = Path(__file__).resolve().parents[3]
# The driver's entry point, after a `ray.init` of the caller's own on the main thread: Ray is up
# before the driver's work begins (the order before issue 38.5), and the driver joins it.
RAY_FIRST = ("import runpy, sys, ray; ray.init(include_dashboard=False, log_to_driver=False); "
             "sys.argv = ['runners.sweep', *sys.argv[1:]]; runpy.run_module('runners.sweep', run_name='__main__')")


def args(script: Path, out: Path) -> list[str]:
    return ["model=scripted", f"model.script={script}", "grid.benchmark=[builtin]", "benchmark.limit=1",
            "grid.method=[dci,runningtab]", "judge=rule", "model.cache=off", "tracker=jsonl", f"out={out}", "sweep=s"]


def records(out: Path) -> dict[str, dict[str, object]]:
    return {d.name: {f.name: content(f) for f in sorted(d.iterdir()) if f.is_file()}
            for d in sorted((out / "s").iterdir()) if (d / "job.json").is_file()}


def test_the_records_do_not_depend_on_when_ray_started(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "ls && head -c 200 *.md"}}]},
        {"content": "Done."},
    ])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for cmd, out in (([sys.executable, "-m", "runners.sweep"], tmp_path / "background"),
                     ([sys.executable, "-c", RAY_FIRST], tmp_path / "first")):
        r = subprocess.run([*cmd, *args(script, out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "SIGTERM handler is not set" not in r.stderr  # Ray's notice about its start's thread is dropped
    background, first = records(tmp_path / "background"), records(tmp_path / "first")
    assert len(background) == 2 and all("scores.json" in files for files in background.values())
    assert background == first


def test_ctrl_c_while_ray_starts_stops_cleanly_and_resumes(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"content": "Done."}])
    marker = f"RT_RAY_START_TEST={secrets.token_hex(8)}"
    env = {**os.environ, "PYTHONPATH": str(REPO), marker.split("=")[0]: marker.split("=")[1]}
    cmd = [sys.executable, "-m", "runners.sweep", *args(script, tmp_path / "out")]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:  # the driver knows jobs remain: Ray's start has begun
            seen.append(line)
            if " to run -> " in line:
                break
        time.sleep(0.5)
        assert not Ledger(tmp_path / "out" / "s").entries()  # no job has finished: Ray is not up yet
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group, Ray's processes too
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = "".join(seen) + err
    assert proc.returncode == 128 + signal.SIGINT, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    [status] = [line for line in err.splitlines() if line.startswith("sweep interrupted by SIGINT")]
    assert wait_gone(marker) == []  # Ray's processes, started or half-started: all stopped

    again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    ids = [e["job_id"] for e in Ledger(tmp_path / "out" / "s").entries()]
    assert len(ids) == len(set(ids)) == 2, status
    assert wait_gone(marker) == []



# Starts Ray as the driver does, then prints the names of its live child processes (a killed one
# stays a zombie until reaped) and whether a task still runs.
OUTLIVE = """
import os, sys, time
from pathlib import Path
import ray
from runners.config.runner import ClusterConfig
from runners.sweep.local_ray import LocalRay
with LocalRay(ClusterConfig(num_cpus=1)) as cluster:
    cluster.begin()
    cluster.ready()
    time.sleep(1)
    live = set()
    for p in Path("/proc").iterdir():
        try:
            status = p.name.isdigit() and (p / "status").read_text()
            if status and f"\\nPPid:\\t{os.getpid()}\\n" in status and "\\nState:\\tZ" not in status:
                live.add((p / "comm").read_text().strip())
        except OSError:
            continue
    print(sorted(live), flush=True)
    if not {"gcs_server", "raylet"} <= live:
        os._exit(3)  # Ray's client would wait a minute for its lost GCS, then end the process
    print(ray.get(ray.remote(lambda: "a task ran").remote(), timeout=120), flush=True)
ray.shutdown()
"""


def test_rays_processes_outlive_the_thread_that_started_them() -> None:
    """Ray's head processes die with the thread that started them (Linux's parent-death signal): a
    start whose thread ended lost its GCS at once, and the sweep a minute later."""
    r = subprocess.run([sys.executable, "-c", OUTLIVE], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "a task ran" in r.stdout, r.stdout + r.stderr[-3000:]


# Starts Ray as the driver does and leaves the block; prints the command lines of its descendants
# while Ray ran, then of those still running 10 s after. A subreaper, so that a process whose
# parent died (an agent whose raylet is gone) stays its descendant.
LEFTOVERS = """
import ctypes, json, os, time
from pathlib import Path
import ray
from runners.config.runner import ClusterConfig
from runners.sweep.local_ray import LocalRay
ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER

def ours():
    parents, names = {}, {}
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and "\\nState:\\tZ" not in (status := (p / "status").read_text()):
                parents[int(p.name)] = int(status.split("\\nPPid:\\t", 1)[1].split("\\n", 1)[0])
                names[int(p.name)] = (p / "cmdline").read_bytes().replace(b"\\0", b" ").decode(errors="replace").strip()[:200]
        except (OSError, IndexError):
            continue
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return {pid: names.get(pid, "") for pid in found[1:]}

with LocalRay(ClusterConfig(num_cpus=1)) as cluster:
    cluster.ready()
    ray.get(ray.remote(lambda: None).remote(), timeout=120)
    deadline = time.monotonic() + 60  # the raylet's agents start
    while len([c for c in ours().values() if "Agent" in c or "agent" in c]) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    print(json.dumps(sorted(ours().values())), flush=True)
deadline = time.monotonic() + 10
while (left := ours()) and time.monotonic() < deadline:
    time.sleep(0.2)
print(json.dumps(sorted(left.values())), flush=True)
"""


def test_leaving_the_block_ends_every_process_of_the_ray_it_started() -> None:
    """Ray's agents (runtime-env, dashboard: the latter runs with the dashboard off) outlive
    `ray.shutdown()` until they notice their raylet gone, which took over a minute after some
    sweeps (issue 40): the block ends them with the rest of its node, within a few seconds."""
    r = subprocess.run([sys.executable, "-c", LEFTOVERS], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    during, after = (json.loads(line) for line in r.stdout.splitlines()[-2:])
    assert any("RuntimeEnvAgent" in c or "runtime_env/agent" in c for c in during), during
    assert any("DashboardAgent" in c or "dashboard/agent.py" in c for c in during), during
    assert after == []  # within 10 s of the block's end, its process still running


# A caller's `ray.init` first: the driver's block joins that Ray and leaves it as it found it.
JOINED = """
import ray
from runners.config.runner import ClusterConfig
from runners.sweep.local_ray import LocalRay
ray.init(include_dashboard=False, log_to_driver=False, num_cpus=1)
with LocalRay(ClusterConfig(num_cpus=1)) as cluster:
    cluster.ready()
print(ray.is_initialized(), ray.get(ray.remote(lambda: "still up").remote(), timeout=120), flush=True)
ray.shutdown()
"""


def test_a_ray_the_block_joined_is_left_running() -> None:
    r = subprocess.run([sys.executable, "-c", JOINED], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "True still up" in r.stdout, r.stdout + r.stderr[-3000:]
