"""Model backends: API and served models over the OpenAI-compatible client, and the scripted model."""

from runners.models.config import ModelConfig, ServerConfig, model_config
from runners.models.registry import KINDS, build_model, served

__all__ = ["KINDS", "ModelConfig", "ServerConfig", "build_model", "model_config", "served"]
