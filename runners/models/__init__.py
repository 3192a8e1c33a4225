"""Model backends: API and served models over the OpenAI-compatible client, and the scripted model.

`from runners.models import build_model, ...` imports the module that defines the name when it is
first used, not at import: the config schema imports `runners.models.config`, which must not pull in
every backend and its HTTP client (the start of a sweep's driver, issue 38.5).
"""

from __future__ import annotations

import importlib
from typing import Any

SURFACE = {  # name -> module that defines it
    "KINDS": "runners.models.registry",
    "ApiModelConfig": "runners.models.config",
    "ModelConfig": "runners.models.config",
    "ScriptedModelConfig": "runners.models.scripted",
    "ServedModelConfig": "runners.models.server",
    "ServerConfig": "runners.models.server",
    "build_model": "runners.models.registry",
    "model_config": "runners.models.registry",
    "served": "runners.models.registry",
}

__all__ = sorted(SURFACE)


def __getattr__(name: str) -> Any:
    if name not in SURFACE:
        raise AttributeError(f"module 'runners.models' has no attribute {name!r}")
    return getattr(importlib.import_module(SURFACE[name]), name)
