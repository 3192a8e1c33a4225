"""A Ray cluster of several nodes on this machine, on loopback: what `bench.sweep_cluster` runs its
sweep on and its test (tests/runners/sweep/test_cluster_resume.py) runs a small one on.

Each node is `ray start --block` (the command `slurm.node` starts on a Slurm node: `node_command`),
in a session of its own, with its own temp folder and a share of the CPUs; the head first, then the
workers at its address. The cluster uses token auth with a token of its own (never ~/.ray), which
`env` carries for a driver that joins it (`cluster=ray cluster.address=ADDRESS`). On leaving, every
process of each node's session is killed (Ray's workers stay in their raylet's session), and nothing
else: `ray stop` would stop every Ray on the machine.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from slurm.node import node_command

REPO = Path(__file__).resolve().parent.parent


class LocalCluster:
    """`nodes` Ray nodes of `cpus` CPUs each (CPUs are Ray's bookkeeping: the nodes share this
    machine's cores), started on entry and killed on exit."""

    def __init__(self, nodes: int, cpus: int = 1, join_timeout_s: float = 240.0) -> None:
        if nodes < 1:
            raise ValueError(f"a cluster needs at least one node, not {nodes}")
        self.count, self.cpus, self.join_timeout_s = nodes, cpus, join_timeout_s
        self.root = Path(tempfile.mkdtemp(prefix="rt-nodes-", dir="/tmp"))  # short: Ray's socket paths have a length limit
        token = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | token | {
            "PYTHONPATH": str(REPO), "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}
        self.address = ""
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> LocalCluster:
        try:
            self._start("node0")
            self.address = self._head_address()
            for i in range(1, self.count):
                self._start(f"node{i}")
            self._wait_joined()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _start(self, name: str) -> None:
        cmd = node_command(not self.procs, self.address or None, str(self.root / name), self.cpus, 0,
                           ["--node-ip-address=127.0.0.1"])
        with open(self.root / f"{name}.log", "wb") as log:
            self.procs.append(subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def _head_address(self) -> str:
        log = self.root / "node0.log"
        deadline = time.monotonic() + self.join_timeout_s
        while not (found := re.search(r"--address='([^']+)'", log.read_text(errors="replace"))):
            if self.procs[0].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Ray head did not start:\n" + log.read_text(errors="replace")[-3000:])
            time.sleep(0.2)
        return found.group(1)

    def _wait_joined(self) -> None:
        """Until every node is alive in the cluster (`python -m slurm.node wait`, a driver of its own)."""
        wait = subprocess.run([sys.executable, "-m", "slurm.node", "wait", self.address, str(self.count),
                               "--timeout", str(self.join_timeout_s)], env=self.env, cwd=REPO, capture_output=True, text=True,
                              check=False)
        if wait.returncode != 0:
            logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-1500:]}" for p in sorted(self.root.glob("*.log")))
            raise RuntimeError(f"the cluster's {self.count} nodes did not all join: {wait.stderr.strip()[-1500:]}\n{logs}")

    def pids(self) -> list[int]:
        """The live processes of every node (each node's session: its raylet, workers, actors)."""
        sessions = {p.pid for p in self.procs}
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.getsid(int(name)) in sessions:
                        found.append(int(name))
                except OSError:
                    continue
        return found

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGKILL every process of every node until none is left; the temp folders removed."""
        deadline = time.monotonic() + timeout_s
        while pids := self.pids():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for proc in self.procs:
                proc.poll()
            if time.monotonic() > deadline:
                raise RuntimeError(f"processes of the cluster outlived SIGKILL: {pids}")
            time.sleep(0.1)
        for proc in self.procs:
            proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)
