"""`judge.model` is a typed model config, and records judged before it was are not re-scored for it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from eval.score.records import judge_key
from runners.config.schema import CONF_DIR
from runners.core.frozen_fields import FROZEN_JUDGE
from runners.job.identity import JobSpec
from runners.job.rescore import stale
from runners.models.config import ModelConfig
from tests.conftest import compose_root


def test_the_judge_model_is_a_typed_model_config() -> None:
    judge = compose_root(["judge=llm_rubric"]).judge
    assert isinstance(judge.model, ModelConfig)
    assert judge.model.kind == "openai" and judge.model.name == "gpt-5.4-mini" and judge.model.concurrency == 16
    assert compose_root(["judge=rule"]).judge.model is None  # a judge that calls no LLM has none


def test_a_misspelt_judge_model_key_is_refused() -> None:
    with pytest.raises(Exception, match="nam"):
        compose_root(["judge=llm_rubric", "+judge.model.nam=gpt-x"])


# --------------------------------------------------------------------------- records judged before
_RUNTIME = ("cache_dir", "max_retries", "evaluator_timeout_s")
_MODEL_RUNTIME = ("base_url", "api_key_env", "server", "timeout_s", "max_retries", "backoff_base_s", "backoff_max_s",
                  "concurrency", "price_in_per_mtok", "price_out_per_mtok")


def key_as_written_before(judge: dict) -> str:
    """The judge key the previous version wrote: over the judge config with `model` as the YAML gave it."""
    fields = {k: v for k, v in judge.items() if k not in _RUNTIME}
    model = {k: v for k, v in (fields.get("model") or {}).items() if k not in _MODEL_RUNTIME}
    return hashlib.sha256(json.dumps({**fields, "model": model}, sort_keys=True, default=str).encode()).hexdigest()[:16]


def recorded_before(tmp_path: Path, judge: dict) -> Path:
    """A finished record scored by the previous version with `judge` (its model a plain mapping)."""
    d = tmp_path / "old"
    d.mkdir()
    (d / "job.json").write_text(json.dumps({"job_id": "old", "benchmark": "native", "task_id": "t", "method": "dci",
                                            "model": "m", "seed": 0, "config": {"judge": judge}}))
    (d / "result.json").write_text(json.dumps({"job_id": "old", "stop_reason": "finished"}))
    (d / "scores.json").write_text(json.dumps({"judge": "llm_rubric", "task_id": "t", "kind": "rubric", "metrics": {},
                                               "items": [], "judge_key": key_as_written_before(judge)}))
    return d


def previous_judge_config() -> dict:
    """conf/judge/llm_rubric.yaml as the previous version recorded it: the model node as composed, and
    only the judge fields that existed then (those added since are not in its records)."""
    judge = {k: v for k, v in dataclasses.asdict(compose_root(["judge=llm_rubric"]).judge).items() if k in FROZEN_JUDGE}
    auto = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "judge" / "auto.yaml"))
    return {**{k: v for k, v in judge.items() if k in FROZEN_JUDGE}, "model": auto["model"]}


def test_a_record_judged_before_by_the_same_judge_is_not_rescored(tmp_path: Path) -> None:
    cfg = compose_root(["judge=llm_rubric"])
    d = recorded_before(tmp_path, previous_judge_config())
    assert not stale(JobSpec("old", cfg, "t"), d, judge_key(cfg.judge))


def test_a_record_judged_before_by_another_judge_model_is_rescored(tmp_path: Path) -> None:
    cfg = compose_root(["judge=llm_rubric", "judge.model.name=gpt-other"])
    d = recorded_before(tmp_path, previous_judge_config())
    assert stale(JobSpec("old", cfg, "t"), d, judge_key(cfg.judge))
