"""Benchmarks by name: `load_benchmark(cfg)` → a `Benchmark` of `Task`s and its own judge.

    builtin          generated offline benchmark (suite: workspace | company | qa)   judge: rule
    native           any folder in the native format                                 judge: rule
    workspace_bench  Workspace-Bench (HF dataset or export + role workspaces)        judge: llm_rubric
    agentcompany     TheAgentCompany file-server-only tasks                          judge: agentcompany
    officeqa         OfficeQA Pro (questions CSV + corpus)                           judge: officeqa
"""

from __future__ import annotations

import importlib
from typing import Any

from eval.benchmarks.base import Benchmark, BenchmarkError, select
from eval.config import BenchmarkConfig

# name -> (module with `load(cfg) -> list[Task]`, default judge)
BENCHMARKS: dict[str, tuple[str, str]] = {
    "builtin": ("eval.benchmarks.builtin", "rule"),
    "native": ("eval.benchmarks.native", "rule"),
    "workspace_bench": ("eval.benchmarks.workspace_bench", "llm_rubric"),
    "agentcompany": ("eval.benchmarks.agentcompany", "agentcompany"),
    "officeqa": ("eval.benchmarks.officeqa", "officeqa"),
}


def load_benchmark(cfg: BenchmarkConfig) -> Benchmark:
    if cfg.name not in BENCHMARKS:
        raise BenchmarkError(f"unknown benchmark {cfg.name!r}; valid benchmarks: {', '.join(BENCHMARKS)}")
    module, judge = BENCHMARKS[cfg.name]
    tasks = importlib.import_module(module).load(cfg)
    return Benchmark(name=cfg.name, default_judge=judge, task_list=select(tasks, [str(i) for i in cfg.ids], cfg.limit, cfg.name))


def benchmark_config(node: Any) -> BenchmarkConfig:
    """A `BenchmarkConfig` from a dict (e.g. job.json's `config.benchmark`) or an OmegaConf node."""
    if isinstance(node, BenchmarkConfig):
        return node
    from omegaconf import OmegaConf

    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(BenchmarkConfig), node))  # type: ignore[return-value]


__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkError", "benchmark_config", "load_benchmark"]
