"""Expanding the grid (benchmark × method × model × seed × task) into job specs with stable ids.

Each cell's config is composed by Hydra from its axis values plus the user's other overrides, so a
job's config is exactly what `python -m runners.job` would build for the same choices.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hydra import compose
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from eval.benchmarks import load_benchmark
from runners.core.task import Task
from runners.identity import CellDigest, identity_digest, task_digests
from runners.preflight import benchmark_tasks, check_configs, check_tasks
from runners.schema import AXES, ConfigError, RootConfig, check_choice, listed_axes, to_root

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
SWEEP_CACHE = "read_write"  # a sweep's model-call cache unless model.cache says otherwise (runners.job: off)


@dataclass(frozen=True)
class JobSpec:
    """One job: its id (a hash of its identity, runners/identity.py), config and task."""

    job_id: str
    cfg: RootConfig
    task_id: str


def job_id(cfg: RootConfig, task: Task | str) -> str:
    """Readable and deterministic: the same job identity (runners/identity.py) always gives the same id.

    `task` is the task, or its id (then the benchmark is loaded to read the task's content)."""
    if isinstance(task, str):
        task = load_benchmark(cfg.benchmark).task(task)
    return _readable_id(cfg, task.id, identity_digest(cfg, task))


def _readable_id(cfg: RootConfig, task_id: str, digest: str) -> str:
    parts = (cfg.benchmark.label, task_id, cfg.method.name, cfg.model.id, f"s{cfg.seed}", digest[:10])
    return "__".join(_SAFE.sub("-", str(p)) for p in parts)


def split_overrides(overrides: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Separate plain axis overrides (`model=scripted`, `seed=3`), which narrow an axis, from the rest,
    which apply to every job. `grid.*` overrides are already in the composed grid node; an axis they
    list is not narrowed (its plain override only chose the root's group: `runners.cli.root_choices`)."""
    narrowed: dict[str, list[str]] = {}
    rest: list[str] = []
    listed = listed_axes(overrides)
    for o in overrides:
        key, _, value = o.partition("=")
        if key in (*AXES, "seed"):
            if key not in listed:
                narrowed[key] = [value]
        elif not key.startswith(("grid.", "hydra.", "experiment")):
            rest.append(o)
    return narrowed, rest


def grid_axes(root: RootConfig, overrides: list[str]) -> tuple[dict[str, list[str]], list[int]]:
    """The values of each axis (the grid's lists, narrowed by plain overrides) and the seeds, checked."""
    narrowed, _ = split_overrides(overrides)
    axes = {g: [str(n) for n in narrowed.get(g, getattr(root.grid, g))] for g in AXES}
    seeds = [int(s) for s in narrowed.get("seed", root.grid.seed)]
    for group, names in axes.items():
        if not names:
            raise ConfigError(f"grid.{group} is empty; give at least one {group} name")
        for name in names:
            check_choice(group, name)
    if not seeds:
        raise ConfigError("grid.seed is empty; give at least one seed")
    return axes, seeds


def cells(root: RootConfig, overrides: list[str], experiment: str | None) -> list[RootConfig]:
    """One composed config per benchmark × method × model × seed (in that nesting order), validated
    before anything runs."""
    axes, seeds = grid_axes(root, overrides)
    _, rest = split_overrides(overrides)
    base = [f"experiment={experiment}"] if experiment else []
    return [cfg for b, m, mo in itertools.product(axes["benchmark"], axes["method"], axes["model"])
            for cfg in _seeded([*base, f"benchmark={b}", f"method={m}", f"model={mo}"], seeds, rest)]  # fmt: skip


def _seeded(choices: list[str], seeds: list[int], rest: list[str]) -> list[RootConfig]:
    """The cell's config for each seed. When nothing interpolates (`${seed}`), they differ in `seed`
    only, so Hydra composes once per cell, not once per seed (0.2-0.4 s each)."""
    with _cell_errors(choices):
        first = compose("config", overrides=[*choices, f"seed={seeds[0]}", *rest])
        if "${" in OmegaConf.to_yaml(first):
            rest_seeds = [to_root(compose("config", overrides=[*choices, f"seed={s}", *rest])) for s in seeds[1:]]
            return [to_root(first), *rest_seeds]
        cfg = to_root(first)
    return [cfg if s == seeds[0] else dataclasses.replace(cfg, seed=s) for s in seeds]


@contextmanager
def _cell_errors(choices: list[str]) -> Iterator[None]:
    """A cell that does not compose is one line naming the cell and the setting."""
    try:
        yield
    except (HydraException, OmegaConfBaseException) as e:
        cell = " ".join(c for c in choices if not c.startswith("experiment="))
        lines = [line.strip() for line in f"{e}\n{e.__cause__ or ''}".splitlines() if line.strip()]
        why = next((line for line in lines if " not in " in line), lines[0] if lines else type(e).__name__)
        raise ConfigError(
            f"grid cell {cell}: {why}; every override applies to every cell, so a setting of one model kind "
            "or benchmark cannot go with a grid list of another kind: run them as separate sweeps"
        ) from None


def compose_sweep(overrides: list[str], choices: list[str]) -> tuple[RootConfig, str | None, list[RootConfig]]:
    """The sweep's root config, its experiment and its cells, composed as the sweep composes them but
    outside `hydra.main` (slurm.launch, `--cfg job`); `choices` are `runners.cli.root_choices(overrides)`."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import open_dict

    from runners.schema import CONF_DIR, register

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        composed = compose("config", overrides=[*choices, *overrides], return_hydra_config=True)
        choice = composed.hydra.runtime.choices.get("experiment")
        experiment = None if choice in (None, "null") else str(choice)
        with open_dict(composed):
            del composed["hydra"]
        root = to_root(composed)
        return root, experiment, cells(root, list(overrides), experiment)


def expand(root: RootConfig, overrides: list[str], experiment: str | None) -> list[JobSpec]:
    """All jobs of the sweep: every cell times its benchmark's tasks (or `grid.tasks`); raises
    `runners.preflight.ConfigError` for a config that cannot run."""
    specs: list[JobSpec] = []
    tasks: dict[str, tuple[list[Task], dict[str, str]]] = {}
    configs = cells(root, overrides, experiment)
    check_configs(configs)  # every check that needs no task, before any benchmark is loaded
    for cfg in configs:
        if cfg.model.cache is None:
            cfg.model.cache = SWEEP_CACHE  # not part of the id: how calls are fetched, not which
        key = repr(cfg.benchmark)
        if key not in tasks:  # each task's content is hashed once, not once per cell
            found = _tasks(cfg, root.grid.tasks)
            tasks[key] = (found, task_digests(found))
        found, digests = tasks[key]
        check_tasks(cfg, [t.id for t in found])
        cell = CellDigest(cfg)  # the config part once per cell: the same for all its tasks
        specs.extend(JobSpec(_readable_id(cfg, t.id, cell(digests[t.id])), cfg, t.id) for t in found)
    return specs


def _tasks(cfg: RootConfig, only: list[str]) -> list[Task]:
    tasks = benchmark_tasks(cfg)
    if not only:
        return tasks
    ids = [t.id for t in tasks]
    missing = [t for t in only if t not in ids]
    if missing:
        raise ConfigError(f"grid.tasks names unknown task(s) {missing} of {cfg.benchmark.name}; known: {ids[:20]}")
    return [t for t in tasks if t.id in only]
