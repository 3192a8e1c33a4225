"""The vocabulary every layer shares: the task (`task.py`), messages and the `Model` protocol
(`messages.py`), the job record (its files, typed documents, its one reader and writers), the registry
convention (`registry.py`) and storage of records (`storage.py`).

Nothing here imports the rest of `runners/` or `eval/`, so both can import it without a cycle
(`tests/test_layers.py` holds that line).

It is also the one surface an extension imports from (docs/extending.md): `from runners.core import
Task, scores_doc, ...`. The names that live above the core are looked up when first used, never at
import, so the line above still holds.
"""

from __future__ import annotations

import importlib
from typing import Any

SURFACE = {  # name -> module that defines it
    "Task": "runners.core.task",
    "TaskExtras": "runners.core.task_extras",
    "IdPart": "runners.core.task_extras",
    "extra_field": "runners.core.task_extras",
    "Enters": "runners.core.config_fields",
    "setting": "runners.core.config_fields",
    "Registry": "runners.core.registry",
    "AssistantMessage": "runners.core.messages",
    "Usage": "runners.core.messages",
    "Model": "runners.core.messages",
    "ModelError": "runners.core.messages",
    "ContextLengthError": "runners.core.messages",
    "Storage": "runners.core.storage",
    "StorageConfig": "runners.core.storage",
    "S3StorageConfig": "runners.core.storage",
    "ToolCall": "envs.protocol",
    "EnvPlugin": "envs.protocol",
    "BenchmarkConfig": "eval.config",
    "JudgeConfig": "eval.config",
    "scores_doc": "eval.judges.base",
    "scoring_session": "eval.judges.extract.session",
    "PromptBlock": "runners.agent.methods",
    "MethodConfig": "runners.config.runner",
}
_ALIASES = {"scoring_session": "current"}  # the name the defining module gives it

__all__ = sorted(SURFACE)


def __getattr__(name: str) -> Any:
    if name not in SURFACE:
        raise AttributeError(f"module 'runners.core' has no attribute {name!r}; the extension surface is: {', '.join(__all__)}")
    return getattr(importlib.import_module(SURFACE[name]), _ALIASES.get(name, name))
