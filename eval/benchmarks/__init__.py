"""Benchmarks by name: `load_benchmark(cfg)` → a `Benchmark` of `Task`s and its own judge.

    builtin          generated offline benchmark (suite: workspace | company | qa)   judge: rule
    native           any folder in the native format                                 judge: rule
    workspace_bench  Workspace-Bench (HF dataset or export + role workspaces)        judge: llm_rubric
    agentcompany     TheAgentCompany file-server-only tasks                          judge: agentcompany
    officeqa         OfficeQA Pro (questions CSV + corpus)                           judge: officeqa

`benchmark.name` may also be the dotted path of your own (docs/extending.md): any object with
`load(cfg: BenchmarkConfig) -> list[Task]` (a module, a class, an instance) and optionally
`default_judge` (a judge name or dotted path, what `judge=auto` runs; default `rule`).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from eval.benchmarks.base import Benchmark, BenchmarkError, select
from eval.config import BenchmarkConfig
from runners.core.record_types import known_fields
from runners.core.registry import Registry
from runners.core.task import Task


class BenchmarkLoader(Protocol):
    """What a benchmark name resolves to."""

    default_judge: str

    def load(self, cfg: BenchmarkConfig) -> list[Task]: ...


class _Module:
    """A built-in loader module, imported on first `load` so that naming benchmarks imports none."""

    def __init__(self, module: str, default_judge: str) -> None:
        self.module, self.default_judge = module, default_judge

    def load(self, cfg: BenchmarkConfig) -> list[Task]:
        return importlib.import_module(self.module).load(cfg)  # type: ignore[no-any-return]

    @property
    def config(self) -> type[BenchmarkConfig]:
        """The loader's own config class (`Config` beside it), else the common one."""
        return getattr(importlib.import_module(self.module), "Config", BenchmarkConfig)  # type: ignore[no-any-return]


BENCHMARKS: Registry[BenchmarkLoader] = Registry("benchmark", error=BenchmarkError)
BENCHMARKS.add("builtin", _Module("eval.benchmarks.builtin.loader", "rule"))
BENCHMARKS.add("native", _Module("eval.benchmarks.native", "rule"))
BENCHMARKS.add("workspace_bench", _Module("eval.benchmarks.workspace_bench", "llm_rubric"))
BENCHMARKS.add("agentcompany", _Module("eval.benchmarks.agentcompany", "agentcompany"))
BENCHMARKS.add("officeqa", _Module("eval.benchmarks.officeqa", "officeqa"))

DEFAULT_JUDGE = "rule"  # for a plugin benchmark that names none


def default_judge(name: str) -> str:
    """The judge `judge=auto` runs for benchmark `name` (raises BenchmarkError for an unknown name)."""
    return str(getattr(BENCHMARKS.get(name), "default_judge", DEFAULT_JUDGE))


def load_benchmark(cfg: BenchmarkConfig) -> Benchmark:
    loader = BENCHMARKS.get(cfg.name)
    if not callable(getattr(loader, "load", None)):
        raise BenchmarkError(f"benchmark {cfg.name!r} has no load(cfg) -> list[Task] (see docs/extending.md)")
    tasks = loader.load(cfg)
    return Benchmark(name=cfg.name, default_judge=default_judge(cfg.name), task_list=select(tasks, [str(i) for i in cfg.ids], cfg.limit, cfg.name))


def config_class(name: str) -> type[BenchmarkConfig]:
    """The config class of benchmark `name`: its loader's own, else the common `BenchmarkConfig`."""
    try:
        loader = BENCHMARKS.get(name)
    except BenchmarkError:
        return BenchmarkConfig
    cls = getattr(loader, "config", None)
    return cls if isinstance(cls, type) and issubclass(cls, BenchmarkConfig) else BenchmarkConfig


def benchmark_config(node: Any) -> BenchmarkConfig:
    """A benchmark's config from a dict (e.g. job.json's `config.benchmark`) or an OmegaConf node,
    as its own class. Records from before the classes were split kept every loader's fields: those
    this benchmark does not have are left out."""
    if isinstance(node, BenchmarkConfig):
        return node
    from omegaconf import OmegaConf

    data = OmegaConf.to_container(node) if OmegaConf.is_config(node) else dict(node)
    cls = config_class(str(data.get("name") or BenchmarkConfig.name))
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(cls), known_fields(cls, data)))  # type: ignore[return-value]


__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkError", "BenchmarkLoader", "benchmark_config", "config_class", "default_judge",
           "load_benchmark"]
