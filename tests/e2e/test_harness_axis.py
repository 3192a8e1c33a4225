"""The harness as a grid axis of one sweep (`grid.agent=[dci,claude_code,codex,gemini_cli,mini_swe_agent]`),
through Ray: the records say which harness ran, Table 1 and its paired comparison group by harness,
the report has the harness × model leaderboard, and the sweep run again from its call cache costs
nothing. A sweep of our own loop alone keeps today's job ids and Table 1.

Each harness has its own tool names, so the scripted model's `script_dir` is one folder per harness,
chosen by interpolation: `model.script_dir=DIR/${agent.harness}`. Each script writes the deliverable
with its own harness's shell tool, so a cell fed another harness's script calls a tool it does not
have and scores 0.

The sweep over the production harnesses is skipped, saying why, without RUNNINGTAB_AGENTS_PREFIX (a
prefix with all four: .ci/agents-up.sh) or without bubblewrap; in CI, which requires them, it fails saying why.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_native, write_script
from tests.helpers.harness_jobs import installed

REPO = Path(__file__).resolve().parents[2]
TURN = {"usage": {"input_tokens": 100, "output_tokens": 10, "cost": 0.25}}
FINAL = {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", **TURN}
HARNESSES = ["dci", "claude_code", "codex", "gemini_cli", "mini_swe_agent"]
SHELL = {"dci": ("bash", "command"), "claude_code": ("Bash", "command"), "codex": ("exec_command", "cmd"),
         "gemini_cli": ("run_shell_command", "command"), "mini_swe_agent": ("bash", "command")}  # each harness's shell tool
READ = {h: {"name": tool, "arguments": {key: "cat notes.txt"}} for h, (tool, key) in SHELL.items()}  # reading the workspace file
COPY = "mkdir -p output && cat notes.txt > output/number.txt"
WRITE = {h: {"name": tool, "arguments": {key: COPY}} for h, (tool, key) in SHELL.items()}  # writing the deliverable
# mini-swe-agent answers by its submit command (an answer without one is a format error to it)
SUBMIT = {"mini_swe_agent": {**FINAL, "tool_calls": [{"name": "bash", "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}}]}}


def _bench(root: Path) -> Path:
    return write_native(root, [{"id": "t", "prompt": "Copy the number.", "workspace": "w", "answer": "3"}], {"w/notes.txt": "3\n"})


def _deliverable_bench(root: Path) -> Path:
    check = {"type": "contains", "file": "output/number.txt", "values": ["3"]}
    task = {"id": "t", "prompt": "Copy the number to output/number.txt.", "workspace": "w", "output": "output/number.txt",
            "rubrics": [{"text": "The number is 3", "check": check}]}
    return write_native(root, [task], {"w/notes.txt": "3\n"})


def _scripts(root: Path, harnesses: list[str], turn: dict[str, dict[str, Any]] = READ) -> Path:
    """`root/<harness>/t.jsonl`: one call of its shell tool, answer; a second answer for the tab's finish check."""
    for h in harnesses:
        (root / h).mkdir(parents=True)
        final = SUBMIT.get(h, FINAL)
        write_script(root / h / "t.jsonl", [{"tool_calls": [turn[h]], **TURN}, final, final])
    return root


def _sweep(tmp: Path, name: str, *overrides: str, bench: Path | None = None) -> Path:
    bench = bench or _bench(tmp / "b")
    cmd = [sys.executable, "-m", "runners.sweep", "tracker=jsonl", f"out={tmp / 'out'}", f"sweep={name}",
           f"model.cache_dir={tmp / 'cache'}", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script_dir={tmp / 'scripts'}/${{agent.harness}}", "grid.method=[dci,runningtab]", *overrides]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"},
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return tmp / "out" / name


def _csv(path: Path) -> list[dict[str, Any]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@installed("claude_code", "codex", "gemini_cli", "mini_swe_agent")
def test_a_sweep_over_every_harness_records_reports_ranks_and_reruns_each_from_its_cache(tmp_path: Path) -> None:
    harnesses = HARNESSES
    _scripts(tmp_path / "scripts", harnesses, WRITE)
    bench = _deliverable_bench(tmp_path / "b")
    axis = ("grid.agent=[dci,claude_code,codex,gemini_cli,mini_swe_agent]", "env.sandbox=bwrap", "judge=rule")
    sdir = _sweep(tmp_path, "axis", *axis, bench=bench)

    metas = [json.loads(p.read_text()) for p in sorted(sdir.glob("*/job.json"))]
    assert sorted((m["harness"], m["method"]) for m in metas) == sorted((h, me) for h in harnesses for me in ("dci", "runningtab"))
    assert all(m["config"]["agent"]["harness"] == m["harness"] for m in metas)
    assert all(m["config"]["model"]["script_dir"] == str(tmp_path / "scripts" / m["harness"]) for m in metas)  # each cell its own
    for m in metas:
        record = sdir / m["job_id"]
        result = json.loads((record / "result.json").read_text())
        assert result["stop_reason"] == "finished", (m["job_id"], result)
        assert (record / "deliverable" / "output" / "number.txt").read_text() == "3\n", m["job_id"]  # its own shell tool wrote it
        assert json.loads((record / "scores.json").read_text())["metrics"]["rubric_pass_rate"] == 1.0
        assert (record / "harness.json").exists() == (m["harness"] != "dci")

    report = sdir / "report"
    rows = _csv(report / "table1.csv")
    assert [(r["harness"], r["method"]) for r in rows] == [(h, me) for h in harnesses for me in ("dci", "runningtab")]
    assert all(r["rubric_pass_rate"] == "100.0" and r["planned"] == r["results"] == "1" for r in rows)
    paired = _csv(report / "table1_vs_dci.csv")
    assert sorted({(r["harness"], r["method"]) for r in paired}) == sorted((h, "runningtab") for h in harnesses)
    assert all(r["pairs"] == "1" for r in paired)  # each method against the baseline of its own harness only

    board = _csv(report / "leaderboard.csv")
    model = metas[0]["model"]
    assert [(r["harness"], r["method"], r["metric"], r[model]) for r in board] == [
        (h, me, "rubric_pass_rate", "100.0") for h in harnesses for me in ("dci", "runningtab")]
    assert "Leaderboard: harness × model" in (report / "index.html").read_text()
    assert "Leaderboard" in (report / "leaderboard.md").read_text()

    spend = json.loads((sdir / "spend.json").read_text())["cells"]  # the cells' names, as W&B and the progress show them
    assert sorted(spend) == sorted(f"native{'' if h == 'dci' else '__' + h}__{me}__{model}__s0"
                                   for h in harnesses for me in ("dci", "runningtab"))

    # the same sweep again, into a new folder: every model call of every harness answered from the cache
    again = _sweep(tmp_path, "axis-again", *axis, bench=bench)
    for m in metas:
        first, rerun = (json.loads((d / m["job_id"] / "result.json").read_text()) for d in (sdir, again))
        assert first["spend"] > 0 and first["cached_calls"] == 0, m["job_id"]
        assert rerun["spend"] == 0 and rerun["cached_calls"] == rerun["turns"] == first["turns"] > 0, (m["job_id"], rerun)
        assert (again / m["job_id"] / "deliverable" / "output" / "number.txt").read_text() == "3\n"


# What today's code (before the harness axis) gives this dci-only sweep: its ids and its Table 1 (issue 48
# added each row's planned jobs and not-results).
PINNED_IDS = ["native__t__dci__scripted__s0__e1c167f618", "native__t__runningtab__scripted__s0__f41fabc1e0"]
PINNED_TABLE1 = "\n".join([
    "### Table 1: main results (%, mean ± std over seeds of the results; planned jobs, results and not results; the best per "
    "benchmark and model in bold, none on a tie; cost and tokens of the cell's jobs)",
    "",
    "| benchmark | model | method | seeds | planned | results | not results | acc0 | acc1 | cost (USD) | tokens/job |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    "| native | scripted | dci | 1 | 1 | 1 | 0 | 100.00 ± 0.00 | 100.00 ± 0.00 | $0.5000 | 220 |",
    "| native | scripted | runningtab | 1 | 1 | 1 | 0 | 100.00 ± 0.00 | 100.00 ± 0.00 | $0.7500 | 330 |",
    "",
    "- cost (USD): what the cell's scored jobs' replies cost at the model's prices, replies from the model-call cache included "
    "(the same on every re-run); what the sweep paid providers is `spent` (spend.json and the sweep's last lines), where cached "
    "replies are free",  # issue 38: the cost column names what the sweep paid
    "- answers scored by databricks/officeqa reward.py@309dc01",
    "",
])


@pytest.mark.slow
def test_a_sweep_of_our_own_loop_keeps_its_job_ids_and_table1(tmp_path: Path) -> None:
    _scripts(tmp_path / "scripts", ["dci"])
    sdir = _sweep(tmp_path, "ours")
    assert sorted(p.parent.name for p in sdir.glob("*/job.json")) == PINNED_IDS
    assert (sdir / "report" / "table1.md").read_text() == PINNED_TABLE1
    assert not (sdir / "report" / "leaderboard.csv").exists()


@pytest.mark.slow
def test_the_agent_group_is_an_axis_beside_the_agent_settings() -> None:
    from runners.config.schema import ConfigError
    from runners.preflight.command_line import root_choices
    from runners.sweep.grid import compose_sweep

    def cells(*overrides: str) -> list[tuple[str, str, int]]:
        ov = ["model=scripted", "model.script=s.jsonl", "agent.max_turns=5", *overrides]
        return [(c.agent.harness, c.method.name, c.agent.max_turns) for c in compose_sweep(ov, root_choices(ov))[2]]

    assert cells("grid.agent=[dci,codex]", "grid.method=[dci,runningtab]") == [
        ("dci", "dci", 5), ("dci", "runningtab", 5), ("codex", "dci", 5), ("codex", "runningtab", 5)]
    assert cells("grid.agent=[dci,codex]", "agent=codex") == [("dci", "dci", 5), ("codex", "dci", 5)]  # the list wins
    assert cells("agent=claude_code", "grid.method=[dci,runningtab]") == [("claude_code", "dci", 5), ("claude_code", "runningtab", 5)]
    assert cells("agent.harness=codex") == [("codex", "dci", 5)]  # the harness's own setting is the axis's choice
    assert cells() == [("dci", "dci", 5)]
    with pytest.raises(ConfigError, match="give the harnesses in grid.agent only"):
        cells("grid.agent=[dci,codex]", "agent.harness=codex")
    with pytest.raises(ConfigError, match="unknown agent 'claud'; valid agent names: claude_code, codex, dci, gemini_cli, mini_swe_agent"):
        cells("grid.agent=[dci,claud]")


def test_the_progress_table_and_the_budget_name_the_harness_of_a_cell() -> None:
    from runners.job.identity import JobSpec
    from runners.sweep.budget import cell_of
    from runners.sweep.progress import row_of
    from tests.conftest import compose_root

    ours, theirs = (JobSpec("j", compose_root([f"agent={h}", "method=runningtab"]), "t") for h in ("dci", "codex"))
    assert (row_of(ours), row_of(theirs)) == ("runningtab", "codex · runningtab")
    assert (cell_of(ours), cell_of(theirs)) == ("builtin-workspace__runningtab__smollm2__s0", "builtin-workspace__codex__runningtab__smollm2__s0")
