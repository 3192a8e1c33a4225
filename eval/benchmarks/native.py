"""`benchmark=native benchmark.path=DIR`: any folder in the native format (eval/benchmarks/native_format.py)."""

from __future__ import annotations

from pathlib import Path

from eval.benchmarks.base import BenchmarkError
from eval.benchmarks.native_format import load_native
from eval.config import BenchmarkConfig
from runners.core.task import Task


def load(cfg: BenchmarkConfig) -> list[Task]:
    if not cfg.path:
        raise BenchmarkError("benchmark=native needs benchmark.path (a folder with tasks.jsonl and workspaces/)")
    return load_native(Path(cfg.path).expanduser())
