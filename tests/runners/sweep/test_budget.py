"""Budgets and prices: a job stopped at `budget.job_usd` (and continued under a higher one), the
scheduler's sweep and cell budgets, pricing files (cached input, tiers), and the paper presets'
refusal of placeholder prices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runners.config.runner import BudgetConfig
from runners.job.identity import JobSpec
from runners.models.config import ApiModelConfig
from runners.models.wire import parse_reply
from runners.preflight.config_checks import ConfigError, check_config
from runners.sweep.budget import HELD_EXIT, SweepBudget
from tests.conftest import compose_root, write_native, write_script

REPO = Path(__file__).resolve().parents[3]


def sweep_env() -> dict[str, str]:
    """The environment at the call (RAY_ADDRESS of the session's Ray, once a slow test started it)."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _turns(n: int, cost: float) -> list[dict]:
    usage = {"input_tokens": 10, "output_tokens": 2, "cost": cost}
    calls = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"echo {i}"}}], "usage": usage} for i in range(n - 1)]
    return [*calls, {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>", "usage": usage}]


def _job(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    bench = tmp_path / "b"
    if not bench.exists():
        write_native(bench, [{"id": "t", "prompt": "Count.", "workspace": "w", "answer": "3"}], {"w/a.txt": "1\n"})
    script = write_script(tmp_path / "s.jsonl", _turns(5, 0.4))
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=t", "model=scripted",
           f"model.script={script}", "judge=none", f"out={tmp_path / 'out'}", "model.cache=read_write",
           f"model.cache_dir={tmp_path / 'cache'}", *overrides]
    return subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_job_stops_at_its_budget_and_a_higher_budget_continues_it(tmp_path: Path) -> None:
    """Issue 48: a stop at `budget.job_usd` is a result (the agent's own spending, like its turn limit),
    scored on what it left; a run under a higher `job_usd` continues it and replaces it. Before: errored."""
    first = _job(tmp_path, "budget.job_usd=1.0")
    assert first.returncode == 0 and "job_budget after 3 turns" in first.stderr, first.stderr[-2000:]
    job_dir = Path(first.stdout.strip().splitlines()[-1])
    r1 = json.loads((job_dir / "result.json").read_text())
    # three replies cost 1.2 >= 1.0: the fourth call is refused
    assert (r1["stop_reason"], r1["turns"], r1["errored"], r1["budget_usd"]) == ("job_budget", 3, False, 1.0)
    assert r1["cost"] == pytest.approx(1.2) and r1["spend"] == pytest.approx(1.2)

    same = _job(tmp_path, "budget.job_usd=1.0")
    assert same.returncode == 0 and "stopped at its budget of $1" in same.stderr, same.stderr[-2000:]

    higher = _job(tmp_path, "budget.job_usd=5")
    assert higher.returncode == 0, higher.stderr[-2000:]
    r2 = json.loads((job_dir / "result.json").read_text())
    assert (r2["stop_reason"], r2["turns"], r2["attempt"], r2["cached_calls"]) == ("finished", 5, 2, 3)
    assert r2["cost"] == pytest.approx(2.0) and r2["spend"] == pytest.approx(0.8)  # the first three from the cache
    assert [e["stop_reason"] for e in r2["earlier_errors"]] == ["job_budget"] and r2["earlier_errors"][0]["spend"] == pytest.approx(1.2)


def _specs(cells: int, per_cell: int) -> list[JobSpec]:
    cfg = compose_root(["model=scripted", "judge=none"])
    out = []
    for c in range(cells):
        seeded = compose_root(["model=scripted", "judge=none", f"seed={c}"]) if c else cfg
        out += [JobSpec(f"c{c}j{i}", seeded, f"t{i}") for i in range(per_cell)]
    return out


def test_the_sweep_budget_holds_back_what_would_pass_it(tmp_path: Path) -> None:
    specs = _specs(2, 4)
    b = SweepBudget(BudgetConfig(sweep_usd=2.0, estimate_usd=0.5), specs, specs, tmp_path)
    started = [s for s in specs if b.admit(s)]
    assert [s.job_id for s in started] == ["c0j0", "c0j1", "c0j2", "c0j3"]  # 4 × 0.5 reserved = 2.0
    b.update({"paid_total": 0.2, "paid_cells": {}, "paid_jobs": {"c0j0": 0.2}})
    b.finished("c0j0", 0.2)  # cheaper than estimated: the cell's mean is now 0.2
    b.update({"paid_total": 0.2, "paid_cells": {}, "paid_jobs": {}})
    # spent 0.2, 3 running × 0.2; the other cell still expects 0.5 a job: 1.3, 1.8, then 2.3 > 2
    assert b.admit(specs[4]) and b.admit(specs[5]) and not b.admit(specs[6])
    assert b.held == {"c1j2", "c1j3"} and "2 job(s) not started" in (b.not_started() or "")
    assert b.at_completion() == pytest.approx(0.2 + 3 * 0.2 + 2 * 0.5 + 2 * 0.5)


def test_the_cell_budget_counts_its_own_cell() -> None:
    specs = _specs(2, 3)
    b = SweepBudget(BudgetConfig(cell_usd=1.0, job_usd=0.4), specs, specs, Path("/nonexistent"))
    assert [b.admit(s) for s in specs] == [True, True, False, True, True, False]


def test_a_budget_admits_pairs_across_methods_together() -> None:
    """Grid order is method by method: the DCI jobs first. Admitted one by one, a budget for four
    jobs started three DCI jobs and one RunningTab job; by pairs, two whole pairs."""
    specs = []
    for method in ("dci", "runningtab"):
        cfg = compose_root(["model=scripted", "judge=none", f"method={method}"])
        specs += [JobSpec(f"{method}-t{i}", cfg, f"t{i}") for i in range(3)]
    b = SweepBudget(BudgetConfig(sweep_usd=2.0, estimate_usd=0.5), specs, specs, Path("/nonexistent"))
    started = [s.job_id for s in specs if b.admit(s)]
    assert sorted(started) == ["dci-t0", "dci-t1", "runningtab-t0", "runningtab-t1"]
    assert b.held == {"dci-t2", "runningtab-t2"}
    b.finished("dci-t0", 0.1)
    b.update({"paid_total": 0.1, "paid_cells": {}, "paid_jobs": {}})
    assert b.admit(specs[2]) and b.admit(specs[5])  # the pair fits now: both start


def test_the_governor_says_when_the_sweep_or_a_cell_has_spent_its_budget() -> None:
    from runners.models.governor import Governor, SpendLimits

    g = Governor(SpendLimits(sweep_usd=5.0, cell_usd=1.0, prior_total=1.0, prior_cells={"a": 0.5}))
    assert g.over("a") is None and g.paid("j1", "a", 0.25) is None
    assert "budget.cell_usd" in (g.paid("j1", "a", 0.25) or "")  # 0.5 earlier + 0.5 now: cell a is spent
    assert g.over("b") is None and g.paid("j2", "b", 0.75) is None  # another cell goes on
    assert "budget.sweep_usd" in (g.paid("j3", "c", 2.75) or "") and "budget.sweep_usd" in (g.over("b") or "")  # 1 + 4 = 5
    assert g.snapshot()["budget"] == {"sweep_usd": 5.0, "cell_usd": 1.0}


def _priced_sweep(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    """4 tasks × [dci, runningtab]: each job makes 6 calls at $0.25 (a $1.50 job), 4 in flight."""
    bench = tmp_path / "b"
    if not bench.exists():
        write_native(bench, [{"id": f"t{i}", "prompt": f"Count {i}.", "workspace": "w", "answer": "3"} for i in range(4)],
                     {"w/a.txt": "1\n"})
    script = write_script(tmp_path / "s.jsonl", _turns(6, 0.25))
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script={script}", "judge=none", "tracker=jsonl", f"out={tmp_path / 'out'}", "sweep=s",
           "grid.method=[dci,runningtab]", f"model.cache_dir={tmp_path / 'cache'}", "cluster.max_in_flight=4", *overrides]
    return subprocess.run(cmd, cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_running_jobs_stop_at_the_sweep_budget_and_the_overshoot_is_bounded(tmp_path: Path) -> None:
    """The attack: an estimate far below the real cost. Before, the four jobs admitted on it ran to
    their end ($6 spent of $1) and the sweep exited 0. Now each stops at its next paid call once $1
    is spent: at most one more call ($0.25) per job in flight (4), so at most $2."""
    r = _priced_sweep(tmp_path, "budget.sweep_usd=1", "budget.estimate_usd=0.01")
    assert r.returncode == HELD_EXIT, r.stderr[-3000:]
    assert r.stderr.strip().splitlines()[-1].startswith("sweep held by its budget"), r.stderr[-3000:]
    spent = json.loads((tmp_path / "out" / "s" / "spend.json").read_text())["spent"]
    assert 1.0 <= spent <= 1.0 + 4 * 0.25 + 1e-9, spent
    results = {d.name: json.loads((d / "result.json").read_text()) for d in (tmp_path / "out" / "s").iterdir()
               if (d / "result.json").is_file()}
    assert sum(r["spend"] for r in results.values()) == pytest.approx(spent)
    stopped = [j for j, res in results.items() if res["stop_reason"] == "budget"]
    assert stopped and all(results[j]["budget_usd"] is None and "budget.sweep_usd" in results[j]["error"] for j in stopped)
    started = {d.name for d in (tmp_path / "out" / "s").iterdir() if (d / "job.json").is_file()}
    tasks = {j.split("__")[1] for j in started}
    assert len(started) == 2 * len(tasks), started  # whatever started came in pairs: both methods of a task

    again = _priced_sweep(tmp_path, "budget.sweep_usd=100", "budget.estimate_usd=0.01")
    assert again.returncode == 0, again.stderr[-3000:]
    final = [json.loads(p.read_text()) for p in (tmp_path / "out" / "s").glob("*/result.json")]
    assert len(final) == 8 and all(res["stop_reason"] == "finished" for res in final)
    continued = [res for res in final if res["earlier_errors"]]
    assert continued and any(res["cached_calls"] >= 1 for res in continued)  # continued from the cache, unpaid
    assert all(res["spend"] < res["cost"] for res in continued if res["cached_calls"])


@pytest.mark.slow
def test_a_sweep_stops_starting_jobs_at_its_budget_and_a_rerun_with_more_runs_the_rest(tmp_path: Path) -> None:
    bench = write_native(tmp_path / "b", [{"id": f"t{i}", "prompt": f"Count {i}.", "workspace": "w", "answer": "3"} for i in range(5)],
                         {"w/a.txt": "1\n"})
    script = write_script(tmp_path / "s.jsonl", _turns(2, 0.25))
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
           f"model.script={script}", "judge=none", "tracker=jsonl", f"out={tmp_path / 'out'}", "sweep=s",
           f"model.cache_dir={tmp_path / 'cache'}", "cluster.max_in_flight=4"]
    r = subprocess.run([*cmd, "budget.sweep_usd=1.2", "budget.estimate_usd=0.5"], cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == HELD_EXIT and "sweep held by its budget" in r.stderr.strip().splitlines()[-1], r.stderr[-3000:]
    done = [d for d in (tmp_path / "out" / "s").iterdir() if (d / "result.json").is_file()]
    assert len(done) == 2 and "3 job(s) not started" in r.stderr, r.stderr[-3000:]  # 2 × 0.5 reserved, a third would pass 1.2
    spend = json.loads((tmp_path / "out" / "s" / "spend.json").read_text())
    assert spend["spent"] == pytest.approx(1.0) and len(spend["held"]) == 3
    again = subprocess.run([*cmd, "budget.sweep_usd=10", "budget.estimate_usd=0.5"], cwd=REPO, env=sweep_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "2 already complete, 3 to run" in again.stderr, again.stderr[-3000:]
    assert json.loads((tmp_path / "out" / "s" / "spend.json").read_text())["spent"] == pytest.approx(2.5)


def test_prices_come_from_the_dated_file_with_cached_input_and_tiers(tmp_path: Path) -> None:
    prices = tmp_path / "prov.yaml"
    prices.write_text("provider: p\nas_of: '2026-01-02'\nmodels:\n  m: {input: 2.0, cached_input: 0.5, output: 8.0,"
                      " tiers: [{above_input_tokens: 1000, input: 4.0, cached_input: 1.0, output: 16.0}]}\n")
    cfg = ApiModelConfig(kind="openai", name="m", base_url="http://x/v1", pricing=str(prices))

    def cost(prompt: int, cached: int, out: int, **shape: object) -> float:
        usage = {"prompt_tokens": prompt, "completion_tokens": out, **shape} if shape else {
            "prompt_tokens": prompt, "completion_tokens": out, "prompt_tokens_details": {"cached_tokens": cached}}
        reply = {"choices": [{"message": {"role": "assistant", "content": "x"}}], "usage": usage}
        return parse_reply(reply, cfg, lambda: "id").usage.cost

    assert cost(600, 200, 100) == pytest.approx((400 * 2 + 200 * 0.5 + 100 * 8) / 1e6)
    assert cost(2000, 0, 100) == pytest.approx((2000 * 4 + 100 * 16) / 1e6)  # above the tier: all of it at the tier's rate
    assert cost(600, 0, 0, prompt_cache_hit_tokens=600) == pytest.approx(600 * 0.5 / 1e6)  # DeepSeek's field


def test_a_paper_preset_refuses_placeholder_prices_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(k, "sk-dummy")
    cfg = compose_root(["experiment=paper_main", "model=gpt54_nano"])
    with pytest.raises(ConfigError, match=r"placeholder.*budget\.allow_unpriced=true"):
        check_config(cfg)
    check_config(compose_root(["experiment=paper_main", "model=gpt54_nano", "budget.allow_unpriced=true"]))
    missing = compose_root(["experiment=paper_main", "model=openai", "model.name=x", "model.base_url=http://x/v1"])
    with pytest.raises(ConfigError, match="has no price"):
        check_config(missing)
    with pytest.raises(ConfigError, match="budget.estimate_usd"):
        check_config(compose_root(["model=openai", "model.name=x", "model.base_url=http://x/v1", "budget.sweep_usd=5"]))


def test_a_cells_wandb_summary_has_its_spend_and_the_spend_expected_at_completion() -> None:
    from runners.core.record_types import Result
    from runners.tracking.cells import CellRow, cell_summary, task_table

    rows = [CellRow(f"j{i}", f"t{i}", Result(f"j{i}", "finished", cost=0.5, spend=s, cached_calls=c), None)
            for i, (s, c) in enumerate([(0.5, 0), (0.1, 4)])]
    summary = cell_summary(rows, expected=5)
    assert summary["cost_total"] == 1.0 and summary["spend_total"] == pytest.approx(0.6)
    assert summary["spend_expected"] == pytest.approx(0.3 * 5) and summary["partial"] is True
    columns, data = task_table(rows)
    assert [r[columns.index("cached_calls")] for r in data] == [0, 4]
