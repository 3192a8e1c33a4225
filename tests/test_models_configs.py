"""Every conf/model/*.yaml matches the ModelConfig schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from omegaconf.errors import ConfigKeyError, MissingMandatoryValue

from runners.models import KINDS, ModelConfig, model_config
from runners.models.server import llamacpp_command

CONF = Path(__file__).resolve().parents[1] / "conf" / "model"
YAMLS = sorted(CONF.glob("*.yaml"))
NEEDS_USER_VALUES = {"openai", "vllm"}  # generic configs: the user sets name/base_url/model_path


def test_the_expected_configs_exist():
    assert {p.stem for p in YAMLS} >= {"smollm2", "scripted", "openai", "gpt54_nano", "deepseek_v4_flash",
                                       "gemini38_flash", "vllm"}


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.stem)
def test_yaml_matches_schema(path):
    node = OmegaConf.merge(OmegaConf.structured(ModelConfig), OmegaConf.load(path))
    assert node.kind in KINDS
    if path.stem in NEEDS_USER_VALUES:  # they fail until the user sets the model's name
        with pytest.raises(MissingMandatoryValue, match="name"):
            OmegaConf.to_object(node)
        node.name = "user-model"
        assert OmegaConf.to_object(node).name == "user-model"
    else:
        cfg = model_config(OmegaConf.load(path))
        assert isinstance(cfg, ModelConfig)
        assert cfg.api_key_env is None or cfg.api_key_env.isupper()  # a variable name, not a key


def test_unknown_key_is_an_error():
    with pytest.raises(ConfigKeyError, match="temprature"):
        model_config({"kind": "openai", "temprature": 0.2})


def test_smollm2_serves_the_embedded_model():
    cfg = model_config(OmegaConf.load(CONF / "smollm2.yaml"))
    cmd = llamacpp_command(cfg, 8080)
    assert cmd[cmd.index("--model") + 1].endswith(".gguf")
    assert cmd[cmd.index("--chat_format") + 1] == "chatml-function-calling"
