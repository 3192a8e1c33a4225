"""One local Ray cluster for the whole test session.

Every sweep a test starts (`python -m runners.sweep …` in a subprocess, or in this process) joins it
through `RAY_ADDRESS`, the variable `ray.init` reads when the driver names no address, instead of
starting and stopping a Ray of its own: that start cost 10–30 s per sweep on a 2-core machine, and
the suite starts about a hundred sweeps. It is still a real local Ray (`ray start --head` with the
machine's CPUs, as a sweep's own local start would have), started when the first `slow` test runs
and stopped at the end of the session. Under pytest-xdist each worker is a session of its own, with
its own cluster (on free ports): a test that kills its sweep's Ray or counts its processes sees only its worker's. A test that needs a Ray of another shape (more nodes, GPUs,
its own resources) starts it inside `apart()`, which hides the shared one from it.
"""

from __future__ import annotations

import ctypes
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from slurm.node import node_command

_AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")
_PR_SET_PDEATHSIG = 1
_state: dict[str, object] = {}


def ensure() -> str:
    """The shared cluster's address (started on first use); exported as RAY_ADDRESS with its token."""
    if "address" in _state:
        if alive():
            return str(_state["address"])
        warnings.warn("the tests' shared Ray died (a test killed it?): starting another", stacklevel=2)
        stop()
    root = Path(tempfile.mkdtemp(prefix="rt-ray-", dir="/tmp"))  # short: Ray's socket paths have a length limit
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # never ~/.ray/auth_token
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | auth | {"RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
    cpus = len(os.sched_getaffinity(0))
    cmd = node_command(True, None, str(root / "head"), cpus, 0, ["--node-ip-address=127.0.0.1"])
    log_path = root / "head.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=_stop_with_parent)
    deadline = time.monotonic() + 180
    while not (found := re.search(r"--address='([^']+)'", log_path.read_text(errors="replace"))):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc)
            raise RuntimeError("the tests' shared Ray did not start:\n" + log_path.read_text(errors="replace")[-3000:])
        time.sleep(0.2)
    _state.update(address=found.group(1), proc=proc, root=root, saved={k: os.environ.get(k) for k in _AUTH})
    os.environ.update(auth, RAY_ADDRESS=found.group(1))
    _reload_auth()
    return found.group(1)


def alive() -> bool:
    """Whether the shared cluster was started and its `ray start --block` still runs (it exits when
    one of its node's processes dies)."""
    proc = _state.get("proc")
    return isinstance(proc, subprocess.Popen) and proc.poll() is None


def pids() -> list[int]:
    """The live processes of the shared cluster: its `ray start` runs in a session of its own, and
    Ray's processes (head, raylet, workers) stay in it. Empty when it is not running."""
    proc = _state.get("proc")
    if not isinstance(proc, subprocess.Popen) or proc.poll() is not None:
        return []
    found = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and os.getsid(int(p.name)) == proc.pid:
                found.append(int(p.name))
        except OSError:
            continue
    return found


def stop() -> None:
    """Stop the shared cluster (if it was started) and restore the environment."""
    if "address" not in _state:
        return
    import ray

    if ray.is_initialized():
        ray.shutdown()
    proc = _state["proc"]
    assert isinstance(proc, subprocess.Popen)
    stop_process(proc)
    os.environ.pop("RAY_ADDRESS", None)
    saved = _state["saved"]
    assert isinstance(saved, dict)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    _reload_auth()
    shutil.rmtree(str(_state["root"]), ignore_errors=True)
    _state.clear()


def _stop_with_parent() -> None:
    """`ray start --block` gets SIGTERM (and stops its node) when the session dies without a finish."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _reload_auth() -> None:
    """Make this process's Ray read its auth variables again (it caches them once imported)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """`ray start --block` stops its node's processes on SIGTERM; SIGKILL its group if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@contextmanager
def apart() -> Iterator[None]:
    """Hide the shared cluster (RAY_ADDRESS) from a test that starts a Ray of its own shape."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    address = os.environ.pop("RAY_ADDRESS", None)
    try:
        yield
    finally:
        if address is not None:
            os.environ["RAY_ADDRESS"] = address
