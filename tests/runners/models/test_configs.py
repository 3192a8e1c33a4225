"""Every conf/model/*.yaml composes into its kind's config class."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf.errors import ConfigKeyError

from runners.models import KINDS, model_config
from runners.models.registry import config_class
from runners.models.server import llamacpp_command
from tests.conftest import compose_root

CONF = Path(__file__).resolve().parents[3] / "conf" / "model"
YAMLS = sorted(CONF.glob("*.yaml"))
NEEDS_USER_VALUES = {"openai", "vllm", "vllm_cpu"}  # generic configs: the user sets name/base_url/model_path


def test_the_expected_configs_exist():
    assert {p.stem for p in YAMLS} >= {"smollm2", "scripted", "openai", "gpt54_nano", "deepseek_v4_flash",
                                       "gemini38_flash", "vllm"}


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: p.stem)
def test_yaml_matches_schema(path):
    if path.stem in NEEDS_USER_VALUES:  # they fail until the user sets the model's name
        with pytest.raises(Exception, match="name"):
            compose_root([f"model={path.stem}"])
    cfg = compose_root([f"model={path.stem}", "model.name=user-model"] if path.stem in NEEDS_USER_VALUES else [f"model={path.stem}"]).model
    assert cfg.kind in KINDS
    assert type(cfg) is config_class(cfg.kind)
    key_env = getattr(cfg, "api_key_env", None)
    assert key_env is None or key_env.isupper()  # a variable name, not a key


def test_unknown_key_is_an_error():
    with pytest.raises(ConfigKeyError, match="temprature"):
        model_config({"kind": "openai", "temprature": 0.2})


def test_smollm2_serves_the_embedded_model():
    cfg = compose_root(["model=smollm2"]).model
    cmd = llamacpp_command(cfg, 8080)
    assert cmd[cmd.index("--model") + 1].endswith(".gguf")
    assert cmd[cmd.index("--chat_format") + 1] == "chatml-function-calling"
