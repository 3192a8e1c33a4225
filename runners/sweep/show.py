"""`python -m runners.sweep ... --cfg job`: the sweep's config as its grid defines it.

Hydra would print the root config, whose `benchmark` and `model` are the root's defaults (the
built-in benchmark, the embedded model), not what the grid runs. Printed here instead: the root's
settings, and under `benchmark`, `agent`, `method` and `model` each value of that axis as its cells compose
it (with the paths resolved from `data.*`); an axis with one value shows that one config, as
before. The last lines say where its records would go (the folder the sweep would use) and
whether the sweep's preflight would let it start (every refusal, each with its fix).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Sequence
from typing import Any

import yaml

from runners.config.schema import AXES, ConfigError, RootConfig
from runners.core.harness_names import OWN_LOOP


def asks_for_job_config(argv: Sequence[str]) -> bool:
    """`--cfg job` / `-c job` with no other Hydra flag that changes what is printed."""
    args = list(argv)
    pairs = {(a, b) for a, b in itertools.pairwise(args)}
    asked = bool(pairs & {("--cfg", "job"), ("-c", "job")}) or "--cfg=job" in args
    return asked and not any(a in ("-p", "--package", "--help", "-h", "--info", "--hydra-help") for a in args)


def overrides_of(argv: Sequence[str]) -> list[str]:
    """The overrides: the command line without `--cfg job` and `--resolve` (values are resolved anyway)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("--cfg", "-c"):
            skip = True
        elif a not in ("--cfg=job", "--resolve"):
            out.append(a)
    return out


def show_grid(argv: Sequence[str], choices: list[str]) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from runners.preflight.command_line import composition_refusal
    from runners.sweep.grid import compose_sweep, grid_axes

    overrides = overrides_of(argv)
    try:
        root, experiment, configs = compose_sweep(overrides, choices)
        axes, seeds = grid_axes(root, overrides)
    except (ConfigError, HydraException, OmegaConfBaseException) as e:
        print(composition_refusal(e) or f"error: {e}", file=sys.stderr)  # in the project's words, as without --cfg job
        return 1
    print(render(root, experiment, axes, seeds, configs, [*choices, *overrides]), end="")
    return 0


def render(root: RootConfig, experiment: str | None, axes: dict[str, list[str]], seeds: list[int], configs: list[RootConfig],
           overrides: Sequence[str]) -> str:
    """The grid's config, the folder its records would go to, and the preflight's verdict, as comments."""
    from runners.preflight.config_checks import check_sweep
    from runners.sweep.driver import sweep_dir_for

    doc: dict[str, Any] = dataclasses.asdict(root)
    cells = zip(itertools.product(*(axes[a] for a in AXES), seeds), configs, strict=True)
    by_axis: dict[str, dict[str, dict[str, Any]]] = {a: {} for a in AXES}
    varied = [a for a in AXES if len(axes[a]) > 1] + (["seed"] if len(seeds) > 1 else [])
    for key, cfg in cells:
        cell = " ".join(f"{a}={v}" for a, v in zip([*AXES, "seed"], key, strict=True) if a in varied)
        for axis, name in zip(AXES, key, strict=False):
            by_axis[axis].setdefault(name, {})[cell] = dataclasses.asdict(getattr(cfg, axis))
    for axis, names in by_axis.items():
        values = {k: v for name, per_cell in names.items() for k, v in _as_composed(name, per_cell).items()}
        doc[axis] = values if len(values) > 1 else next(iter(values.values()))
    doc["seed"] = seeds if len(seeds) > 1 else seeds[0]
    shown = [a for a in AXES if a != "agent" or axes[a] != [OWN_LOOP]]  # our own harness alone goes unsaid
    sizes = [len(axes[a]) for a in shown] + [len(seeds)]
    head = (f"# {'experiment=' + experiment if experiment else 'no experiment'}: the sweep's grid, "
            f"{' x '.join(f'{n} {a}(s)' for n, a in zip(sizes, [*shown, 'seed'], strict=True))} = "
            f"{len(configs)} cell(s), each over its benchmark's tasks.\n"
            "# An axis with several values shows each as its cells compose it.\n")
    try:
        check_sweep(configs)
        verdict = "passed (each cell's settings, the models' and judges' keys, the data of every benchmark)"
    except ConfigError as e:
        verdict = f"would refuse to start: {e}".replace("\n", "\n# ")
    records = f"# records: {sweep_dir_for(root, experiment, overrides)}\n"
    return head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True) + records + f"# preflight: {verdict}\n"


def _as_composed(name: str, per_cell: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """An axis value as its cells compose it: once, or once per cell when an override interpolates
    another axis (`model.script_dir=DIR/${agent.harness}`), each then named by its cell."""
    first = next(iter(per_cell.values()))
    if all(v == first for v in per_cell.values()):
        return {name: first}
    return {f"{name} ({cell})": v for cell, v in per_cell.items()}


def show_if_asked(args: list[str], root_choices: list[str]) -> int | None:
    """The sweep's `--cfg job`: print its grid and return the exit code; None when not asked."""
    return show_grid(args, root_choices) if asks_for_job_config(args) else None
