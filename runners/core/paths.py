"""Paths a user gives, made absolute once, at the entry point, against the folder the command was
started in.

Every later process (Ray actors, the extraction workers, evaluator sandboxes, Slurm jobs) has a
working folder of its own, so a relative path that reaches one names another file, or none. A
config field that holds a path says so on its dataclass (`path_field`, declared in
`envs/path_fields.py` with its two kinds); `to_root` (runners/config/schema.py) walks the config and
resolves every such field, and nothing else does.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

# The declarations live on the ground floor (the environment's config declares its paths too).
from envs.path_fields import KEY as KEY
from envs.path_fields import PATH as PATH
from envs.path_fields import PATH_OR_NAME as PATH_OR_NAME
from envs.path_fields import path_field as path_field
from envs.path_fields import path_kind as path_kind

_started_in: ContextVar[Path | None] = ContextVar("started_in", default=None)


@contextmanager
def started_in(folder: Path) -> Iterator[None]:
    """Resolve against `folder` inside the block (a launcher composing a command for another folder: slurm.launch)."""
    token = _started_in.set(folder)
    try:
        yield
    finally:
        _started_in.reset(token)


def launch_dir() -> Path:
    """The folder the command was started in: Hydra's `runtime.cwd` under `hydra.main` (Hydra may
    change the working folder: `hydra.job.chdir`), else this process's working folder."""
    from hydra.core.hydra_config import HydraConfig

    given = _started_in.get()
    if given is not None:
        return given
    if HydraConfig.initialized():
        return Path(HydraConfig.get().runtime.cwd)
    return Path.cwd()


def absolute(value: str, base: Path, kind: str = PATH) -> str:
    """`value` as an absolute path against `base` (`~` expanded); a `PATH_OR_NAME` that names
    nothing there is a name and stays as it is."""
    p = Path(value).expanduser()
    if p.is_absolute():
        return value if value.startswith("/") else str(p)  # as given: the same text, the same job id
    there = base / p
    if kind == PATH_OR_NAME and not there.exists():
        return value
    return os.path.normpath(there)


def resolve_paths(obj: Any, base: Path) -> None:
    """Make every declared path field of the dataclass `obj` (and of the dataclasses it holds) absolute, in place."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        kind = path_kind(f)
        if kind is None:
            resolve_paths(value, base)
        elif isinstance(value, str) and value:
            setattr(obj, f.name, absolute(value, base, kind))
        elif isinstance(value, list):
            setattr(obj, f.name, [absolute(v, base, kind) if isinstance(v, str) and v else v for v in value])


def path_fields(obj: Any, prefix: str = "") -> dict[str, tuple[str, Any]]:
    """Every declared path field under `obj` by dotted key: (its kind, its value)."""
    out: dict[str, tuple[str, Any]] = {}
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return out
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        kind = path_kind(f)
        if kind is None:
            out.update(path_fields(value, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = (kind, value)
    return out


def absolute_overrides(overrides: Sequence[str], configs: Iterable[Any], base: Path) -> list[str]:
    """`overrides` with each one that sets a path field of any of `configs` (`key=value`, a plain
    value) made absolute against `base`: what a command run elsewhere (a Slurm job) is given."""
    kinds: dict[str, str] = {}
    for cfg in configs:
        kinds.update({k: kind for k, (kind, _) in path_fields(cfg).items()})
    out = []
    for o in overrides:
        key, eq, value = o.partition("=")
        kind = kinds.get(key.lstrip("+~"))
        if eq and kind and value and value[0] not in "[{'\"$":
            o = f"{key}={absolute(value, base, kind)}"
        out.append(o)
    return out


def user_path(text: str) -> Path:
    """An argparse `type`: a path on the command line, absolute against the folder the command was started in."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return Path(absolute(text, Path.cwd()))
