"""What both entry points (`runners.sweep`, `runners.job`) check on the command line before Hydra runs.

The command line is Hydra's, unchanged (`--cfg job`, `--help`, `--info` work as Hydra users expect).
Refused with a message instead of a Hydra traceback or a surprise: multirun (the sweep is its own
multirun, the `grid.*` lists; Hydra's would run whole sweeps one after another and leave a
`multirun/` folder behind), a comma list, range or glob as a value (Hydra's hint, "add
--multirun", would lead there) and `GROUP=null` (Hydra cannot set a config group to null).

What Hydra itself refuses while composing is said in one `error:` line too, in the project's words
where Hydra's hint would mislead: a key the schema does not have gets the nearest known keys (as
`+key=` does, `runners/config/schema.py`), never "To append to your config use +key=value".
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Sequence

from runners.config.schema import (
    AXES,
    CONF_DIR,
    ConfigError,
    group_options,
    register,
    searchpath_of,
    unknown_key_message,
)


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


def sweep_value_refusal(argv: Sequence[str], prog: str) -> str | None:
    """The message for a value Hydra reads as a sweep (`seed=0,1`, `grid.seed=0,1`, `range(…)`,
    `glob(…)`), where Hydra would answer "add --multirun"; None when there is none."""
    from hydra._internal.utils import get_args_parser
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    args, _ = get_args_parser().parse_known_args(list(argv))
    parser = OverridesParser.create()
    for arg in args.overrides or []:
        try:
            override = parser.parse_override(arg)
        except HydraException:
            continue  # Hydra says what is wrong with its syntax
        if not override.is_sweep_override():
            continue
        key, raw = override.key_or_group, arg.partition("=")[2]
        try:
            values = ",".join(override.sweep_string_iterator())
        except HydraException:  # a glob: its options are the config group's
            values = "…"
        axis = key.removeprefix("grid.")
        if axis in (*AXES, "seed", "tasks") and prog == "runners.job":
            return f"error: {arg}: runners.job runs one job, so give one value; run several with python -m runners.sweep grid.{axis}=[{values}]"
        if axis in (*AXES, "seed", "tasks"):
            return f"error: {arg}: the sweep's values of an axis are a list in brackets: grid.{axis}=[{values}] (the sweep runs their product)"
        one = "runners.job takes one value per setting" if prog == "runners.job" else \
            "a setting takes one value per sweep: run one sweep per value, each with its own sweep=NAME"
        return f"error: {arg}: {one}; a text value with a comma is quoted: {key}='{raw}'"
    return None


def composition_refusal(error: BaseException) -> str | None:
    """One `error:` line for what Hydra refused while composing (None: not a composition error)."""
    text = _refused(error)
    return None if text is None else f"error: {text}"


def _refused(error: BaseException, searchpath: Sequence[str] = ()) -> str | None:
    """What Hydra refused, in the project's words (None: not a composition error); `searchpath`:
    the command line's `hydra.searchpath`, whose folders offer options too."""
    from hydra.errors import HydraException, MissingConfigException
    from omegaconf.errors import OmegaConfBaseException

    if not isinstance(error, HydraException):
        return None
    key, known = _refused_key(error)
    if key is not None and known is not None:
        return _of_another_kind(key, known) or unknown_key_message(key, known)
    if isinstance(error, MissingConfigException) and error.missing_cfg_file and (CONF_DIR / error.missing_cfg_file).parent.is_dir():
        group, _, name = error.missing_cfg_file.rpartition("/")
        where = " (conf/ and hydra.searchpath)" if searchpath else ""
        return f"unknown {group} {name!r}; valid {group} names{where}: {', '.join(group_options(group, searchpath))}"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if isinstance(error.__cause__, OmegaConfBaseException):
        lines.append(str(error.__cause__).splitlines()[0])
    return "; ".join(lines)


def _refused_key(error: BaseException) -> tuple[str | None, type | None]:
    """The key a composition error refused (one the schema, or this kind of config, does not have)
    and the config class that lacks it; (None, None) for any other error."""
    from hydra.errors import HydraException
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError

    cause = error.__cause__ if isinstance(error, HydraException) else None
    known = getattr(cause, "object_type", None)
    if isinstance(cause, ConfigAttributeError | ConfigKeyError) and dataclasses.is_dataclass(known):
        return str(cause.full_key), known  # type: ignore[return-value]
    return None, None


def every_refusal(first: BaseException, overrides: Sequence[str], check: Callable[[list[str]], object]) -> str:
    """The `error:` text for `first` together with every other refusal of the same command line
    (`run_cli` asks `_refused` first whether `first` is one at all).

    What Hydra refuses stops its composition at the first key it does not know, and the entry
    point's own checks (keys, data, prices, the task file) never ran: a user with a misspelled key, a
    missing folder and an unset key would learn of one per run. So each refused key's overrides are
    left out and the command line composed and checked again (`check(overrides)`: the entry point's
    composition and preflight, raising what they refuse), until it passes or refuses something
    other than a key. The mains call it too, for the keys `to_root` refuses (`UnknownKeys`:
    `+agent.max_turn=5`, which Hydra composes)."""
    from runners.config.schema import UnknownKeys
    from runners.preflight.refusals import ConfigErrors, messages_of

    messages: list[str] = []
    kept = list(overrides)
    error: BaseException | None = first
    for _ in range(len(kept) + 1):  # each round drops at least one override
        if error is None:
            break
        if isinstance(error, UnknownKeys):
            keys = list(error.keys)
            messages.extend(error.messages)
        elif isinstance(error, ConfigError):
            messages.extend(messages_of(error))
            break
        else:
            text = _refused(error, searchpath_of(overrides))
            if text is None:  # not a refusal (a failure of its own, said by the run itself)
                break
            messages.append(text)
            keys = _refused_overrides(error)
        dropped = [o for o in kept if _override_key(o) in keys]
        if not dropped:
            break
        kept = [o for o in kept if o not in dropped]
        error = _checked(check, kept)
    return f"error: {ConfigErrors(messages)}"


def _refused_overrides(error: BaseException) -> list[str]:
    """The override keys a composition error refused: a key no config has, or a group whose option
    does not exist (`model=nosuch`); [] when it names none."""
    from hydra.errors import MissingConfigException

    key, _ = _refused_key(error)
    if key is not None:
        return [key]
    if isinstance(error, MissingConfigException) and error.missing_cfg_file:
        return [error.missing_cfg_file.rpartition("/")[0].replace("/", ".")]
    return []


def _checked(check: Callable[[list[str]], object], overrides: list[str]) -> BaseException | None:
    """What `check` raises for these overrides (None: they pass)."""
    try:
        check(overrides)
    except Exception as e:  # noqa: BLE001 - sorted by `every_refusal`: a refusal it knows, or none
        return e
    return None


def _override_key(override: str) -> str:
    return override.partition("=")[0].lstrip("+~")


def _of_another_kind(key: str, cls: type) -> str | None:
    """For a setting of another kind of model or benchmark than the one chosen (`model.script` on a
    served model): which configs have it. None when no kind of the group has it."""
    from omegaconf import OmegaConf

    group, _, rest = key.partition(".")
    field = rest.partition(".")[0]
    if group == "model":
        from runners.models.registry import KINDS as names
        from runners.models.registry import config_class as class_of
    elif group == "benchmark":
        from eval.benchmarks import BENCHMARKS as names
        from eval.benchmarks import config_class as class_of
    else:
        return None
    kinds = [k for k in names.names() if (c := class_of(k)) is not None and field in {f.name for f in dataclasses.fields(c)}]
    selector = "kind" if group == "model" else "name"
    starts = [p.stem for p in sorted((CONF_DIR / group).glob("*.yaml")) if OmegaConf.load(p).get(selector) in kinds]
    if not starts:
        return None
    return (f"{group}.{field} is not a setting of this {group} ({cls.__name__}) but of {group} {' or '.join(kinds)}: "
            f"start from {' or '.join(f'{group}={s}' for s in starts)} and override from there{_data_hint(group, field, kinds)}")


def _data_hint(group: str, field: str, kinds: list[str]) -> str:
    """For a benchmark's data path (`benchmark.workspaces`): the `data.<name>` override, which every
    cell of a grid of benchmarks takes (its own path would be refused by the others)."""
    from pathlib import Path

    from eval.prepare import PREPARERS, module

    names = [k for k in kinds if group == "benchmark" and k in PREPARERS and field in module(k).configure(Path("DATA"))]
    return "".join(f"; or, in any grid, point it at prepared data: python -m eval.prepare {n} --out DATA, then data.{n}=DATA/{n}"
                   for n in names)


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
            "(other settings take one value per sweep: run one sweep per value, each with sweep=NAME)")


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
    (`runners.sweep.grid.split_overrides`) and does not enter the sweep's name."""
    named = {a.partition("=")[0] for a in argv}
    out = []
    for axis in AXES:
        listed = next((a.partition("=")[2] for a in reversed(argv) if a.partition("=")[0] == f"grid.{axis}"), None)  # the last wins
        first = (listed or "").strip("[] ").split(",")[0].strip(" '\"")
        if first and axis not in named:
            out.append(f"{axis}={first}")
    return out


_added: list[str] = []  # the root choices `run_cli` put before what was typed (`typed`)


def typed(overrides: Sequence[str]) -> list[str]:
    """Hydra's task overrides as the user typed them: without the root choices `run_cli` put first,
    so that a command printed back to the user (the resume line) says only what they said."""
    n = len(_added)
    return list(overrides[n:]) if n and list(overrides[:n]) == _added else list(overrides)


def run_cli(
    main: Callable[[], None], prog: str, argv: Sequence[str] | None = None,
    show: Callable[[list[str], list[str]], int | None] | None = None,
    check: Callable[[list[str]], object] | None = None,
) -> None:
    """Refuse multirun and null groups, then hand the command line to Hydra's `main` (the sweep's
    with its `root_choices` first). `show(args, root_choices)`: the sweep's own `--cfg job` (its grid,
    runners/sweep/show.py); None when the command line does not ask for it. `check(overrides)`: the
    entry point's composition and preflight outside Hydra's `main`, by which a refusal of Hydra's is
    said together with every other refusal of the command line (`every_refusal`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    message = multirun_refusal(args, prog) or null_group_refusal(args) or sweep_value_refusal(args, prog)
    if message:
        sys.exit(message)
    if prog == "runners.sweep":
        if show is not None and (shown := show(args, root_choices(args))) is not None:
            sys.exit(shown)
        _added[:] = root_choices(args)
        sys.argv = [sys.argv[0], *_added, *args]  # first: after a flag (`--cfg job`) they would not parse
    register()
    if os.environ.get("HYDRA_FULL_ERROR"):  # the user asked for Hydra's own traceback
        main()
        return
    os.environ["HYDRA_FULL_ERROR"] = "1"  # Hydra raises what it refuses, instead of printing its hints
    try:
        main()
    except Exception as e:
        if _refused(e) is None:
            raise
        sys.exit(every_refusal(e, overrides_typed(args), check) if check is not None else composition_refusal(e))


def overrides_typed(args: Sequence[str]) -> list[str]:
    """The overrides of a command line (Hydra's flags and their values left out)."""
    from hydra._internal.utils import get_args_parser

    parsed, _ = get_args_parser().parse_known_args(list(args))
    return [str(o) for o in parsed.overrides or []]
