"""The built-in benchmark: generated on first use, then loaded as a native benchmark.

Generated into `<cache_dir>/builtin/<version>-seed<N>/` (or `benchmark.path`) atomically: into a
temp folder beside it, then renamed, so that concurrent jobs never see half a benchmark; the
loser of a race discards its copy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from eval.benchmarks.base import BenchmarkError
from eval.benchmarks.native_format import load_native
from eval.config import BenchmarkConfig, checkout_cache
from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH
from runners.core.task import Task

COMPLETE = ".complete"


@dataclass
class Config(BenchmarkConfig):
    """The built-in benchmark: `suite` (workspace | company | qa) and the generator's `seed`;
    generated on first use under `cache_dir` (default `<repo>/.cache`), or into `path` when set."""

    name: str = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default="builtin")
    suite: str = setting(Enters.SWEEP_NAME, default="workspace")  # which tasks: their content is in the id
    seed: int = setting(Enters.SWEEP_NAME, default=0)
    cache_dir: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)

    @property
    def label(self) -> str:
        """By suite; a plugin named on top of this group (`benchmark.name=pkg.mod`) keeps its name."""
        return f"builtin-{self.suite}" if self.name == "builtin" else self.name


def builtin_root(cfg: Config) -> Path:
    from eval.benchmarks.builtin import GENERATOR_VERSION

    if cfg.path:
        return Path(cfg.path).expanduser()
    return checkout_cache(cfg.cache_dir) / "builtin" / f"{GENERATOR_VERSION}-seed{cfg.seed}"


def ensure_generated(root: Path, seed: int) -> Path:
    """Generate the benchmark at `root` unless a complete one is there."""
    from eval.benchmarks.builtin import generate

    if (root / COMPLETE).is_file():
        return root
    if root.exists():
        raise BenchmarkError(
            f"{root} exists but is not a complete built-in benchmark (no {COMPLETE} marker, which generation writes "
            "once every suite is there); remove it to regenerate"
        )
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        generate(tmp, seed)
        (tmp / COMPLETE).write_text(f"seed {seed}\n")
        try:
            os.rename(tmp, root)
        except OSError:
            if not (root / COMPLETE).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def load(cfg: Config) -> list[Task]:
    from eval.benchmarks.builtin import SUITES

    if cfg.suite not in SUITES:
        raise BenchmarkError(f"unknown builtin suite {cfg.suite!r}; valid suites: {', '.join(SUITES)}")
    return load_native(ensure_generated(builtin_root(cfg), cfg.seed) / cfg.suite)
