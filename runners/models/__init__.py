"""Model backends: API and served models over the OpenAI-compatible client, and the scripted model."""

from runners.models.config import ApiModelConfig, ModelConfig
from runners.models.registry import KINDS, build_model, model_config, served
from runners.models.scripted import ScriptedModelConfig
from runners.models.server import ServedModelConfig, ServerConfig

__all__ = ["KINDS", "ApiModelConfig", "ModelConfig", "ScriptedModelConfig", "ServedModelConfig", "ServerConfig",
           "build_model", "model_config", "served"]
