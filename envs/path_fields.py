"""How a config field says it holds a path the user gives: the declaration alone, on the ground floor,
so that the environment's own config (`envs/config.py`) declares its paths without importing the
runner. Resolving them (against the folder a command was started in) is `runners/core/paths.py`.

Two kinds: `PATH` is always a file or folder of this machine; `PATH_OR_NAME` is one when it names
something that exists there, else a name the consumer looks up elsewhere (a Hugging Face model id, a
shipped selection or pricing file, a command on PATH), kept as given.
"""

from __future__ import annotations

import dataclasses
from typing import Any

PATH = "path"
PATH_OR_NAME = "path_or_name"
KEY = "path"  # the field metadata key


def path_field(default: Any = None, *, kind: str = PATH, list_of: bool = False) -> Any:
    """A dataclass field holding a path (or, with `list_of`, a list of paths) of kind `kind`."""
    if list_of:
        return dataclasses.field(default_factory=list, metadata={KEY: kind})
    return dataclasses.field(default=default, metadata={KEY: kind})


def path_kind(f: dataclasses.Field[Any]) -> str | None:
    """The path kind a field declares (None: not a path)."""
    return f.metadata.get(KEY)
