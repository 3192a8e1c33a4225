"""The built-in benchmark generator: three suites in the native format, deterministic by seed.

    python -m eval.benchmarks.builtin --out DIR --seed N [--suite workspace|company|qa ...]

Writes `DIR/<suite>/tasks.jsonl`, `DIR/<suite>/workspaces/…` and `DIR/<suite>/solutions/<id>.jsonl`
(a scripted reference solution per task, outside the workspaces). Same seed, same bytes.
"""

from __future__ import annotations

import importlib
import random
from pathlib import Path

from eval.benchmarks.builtin.writer import SuiteWriter

# Bump when generated content changes, so that cached copies are regenerated.
GENERATOR_VERSION = "v3"
SUITES = ("workspace", "company", "qa")
_MODULES = {"workspace": "eval.benchmarks.builtin.workspace_suite", "company": "eval.benchmarks.builtin.company_suite", "qa": "eval.benchmarks.builtin.qa_suite"}


def generate(out: Path, seed: int, suites: tuple[str, ...] = SUITES) -> None:
    """Write the chosen suites under `out` (which may exist; suite folders must not)."""
    for suite in suites:
        if suite not in _MODULES:
            raise ValueError(f"unknown suite {suite!r}; valid suites: {', '.join(SUITES)}")
        root = Path(out) / suite
        if root.exists():
            raise FileExistsError(f"{root} already exists; generate into a fresh folder")
        writer = SuiteWriter(root)
        importlib.import_module(_MODULES[suite]).build(writer, random.Random(f"runningtab-builtin-{seed}-{suite}"))
        writer.close()
