"""A model server dies with the process that started it, and a sweep's start stops the servers its
own killed drivers left behind. The real llama.cpp server on the embedded SmolLM2 (always here);
tests/runners/models/test_vllm.py does the same with vLLM where it is installed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runners.models.lifeline import owner_label, stop_orphans
from tests.conftest import write_native
from tests.helpers.server_procs import (
    MARK,
    clean_up,
    kill_driver_session,
    kill_group,
    kill_session,
    marked,
    new_mark,
    wait_marked,
)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]  # their sweeps start their own local Ray
REPO = Path(__file__).resolve().parents[3]


def sweep_env() -> dict[str, str]:
    """The environment at the call (RAY_ADDRESS of the session's Ray, once a slow test started it)."""
    return {**os.environ, "PYTHONPATH": str(REPO)}
GRACE_S = 5.0

DRIVER = textwrap.dedent("""
    import sys, time
    from runners.models import ServedModelConfig, ServerConfig
    from runners.models.server import ModelServer
    server = ServerConfig(ctx_size=512, stop_grace_s={grace}, env={{{mark_env!r}: {mark!r}}}, extra_args=["--n_threads", "1"])
    print(ModelServer(ServedModelConfig(kind="llamacpp", name="smollm2", server=server)).start(), flush=True)
    time.sleep(600)
""")


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    task = {"id": "count", "prompt": "How many rows does data.csv have?", "workspace": "w", "answer": "3"}
    return write_native(tmp_path_factory.mktemp("bench"), [task], {"w/data.csv": "a,b\n1,2\n3,4\n5,6\n"})


def sweep_cmd(bench: Path, out: Path, mark: str) -> list[str]:
    return [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "method=dci",
            "model=smollm2", f"+model.server.env.{MARK}={mark}", f"model.server.stop_grace_s={GRACE_S}",
            f"model.server.log_path={out}.server.log", "model.server.extra_args=[--n_threads,1]",
            "agent.max_turns=2", "tracker=jsonl", f"out={out}", "sweep=k"]


def start_sweep(cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as f:
        return subprocess.Popen(cmd, cwd=REPO, env=sweep_env(), stdout=f, stderr=subprocess.STDOUT, start_new_session=True)


def wait_serving(driver: subprocess.Popen[bytes], mark: str, out: Path, timeout_s: float = 300) -> list[int]:
    """The server's processes once it answered its first completion (its readiness check): the
    sweep is mid-run, its jobs about to talk to the server."""
    log, server_log = out.with_suffix(".log"), Path(f"{out}.server.log")
    deadline = time.monotonic() + timeout_s
    while "POST /v1/chat/completions" not in (server_log.read_text(errors="replace") if server_log.exists() else ""):
        assert driver.poll() is None, f"the sweep ended before it could be killed:\n{log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no server in time:\n{log.read_text()[-3000:]}"
        time.sleep(0.25)
    time.sleep(1)
    pids = marked(mark)
    assert pids, "model.server.env did not reach the server through its Ray actor"
    return pids


def test_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    mark = new_mark()
    code = DRIVER.format(grace=GRACE_S, mark_env=MARK, mark=mark)
    driver = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=sweep_env(), stdout=subprocess.PIPE)
    assert driver.stdout is not None
    url = driver.stdout.readline().decode().strip()
    try:
        assert url.startswith("http://127.0.0.1:"), url
        assert marked(mark), "model.server.env did not reach the server"
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        left = wait_marked(mark, GRACE_S + 10, gone=True)
        assert left == [], f"the server outlived the process that started it: {left}"
    finally:
        driver.kill()
        kill_group(marked(mark))


def test_killed_sweep_leaves_no_server(bench: Path, tmp_path: Path) -> None:
    """Issue 25.10: the driver's whole session SIGKILLed mid-run (driver, Ray, its workers) used to
    leave the llama.cpp server running, parented to init, in its own session."""
    mark = new_mark()
    driver = start_sweep(sweep_cmd(bench, tmp_path / "out", mark), tmp_path / "out.log")
    try:
        serving = wait_serving(driver, mark, tmp_path / "out")
        left = kill_driver_session(driver, mark, GRACE_S + 15)
        assert left == [], f"model server processes {left} (of {serving}) outlived their killed sweep"
    finally:
        clean_up(driver, mark)


def test_sweep_start_stops_the_servers_of_its_killed_drivers(bench: Path, tmp_path: Path) -> None:
    """A server whose lifeline was killed too survives its driver; the sweep's next start stops it."""
    mark = new_mark()
    cmd = sweep_cmd(bench, tmp_path / "out", mark)
    driver = start_sweep(cmd, tmp_path / "out.log")
    try:
        serving = wait_serving(driver, mark, tmp_path / "out")
        lifelines = [p for p in serving if b"lifeline.py" in Path(f"/proc/{p}/cmdline").read_bytes()]
        assert len(lifelines) == 1, serving
        os.kill(lifelines[0], signal.SIGKILL)
        kill_session(driver.pid)
        driver.wait()
        time.sleep(GRACE_S)
        orphans = marked(mark)
        assert orphans, "nothing was left to stop: the test shows nothing"
        assert all(os.getpgid(p) == os.getpgid(orphans[0]) for p in orphans)

        again = subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-3000:] + again.stdout[-3000:]
        assert marked(mark) == [], f"left: {marked(mark)}, orphans were {orphans}"  # the re-run's own server stopped too
        assert "orphaned model server" in again.stdout + again.stderr
    finally:
        clean_up(driver, mark)


def test_stop_orphans_spares_live_owners_and_other_sweeps(tmp_path: Path) -> None:
    """Only servers of this sweep (scope) whose owner process is gone are stopped."""
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    servers = {}
    host = socket.gethostname()
    for name, owner in [("dead", f"scope-a:{host}:{dead.pid}"), ("live", owner_label("scope-a")),
                        ("other", f"scope-b:{host}:{dead.pid}"), ("elsewhere", f"scope-a:not-{host}:{dead.pid}")]:
        env = {**os.environ, "RUNNINGTAB_SERVER_OWNER": owner}
        servers[name] = subprocess.Popen(["sleep", "60"], env=env, start_new_session=True)
    try:
        stopped = stop_orphans("scope-a", grace_s=2.0)
        assert stopped == [servers["dead"].pid]
        assert servers["dead"].wait(timeout=5) == -signal.SIGTERM
        assert all(servers[n].poll() is None for n in ("live", "other", "elsewhere"))
    finally:
        for p in servers.values():
            p.kill()
            p.wait()
