"""Checks both entry points run before any work starts, so that a bad config never becomes a record.

Everything that can be known before a job runs is checked here — the agent's settings, the model's
script, kind and key, the sandbox the environment asks for — and fails with one message that says
what is wrong and how to fix it. A failure here writes nothing: no job directory, no ledger line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from omegaconf import OmegaConf

from envs.config import CONTEXT_LEVELS
from runners.models.config import ModelConfig
from runners.schema import CONF_DIR, ConfigError, RootConfig

__all__ = ["ConfigError", "check_config", "check_configs"]


def check_configs(cfgs: Iterable[RootConfig]) -> None:
    """Check each distinct job config once (a sweep's cells share theirs across tasks)."""
    seen: set[int] = set()
    for cfg in cfgs:
        if id(cfg) not in seen:
            seen.add(id(cfg))
            check_config(cfg)


def check_config(cfg: RootConfig) -> None:
    """Raise ConfigError for the first problem found in `cfg`."""
    _check_agent(cfg)
    _check_env(cfg)
    _check_model(cfg.model)
    _check_names(cfg)


def _check_agent(cfg: RootConfig) -> None:
    a = cfg.agent
    if a.context_level not in CONTEXT_LEVELS:
        raise ConfigError(f"agent.context_level={a.context_level}: choose one of {', '.join(map(str, CONTEXT_LEVELS))} (3 is the paper's)")
    if a.max_turns < 1:
        raise ConfigError(f"agent.max_turns={a.max_turns}: a job needs at least one turn (the paper uses 300)")
    if not a.time_limit_s > 0:
        raise ConfigError(f"agent.time_limit_s={a.time_limit_s}: give a positive number of seconds (the paper uses 3600)")
    if cfg.cluster.error_retries < 0:
        raise ConfigError(f"cluster.error_retries={cfg.cluster.error_retries}: give 0 or more")
    if cfg.report.live_every < 0:
        raise ConfigError(f"report.live_every={cfg.report.live_every}: give 0 (the report only at the end) or more finished jobs")


def _check_model(model: ModelConfig) -> None:
    from runners.models.registry import KINDS, config_class
    from runners.models.scripted import ScriptedModelConfig, ScriptError, load_script

    try:
        KINDS.check(model.kind)  # a registered kind, or a dotted path that imports
    except ValueError as e:
        raise ConfigError(f"model.kind: {e}") from None
    _check_kind_class("model", model.kind, model, config_class(model.kind) if model.kind in KINDS else None)
    if isinstance(model, ScriptedModelConfig) and model.kind == "scripted":
        if not model.script:
            raise ConfigError("model=scripted needs model.script=PATH (a JSONL file, one assistant turn a line)")
        try:
            load_script(model.script)
        except ScriptError as e:
            raise ConfigError(f"model.script: {e}") from None
    slots = getattr(getattr(model, "server", None), "slots", None)
    if slots is not None and slots < 0:
        raise ConfigError(f"model.server.slots={slots}: give the requests one replica serves at once (llama.cpp's "
                          "server: 1), 0 for no cap, or leave it unset for the kind's")  # fmt: skip
    key_env = getattr(model, "api_key_env", None)
    if key_env and not os.environ.get(key_env):
        raise ConfigError(
            f"model {model.id!r} takes its API key from ${key_env}, which is not set: "
            f"export {key_env}=... before running (the key never enters configs or records)"
        )


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
    from runners.methods import PLUGINS
    from runners.storage import STORAGES, storage_config_class
    from runners.tracking import TRACKERS

    checks = (("benchmark.name", lambda: BENCHMARKS.check(cfg.benchmark.name)), ("judge.name", lambda: check_judge(cfg.judge)),
              ("storage.kind", lambda: STORAGES.check(cfg.storage.kind)), ("tracker.kind", lambda: TRACKERS.check(cfg.tracker.kind)),
              *((f"method.plugins ({p})", lambda p=p: PLUGINS.check(p)) for p in cfg.method.plugins))  # fmt: skip
    for key, check in checks:
        try:
            check()
        except ValueError as e:
            raise ConfigError(f"{key}: {e}") from None
    kind = cfg.storage.kind
    _check_kind_class("storage", kind, cfg.storage, storage_config_class(kind) if kind in STORAGES else None)


def _check_env(cfg: RootConfig) -> None:
    from envs.sandbox import preflight

    try:
        cfg.env.validate()
        preflight(cfg.env)
    except ValueError as e:
        raise ConfigError(str(e)) from None
