"""What the sandbox's seccomp filter (envs/seccomp.py) costs: per system call, and per bash call.

    .venv/bin/python -m bench.bench_seccomp [--rounds 3] [--calls 200]

Alternates rounds with the filter and without it (the same sandbox otherwise), so that the machine's
load falls on both alike. Per system call: a loop of 2,000,000 `getppid` in the sandbox's Python,
CPU time per iteration (the difference is the filter's). Per bash call: the CPU of the whole
sandbox (the supervisor and what it reaped, from /proc/<pid>/stat) and the wall time of `bash true`
and of a busier command, in one shell session; and, where strace is installed, how many system
calls each of those makes (the filter runs once per system call).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from envs import seccomp
from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem

LOOP = ("python3 -c 'import os, time; t = time.process_time(); [os.getppid() for _ in range(2 * 10**6)]; "
        "print((time.process_time() - t) / 2e6 * 1e9)'")
COMMANDS = {"bash true": "true", "ls -la, grep, cat": "ls -la /usr/bin | wc -l; grep -c root /etc/passwd; cat /usr/bin/bash > /dev/null"}


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of `pid`, its reaped children and its live descendants."""
    total, todo, hz = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / hz
            for tid in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
        except OSError:
            continue
    return total


def one_round(with_filter: bool, calls: int) -> dict[str, float]:
    real = seccomp.filter_fd
    seccomp.filter_fd = real if with_filter else (lambda: None)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-seccomp-") as tmp:
            env = WorkspaceEnv(Path(tmp), EnvConfig(sandbox="bwrap"))
            try:
                run = lambda cmd: env.execute(ToolCall("c", "bash", json.dumps({"command": cmd})), 1)  # noqa: E731
                out = {"ns per system call (loop)": statistics.median(float(run(LOOP).content) for _ in range(3))}
                for name, cmd in COMMANDS.items():
                    run(cmd)
                    launcher = env.shell.session.proc.pid
                    walls, cpu0 = [], tree_cpu_s(launcher)
                    for _ in range(calls):
                        began = time.perf_counter()
                        run(cmd)
                        walls.append(time.perf_counter() - began)
                    out[f"{name}: sandbox CPU ms/call"] = (tree_cpu_s(launcher) - cpu0) / calls * 1000
                    out[f"{name}: wall ms (median)"] = statistics.median(walls) * 1000
            finally:
                env.close()
    finally:
        seccomp.filter_fd = real
    return out


def syscalls(cmd: str) -> str:
    if shutil.which("strace") is None:
        return "n/a (no strace)"
    with tempfile.NamedTemporaryFile("r") as f:
        subprocess.run(["strace", "-f", "-c", "-o", f.name, "/bin/bash", "-c", cmd], capture_output=True)
        return f.read().splitlines()[-1].split()[3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    if bwrap_problem() is not None or seccomp.program() is None:
        raise SystemExit(f"needs bubblewrap and a filter for this machine: {bwrap_problem() or 'no filter here'}")
    runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for r in range(args.rounds):
        for with_filter in (False, True):
            runs[with_filter].append(one_round(with_filter, args.calls))
        print(f"round {r + 1} done, load {os.getloadavg()[0]:.1f}", flush=True)
    names = list(runs[True][0])
    width = max(map(len, names))
    print(f"{'measure'.ljust(width)}  {'without':>10}  {'with':>10}  {'difference':>10}")
    for name in names:
        without, with_ = (statistics.median(run[name] for run in runs[flag]) for flag in (False, True))
        print(f"{name.ljust(width)}  {without:10.2f}  {with_:10.2f}  {with_ - without:+10.2f}")
    for name, cmd in COMMANDS.items():
        print(f"system calls of `{name}` (strace -f -c): {syscalls(cmd)}")


if __name__ == "__main__":
    main()
