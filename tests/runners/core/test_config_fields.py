"""What a setting changes is declared once, on its field (issue 35.3): every config field says it,
a new field that does not is caught, and the job id, the judge key, the call-cache key and the
sweep's folder name are derived from the declarations, so they agree."""

from __future__ import annotations

import dataclasses

from eval.benchmarks import BENCHMARKS, config_class
from eval.config import BenchmarkConfig, JudgeConfig
from runners.config.runner import AgentConfig
from runners.config.schema import RootConfig
from runners.core.config_fields import (
    Enters,
    Undeclared,
    declared,
    names,
    setting,
    undeclared,
    walk,
)
from runners.job.identity import config_identity
from runners.models.call_cache import ANSWER_FIELDS
from runners.models.config import ApiModelConfig
from runners.models.registry import config_classes
from runners.models.server import ServerConfig
from runners.sweep.driver import derived_name
from tests.conftest import compose_root


def kinds() -> dict[str, list[type]]:
    """Every class a part of the root config may hold: each model kind's, each benchmark's."""
    return {"model": list(config_classes()), "benchmark": [config_class(n) for n in BENCHMARKS.names()]}


def test_every_config_field_declares_what_it_changes() -> None:
    assert undeclared(RootConfig, kinds()) == []


@dataclasses.dataclass
class LaterAgent(AgentConfig):
    new_knob: int = 1  # added without saying what it changes


@dataclasses.dataclass
class LaterRoot(RootConfig):
    agent: LaterAgent = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default_factory=LaterAgent)


def test_a_new_field_without_a_declaration_is_caught() -> None:
    assert undeclared(LaterRoot, kinds()) == ["agent.new_knob (LaterAgent.new_knob)"]
    try:
        declared(LaterAgent)
    except Undeclared as e:
        assert "LaterAgent.new_knob does not declare what it changes" in str(e)
    else:
        raise AssertionError("an undeclared field passed")


def test_the_derived_lists_are_those_ids_and_keys_hashed_before() -> None:
    """The five hand-written lists, as they were: ids, keys and cache entries stay."""
    model = config_classes()
    assert set(names(model, Enters.JOB_ID, present=False)) == {
        "price_in_per_mtok", "price_out_per_mtok", "max_retries", "backoff_base_s", "backoff_max_s", "timeout_s", "call_timeout_s",
        "max_reply_bytes", "concurrency", "pricing", "cache", "cache_dir", "rpm", "tpm"}
    assert set(names([ServerConfig], Enters.JOB_ID, present=False)) == {
        "host", "port", "gpus", "startup_timeout_s", "stop_grace_s", "log_path", "replicas", "resources", "executable", "env", "slots"}
    assert set(names([JudgeConfig], Enters.JUDGE_KEY, present=False)) == {"cache_dir", "max_retries", "evaluator_timeout_s"}
    assert set(names(model, Enters.JUDGE_KEY, present=False)) == {
        "base_url", "api_key_env", "server", "timeout_s", "call_timeout_s", "max_reply_bytes", "max_retries", "backoff_base_s",
        "backoff_max_s", "concurrency", "price_in_per_mtok", "price_out_per_mtok", "pricing", "cache", "cache_dir", "rpm", "tpm"}
    assert set(ANSWER_FIELDS) == {"kind", "name", "base_url", "temperature", "top_p", "max_tokens", "seed", "extra_body"}
    assert set(names([ServerConfig], Enters.CACHE_KEY)) == {
        "model_path", "tool_call_parser", "tensor_parallel_size", "ctx_size", "chat_format", "extra_args"}
    assert set(names([ApiModelConfig], Enters.CACHE_KEY)) <= set(names([ApiModelConfig], Enters.JOB_ID))


def test_a_model_setting_names_the_sweep_exactly_when_it_makes_another_job() -> None:
    paths = {p: e for p, e, _ in walk(RootConfig, extra_classes=kinds()) if p.startswith("model.")}
    assert paths and all(bool(e & Enters.SWEEP_NAME) == bool(e & Enters.JOB_ID) for e in paths.values())


def test_a_setting_that_changes_no_job_gives_no_new_sweep_folder() -> None:
    """`model.timeout_s=120` changes no job id: the same command with it resumes the same sweep."""
    base = ["benchmark=native", "benchmark.path=/data/b", "model=openai", "model.name=m"]
    for o in ("model.timeout_s=120", "model.max_retries=1", "model.price_in_per_mtok=3", "model.concurrency=4",
              "model.server.port=8001", "+model.server.env.X=1", "judge.model.timeout_s=30", "agent.work_dir=/scratch",
              "budget.job_usd=1", "out=/elsewhere"):
        assert derived_name([*base, o]) == derived_name(base), o
    for o in ("model.temperature=0.5", "model.server.ctx_size=4096", "agent.max_turns=9", "judge=rule", "benchmark.reward=0da20e9"):
        assert derived_name([*base, o]) != derived_name(base), o


@dataclasses.dataclass
class PluginBench(BenchmarkConfig):
    """A plugin's benchmark config (docs/extending.md): its own default name, settings of its own."""

    name: str = "mypkg.bench"
    where: str = "/data/mine"


def test_a_plugin_config_keeps_its_name_in_the_id_and_its_paths_out() -> None:
    cfg = compose_root(["benchmark=native", "model=scripted", "model.script=x.jsonl"])
    cfg.benchmark = PluginBench()
    assert config_identity(cfg)["benchmark"] == {"name": "mypkg.bench"}
