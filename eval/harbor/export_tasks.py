"""`python -m eval.export harbor BENCHMARK [KEY=VALUE ...] --out DIR [--tab on|off|both]`: every task of
the benchmark as a Harbor task, under `DIR/tab-on/` (the tab's MCP server declared) and/or
`DIR/tab-off/` (the agent alone). The two arms hold the same tasks with the same instruction, so a
Harbor run of each is a paired comparison (docs/harbor.md).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from eval.benchmarks import BENCHMARKS, benchmark_config, config_class, load_benchmark
from eval.config import REPO_ROOT, BenchmarkConfig, JudgeConfig
from eval.harbor.spec import Spec, judge_doc
from eval.harbor.task_dir import Resources, task_name, write_task

ARMS = {"on": (True,), "off": (False,), "both": (False, True)}
ARM_DIR = {True: "tab-on", False: "tab-off"}
ARM_METHOD = {True: "runningtab", False: "dci"}  # how Table 1 names the arms (the baseline is dci)
LLM_JUDGES = ("llm_rubric", "llm_rubric_fulltext", "agentcompany")


def benchmark_from(name: str, overrides: list[str]) -> BenchmarkConfig:
    """A benchmark config composed by Hydra from `conf/benchmark/<name>.yaml` and `key=value` overrides
    (`benchmark.` prefix optional), validated by the benchmark's own config class (a key it does not
    have is an error), as a job's `benchmark=<name> benchmark.key=value` would be."""
    from hydra import compose, initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    conf = REPO_ROOT / "conf" / "benchmark"
    if not (conf / f"{name}.yaml").is_file():
        raise ValueError(f"no benchmark config {name!r}; valid: {', '.join(sorted(p.stem for p in conf.glob('*.yaml')))}")
    store = ConfigStore.instance()
    for known in BENCHMARKS.names():  # each YAML names its schema first (`builtin_schema`), here at the root
        cls = config_class(known)
        if cls is not BenchmarkConfig:
            store.store(name=f"{known}_schema", node=cls)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf), version_base=None):
            node = compose(config_name=name, overrides=[o.removeprefix("benchmark.") for o in overrides])
    except (HydraException, OmegaConfBaseException) as e:
        raise ValueError(f"benchmark {name!r}: {e}".splitlines()[0]) from None
    finally:
        GlobalHydra.instance().clear()
    data = OmegaConf.to_container(node, resolve=True)
    assert isinstance(data, dict)
    return benchmark_config(data)


def judge_key_env(jc: JudgeConfig, judge_name: str) -> str | None:
    """The variable holding the judge LLM's key, when the task's judge calls one (None: offline)."""
    if judge_name in LLM_JUDGES and jc.model is not None:
        return str(jc.model.api_key_env or "") or None
    return None


def export(bench: BenchmarkConfig, judge: JudgeConfig, out: Path, tab: str = "both", res: Resources | None = None,
           tab_method: str = "runningtab") -> dict[str, list[Path]]:
    """Write every task of `bench` once per arm; returns the task folders by arm (`tab-on`, `tab-off`)."""
    if tab not in ARMS:
        raise ValueError(f"--tab {tab!r}: choose on, off or both")
    benchmark = load_benchmark(bench)
    if not benchmark.tasks():
        raise ValueError(f"benchmark {bench.label!r} has no tasks (check its ids/limit)")
    res = res or Resources()
    bench_doc: dict[str, Any] = dataclasses.asdict(bench)
    written: dict[str, list[Path]] = {}
    for arm in ARMS[tab]:
        arm_dir = out / ARM_DIR[arm]
        if arm_dir.exists():
            raise ValueError(f"{arm_dir} exists: export into a new folder (nothing was overwritten)")
    for arm in ARMS[tab]:
        arm_dir = out / ARM_DIR[arm]
        tmp = out / f".{ARM_DIR[arm]}.partial"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        names: set[str] = set()
        try:
            for task in benchmark.tasks():
                spec = Spec(task, bench.label, bench_doc, judge_doc(judge), benchmark.default_judge, arm, ARM_METHOD[arm], tab_method)
                name = task_name(bench.label, task.id)
                if name in names:
                    raise ValueError(f"two tasks of {bench.label!r} export to the same name {name!r}")
                names.add(name)
                write_task(spec, tmp / name, res, judge_key_env(judge, spec.judge_name))
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        tmp.rename(arm_dir)  # a folder appears whole or not at all
        written[ARM_DIR[arm]] = sorted(arm_dir.iterdir())
    return written
