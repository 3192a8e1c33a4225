"""One driver per sweep folder, or per slice of it (issue 25, item 8): a second driver refuses with
the holder's host and pid, a dead holder's lock is taken over, slices that share no job run side by
side, and a holder on another host is trusted only while it keeps its lock file fresh."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runners.sweep import ownership
from runners.sweep.ledger import Ledger
from runners.sweep.ownership import DriverLock, SweepBusy, overlaps
from tests.conftest import write_script

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def quick(monkeypatch) -> None:
    monkeypatch.setattr(ownership, "GRACE_S", 0.2)


def sweep_cmd(out: Path, script: Path) -> list[str]:
    return [sys.executable, "-m", "runners.sweep", "model=scripted", f"model.script={script}", "grid.benchmark=[builtin]",
            "grid.method=[dci,runningtab]", "grid.tasks=[ws-01-resource-saving-manual,ws-02-purchase-order-summary]",
            "tracker=jsonl", f"out={out}", "sweep=t", "cluster.max_in_flight=4", "report.live_every=0"]


@pytest.mark.slow
def test_a_second_driver_on_the_same_sweep_refuses(tmp_path: Path) -> None:
    """The issue's case: the same command started twice ran every job twice (8 ledger lines for 4
    jobs). Now the second stops at once, naming the first, and leaves nothing behind."""
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 3"}}]},
                                                 {"content": "done"}])
    cmd, sdir = sweep_cmd(tmp_path / "out", script), tmp_path / "out" / "t"
    first = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (sdir / "sweep.yaml").exists():  # written once the first driver holds the folder
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        second = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
        overlapped = first.poll() is None
    finally:
        _, err = first.communicate(timeout=600)
    assert second.returncode != 0, f"the second driver ran too: {len(Ledger(sdir).entries())} ledger lines for 4 jobs"
    assert overlapped, "the first driver ended before the second was refused"
    [line] = [x for x in second.stderr.splitlines() if x.strip()]
    assert line.startswith("error: ") and f"pid {first.pid} on host {socket.gethostname()}" in line, line
    assert first.returncode == 0, err[-3000:]
    entries = Ledger(sdir).entries()
    assert len(entries) == 4 and {e["status"] for e in entries} == {"ok"}  # each job once
    assert (sdir / ".driver.lock").read_bytes() == b""  # released: nobody holds it

    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "0 to run" in again.stderr, again.stderr[-2000:]


def _holder(sdir: Path, part: str) -> subprocess.Popen[str]:
    """A process that takes the driver's lock (of slice `part`, "" for the whole sweep) and waits."""
    code = (f"import sys; from pathlib import Path; from runners.sweep.ownership import DriverLock\n"
            f"lock = DriverLock(Path({str(sdir)!r}), {part or None}); lock.acquire(); print('held', flush=True); sys.stdin.read()")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "held"
    return p


def test_a_killed_drivers_lock_is_taken_over(tmp_path: Path) -> None:
    holder = _holder(tmp_path, "")
    with pytest.raises(SweepBusy, match=f"pid {holder.pid} on host"):
        DriverLock(tmp_path).acquire()
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert json.loads((tmp_path / ".driver.lock").read_text())["pid"] == holder.pid  # it could not clear it
    with DriverLock(tmp_path) as lock:  # the kernel dropped its lock with the process
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert lock.path.read_bytes() == b""


@pytest.mark.parametrize(
    ("held", "wanted", "refused"),
    [("(0, 2)", (1, 2), False), ("(0, 2)", (0, 4), True), ("(0, 2)", (1, 4), False), ("(0, 2)", None, True),
     ("", (1, 3), True), ("(2, 3)", (2, 3), True)],
)
def test_slices_that_share_no_job_run_side_by_side(tmp_path: Path, held: str, wanted, refused: bool) -> None:
    holder = _holder(tmp_path, held)
    try:
        lock = DriverLock(tmp_path, wanted)
        if refused:
            with pytest.raises(SweepBusy, match=f"pid {holder.pid}"):
                lock.acquire()
        else:
            lock.acquire()
            lock.release()
    finally:
        holder.kill()
        holder.wait()


def test_slice_overlap_rule() -> None:
    grid = range(60)
    for a in [(0, 1), (0, 2), (1, 2), (0, 4), (3, 4), (2, 3), (1, 6)]:
        for b in [(0, 1), (1, 2), (1, 4), (2, 6), (0, 3)]:
            shared = {k for k in grid if k % a[1] == a[0]} & {k for k in grid if k % b[1] == b[0]}
            assert overlaps(a, b) == bool(shared), (a, b)


def _remote_lock(path: Path, age_s: float) -> None:
    """A lock file written by a driver on another host (another kernel), `age_s` seconds ago."""
    record = {"host": "node-b", "pid": 4242, "boot_id": "another-kernel", "started": "2026-01-01 00:00:00", "command": "x"}
    path.write_text(json.dumps(record).ljust(1023) + "\n")
    then = time.time() - age_s
    os.utime(path, (then, then))


def test_a_holder_on_another_host_is_trusted_while_its_lock_is_fresh(tmp_path: Path) -> None:
    """Where the file system does not carry locks between hosts, the kernel lock is free although a
    driver on another host runs the sweep: its heartbeat (the file's mtime, on the server's clock)
    is what shows it alive, and only its age frees it."""
    _remote_lock(tmp_path / ".driver.lock", age_s=5)
    with pytest.raises(SweepBusy, match=r"pid 4242 on host node-b .*cannot check a process on another host"):
        DriverLock(tmp_path).acquire()
    _remote_lock(tmp_path / ".driver.slice-1-of-2.lock", age_s=5)
    with pytest.raises(SweepBusy, match="node-b"):  # a slice that shares jobs with ours, fresh
        DriverLock(tmp_path, (1, 4)).acquire()
    _remote_lock(tmp_path / ".driver.lock", age_s=ownership.STALE_S + 60)
    _remote_lock(tmp_path / ".driver.slice-1-of-2.lock", age_s=ownership.STALE_S + 60)
    with DriverLock(tmp_path) as lock:  # stale: its holder stopped refreshing it long ago
        assert json.loads(lock.path.read_text())["host"] == socket.gethostname()


def test_the_holder_keeps_its_lock_fresh(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ownership, "HEARTBEAT_S", 0.1)
    with DriverLock(tmp_path) as lock:
        first = lock.path.stat().st_mtime_ns
        time.sleep(0.5)
        assert lock.path.stat().st_mtime_ns > first
        assert len(lock.path.read_bytes()) == ownership.RECORD
