"""How many tasks each benchmark of the grid has, where that can be known on this machine.

In order: the benchmark's tasks as the sweep would load them (its data, the built-in benchmark, a
native folder); else, for a benchmark reviewed by a shipped selection (`officeqa_paper`), the tasks
the selection includes, which need no data; else the count the user states (`plan.tasks`). A
benchmark none of these counts is said to be uncounted, with what would count it.
"""

from __future__ import annotations

from dataclasses import dataclass

from runners.config.schema import ConfigError, RootConfig


@dataclass(frozen=True)
class TaskCount:
    """`n` tasks (None: not counted) and how they were counted, or why they were not."""

    n: int | None
    how: str


def count_tasks(axis: str, cfg: RootConfig) -> TaskCount:
    """The tasks of benchmark `axis` (its name in the grid) as the sweep would run them (`grid.tasks` applied)."""
    from runners.preflight.config_checks import benchmark_tasks
    from runners.preflight.refusals import messages_of

    only = list(cfg.grid.tasks)
    try:
        ids = [t.id for t in benchmark_tasks(cfg)]
    except ConfigError as e:
        why = messages_of(e)[0]
    else:
        n = len([i for i in ids if i in only]) if only else len(ids)
        return TaskCount(n, "its tasks, loaded" + (" (grid.tasks)" if only else ""))
    if only:
        return TaskCount(len(only), "named by grid.tasks (its data is not here to check them)")
    selected = _selected(cfg)
    if selected is not None:
        return TaskCount(selected[0], f"its selection {selected[1]}; its data is not here")
    stated = cfg.plan.tasks.get(axis)
    if stated is not None:
        return TaskCount(int(stated), f"stated: plan.tasks.{axis}")
    why = why.removeprefix(f"benchmark={cfg.benchmark.name}: ").split(" (its loader: ")[0]  # the preflight says the rest
    return TaskCount(None, f"not counted ({why}); or state its count: +plan.tasks.{axis}=N")


def _selected(cfg: RootConfig) -> tuple[int, str] | None:
    """The tasks a shipped or named selection includes (`benchmark.ids` and `limit` applied), and its
    name; None for a benchmark without one."""
    from eval.benchmarks.base import BenchmarkError
    from eval.benchmarks.selection import read_selection, selection_path

    name = getattr(cfg.benchmark, "selection", None)
    if not name:
        return None
    try:
        rows = read_selection(selection_path(str(name)))
    except BenchmarkError:
        return None
    included = [u for u, (decision, _) in rows.items() if decision == "include"]
    if cfg.benchmark.ids:
        included = [i for i in map(str, cfg.benchmark.ids) if i in set(included)]
    if cfg.benchmark.limit is not None:
        included = included[: max(cfg.benchmark.limit, 0)]
    return len(included), str(name)
