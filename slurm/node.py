"""Inside a Slurm job (slurm/sweep.sbatch): one node's Ray, and waiting for all nodes to join.

`python -m slurm.node start [--head | --address A] --temp-dir D --cpus C [--gpus G] [-- RAY_ARGS]`
runs `ray start --block` as a child of a *subreaper*: Ray processes orphaned during shutdown (a
worker the raylet was still starting, a model server whose actor died) are re-parented to this
process instead of init, so they stay inside the job step and are killed here when Ray stops.

`python -m slurm.node wait ADDRESS NODES [--timeout S]` blocks until NODES are alive.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


def free_ports(count: int) -> list[int]:
    """Ports free right now on this node (array tasks may put several Ray clusters on one node)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for s in socks:
            s.bind(("", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def node_command(
    head: bool, address: str | None, temp_dir: str, cpus: int, gpus: int, extra: Sequence[str] = ()
) -> list[str]:
    """`ray start --block` for this node; every port Ray would fix by default is a free one."""
    if not head and not address:
        raise ValueError("a Ray worker node needs --address ADDRESS of the head")
    agent, dashboard, client = free_ports(3)
    cmd = [
        sys.executable, "-m", "ray.scripts.scripts", "start", "--block", "--disable-usage-stats",
        f"--temp-dir={temp_dir}", f"--num-cpus={cpus}", f"--num-gpus={gpus}",
        f"--dashboard-agent-listen-port={agent}",
    ]
    if head:
        cmd += ["--head", "--port=0", "--include-dashboard=false", f"--dashboard-port={dashboard}",
                f"--ray-client-server-port={client}"]
    else:
        cmd.append(f"--address={address}")
    return [*cmd, *extra]


def run_node(cmd: Sequence[str], grace_s: float = 5.0) -> int:
    """Run `cmd`, forwarding SIGTERM/SIGINT/SIGHUP to it; when it exits, end every process left
    under us. Only call it in a process of its own: it makes the caller a subreaper."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"slurm.node: cannot become a subreaper (errno {ctypes.get_errno()})", file=sys.stderr)
    env = {**os.environ, "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}  # stop now, not after a 30 s drain
    started: list[subprocess.Popen[bytes]] = []
    asked: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        asked.append(signum)
        if started and started[0].poll() is None:
            started[0].send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    started.append(subprocess.Popen(list(cmd), env=env))
    if asked:  # a signal came while it was starting
        started[0].send_signal(asked[0])
    rc = started[0].wait()
    reap_orphans(grace_s)
    if asked:  # stopped on request: a clean stop, though Ray exits 1 on SIGTERM
        return 0
    return 128 - rc if rc < 0 else rc  # killed by signal N: 128+N, as a shell reports it


def children() -> list[int]:
    """Live child processes of this process (orphans land here while we are a subreaper)."""
    me = str(os.getpid())
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def reap_orphans(grace_s: float) -> None:
    """SIGTERM every remaining descendant, SIGKILL what outlives `grace_s`, until none is left
    (or a process stuck in the kernel outlives another 10 s: Slurm's own kill is the last resort)."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline + 10:
        _reap_zombies()
        pids = children()
        if not pids:
            return
        sig = signal.SIGTERM if time.monotonic() < deadline else signal.SIGKILL
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def wait_for_nodes(address: str, count: int, timeout_s: float) -> int:
    """Block until `count` nodes are alive in the Ray cluster at `address`; how many are."""
    import ray

    ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            alive = sum(1 for n in ray.nodes() if n["Alive"])
            if alive >= count:
                return alive
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"only {alive} of {count} node(s) joined the Ray cluster at {address} within {timeout_s:g}s; "
                    "see the `ray start` output above (cluster.slurm.join_timeout_s sets the wait)"
                )
            time.sleep(1.0)
    finally:
        ray.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m slurm.node")
    sub = p.add_subparsers(dest="cmd", required=True)
    start = sub.add_parser("start", help="this node's Ray (head or worker) until signalled")
    start.add_argument("--head", action="store_true")
    start.add_argument("--address")
    start.add_argument("--temp-dir", required=True)
    start.add_argument("--cpus", type=int, required=True)
    start.add_argument("--gpus", type=int, default=0)
    start.add_argument("ray_args", nargs="*", help="more `ray start` arguments (after --)")
    wait = sub.add_parser("wait", help="block until the Ray cluster has all its nodes")
    wait.add_argument("address")
    wait.add_argument("nodes", type=int)
    wait.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args(argv)
    if args.cmd == "start":
        return run_node(
            node_command(args.head, args.address, args.temp_dir, args.cpus, args.gpus, args.ray_args)
        )
    try:
        alive = wait_for_nodes(args.address, args.nodes, args.timeout)
    except TimeoutError as e:
        print(f"slurm.node: {e}", file=sys.stderr)
        return 1
    print(f"[runningtab] {alive} node(s) in the Ray cluster", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
