"""The plan's estimate checked against what the sweep then costs (issue 50, item 1): a pilot sweep on
half the tasks and one seed, its own records named to the plan of the whole grid, and the whole
grid run: what it cost falls in the plan's range. The model is scripted, with realistic token
counts (a prompt growing 1.8k tokens a call from ~3k, 150-700 output tokens a call, 6-16 calls a
job, priced at gpt-5.4-nano's rates), the number of calls varying from task to task as real jobs do."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from runners.core.job_record import read_result
from tests.conftest import write_native

pytestmark = pytest.mark.slow  # three real sweeps through Ray (~1-2 min on 2 cores)
REPO = Path(__file__).resolve().parents[3]
TASKS = 8
NANO_IN, NANO_OUT = 0.05, 0.40  # USD per 1M tokens (conf/pricing/openai.yaml)


def scripts(folder: Path, seed: int = 7) -> None:
    rng = random.Random(seed)
    folder.mkdir()
    for t in range(TASKS):
        turns = []
        for i in range(rng.randint(6, 16)):
            tin, tout = 3000 + 1800 * i + rng.randint(-500, 500), rng.randint(150, 700)
            usage = {"input_tokens": tin, "output_tokens": tout, "cost": (tin * NANO_IN + tout * NANO_OUT) / 1e6}
            turns.append({"tool_calls": [{"name": "bash", "arguments": {"command": f"echo {i}"}}], "usage": usage})
        turns.append({"content": "<FINAL_ANSWER>1</FINAL_ANSWER>", "usage": {"input_tokens": 9000, "output_tokens": 50, "cost": 9000 * NANO_IN / 1e6}})
        (folder / f"t{t}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in turns))


def run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})


def test_the_plan_from_a_pilots_records_holds_what_the_grid_then_costs(tmp_path: Path) -> None:
    write_native(tmp_path / "bench", [{"id": f"t{i}", "prompt": "Count.", "workspace": "w", "answer": "1"} for i in range(TASKS)],
                 {"w/a.txt": "1\n"})
    scripts(tmp_path / "scripts")
    grid = ["benchmark=native", "benchmark.path=bench", "model=scripted", "model.script_dir=scripts", "grid.method=[dci,runningtab]",
            "tracker=none", "out=out"]
    pilot = run("runners.sweep", *grid, "grid.tasks=[t0,t1,t2,t3]", "sweep=pilot", cwd=tmp_path)
    assert pilot.returncode == 0, pilot.stderr[-3000:]

    whole = [*grid, "grid.seed=[0,1]", "sweep=whole"]
    plan = run("runners.plan", *whole, "plan.pilot=out/pilot", "plan.latency_s=3", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr[-3000:]
    said = plan.stdout
    assert f"native  {TASKS} tasks × 4 cells = {TASKS * 4} jobs" in said, said
    assert "the pilot's records (the mean per job ± two standard errors): matched by benchmark, method and model" in said, said
    lo, hi = (float(x.replace(",", "")) for x in re.search(r"\n  all +\d+ jobs, \$([\d,.]+)–\$([\d,.]+)", said).groups())
    assert "pilot: 8 finished job(s)" in said and "time: " in said, said

    ran = run("runners.sweep", *whole, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    sdir = tmp_path / "out" / "whole"
    results = [r for d in sdir.iterdir() if (r := read_result(d)) is not None]
    cost = sum(r.cost for r in results)
    assert len(results) == TASKS * 4 and lo <= cost <= hi, (lo, cost, hi)
    print(f"plan ${lo:.4f}–${hi:.4f} (mid ${(lo + hi) / 2:.4f}); the grid cost ${cost:.4f} over {len(results)} jobs")
