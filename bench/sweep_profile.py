"""Where a model call's CPU goes in `bench.sweep`'s workload: per process, and by stage in one episode actor.

    python -m bench.sweep_profile --in-flight 64 --latency 0.5 [--window 40] [--spy-rate 200] [bench.sweep's flags]

Runs `bench.sweep`'s workload once (the same command, every default on; `--against REV`: over revision
REV, exported as `bench.sweep --against` does). In a window of its steady state (from the 15th to the 85th
percentile of the expected calls, at most `--window` seconds), it reads every process of the sweep from
/proc at the window's two ends and charges each one's CPU to a group by its command line (the episode
actors, their children, the governor, the driver, Ray's own, W&B), per model call in the window.
Meanwhile py-spy (`record --gil --format raw`, installed for measuring only: it is not a dependency)
samples one episode actor (and, with `--spy-also`, the driver or the governor) for the window only;
each sample goes to the stage of the innermost of our frames that names one
(`STAGES`; the shared helpers `HELPERS` count for their caller; a sample with none of our frames by its
innermost library frame, `LIBRARY`). It prints both tables as Markdown.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.sweep import (
    REPO,
    TICK,
    checkout_of,
    launched,
)

PROJECT = ("envs/", "tab/", "runners/", "eval/", "bench/", "slurm/")
HELPERS = ("envs/safeio.py", "envs/names.py")  # shared helpers: their samples go to the stage of their caller
# The same code where `--against` revisions before the wings had it (3747862: runners/job_runner.py, runners/loop.py, …):
# without these, their job's set-up and agent loop fell into "other (ours)", and the two stages looked 3x cheaper than today's
OLD_LOOP = ("runners/loop.py", "runners/methods.py", "runners/runner_texts.py")
OLD_SETUP = ("runners/job_runner.py", "runners/scratch.py", "runners/completion.py", "runners/schema.py", "runners/identity.py")
# (stage, substrings of a frame "function (file:line)"): over our own frames, innermost first, the first match decides
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("the call cache: key", ("CallKeys", "_digest (runners/models/call_cache")),
    ("the call cache: lookup and store", ("models/call_cache", "models/caching.py")),
    ("the governor and the rate limit (in the actor)", ("models/lease.py", "models/governor.py", "models/rate_limit.py",
                                                        "models/shares.py", "models/endpoint_slots.py")),
    ("the model client", ("models/async_http.py", "models/openai_compat.py", "models/wire.py", "models/retry.py")),
    ("deadlines: the disk-quota watchdog", ("envs/disk_quota.py",)),
    ("the tab's capture and the shown log", ("(tab/",)),
    ("the sandboxed shell", ("envs/shell_session.py", "envs/sandbox.py", "envs/limits.py", "envs/bash_tool.py", "envs/reaper.py")),
    ("record writes and pages", ("runners/core/job_record", "runners/core/record", "eval/score/", "eval/report/")),
    ("the judge", ("eval/judges/",)),
    ("the agent loop and the context view", ("runners/agent/", "envs/environment.py", "envs/context.py", "envs/truncate.py",
                                             *OLD_LOOP)),
    ("the job's set-up (its config, model, workspace)", ("runners/job/", "runners/models/", "runners/config/", "runners/core/",
                                                         "envs/workspace", "eval/benchmarks/", *OLD_SETUP)),
    ("Ray's worker plumbing (the actor's calls)", ("runners/sweep/actors.py", "(runners/actors.py")),
]
LIBRARY = [  # a sample with none of our frames: its innermost library frame's stage
    ("the model client", ("aiohttp/", "multidict/", "yarl/")),
    ("Ray's worker plumbing (the actor's calls)", ("ray/", "msgpack/", "grpc/")),
    ("asyncio's loop and the worker threads", ("asyncio/", "concurrent/", "threading.py", "selectors.py")),
]


def _file(frame: str) -> str:
    return frame.rsplit("(", 1)[-1].split(":")[0].rstrip(")")


def stats() -> dict[int, tuple[int, float, float, str]]:
    """pid -> (ppid, own CPU s, reaped children's CPU s, command line)."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        own = (int(fields[11]) + int(fields[12])) / TICK
        reaped = (int(fields[13]) + int(fields[14])) / TICK
        out[int(name)] = (int(fields[1]), own, reaped, cmd)
    return out


def tree(root: int, snap: dict[int, tuple[int, float, float, str]]) -> dict[int, str]:
    """Each descendant of `root` (and root) -> its group."""
    kids: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (ppid, *_rest) in snap.items():
        kids[ppid].append(pid)
    groups, todo = {}, [(root, None)]
    while todo:
        pid, parent_group = todo.pop()
        cmd = snap[pid][3]
        if pid == root:
            group = "the sweep's driver"
        elif parent_group in ("episode actors, their own CPU", "their children"):
            group = "their children"
        elif "EpisodeActor" in cmd:
            group = "episode actors, their own CPU"
        elif "Governor" in cmd:
            group = "the governor actor"
        elif "wandb" in cmd:
            group = "W&B (its service)"
        else:
            group = "Ray's own (GCS, raylet, agents, idle workers)"
        groups[pid] = group
        todo += [(k, group) for k in kids.get(pid, [])]
    return groups


def cpu_by_group(root: int, before: dict, after: dict) -> dict[str, float]:
    """CPU seconds spent between two snapshots, by group (a process's reaped children go to its children's group)."""
    groups = tree(root, after)
    total: dict[str, float] = collections.defaultdict(float)
    for pid, group in groups.items():
        _, own, reaped, _ = after[pid]
        _, own0, reaped0, _ = before.get(pid, (0, 0.0, 0.0, ""))
        total[group] += own - own0
        child = "their children" if group in ("episode actors, their own CPU", "their children") else group
        total[child] += reaped - reaped0
    return total


def stage_of(stack: str) -> str:
    frames = stack.split(";")
    ours = [f for f in reversed(frames) if _file(f).startswith(PROJECT) and not _file(f).startswith(HELPERS)]
    for frame in ours:
        for stage, keys in STAGES:
            if any(k in frame for k in keys):
                return stage
    if ours:
        return "other (ours)"
    for frame in reversed(frames):
        for stage, keys in LIBRARY:
            if any(k in frame for k in keys):
                return stage
    return "other"


def spy_stages(raw: Path) -> collections.Counter[str]:
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            counts[stage_of(stack)] += int(n)
    return counts


def hottest(raw: Path) -> collections.Counter[str]:
    """Samples by the innermost of our frames (else the innermost frame's file)."""
    counts: collections.Counter[str] = collections.Counter()
    if not raw.exists():
        return counts
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not (stack and n.isdigit()):
            continue
        frames = stack.split(";")
        ours = [f for f in reversed(frames) if _file(f).startswith(PROJECT)]
        counts[ours[0].split(" (")[0] + " (" + _file(ours[0]) + ")" if ours else _file(frames[-1])] += int(n)
    return counts


def calls_so_far(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        return len(json.load(r)["times"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--tool-turns", type=int, default=6)
    ap.add_argument("--method", default="dci")
    ap.add_argument("--sandbox", default=None)
    ap.add_argument("--actors", type=int, default=None)
    ap.add_argument("--shell-session", default=None)
    ap.add_argument("--window", type=float, default=40.0, help="at most this many seconds of the steady state")
    ap.add_argument("--spy-rate", type=int, default=200)
    ap.add_argument("--raw", default=None, help="keep py-spy's raw stacks in this file")
    ap.add_argument("--spy-also", nargs="*", default=[], choices=("driver", "governor"),
                    help="also sample these processes with py-spy and list their hottest functions")
    ap.add_argument("--against", metavar="REV", default=None, help="profile revision REV of this repository instead (git archive)")
    args = ap.parse_args()
    args.jobs = args.jobs or 4 * args.in_flight
    expected = args.jobs * (args.tool_turns + 1)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        checkout = checkout_of(args.against, tmp / "against") if args.against else REPO
        with launched(args, tmp, checkout) as (sweep, port):
            while sweep.poll() is None and calls_so_far(port) < expected * 0.15:
                time.sleep(0.5)
            if sweep.poll() is not None:
                raise SystemExit(f"the sweep ended before its steady state (exit {sweep.returncode}):\n{(tmp / 'sweep.log').read_text()[-3000:]}")
            before, c0, t0 = stats(), calls_so_far(port), time.monotonic()
            actors = [p for p, g in tree(sweep.pid, before).items() if g == "episode actors, their own CPU"]
            raw = Path(args.raw) if args.raw else tmp / "spy.raw"
            spying = subprocess.Popen([spy, "record", "--gil", "--nonblocking", "-r", str(args.spy_rate), "-f", "raw", "-o", str(raw),
                                       "-d", str(int(args.window)), "-p", str(actors[0])],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if actors else None
            groups_now = tree(sweep.pid, before)
            others = {"driver": [sweep.pid], "governor": [p for p, g in groups_now.items() if g == "the governor actor"]}
            also = [(what, subprocess.Popen([spy, "record", "--gil", "--nonblocking", "-r", str(args.spy_rate), "-f", "raw",
                                             "-o", f"{raw}.{what}", "-d", str(int(args.window)), "-p", str(others[what][0])],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                    for what in args.spy_also if others[what]]
            while sweep.poll() is None and calls_so_far(port) < expected * 0.85 and time.monotonic() - t0 < args.window:
                time.sleep(0.5)
            after, c1, t1 = stats(), calls_so_far(port), time.monotonic()
            for proc in [spying, *(p for _, p in also)]:  # the samples end with the window: not the sweep's end (W&B's cells, the report)
                if proc:
                    proc.send_signal(signal.SIGINT)  # py-spy writes what it has on SIGINT
                    proc.wait()
            sweep.wait()
        calls = c1 - c0
        load = os.getloadavg()
        print(f"window {t1 - t0:.1f} s, {calls} model calls ({calls / (t1 - t0):.1f}/s, ideal {args.in_flight / args.latency:.1f}), "
              f"{len(actors)} episode actors, load {load[0]:.1f}; sweep exit {sweep.returncode}")
        groups = cpu_by_group(sweep.pid, before, after)
        print("\n| process | ms per call |\n|---|---|")
        for group, secs in sorted(groups.items(), key=lambda kv: -kv[1]):
            print(f"| {group} | {1000 * secs / calls:.2f} |")
        print(f"| **all** | **{1000 * sum(groups.values()) / calls:.2f}** |")
        if spying and raw.exists():
            counts = spy_stages(raw)
            n = sum(counts.values())
            own = groups["episode actors, their own CPU"] * 1000 / calls
            print(f"\none episode actor, {n} samples with the GIL held; ms per call scaled to the actors' own {own:.2f}\n")
            print("| stage | share | ms per call |\n|---|---|---|")
            for stage, k in counts.most_common():
                print(f"| {stage} | {100 * k / n:.0f}% | {own * k / n:.2f} |")
        for what, _ in also:
            hot = hottest(Path(f"{raw}.{what}"))
            n = sum(hot.values())
            mine = groups["the sweep's driver" if what == "driver" else "the governor actor"] * 1000 / calls
            print(f"\nthe {what}, {n} samples with the GIL held (its CPU: {mine:.2f} ms per call), its hottest functions\n")
            print("| function (innermost of ours, else of a library) | share | ms per call |\n|---|---|---|")
            for frame, k in hot.most_common(15):
                print(f"| {frame} | {100 * k / n:.0f}% | {mine * k / n:.2f} |")


if __name__ == "__main__":
    main()
