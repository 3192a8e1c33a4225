"""job.json's config is `dataclasses.asdict` of the parts of the config a record keeps, byte for
byte, however `runners.config.schema.job_record_config` computes it (it no longer calls asdict:
each job makes one, and asdict of the whole config was its set-up's largest cost); and the
job.json a job writes is that config with the job's fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from envs.names import json_bytes
from runners.config.schema import RootConfig, job_record_config
from runners.core.record_types import JobMeta
from runners.job.identity import job_id
from runners.job.run import run_job
from tests.conftest import compose_root, write_script

LEFT_OUT = ("grid", "storage", "tracker", "cluster", "report", "data", "plan", "out", "sweep")


def asdict_config(cfg: RootConfig) -> dict[str, Any]:
    """What job.json's config has always been."""
    d = dataclasses.asdict(cfg)
    for k in LEFT_OUT:
        d.pop(k)
    return d


CONFIGS = [
    ["benchmark=builtin", "method=dci", "model=scripted"],
    ["benchmark=builtin_company", "method=runningtab", "model=openai", "model.base_url=http://127.0.0.1:9/v1", "model.name=m", "judge=rule"],
    ["benchmark=officeqa", "method=self_refine", "model=vllm", "model.name=m", "seed=3", "agent.context_level=3"],
    ["benchmark=agentcompany", "method=todo", "model=gpt54_nano", "model.cache=read_write", "+method.texts.extra='x y'"],
    ["benchmark=workspace_bench", "method=runningtab_no_review", "model=vllm_cpu", "model.name=m", "env.sandbox=none"],
]


@pytest.mark.parametrize("overrides", CONFIGS, ids=lambda o: "-".join(x.split("=")[1] for x in o[:3]))
def test_the_recorded_config_is_asdicts_byte_for_byte(overrides: list[str], tmp_path: Path) -> None:
    cfg = compose_root([*overrides, f"out={tmp_path}"])
    mine, theirs = job_record_config(cfg), asdict_config(cfg)
    assert json_bytes(mine, indent=1) == json_bytes(theirs, indent=1)
    assert mine == theirs and list(mine) == list(theirs)
    mine["model"]["id"] = "changed"  # each job's own: config_identity pops and sets keys in it
    assert job_record_config(cfg)["model"] == theirs["model"]


def test_a_jobs_job_json_is_its_meta_with_that_config(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"content": "<FINAL_ANSWER>none</FINAL_ANSWER>"}])
    cfg = compose_root(["benchmark=builtin", "benchmark.suite=qa", "method=runningtab", "model=scripted",
                        f"model.script={script}", f"out={tmp_path}"])
    from eval.benchmarks import load_benchmark

    task = load_benchmark(cfg.benchmark).tasks()[0]
    jid = job_id(cfg, task)
    result = run_job(cfg, task, tmp_path / jid, jid)
    meta = JobMeta(jid, cfg.benchmark.label, task.id, cfg.method.name, cfg.model.id, cfg.seed, asdict_config(cfg),
                   sandbox=result.sandbox, harness=cfg.agent.harness)
    assert (tmp_path / jid / "job.json").read_bytes() == json_bytes(meta.to_json(), indent=1)
