"""A small real sweep's console (issue 38 items 3 and 4): it ends with one line naming its W&B runs,
their folder and the `wandb sync` command that uploads them (run here, as a dry run, with the real
CLI), and one telling what it paid from what its trajectories cost (a second sweep from the cache pays
nothing for the same cost); Ray's "token authentication is enabled" notice no longer appears."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from tests.conftest import compose_root, write_script
from tests.runners.tracking.test_wandb_cells import read_runs

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.usefixtures("own_ray")  # the notice is a local start's: this sweep starts its own Ray
def test_a_sweep_names_its_wandb_runs_and_the_sync_command_and_no_ray_notice(tmp_path: Path) -> None:
    task = load_benchmark(compose_root(["benchmark=builtin"]).benchmark).tasks()[0].id
    script = write_script(tmp_path / "s.jsonl", [{"content": "done", "usage": {"input_tokens": 10, "output_tokens": 2, "cost": 0.25}}])
    cmd = [sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
           "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[dci,runningtab]", "grid.seed=[0]",
           f"grid.tasks=[{task}]", "tracker=wandb", "out=out", "model.cache=read_write", f"model.cache_dir={tmp_path / 'cache'}"]
    first = [*cmd, "sweep=w"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"}
    env.pop("RAY_AUTH_MODE", None)  # Ray's default: token authentication on, and its notice
    r = subprocess.run(first, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Token authentication" not in r.stderr + r.stdout
    lines = [x for x in r.stderr.splitlines() if x.startswith("W&B:")]
    assert len(lines) == 1, r.stderr[-3000:]
    line = lines[0]
    runs = read_runs(tmp_path / "out" / "w" / "wandb")
    ids = {run["id"] for run in runs}
    assert line.startswith(f"W&B: {len(ids)} runs (2 cells, summary") and "saved offline in out/w/wandb" in line, line
    sync = shlex.split(line.split("upload them with: ", 1)[1])
    assert sync == ["wandb", "sync", "out/w/wandb"]
    wandb_cli = Path(sys.executable).with_name("wandb")
    dry = subprocess.run([str(wandb_cli), *sync[1:], "--dry-run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stderr[-2000:]
    listed = [x for x in (dry.stdout + dry.stderr).splitlines() if x.strip().endswith(".wandb")]
    assert len(listed) == len(runs) and {x.rsplit("-", 1)[-1].removesuffix(".wandb") for x in listed} == ids
    assert "spent $0.50 (paid to providers by this sweep's runs; replies from the model-call cache are free) · cost $0.50 (what " \
           "the 2 recorded trajectories' replies cost at the model's prices, cached ones included; Table 1's cost (USD)" in r.stderr

    again = subprocess.run([*cmd, "sweep=w2", "tracker=none"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "spent $0.00 (paid to providers" in again.stderr and " · cost $0.50 (what the 2 recorded" in again.stderr, again.stderr[-3000:]
    assert "W&B:" not in again.stderr and "Token authentication" not in again.stderr
