"""Every hand-run benchmark still imports: a module that moves breaks `bench/` in a reader's hands
otherwise, since no test runs the benchmarks themselves (they are timed by hand)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Inspect AI's task runs in its own environment (it imports inspect_ai); bench/inspect/sweep.py runs in ours.
OWN_ENVIRONMENT = ("bench/inspect/task.py",)
MODULES = sorted(".".join(p.relative_to(REPO).with_suffix("").parts) for p in (REPO / "bench").rglob("*.py")
                 if not p.relative_to(REPO).as_posix().startswith(OWN_ENVIRONMENT))


@pytest.mark.parametrize("module", MODULES)
def test_a_benchmark_imports(module: str) -> None:
    importlib.import_module(module)
