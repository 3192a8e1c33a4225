"""Expanding the grid (benchmark × agent × method × model × seed × task) into job specs with stable ids.

Each cell's config is composed by Hydra from its axis values plus the user's other overrides, so a
job's config is exactly what `python -m runners.job` would build for the same choices.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from hydra import compose
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from runners.config.schema import (
    AXES,
    ConfigError,
    RootConfig,
    check_choice,
    listed_axes,
    searchpath_of,
    to_root,
)
from runners.core.task import Task
from runners.job.identity import CellDigest, JobSpec, readable_id, task_digests
from runners.models.call_cache import SWEEP_CACHE
from runners.preflight.config_checks import benchmark_tasks, check_configs, check_tasks
from runners.preflight.gpus import check_gpus
from runners.preflight.refusals import Refusals

HARNESS_KEY = "agent.harness"


def split_overrides(overrides: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Separate plain axis overrides (`model=scripted`, `seed=3`), which narrow an axis, from the rest,
    which apply to every job. `grid.*` overrides are already in the composed grid node; an axis they
    list is not narrowed (its plain override only chose the root's group: `runners.preflight.command_line.root_choices`)."""
    narrowed: dict[str, list[str]] = {}
    rest: list[str] = []
    listed = listed_axes(overrides)
    for o in overrides:
        key, _, value = o.partition("=")
        if key == HARNESS_KEY:  # the harness's own setting is its axis's choice: `agent.harness=codex` is `agent=codex`
            if "agent" in listed:
                raise ConfigError(f"{o} with grid.agent=[...]: give the harnesses in grid.agent only (or one as agent={value})")
            key = "agent"
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
    searchpath = searchpath_of(overrides)  # configs of yours outside the checkout (`hydra.searchpath=[file://DIR]`)
    for group, names in axes.items():
        if not names:
            raise ConfigError(f"grid.{group} is empty; give at least one {group} name")
        for name in names:
            check_choice(group, name, searchpath)
    if not seeds:
        raise ConfigError("grid.seed is empty; give at least one seed")
    return axes, seeds


def cells(root: RootConfig, overrides: list[str], experiment: str | None) -> list[RootConfig]:
    """One composed config per benchmark × agent (harness) × method × model × seed (in that nesting
    order), validated before anything runs."""
    axes, seeds = grid_axes(root, overrides)
    _, rest = split_overrides(overrides)
    base = [f"experiment={experiment}"] if experiment else []
    base += [o for o in overrides if o.partition("=")[0].lstrip("+") == "hydra.searchpath"]  # each cell finds your configs too
    return [cfg for values in itertools.product(*(axes[a] for a in AXES))
            for cfg in _seeded([*base, *(f"{a}={v}" for a, v in zip(AXES, values, strict=True))], seeds, rest)]


def _seeded(choices: list[str], seeds: list[int], rest: list[str]) -> list[RootConfig]:
    """The cell's config for each seed. When nothing interpolates (`${seed}`), they differ in `seed`
    only, so Hydra composes once per cell, not once per seed (0.2-0.4 s each)."""
    with _cell_errors(choices):
        first = compose("config", overrides=[*choices, f"seed={seeds[0]}", *rest])
        if "${" in OmegaConf.to_yaml(first):
            rest_seeds = [to_root(compose("config", overrides=[*choices, f"seed={s}", *rest]), SWEEP_CACHE) for s in seeds[1:]]
            return [to_root(first, SWEEP_CACHE), *rest_seeds]
        cfg = to_root(first, SWEEP_CACHE)
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
    outside `hydra.main` (slurm.launch, `--cfg job`); `choices` are `runners.preflight.command_line.root_choices(overrides)`."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import open_dict

    from runners.config.schema import CONF_DIR, register

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        composed = compose("config", overrides=[*choices, *overrides], return_hydra_config=True)
        choice = composed.hydra.runtime.choices.get("experiment")
        experiment = None if choice in (None, "null") else str(choice)
        with open_dict(composed):
            del composed["hydra"]
        root = to_root(composed, SWEEP_CACHE)
        return root, experiment, cells(root, list(overrides), experiment)


def expand(root: RootConfig, overrides: list[str], experiment: str | None, configs: list[RootConfig] | None = None) -> list[JobSpec]:
    """All jobs of the sweep: every cell times its benchmark's tasks (or `grid.tasks`); raises
    `runners.preflight.config_checks.ConfigError` for a config that cannot run. `configs`: the
    cells, when they are composed already (`compose_sweep`)."""
    specs: list[JobSpec] = []
    configs = cells(root, overrides, experiment) if configs is None else configs
    refusals = Refusals()  # every refusal at once: the configs', the GPUs, then each benchmark's data (as check_sweep)
    refusals.run(check_configs, configs)
    refusals.run(check_gpus, configs)
    loaded = {key: refusals.run(_tasks, cfg, root.grid.tasks) for key, cfg in {repr(c.benchmark): c for c in configs}.items()}
    refusals.raise_any()
    tasks = {key: (found, task_digests(found)) for key, found in loaded.items() if found is not None}  # hashed once, not once per cell
    for cfg in configs:
        found, digests = tasks[repr(cfg.benchmark)]
        refusals.run(check_tasks, cfg, [t.id for t in found])
        cell = CellDigest(cfg)  # the config part once per cell: the same for all its tasks
        specs.extend(JobSpec(readable_id(cfg, t.id, cell(digests[t.id])), cfg, t.id) for t in found)
    refusals.raise_any()
    return specs


def check_command_line(overrides: list[str]) -> None:
    """The sweep of these overrides composed and checked as its driver would, outside Hydra's `main`
    (raising what either refuses): `runners.preflight.command_line.every_refusal` runs it again with
    each refused key left out, so that one run names every refusal."""
    from runners.preflight.command_line import root_choices

    root, experiment, configs = compose_sweep(overrides, root_choices(overrides))
    expand(root, overrides, experiment, configs)


def _tasks(cfg: RootConfig, only: list[str]) -> list[Task]:
    tasks = benchmark_tasks(cfg)
    if not only:
        return tasks
    ids = [t.id for t in tasks]
    missing = [t for t in only if t not in ids]
    if missing:
        raise ConfigError(f"grid.tasks names unknown task(s) {missing} of {cfg.benchmark.name}; known: {ids[:20]}")
    return [t for t in tasks if t.id in only]


T = TypeVar("T")


# Job-array slices of a grid (`grid.slice=I/N`): which specs array task I of N runs.
def slice_specs(specs: Sequence[T], index: int, count: int) -> list[T]:
    """Array task `index` of `count`: every `count`-th spec from `index`. Each spec lands in exactly
    one slice, and every slice mixes all cells, so slices take about equally long."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"grid.slice={index}/{count} is not a slice: need 0 <= I < N, e.g. grid.slice=0/4")
    return list(specs[index::count])


def parse_slice(text: str) -> tuple[int, int]:
    """`"I/N"` -> (I, N), with an error that shows the expected form."""
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"grid.slice={text!r} is not of the form I/N (e.g. grid.slice=0/4)") from None
    slice_specs([], index, count)
    return index, count
