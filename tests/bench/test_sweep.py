"""bench/sweep.py runs the sweep as a user would: its command line goes through the real sweep
parser and preflight (`--cfg job`), and leaves every setting it does not pin at the sweep's default."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from bench import sweep as bench

REPO = Path(__file__).resolve().parents[2]


def _args(**given: object) -> argparse.Namespace:
    base = {"in_flight": 4, "jobs": 2, "latency": 0.2, "tool_turns": 6, "method": "dci", "sandbox": None,
            "shell_session": None, "actors": None}
    return argparse.Namespace(**{**base, **given})


def _shown(args: argparse.Namespace, tmp: Path) -> tuple[dict, str]:
    """The sweep's own `--cfg job` for the bench's command line: (the config, its last line)."""
    command = bench.sweep_command(args, bench.write_benchmark(tmp / "bench", args.jobs), tmp, port=9)
    done = subprocess.run([*command, "--cfg", "job"], cwd=REPO, env=bench.sweep_env(REPO), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return yaml.safe_load(done.stdout), done.stdout.strip().splitlines()[-1]


def test_the_bench_runs_the_sweeps_defaults(tmp_path: Path) -> None:
    cfg, last = _shown(_args(), tmp_path)
    assert last.startswith("# preflight: passed"), last
    model = cfg["model"]
    assert model["cache"] == "read_write"  # the sweep's default, in a fresh folder of the bench's
    assert Path(model["cache_dir"]).is_relative_to(tmp_path)
    assert cfg["env"]["sandbox"] == "auto" and cfg["env"]["shell_session"] is True
    assert cfg["tracker"]["kind"] == "wandb" and Path(cfg["tracker"]["dir"]).is_relative_to(tmp_path)
    assert cfg["judge"]["name"] == "auto"
    assert cfg["cluster"]["max_in_flight"] == 4 and cfg["cluster"]["actors"] is None


def test_what_the_bench_is_given_reaches_the_sweep(tmp_path: Path) -> None:
    cfg, _ = _shown(_args(sandbox="none", shell_session="false", actors=3), tmp_path)
    assert cfg["env"]["sandbox"] == "none" and cfg["env"]["shell_session"] is False and cfg["cluster"]["actors"] == 3


def test_the_sweep_shares_no_cache_and_uploads_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNINGTAB_CALL_CACHE", "/elsewhere")
    env = bench.sweep_env(REPO)
    assert "RUNNINGTAB_CALL_CACHE" not in env and env["WANDB_MODE"] == "offline" and env["PYTHONPATH"] == str(REPO)


def test_against_a_revision_imports_that_revision(tmp_path: Path) -> None:
    other = bench.checkout_of("HEAD", tmp_path / "head")
    probe = subprocess.run([sys.executable, "-c", "import runners.sweep.driver as d; print(d.__file__)"], cwd=other,
                           env=bench.sweep_env(other), capture_output=True, text=True, check=True)
    assert Path(probe.stdout.strip()).is_relative_to(other)


def test_the_memory_is_summed_by_process_kind_with_pss_beside_rss() -> None:
    """RSS summed over processes counts each shared page (libc, the shell's text) once per process;
    PSS splits them among their sharers. Both are kept, by process name, at their peaks."""
    proc = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & sleep 30 & wait"], start_new_session=True)
    try:
        tree = bench.Tree(proc.pid)
        deadline = time.monotonic() + 30  # until the three sleeps are up (seconds on a loaded machine)
        while tree.rss_kinds.get("sleep", (0, 0))[0] < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
            tree.sample()
        for _ in range(bench.PSS_EVERY):
            tree.sample()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert tree.rss_kinds["driver"][0] == 1 and tree.rss_kinds["sleep"][0] == 3
    assert 0 < tree.peak_pss < tree.peak_rss  # the sleeps share their pages: PSS counts them once in all
    assert tree.pss_kinds["sleep"][1] < tree.rss_kinds["sleep"][1]
    assert "sleep" in tree.breakdown() and "3 processes" in tree.breakdown()


def test_the_turn_timeline_reads_a_records_times(tmp_path: Path) -> None:
    import json

    from bench import turn_timeline

    job = tmp_path / "out" / "j1"
    job.mkdir(parents=True)
    msgs = [("system", 100.0), ("user", 100.0), ("assistant", 102.5), ("tool", 102.6), ("assistant", 104.9), ("tool", 105.2),
            ("assistant", 107.3)]
    (job / "trajectory.jsonl").write_text("".join(json.dumps({"role": r, "time": t}) + "\n" for r, t in msgs))
    (job / "job.json").write_text("{}")
    os.utime(job / "job.json", (100.2, 100.2))
    (job / "scores.json").write_text("{}")
    os.utime(job / "scores.json", (108.0, 108.0))
    tools, calls, start, end = turn_timeline.spans(job / "trajectory.jsonl", latency=2.0)
    assert [round(t, 3) for t in tools] == [0.1, 0.3]
    assert [round(c, 3) for c in calls] == [0.3, 0.1]  # 104.9 - 102.6 - 2, 107.3 - 105.2 - 2
    assert [round(s, 3) for s in start] == [0.3] and [round(e, 3) for e in end] == [0.7]


def test_the_turn_timeline_puts_each_jobs_first_tool_call_apart(tmp_path: Path) -> None:
    """A job's first tool call met its shell session starting: the summary gives it its own row."""
    import json

    from bench import turn_timeline

    for i, first in enumerate((0.2, 0.4)):
        job = tmp_path / "out" / f"j{i}"
        job.mkdir(parents=True)
        msgs = [("user", 100.0), ("assistant", 102.0), ("tool", 102.0 + first), ("assistant", 105.0), ("tool", 105.01),
                ("assistant", 108.0)]
        (job / "trajectory.jsonl").write_text("".join(json.dumps({"role": r, "time": t}) + "\n" for r, t in msgs))
        for name, at in (("job.json", 100.0), ("scores.json", 109.0)):
            (job / name).write_text("{}")
            os.utime(job / name, (at, at))
    rows = {line.split(" median")[0].strip(): line for line in turn_timeline.summary(tmp_path / "out", 2.0).splitlines()[1:]}
    assert "median     300 ms" in rows["a job's first (shell start)"]  # (200 + 400) / 2
    assert "median     105 ms" in rows["tool (reply → result)"]  # of 200, 10, 400, 10


def test_the_stubs_jitter_keeps_the_mean_latency_and_its_bounds() -> None:
    """`--jitter` puts the jobs out of step without changing the ideal (in flight / mean latency)."""
    import itertools
    import statistics

    from bench.stub_model import delays

    waits = list(itertools.islice(delays(2.0, 0.5), 20_000))
    assert 1.0 <= min(waits) < 1.01 and 2.99 < max(waits) <= 3.0
    assert abs(statistics.mean(waits) - 2.0) < 0.02
    assert list(itertools.islice(delays(2.0, 0.0), 3)) == [2.0, 2.0, 2.0]
    assert list(itertools.islice(delays(2.0, 0.5), 5)) == waits[:5]  # seeded: runs draw alike


@pytest.mark.parametrize("module", ["bench.sweep", "bench.stub_model"])
def test_a_jitter_outside_its_range_is_refused_with_what_to_give(module: str) -> None:
    r = subprocess.run([sys.executable, "-m", module, "--latency", "2", "--jitter", "1.5"], cwd=Path(__file__).parents[2],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--jitter 1.5: give a fraction of the latency, at least 0 and below 1" in r.stderr
