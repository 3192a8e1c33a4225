"""The researcher's question of issue 50, item 1, asked of `--cfg job` and of `runningtab plan`:
how many jobs is `experiment=paper_main`, what should it cost, how long does it take? Without the
paper's data the plan counts OfficeQA's 104 reviewed questions (its selection ships), says that the
other two are not counted and how to count them, and with their counts stated gives the
researcher's 235 tasks × 45 = 10,575 jobs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # composes the paper's 45 cells (~10 s each run)
REPO = Path(__file__).resolve().parents[3]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})


def test_cfg_job_of_the_paper_grid_plans_what_it_can_count_and_says_what_it_cannot(tmp_path: Path) -> None:
    r = run("runners.sweep", "experiment=paper_main", "--cfg", "job", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    plan = r.stdout[r.stdout.index("# plan: "):r.stdout.index("# records: ")]
    assert all(line.startswith("# ") for line in plan.splitlines()), plan
    assert "# plan: 4,680 job(s) counted" in plan and "officeqa_paper      104 tasks × 45 cells = 4,680 jobs" in plan, plan
    for name, prepare in (("workspace_bench", "workspace_bench"), ("agentcompany_paper", "agentcompany")):
        line = next(line for line in plan.splitlines() if line.startswith(f"#   {name} "))
        assert "? tasks: not counted" in line and f"python -m eval.prepare {prepare} --out DATA" in line, line
        assert f"+plan.tasks.{name}=N" in line, line
    assert "NOT COUNTED: 2 benchmark(s), 90 cells" in plan and re.search(r"# time: \S+–\S+ expected at 8 jobs in flight", plan), plan


def test_runningtab_plan_with_the_counts_stated_gives_the_whole_grid(tmp_path: Path) -> None:
    r = run("runners", "plan", "experiment=paper_main", "+plan.tasks.workspace_bench=100", "+plan.tasks.agentcompany_paper=31",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    assert out.startswith("experiment=paper_main: the sweep's grid") and "# " not in out, out[:500]
    assert "plan: 10,575 job(s) counted" in out and "NOT COUNTED" not in out, out
    by_model = re.search(r"by model: gpt54_nano \$([\d,.]+)–\$([\d,.]+), deepseek_v4_flash", out)
    assert by_model and 0 < float(by_model.group(1).replace(",", "")) < float(by_model.group(2).replace(",", "")), out
    assert "at placeholder prices, not checked yet: gpt54_nano, deepseek_v4_flash, gemini38_flash" in out
    assert "preflight: would refuse to start" in out  # no keys, no data here: the plan is made all the same
