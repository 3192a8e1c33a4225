"""`python -m runners.sweep ... --cfg job`: the sweep's config as its grid defines it.

Hydra would print the root config, whose `benchmark` and `model` are the root's defaults (the
built-in benchmark, the embedded model), not what the grid runs. Printed here instead: the root's
settings, and under `benchmark`, `agent`, `method` and `model` each value of that axis as its cells compose
it (with the paths resolved from `data.*`); an axis with one value shows that one config, as
before. The last lines give the plan (jobs per benchmark, cost, time: runners/plan/), where its
records would go (the folder the sweep would use) and whether the sweep's preflight would let it
start (every refusal, each with its fix). `runningtab plan` prints those lines alone.
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


def show_grid(argv: Sequence[str], choices: list[str], full: bool = True) -> int:
    """Print the grid (`full`: its config too, `--cfg job`; else the plan alone, `runningtab plan`)."""
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from runners.sweep.grid import compose_sweep, grid_axes

    overrides = overrides_of(argv)
    try:
        root, experiment, configs = compose_sweep(overrides, choices)
        axes, seeds = grid_axes(root, overrides)
    except (ConfigError, HydraException, OmegaConfBaseException) as e:
        print(_refusal(e, overrides), file=sys.stderr)  # in the project's words, as without --cfg job
        return 1
    print(render(root, experiment, axes, seeds, configs, [*choices, *overrides], full), end="")
    return 0


def _refusal(error: Exception, overrides: list[str]) -> str:
    """What the run would say: every refusal of the command line when a key was refused, else the one."""
    from runners.config.schema import UnknownKeys
    from runners.preflight.command_line import composition_refusal, every_refusal
    from runners.sweep.grid import check_command_line

    if isinstance(error, UnknownKeys) or composition_refusal(error) is not None:
        return every_refusal(error, overrides, check_command_line)
    return f"error: {error}"


def render(root: RootConfig, experiment: str | None, axes: dict[str, list[str]], seeds: list[int], configs: list[RootConfig],
           overrides: Sequence[str], full: bool = True) -> str:
    """The grid's config (`full`), its plan, the folder its records would go to, and the preflight's
    verdict, as comments (`full`) or plain lines."""
    from runners.preflight.config_checks import check_sweep
    from runners.sweep.driver import sweep_dir_for

    shown = [a for a in AXES if a != "agent" or axes[a] != [OWN_LOOP]]  # our own harness alone goes unsaid
    sizes = [len(axes[a]) for a in shown] + [len(seeds)]
    names = [*shown, "seed"]
    head = (f"{'experiment=' + experiment if experiment else 'no experiment'}: the sweep's grid, "
            f"{' x '.join(f'{n} {a}(s)' for n, a in zip(sizes, names, strict=True))} = "
            f"{len(configs)} cell(s), each over its benchmark's tasks.")
    try:
        check_sweep(configs)
        verdict = "passed (each cell's settings, the models' and judges' keys, the GPUs, the data of every benchmark)"
    except ConfigError as e:
        verdict = f"would refuse to start: {e}"
    shape = " x ".join(f"{n} {a}(s)" for n, a in zip(sizes[1:], names[1:], strict=True))
    said = [head, *_plan_lines(axes, seeds, configs, shape), f"records: {sweep_dir_for(root, experiment, overrides)}",
            f"preflight: {verdict}"]
    text = "\n".join(said).splitlines()
    if not full:
        return "\n".join(text) + "\n"
    body = yaml.safe_dump(_config_doc(root, axes, seeds, configs), sort_keys=False, allow_unicode=True)
    comments = [f"# {line}" for line in text]
    return "\n".join([comments[0], "# An axis with several values shows each as its cells compose it."]) + "\n" + body + \
        "\n".join(comments[1:]) + "\n"


def _plan_lines(axes: dict[str, list[str]], seeds: list[int], configs: list[RootConfig], shape: str) -> list[str]:
    from runners.plan.estimate import make_plan
    from runners.plan.render import lines

    try:
        return lines(make_plan(axes, seeds, configs), configs, shape)
    except ConfigError as e:  # a pilot or a token file that cannot be read: the plan says so, the rest still shows
        return [f"plan: cannot be made: {e}"]


def _config_doc(root: RootConfig, axes: dict[str, list[str]], seeds: list[int], configs: list[RootConfig]) -> dict[str, Any]:
    """The root's settings, and under each axis each of its values as its cells compose it."""
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
    return doc


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
