"""Checks both entry points (and `slurm.launch`, before a job is queued) run before any work
starts, so that a bad config never becomes a record.

Everything that can be known before a job runs is checked here — the agent's settings, the model's
script, kind, backend and key, the key of the judge that will score it, the prepared data against
its manifest, the sandbox the environment asks for — and fails with one message that says what is
wrong and how to fix it. A failure here writes nothing: no job directory, no ledger line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from omegaconf import OmegaConf

from envs.config import CONTEXT_LEVELS
from runners.config.schema import CONF_DIR, ConfigError, RootConfig
from runners.core.task import Task
from runners.models.config import ModelConfig
from runners.preflight.record_paths import check_records_place, check_sweep_name
from runners.preflight.refusals import ConfigErrors, Refusals

__all__ = ["ConfigError", "benchmark_tasks", "check_config", "check_configs", "check_sweep"]


def check_sweep(cfgs: Iterable[RootConfig], here: bool = True) -> None:
    """What a sweep checks before its first job: every config (`check_configs`), the GPUs its served
    models need against the cluster's (runners/preflight/gpus.py), then every distinct benchmark's
    tasks load, i.e. its data is there (slurm.launch and `--cfg job` run it whole)."""
    from runners.preflight.gpus import check_gpus

    cfgs = list(cfgs)
    refusals = Refusals()
    refusals.run(check_configs, cfgs, here)
    refusals.run(check_gpus, cfgs, not here)  # not here: a Slurm submission, whose allocation has the GPUs
    for cfg in {repr(c.benchmark): c for c in cfgs}.values():
        refusals.run(benchmark_tasks, cfg)
    refusals.raise_any()


def benchmark_tasks(cfg: RootConfig) -> list[Task]:
    """The benchmark's tasks; one that cannot load (a wrong path or id: the user's to fix, or prepared
    data that no longer matches its manifest) is a `ConfigError` naming the benchmark."""
    from eval.benchmarks import BenchmarkError, load_benchmark
    from eval.benchmarks.native_format import NativeFormatError

    _check_data(cfg, set())  # prepared data that does not match its manifest is not loaded (one refusal, not two)
    try:
        tasks = load_benchmark(cfg.benchmark).tasks()
    except NativeFormatError as e:  # every bad line of the task file, each its own refusal
        raise ConfigErrors([f"benchmark={cfg.benchmark.name}: {p}" for p in e.problems]) from e
    except (BenchmarkError, FileNotFoundError) as e:
        hint = _prepare_hint(cfg)
        raise ConfigError(f"benchmark={cfg.benchmark.name}: {hint} (its loader: {e})" if hint else f"benchmark={cfg.benchmark.name}: {e}") from e
    check_records_place(cfg, tasks)  # every entry point loads its tasks here: no record goes where a later job's workspace copies it
    return tasks


def _prepare_hint(cfg: RootConfig) -> str:
    """For a benchmark `eval.prepare` makes and no `data.<name>` names: how to get its data, before
    what its loader refused. The `data.<name>` override, unlike the loader's own paths, fits a grid
    of several benchmarks (each cell reads its own)."""
    from eval.prepare import PREPARERS, data_root

    name = cfg.benchmark.name
    if name not in PREPARERS or data_root(cfg.data, name):
        return ""
    return f"no data: run python -m eval.prepare {name} --out DATA, then pass data.{name}=DATA/{name}"


def check_configs(cfgs: Iterable[RootConfig], here: bool = True) -> None:
    """Check each distinct job config once (a sweep's cells share theirs across tasks), each prepared
    data folder once. `here=False` (a Slurm submission): skip what depends on the node that checks
    (the sandbox), not on the node that will run."""
    seen: set[int] = set()
    data: set[tuple[str, str]] = set()
    refusals = Refusals()
    for cfg in cfgs:
        if id(cfg) not in seen:
            seen.add(id(cfg))
            refusals.run(check_config, cfg, here, data)
    refusals.raise_any()


def check_config(cfg: RootConfig, here: bool = True, data_checked: set[tuple[str, str]] | None = None) -> None:
    """Raise ConfigError (`ConfigErrors` for several) naming every problem found in `cfg`."""
    refusals = Refusals()
    refusals.run(_check_agent, cfg)
    refusals.run(_check_harness, cfg, here)
    refusals.run(_check_env, cfg, here)
    refusals.run(_check_model, cfg.model, here and not (cfg.cluster.address or os.environ.get("RAY_ADDRESS")))
    refusals.run(_check_call_cache, cfg.model)
    refusals.run(_check_budget, cfg)
    refusals.run(_check_names, cfg)
    refusals.run(check_sweep_name, cfg)
    refusals.run(_check_judge_key, cfg)
    refusals.run(_check_data, cfg, set() if data_checked is None else data_checked)
    refusals.raise_any()


def _check_call_cache(model: ModelConfig) -> None:
    """A cache that writes gets a folder it can make and write (`model.cache_dir`, settled by
    `to_root`: the folder the jobs will use), else every job would fail at its first call."""
    if model.cache not in ("write", "read_write") or not model.cache_dir:
        return
    folder = Path(model.cache_dir)
    near = folder
    while not os.path.lexists(near) and near != near.parent:
        near = near.parent
    if near.is_dir() and os.access(near, os.W_OK | os.X_OK):
        return
    why = "is not a folder" if not near.is_dir() else "is not writable"
    raise ConfigError(f"model.cache_dir={folder}: the model-call cache cannot be written there ({near} {why}); "
                      "give a writable folder, or model.cache=off")


def _check_budget(cfg: RootConfig) -> None:
    """The budgets' values and the model's price: a paper preset (which sets budget.allow_unpriced=false)
    refuses a placeholder or missing one."""
    import logging

    from runners.models.pricing import unpriced

    b = cfg.budget
    wrong = [f"budget.{name}={value}: give a positive amount in USD, or null for no limit"
             for name in ("sweep_usd", "cell_usd", "job_usd", "estimate_usd")
             if (value := getattr(b, name)) is not None and not value > 0]
    if b.limits_spend and not (b.estimate_usd or b.job_usd):
        wrong.append("budget.sweep_usd/cell_usd need the expected cost of a cell's first jobs (before any has finished): "
                     "set budget.estimate_usd (USD per job) or budget.job_usd")
    problem = unpriced(cfg.model)
    if problem and not b.allow_unpriced:
        wrong.append(f"{problem.why}; this preset needs real prices to keep its budget: {problem.fix} "
                     f"(or pass budget.allow_unpriced=true, and {problem.counted})")
    if wrong:
        raise ConfigErrors(wrong)
    if problem and cfg.model.pricing and problem.warning not in _WARNED:  # once a model, not once a cell
        _WARNED.add(problem.warning)
        logging.getLogger(__name__).warning("%s", problem.warning)


_WARNED: set[str] = set()


def _check_agent(cfg: RootConfig) -> None:
    a = cfg.agent
    wrong = [
        a.context_level not in CONTEXT_LEVELS
        and f"agent.context_level={a.context_level}: choose one of {', '.join(map(str, CONTEXT_LEVELS))} (3 is the paper's)",
        a.max_turns < 1 and f"agent.max_turns={a.max_turns}: a job needs at least one turn (the paper uses 300)",
        not a.time_limit_s > 0 and f"agent.time_limit_s={a.time_limit_s}: give a positive number of seconds (the paper uses 3600)",
        cfg.cluster.error_retries < 0 and f"cluster.error_retries={cfg.cluster.error_retries}: give 0 or more",
        not cfg.cluster.error_wait_s >= 0
        and f"cluster.error_wait_s={cfg.cluster.error_wait_s}: give 0 or more seconds (the first wait before a host failure is tried again)",
        cfg.report.live_every < 0
        and f"report.live_every={cfg.report.live_every}: give 0 (the report only at the end) or more finished jobs",
    ]
    if any(wrong):
        raise ConfigErrors([w for w in wrong if w])


def _check_harness(cfg: RootConfig, here: bool = True) -> None:
    """The harness: a known one, with what it needs here (a production harness: installed where
    RUNNINGTAB_AGENTS_PREFIX says, run in bubblewrap)."""
    from runners.agent.harnesses import HARNESSES

    try:
        HARNESSES.get(cfg.agent.harness).check(cfg.env, here)
    except (ValueError, RuntimeError) as e:
        raise ConfigError(str(e)) from None


def _check_model(model: ModelConfig, local: bool = True) -> None:
    from runners.models.registry import KINDS, config_class
    from runners.models.scripted import ScriptedModelConfig

    try:
        KINDS.check(model.kind)  # a registered kind, or a dotted path that imports
    except ValueError as e:
        raise ConfigError(f"model.kind: {e}") from None
    _check_kind_class("model", model.kind, model, config_class(model.kind) if model.kind in KINDS else None)
    refusals = Refusals()
    if isinstance(model, ScriptedModelConfig) and model.kind == "scripted":
        refusals.run(_check_script, model)
    slots = getattr(getattr(model, "server", None), "slots", None)
    if slots is not None and slots < 0:
        refusals.messages.append(f"model.server.slots={slots}: give the requests one replica serves at once (llama.cpp's "
                                 "server: 1), 0 for no cap, or leave it unset for the kind's")
    refusals.run(_require_key, getattr(model, "api_key_env", None), f"model {model.id!r}")
    refusals.run(_check_backend, model, local)
    refusals.raise_any()


def _require_key(key_env: str | None, who: str, instead: str = "") -> None:
    if key_env and not os.environ.get(key_env):
        raise ConfigError(f"{who} takes its API key from ${key_env}, which is not set: export {key_env}=... before "
                          f"running{instead} (the key never enters configs or records)")


def _check_backend(model: ModelConfig, local: bool = True) -> None:
    """A model the sweep serves: llama.cpp needs the `embedded` extra, which a plain install leaves
    out; vLLM needs its weights named and, when it starts on this machine (`local`: no cluster to
    join, as `runners.job` and a local sweep), its command found here (it lives in an environment of
    its own); either needs at least one replica of at least one rank."""
    import importlib.util
    import shutil

    from runners.models.embedded import BACKEND_HINT
    from runners.models.server import (
        ServedModelConfig,
        ServerError,
        needs_server,
        vllm_command,
    )

    if not needs_server(model) or not isinstance(model, ServedModelConfig):
        return
    s = model.server
    wrong = [f"model.server.{k}={v}: give 1 or more" for k, v in (("replicas", s.replicas), ("tensor_parallel_size", s.tensor_parallel_size)) if v < 1]
    if model.kind == "llamacpp" and not s.executable and importlib.util.find_spec("llama_cpp") is None:
        wrong.append(f"model {model.id!r} is served by llama.cpp, which is not installed: {BACKEND_HINT}; or run an API or vLLM model")
    if model.kind == "vllm" and not s.model_path:
        wrong.append(f"model {model.id!r} is served by vLLM, which needs model.server.model_path (a local folder of "
                     "weights, or a Hugging Face id)")
    elif model.kind == "vllm" and local:
        try:
            command = vllm_command(model, 0)
        except ServerError as e:
            wrong.append(f"model {model.id!r}: {e}")
        else:
            if s.executable and not (shutil.which(command[0]) or os.access(command[0], os.X_OK)):
                wrong.append(f"model.server.executable={command[0]}: no such program (vLLM lives in an environment of its own: "
                             "name its `vllm` or its Python there, docs/models.md#vllm)")
    if wrong:
        raise ConfigErrors(wrong)


def _check_judge_key(cfg: RootConfig) -> None:
    """The judge that will score the jobs calls its model: its key must be set before any agent runs
    (else every job ends unscored, and the sweep would find out only at the end)."""
    from eval.benchmarks import default_judge
    from eval.judges import judge_name, uses_model

    name = judge_name(cfg.judge, default_judge(cfg.benchmark.name))
    if cfg.judge.model is not None and uses_model(name):
        _require_key(cfg.judge.model.api_key_env, f"judge {name} (which scores benchmark {cfg.benchmark.name})",
                     " (or judge=none, and score later with python -m eval.score)")


def _check_data(cfg: RootConfig, checked: set[tuple[str, str]]) -> None:
    """The prepared data the config points at is there and matches its manifest."""
    from eval.prepare import ManifestError, check_data, data_root

    root = data_root(cfg.data, cfg.benchmark.name)
    if root and (cfg.benchmark.name, root) not in checked:
        try:
            check_data(cfg.benchmark.name, root)
        except ManifestError as e:
            raise ConfigError(f"data.{cfg.benchmark.name}: {e}") from None
        checked.add((cfg.benchmark.name, root))


def _check_script(model: ModelConfig) -> None:
    from runners.models.scripted import ScriptedModelConfig, ScriptError, load_script

    assert isinstance(model, ScriptedModelConfig)
    if bool(model.script) == bool(model.script_dir):
        raise ConfigError("model=scripted needs one of model.script=PATH (a JSONL file, one assistant turn a line) "
                          "and model.script_dir=DIR (one <task_id>.jsonl per task)")
    if model.script_dir:
        if not os.path.isdir(model.script_dir):
            raise ConfigError(f"model.script_dir={model.script_dir}: not a folder (it holds one <task_id>.jsonl per task)")
        return  # each task's script: `check_tasks`, once the tasks are known
    try:
        load_script(str(model.script))
    except ScriptError as e:
        raise ConfigError(f"model.script: {e}") from None


def check_tasks(cfg: RootConfig, task_ids: list[str]) -> None:
    """The checks that need the tasks: a scripted model's `script_dir` holds a valid script for each."""
    from runners.models.scripted import ScriptedModelConfig, ScriptError, load_script

    model = cfg.model
    if not (isinstance(model, ScriptedModelConfig) and model.script_dir):
        return
    missing = [t for t in task_ids if not os.path.isfile(os.path.join(model.script_dir, f"{t}.jsonl"))]
    if missing:
        raise ConfigError(
            f"model.script_dir={model.script_dir} has no script for {len(missing)} of {len(task_ids)} task(s) "
            f"({', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}): add <task_id>.jsonl for each, "
            "or run fewer tasks (grid.tasks=[...] or task=ID)"
        )
    for t in task_ids:
        try:
            load_script(str(model.for_task(t).script))
        except ScriptError as e:
            raise ConfigError(f"model.script_dir: {e}") from None


def _check_kind_class(group: str, kind: str, cfg: object, cls: type | None) -> None:
    """A registered kind runs only on its own config class (`model=openai model.kind=vllm` has no server
    settings); a dotted-path kind (`cls` None) takes whichever class its YAML started from."""
    if cls is None or type(cfg) is cls:
        return
    starts = [p.stem for p in sorted((CONF_DIR / group).glob("*.yaml")) if OmegaConf.load(p).get("kind") == kind]
    raise ConfigError(
        f"{group}.kind={kind} takes the settings of {cls.__name__}, which this {group} config "
        f"({type(cfg).__name__}) does not have: start from a {group} config of that kind "
        f"({', '.join(f'{group}={s}' for s in starts) or f'see conf/{group}/'}) and override from there"
    )


def _check_names(cfg: RootConfig) -> None:
    """Benchmark, judge, storage, tracker and method plugin names: registered, or dotted paths that import
    (runners/core/registry.py)."""
    from eval.benchmarks import BENCHMARKS
    from eval.judges import check_judge
    from runners.agent.methods import PLUGINS
    from runners.core.storage import STORAGES, storage_config_class
    from runners.tracking.tracker import TRACKERS

    checks = (("benchmark.name", lambda: BENCHMARKS.check(cfg.benchmark.name)), ("judge.name", lambda: check_judge(cfg.judge)),
              ("storage.kind", lambda: STORAGES.check(cfg.storage.kind)), ("tracker.kind", lambda: TRACKERS.check(cfg.tracker.kind)),
              *((f"method.plugins ({p})", lambda p=p: PLUGINS.check(p)) for p in cfg.method.plugins))
    for key, check in checks:
        try:
            check()
        except ValueError as e:
            raise ConfigError(f"{key}: {e}") from None
    kind = cfg.storage.kind
    _check_kind_class("storage", kind, cfg.storage, storage_config_class(kind) if kind in STORAGES else None)


def _check_env(cfg: RootConfig, here: bool = True) -> None:
    from envs.sandbox import preflight

    try:
        cfg.env.validate()
        if here:
            preflight(cfg.env)
    except ValueError as e:
        raise ConfigError(str(e)) from None
