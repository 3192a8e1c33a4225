"""Issue 50 item 1: `--cfg job` said "135 cell(s), each over its benchmark's tasks" and nothing of
jobs, cost or time. The plan counts the jobs of each benchmark where its task list is known (and
says which it cannot count), prices a range of tokens per job with the pricing files, or a pilot
sweep's own records, and gives the wall time at the cluster's jobs in flight and a stated latency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runners.config.schema import ConfigError
from runners.models.pricing import price_of
from runners.plan.estimate import make_plan
from runners.plan.figures import per_job, read_pilot, stated
from runners.plan.render import lines
from runners.plan.tasks import count_tasks
from runners.preflight.command_line import root_choices
from runners.sweep.grid import compose_sweep, grid_axes
from tests.conftest import compose_root, write_native


def plan_of(overrides: list[str]):
    root, _, configs = compose_sweep(overrides, root_choices(overrides))
    axes, seeds = grid_axes(root, overrides)
    return make_plan(axes, seeds, configs), configs


@pytest.mark.slow  # composes grids (~4 s)
def test_tasks_are_counted_where_their_list_is_known_and_said_where_not(tmp_path: Path) -> None:
    officeqa = count_tasks("officeqa_paper", compose_root(["benchmark=officeqa_paper"]))
    assert officeqa.n == 104 and "selection officeqa_paper" in officeqa.how  # the shipped selection, no data needed
    wb = count_tasks("workspace_bench", compose_root(["benchmark=workspace_bench"]))
    assert wb.n is None and "python -m eval.prepare workspace_bench --out DATA" in wb.how and "+plan.tasks.workspace_bench=N" in wb.how
    assert count_tasks("workspace_bench", compose_root(["benchmark=workspace_bench", "+plan.tasks.workspace_bench=100"])).n == 100
    bench = write_native(tmp_path / "b", [{"id": f"t{i}", "prompt": "p", "workspace": "w", "answer": "1"} for i in range(5)], {"w/a": "x"})
    native = ["benchmark=native", f"benchmark.path={bench}"]
    assert count_tasks("native", compose_root(native)).n == 5
    assert count_tasks("native", compose_root([*native, "grid.tasks=[t1,t3]"])).n == 2


def test_stated_figures_are_priced_with_the_pricing_file() -> None:
    cfg = compose_root(["benchmark=officeqa_paper", "model=gpt54_nano"])
    f = stated("stated")["officeqa"]
    job = per_job(cfg, None)
    price = price_of(cfg.model)
    assert job.calls == f["calls"] and "stated figures, not measured (conf/tokens/stated.yaml)" in job.basis
    assert job.usd.lo == pytest.approx(f["calls"].lo * price.cost(int(f["prompt_tokens"].lo), 0, int(f["output_tokens"].lo)))
    assert job.usd.hi == pytest.approx(f["calls"].hi * price.cost(int(f["prompt_tokens"].hi), 0, int(f["output_tokens"].hi)))
    dearer = per_job(compose_root(["benchmark=officeqa_paper", "model=gemini38_flash"]), None)
    assert dearer.usd.hi > job.usd.hi  # the model's own price, not one figure for all


@pytest.mark.slow  # composes grids (~4 s)
def test_the_paper_grid_without_its_data_counts_what_it_can_and_sums_nothing_it_cannot() -> None:
    plan, configs = plan_of(["grid.benchmark=[officeqa_paper,workspace_bench]", "grid.method=[dci,runningtab]", "grid.model=[gpt54_nano]"])
    rows = {r.benchmark: r for r in plan.rows}
    assert rows["officeqa_paper"].jobs == 104 * 2 and rows["workspace_bench"].jobs is None and plan.jobs == 208
    said = "\n".join(lines(plan, configs, "2 method(s) x 1 model(s) x 1 seed(s)"))
    assert "NOT COUNTED: 1 benchmark(s), 2 cells (their jobs, cost and time are in none of these sums)" in said, said
    assert "at placeholder prices, not checked yet: gpt54_nano" in said and "time: " in said and "plan.latency_s" in said


@pytest.mark.slow  # composes grids (~4 s)
def test_wall_time_is_the_jobs_time_over_what_runs_at_once() -> None:
    base = ["benchmark=officeqa_paper", "model=gpt54_nano", "plan.latency_s=2"]
    slow, _ = plan_of([*base, "cluster.max_in_flight=4"])
    f = stated("stated")["officeqa"]
    assert slow.wall_s.lo == pytest.approx(104 * f["calls"].lo * 2 / 4)
    capped, _ = plan_of([*base, "cluster.max_in_flight=200", "model.concurrency=10"])  # the provider's limit holds it
    assert capped.wall_s.hi == pytest.approx(104 * f["calls"].hi * 2 / 10) and "model.concurrency" in capped.bound


def test_a_pilots_unreadable_records_are_left_out_and_counted(tmp_path: Path) -> None:
    from runners.core.job_record import write_meta, write_result
    from runners.core.record_types import JobMeta, Result

    for i, cost in enumerate([0.01, 0.03]):
        d = tmp_path / f"job{i}"
        d.mkdir()
        write_meta(d, JobMeta(f"job{i}", "native", "t", "dci", "scripted", 0))
        write_result(d, Result(f"job{i}", "finished", turns=10, tokens_in=1000, tokens_out=100, cost=cost, wall_s=3.0))
    bad = tmp_path / "job9"
    bad.mkdir()
    write_meta(bad, JobMeta("job9", "native", "t", "dci", "scripted", 0))
    (bad / "result.json").write_text(json.dumps({"job_id": "job9", "stop_reason": "finished", "turns": "many", "cost": -5}))
    pilot = read_pilot(str(tmp_path))
    assert len(pilot.jobs) == 2 and pilot.skipped == 1
    with pytest.raises(ConfigError, match="no such folder"):
        read_pilot(str(tmp_path / "nope"))
