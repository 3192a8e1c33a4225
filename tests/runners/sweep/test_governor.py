"""The sweep's governor on a standing Ray cluster (`ray start --head`, then sweeps): it dies with the
driver that started it, also when that driver is SIGKILLed, and two drivers of one sweep folder (two
slices, with budgets of their own) each keep their own governor — neither replaces the other's.

The head carries a marker in its environment (its workers inherit it), so the test finds the
governor's process and kills exactly its own Ray processes, also when it fails."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from tests.conftest import write_native, write_script
from tests.runners.sweep.test_ray_multinode import MARKER, Cluster, _use_auth

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def head(own_ray: None) -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="rt-gov-", dir="/tmp"))  # short: Ray's socket paths have a length limit
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env = {**os.environ, **auth, "PYTHONPATH": str(REPO), "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
           "RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000", "RAY_health_check_failure_threshold": "5"}
    c = Cluster(secrets.token_hex(6), root, env)
    saved = {k: os.environ.get(k) for k in auth}
    try:
        c.start("head", {"head": 1})
        c.wait_head()
        _use_auth(auth)
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _use_auth(saved)
        c.kill()
        shutil.rmtree(root, ignore_errors=True)


def governors(c: Cluster) -> list[int]:
    """The live governor processes of the cluster (Ray titles an actor's process `ray::<class>`)."""
    found = []
    for pid in c.pids():
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::Governor"):
                found.append(pid)
        except OSError:
            continue
    return found


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_for(what: str, check: object, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


def test_a_sigkilled_drivers_governor_dies_with_it(head: Cluster, tmp_path: Path) -> None:
    bench = write_native(tmp_path / "b", [{"id": f"t{i}", "prompt": "Wait.", "workspace": "w", "answer": "x"} for i in range(2)],
                         {"w/a.txt": "1\n"})
    usage = {"input_tokens": 1, "output_tokens": 1, "cost": 0.01}
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 20"}}], "usage": usage},
                                                 {"content": "<FINAL_ANSWER>x</FINAL_ANSWER>", "usage": usage}])
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script={script}", "judge=none", "tracker=jsonl", f"out={tmp_path / 'out'}", "sweep=s",
           f"cluster.address={head.address}", "env.bash_timeout=60"]
    driver = subprocess.Popen(cmd, cwd=REPO, env={**head.env, MARKER: f"{head.tag}-driver"}, stdout=subprocess.DEVNULL,
                              stderr=open(tmp_path / "driver.log", "wb"), start_new_session=True)  # noqa: SIM115
    try:
        wait_for("the sweep's governor never started", lambda: governors(head), 180)
        wait_for("no job started", lambda: any((tmp_path / "out" / "s").glob("*/trajectory.jsonl")), 180)
        [pid] = governors(head)
        print(f"governor pid {pid}: {rss_mb(pid):.0f} MB resident")
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        wait_for(f"the governor outlived its SIGKILLed driver: {governors(head)}", lambda: not governors(head), 90)
    finally:
        if driver.poll() is None:
            os.kill(driver.pid, signal.SIGKILL)
            driver.wait()
        head.kill("driver")


DRIVER_B = textwrap.dedent("""
    import sys, ray
    from runners.config.runner import BudgetConfig
    from runners.models import governor
    ray.init(address=sys.argv[1], log_to_driver=False, logging_level="WARNING")
    handle = governor.start(sys.argv[2], BudgetConfig(sweep_usd=50.0, estimate_usd=1.0))
    print(ray.get(handle.snapshot.remote())["budget"]["sweep_usd"], flush=True)
    sys.stdin.read()  # holds its governor until told to end
""")


def test_two_drivers_of_one_folder_keep_their_own_governors_and_budgets(head: Cluster, tmp_path: Path) -> None:
    from runners.config.runner import BudgetConfig
    from runners.models import governor

    folder = tmp_path / "sweep"  # one folder, two slices' drivers: `grid.slice=1/2` here, `2/2` in the subprocess
    ray.init(address=head.address, log_to_driver=False, logging_level="WARNING")
    try:
        mine = governor.start(folder, BudgetConfig(sweep_usd=1.0, estimate_usd=0.5))
        other = subprocess.Popen([sys.executable, "-c", DRIVER_B, head.address, str(folder)], cwd=REPO, env=head.env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert other.stdout is not None and other.stdout.readline().strip() == "50.0", other.stderr.read() if other.stderr else ""
            snap = ray.get(mine.snapshot.remote(), timeout=30)  # before: killed by the other driver's start
            assert snap["budget"]["sweep_usd"] == 1.0
            assert len(governors(head)) == 2
        finally:
            other.communicate("", timeout=60)
        wait_for("the other driver's governor outlived it", lambda: len(governors(head)) == 1, 60)
        assert ray.get(mine.snapshot.remote(), timeout=30)["budget"]["sweep_usd"] == 1.0
        governor.stop(mine)
    finally:
        ray.shutdown()
