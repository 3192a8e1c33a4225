"""Models by `kind`: build the client for a config, and serve a model for a single in-process job.

A kind names a factory called as `factory(cfg: ModelConfig, base_url: str | None) -> Model`;
`model.kind` may also be the dotted path of your own (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from runners.core.messages import Model
from runners.core.registry import Registry
from runners.models.config import ModelConfig
from runners.models.server import COMMANDS, ModelServer

ModelFactory = Callable[[ModelConfig, str | None], Model]

KINDS: Registry[ModelFactory] = Registry("model kind")
KINDS.add("openai", "runners.models.openai_compat:OpenAICompatModel")
KINDS.add("llamacpp", "runners.models.openai_compat:OpenAICompatModel")
KINDS.add("vllm", "runners.models.openai_compat:OpenAICompatModel")


@KINDS.register("scripted")
def _scripted(cfg: ModelConfig, base_url: str | None) -> Model:
    from runners.models.scripted import ScriptedModel

    return ScriptedModel(cfg)


SERVED_KINDS = frozenset(COMMANDS)


def build_model(cfg: ModelConfig, base_url: str | None = None) -> Model:
    """The client for `cfg`; `base_url` (a served model's URL) overrides `cfg.base_url`."""
    factory = KINDS.get(cfg.kind)
    if cfg.kind in SERVED_KINDS and not (base_url or cfg.base_url):
        raise ValueError(
            f"model.kind={cfg.kind} talks to a model server: start one with `served(cfg)` "
            "(the sweep does this for you) or point model.base_url at a running server"
        )
    return factory(cfg, base_url)


@contextmanager
def served(cfg: ModelConfig) -> Iterator[str | None]:
    """The endpoint URL for `cfg`, starting and stopping a server if its kind needs one and no
    `base_url` is set; for API and scripted models simply `cfg.base_url`."""
    if cfg.kind not in SERVED_KINDS or cfg.base_url:
        yield cfg.base_url
        return
    with ModelServer(cfg) as server:
        yield server.url
