"""What both entry points (`runners.sweep`, `runners.job`) check on the command line before Hydra runs.

The command line is Hydra's, unchanged (`--cfg job`, `--help`, `--info` work as Hydra users expect).
Refused with a message instead of a Hydra traceback or a surprise: multirun (the sweep is its own
multirun, the `grid.*` lists; Hydra's would run whole sweeps one after another and leave a
`multirun/` folder behind) and `GROUP=null` (Hydra cannot set a config group to null).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from runners.schema import AXES, CONF_DIR, group_options, register


def multirun_refusal(argv: Sequence[str], prog: str) -> str | None:
    """The message refusing `-m`/`--multirun` (or `hydra.mode=MULTIRUN`), None when not asked for.

    Parsed with Hydra's own argument parser, so abbreviations (`--multi`) are caught too."""
    from hydra._internal.utils import get_args_parser

    args, _ = get_args_parser().parse_known_args(list(argv))
    overrides = [str(o) for o in args.overrides or []]
    asked = args.multirun or any(o.replace(" ", "").lower() == "hydra.mode=multirun" for o in overrides)
    if not asked:
        return None
    kept = [o for o in overrides if not o.lower().startswith("hydra.mode")]
    return f"error: {prog} does not take -m/--multirun: {_grid_hint(kept, prog)}"


def _grid_hint(overrides: list[str], prog: str) -> str:
    grid = []
    for o in overrides:
        key, _, value = o.partition("=")
        if key in (*AXES, "seed") and "," in value:
            grid.append(f"grid.{key}=[{value}]")
    example = " ".join(grid) or "grid.method=[dci,runningtab] grid.seed=[0,1,2]"
    if prog == "runners.job":
        return f"it runs one job; run several with python -m runners.sweep and the grid's lists, e.g. {example}"
    return (f"a sweep is already the product of its grid's lists; give them as e.g. {example} "
            "(other settings take one value per sweep: run one sweep per value, each with sweep=NAME)")  # fmt: skip


def null_group_refusal(argv: Sequence[str]) -> str | None:
    """The message for `experiment=null` (or any config group set to null), None when there is none."""
    for arg in argv:
        group, _, value = arg.partition("=")
        if group.isidentifier() and value.lower() in ("null", "none") and (CONF_DIR / group).is_dir() \
                and value not in group_options(group):  # judge=none and tracker=none are choices
            if group == "experiment":
                return f"error: {arg}: no experiment is the default; leave it out (or write ~experiment)"
            return f"error: {arg}: a config group cannot be null; choose one of: {', '.join(group_options(group))}"
    return None


def root_choices(argv: Sequence[str]) -> list[str]:
    """`AXIS=FIRST` for each grid axis the command line lists (`grid.model=[scripted,smollm2]`) but
    does not name (`model=`): the sweep's root is then composed as its grid's first cell, so that a
    setting of that kind (`model.script=…`) fits it. Such a choice does not narrow the grid
    (`runners.grid.split_overrides`) and does not enter the sweep's name."""
    named = {a.partition("=")[0] for a in argv}
    out = []
    for axis in AXES:
        listed = next((a.partition("=")[2] for a in reversed(argv) if a.partition("=")[0] == f"grid.{axis}"), None)  # the last wins
        first = (listed or "").strip("[] ").split(",")[0].strip(" '\"")
        if first and axis not in named:
            out.append(f"{axis}={first}")
    return out


def run_cli(main: Callable[[], None], prog: str, argv: Sequence[str] | None = None) -> None:
    """Refuse multirun and null groups, then hand the command line to Hydra's `main` (the sweep's
    with its `root_choices` first)."""
    args = list(sys.argv[1:] if argv is None else argv)
    message = multirun_refusal(args, prog) or null_group_refusal(args)
    if message:
        sys.exit(message)
    if prog == "runners.sweep":
        from runners.show import asks_for_job_config, show_grid

        if asks_for_job_config(args):  # the grid's config, not the root's defaults (runners/show.py)
            sys.exit(show_grid(args, root_choices(args)))
        sys.argv = [sys.argv[0], *root_choices(args), *args]  # first: after a flag (`--cfg job`) they would not parse
    register()
    main()
