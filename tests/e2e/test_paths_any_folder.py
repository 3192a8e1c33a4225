"""Any working folder works: the entry points, started outside the checkout with relative paths,
score the reference deliverable 100% (issue 35.1).

Each command runs as a user would type it (`python -m …` in a scratch folder, every path relative
to it): the sweep, one job, re-scoring, the report and the replay. The scripted model writes the
task's reference deliverable, so any score below 100% is the runner losing track of a path.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.record_files import read_json
from runners.models.call_cache import ROOT_VARIABLE
from tests.conftest import write_native, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
ROWS = "supplier,status,amount\nSupplier 15,open,55000\nSupplier 7,closed,1200\n"
TASK = {"prompt": "Write output/orders.csv: one row per supplier with status and amount.", "workspace": "office",
        "output": "output/orders.csv",
        "rubrics": [{"text": "Supplier 15 is open with 55,000", "check": {"type": "row", "cells": ["Supplier 15", "open", 55000]}},
                    {"text": "Both suppliers are listed", "check": {"type": "row_count", "min": 2}},
                    {"text": "It has the columns", "check": {"type": "columns", "names": ["supplier", "status", "amount"]}}]}
WRITE = "mkdir -p output && printf '%s' " + shlex.quote(ROWS) + " > output/orders.csv"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ROOT_VARIABLE}  # the default call cache, as a user has it
    env["WANDB_MODE"] = "offline"
    proc = subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def scores(job: Path) -> dict:
    return read_json(job / "scores.json")


def jobs_of(sweep: Path) -> list[Path]:
    return sorted(d for d in sweep.iterdir() if (d / "job.json").is_file())


def test_every_entry_point_from_a_scratch_folder_with_relative_paths(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    write_native(scratch / "my_bench", [{"id": "orders", **TASK}, {"id": "orders2", **TASK}], {"office/orders/po1.txt": "Supplier 15: 55000, open\n"})
    write_script(scratch / "my_bench" / "script.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": WRITE}}]}, {"content": "done"}])
    assert not scratch.is_relative_to(REPO)

    sweep = run(scratch, "runners.sweep", "benchmark=native", "benchmark.path=my_bench", "model=scripted",
                "model.script=my_bench/script.jsonl", "method=dci", "sweep=relout", "tracker=jsonl")
    sweep_dir = scratch / "outputs" / "relout"
    jobs = jobs_of(sweep_dir)
    assert len(jobs) == 2, sweep.stderr[-3000:]
    for job in jobs:
        assert scores(job)["metrics"]["pass_rate"] == 1.0, json.dumps(scores(job)["items"])[:2000]
        config = read_json(job / "job.json")["config"]
        assert Path(config["benchmark"]["path"]).is_absolute() and Path(config["model"]["script"]).is_absolute()
    assert (scratch / "outputs" / ".cache" / "calls").is_dir()  # the call cache beside the records, not in the checkout

    one = run(scratch, "runners.job", "benchmark=native", "benchmark.path=my_bench", "task=orders", "model=scripted",
              "model.script=my_bench/script.jsonl", "method=dci", "out=x", "tracker=none")
    (single,) = jobs_of(scratch / "x")
    assert scores(single)["metrics"]["pass_rate"] == 1.0, one.stdout[-2000:]

    run(scratch, "runners.job", "benchmark=native", "benchmark.path=my_bench", "task=orders", "model=scripted",
        "model.script=my_bench/script.jsonl", "method=dci", "out=y", "tracker=none", "hydra.job.chdir=true", "hydra.run.dir=h")
    (moved,) = jobs_of(scratch / "y")  # Hydra ran it in h/: paths are still the folder it was started in's
    assert scores(moved)["metrics"]["pass_rate"] == 1.0

    before = {job: (job / "scores.json").read_bytes() for job in jobs}
    rescored = run(scratch, "eval.score", "outputs/relout", "x")
    assert all(scores(job)["metrics"]["pass_rate"] == 1.0 for job in [*jobs, single]), rescored.stdout[-3000:]
    assert all(json.loads(before[job])["items"] == scores(job)["items"] for job in jobs)

    run(scratch, "eval.report", "outputs/relout")
    table1 = (sweep_dir / "report" / "index.html").read_text(encoding="utf-8")
    assert "100.00 ± 0.00" in table1 and "no scores.json" not in table1

    replay = run(scratch, "eval.replay", "outputs/relout", "--method", "runningtab")
    assert "could not be replayed" not in replay.stdout + replay.stderr
    assert len((sweep_dir / "replay" / "runningtab" / "replay.jsonl").read_text().splitlines()) == 2
