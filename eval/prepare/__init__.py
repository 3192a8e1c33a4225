"""Getting and preparing the real benchmarks' data: `python -m eval.prepare NAME --out DATA`.

Each preparer writes `DATA/<name>/`, the folder its loader reads, with a `manifest.json` (sources,
revisions, file count, digest; `eval/prepare/manifest.py`), and prints the one override that points
the benchmark at it: `data.<name>=DATA/<name>`. That override works in a grid of several benchmarks
(each cell reads its own benchmark's entry), stays out of job ids (ids hash the tasks' content), and
the sweep's preflight checks the folder against its manifest before any job runs.

    workspace_bench   eval/prepare/workspace_bench.py   Hugging Face datasets (Lite or full) + role workspaces
    agentcompany      eval/prepare/agentcompany.py      the repository's tasks at a pinned commit + the ownCloud image's files
    officeqa          eval/prepare/officeqa.py          Hugging Face dataset: questions + parsed corpus
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from typing import Any

from eval.config import DataConfig
from eval.prepare.manifest import ManifestError, check

PREPARERS = {"workspace_bench": "eval.prepare.workspace_bench", "agentcompany": "eval.prepare.agentcompany",
             "officeqa": "eval.prepare.officeqa"}


class DataError(ValueError):
    """A `data.<name>` entry that cannot apply; the message says which and how to fix it."""


def module(name: str) -> Any:
    if name not in PREPARERS:
        raise DataError(f"data.{name}: no benchmark of that name is prepared by eval.prepare; data roots are named by "
                        f"benchmark loader: {', '.join(PREPARERS)}")
    return importlib.import_module(PREPARERS[name])


def data_root(data: DataConfig, name: str) -> str | None:
    """The prepared folder `data` names for benchmark loader `name` (None: none, or not a preparable benchmark)."""
    return getattr(data, name, None) if name in PREPARERS else None


def with_data(benchmark: Any, data: DataConfig) -> Any:
    """The benchmark's config with its paths taken from its `data.<loader name>` entry (unchanged when
    the grid's entries name other benchmarks). A path also set by hand is an error: one place says where data is."""
    root = data_root(data, benchmark.name)
    if not root:
        return benchmark
    fields = module(benchmark.name).configure(Path(root).expanduser().resolve())
    clash = [f"benchmark.{k}" for k in fields if getattr(benchmark, k, None) not in (None, "")]
    if clash:
        raise DataError(f"data.{benchmark.name}={root} and {', '.join(clash)} both say where the data is: give one")
    return dataclasses.replace(benchmark, **fields)


def check_data(name: str, root: str, full: bool = False) -> dict[str, Any]:
    """The prepared folder `root` of benchmark `name` exists and matches its manifest (ManifestError),
    over the parts its loader reads (the preparer's PARTS: the manifest's own are checked against them)."""
    return check(Path(root).expanduser().resolve(), name, list(module(name).PARTS), full=full)


__all__ = ["PREPARERS", "DataError", "ManifestError", "check_data", "data_root", "module", "with_data"]
