"""What the preflight says about a model without a checked price matches what the run counts: a
placeholder price is used as it is (the shipped files), a missing one counts as $0. The warning
used to say "counted at no cost" for both, while the placeholder's calls were counted at its price."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from runners.models.config import ApiModelConfig
from runners.models.pricing import unpriced
from runners.models.wire import parse_reply
from runners.preflight import config_checks
from runners.preflight.config_checks import ConfigError, check_configs
from tests.conftest import compose_root

REPLY = {"choices": [{"message": {"role": "assistant", "content": "x"}}],
         "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}}


def _cost(cfg: ApiModelConfig) -> float:
    return parse_reply(REPLY, cfg, lambda: "id").usage.cost


def test_a_placeholder_price_is_said_to_be_used_and_is(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy")
    cfgs = [compose_root(["model=gpt54_nano", f"seed={s}"]) for s in range(3)]
    problem = unpriced(cfgs[0].model)
    assert problem is not None and "no cost" not in problem.warning
    assert "placeholder price ($0.05 input, $0.005 cached input, $0.4 output per 1M tokens)" in problem.warning
    assert isinstance(cfgs[0].model, ApiModelConfig) and _cost(cfgs[0].model) == pytest.approx(0.05 + 0.40)  # what it says
    monkeypatch.setattr(config_checks, "_WARNED", set())  # an earlier test in this process may have been warned already
    with caplog.at_level(logging.WARNING):
        check_configs(cfgs)
    said = [r.getMessage() for r in caplog.records if "placeholder" in r.getMessage()]
    assert len(said) == 1, said  # once for the model, not once per cell


def test_a_missing_price_is_said_to_count_nothing_and_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy")
    prices = tmp_path / "prices.yaml"
    prices.write_text("provider: x\nas_of: '2026-01-01'\nmodels:\n  other-model: {input: 1.0, output: 2.0}\n")
    cfg = compose_root(["model=gpt54_nano", f"model.pricing={prices}"])
    assert isinstance(cfg.model, ApiModelConfig)
    problem = unpriced(cfg.model)
    assert problem is not None and "no entry for model 'gpt-5.4-nano'" in problem.why
    assert "counted at no cost ($0)" in problem.warning and _cost(cfg.model) == 0.0


def test_the_paper_presets_refusal_says_what_is_wrong_and_what_the_escape_would_count(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(k, "sk-dummy")
    with pytest.raises(ConfigError) as refused:
        check_configs([compose_root(["experiment=paper_main", "model=deepseek_v4_flash"])])
    text = str(refused.value)
    assert "marked placeholder" in text and "remove `placeholder`" in text and "https://api-docs.deepseek.com" in text
    assert "budget.allow_unpriced=true, and its calls are counted at that placeholder price ($0.28 input" in text
