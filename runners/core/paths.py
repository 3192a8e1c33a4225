"""Paths a user gives, made absolute once, at the entry point, against the folder the command was
started in.

Every later process (Ray actors, the extraction workers, evaluator sandboxes, Slurm jobs) has a
working folder of its own, so a relative path that reaches one names another file, or none. A
config field that holds a path says so on its dataclass (`path_field`); `to_root`
(runners/config/schema.py) walks the config and resolves every such field, and nothing else does.

Two kinds: `PATH` is always a file or folder of this machine; `PATH_OR_NAME` is one when it names
something that exists there, else a name the consumer looks up elsewhere (a Hugging Face model id, a
shipped selection or pricing file, a command on PATH), kept as given.
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

PATH = "path"
PATH_OR_NAME = "path_or_name"
KEY = "path"  # the field metadata key
_started_in: ContextVar[Path | None] = ContextVar("started_in", default=None)


def path_field(default: Any = None, *, kind: str = PATH, list_of: bool = False) -> Any:
    """A dataclass field holding a path (or, with `list_of`, a list of paths) of kind `kind`."""
    if list_of:
        return dataclasses.field(default_factory=list, metadata={KEY: kind})
    return dataclasses.field(default=default, metadata={KEY: kind})


def path_kind(f: dataclasses.Field[Any]) -> str | None:
    """The path kind a field declares (None: not a path)."""
    return f.metadata.get(KEY)


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
