"""Models by `kind`: which client a kind builds and which config class it takes, and serving a model
for a single in-process job.

A kind is a factory called as `factory(cfg, base_url: str | None) -> Model`, whose `config` attribute
(if any) is the config class the kind takes; `model.kind` may also be the dotted path of your own
(docs/extending.md), which takes the settings of whichever built-in config its YAML started from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from omegaconf import DictConfig, OmegaConf

from runners.core.frozen_fields import Defaults, defaults_of
from runners.core.messages import Model
from runners.core.registry import Registry, UnknownName, import_dotted
from runners.models.config import ApiModelConfig, ModelConfig
from runners.models.scripted import ScriptedModelConfig
from runners.models.server import ModelServer, ServedModelConfig, needs_server


class ModelKind:
    """A built-in kind: its client (imported on first use, so naming kinds imports no HTTP stack)
    and the config class it takes."""

    def __init__(self, factory: str, config: type[ModelConfig]) -> None:
        self.factory, self.config = factory, config

    def __call__(self, cfg: ModelConfig, base_url: str | None) -> Model:
        return import_dotted(self.factory)(cfg, base_url)  # type: ignore[no-any-return]


KINDS: Registry[ModelKind] = Registry("model kind")
KINDS.add("openai", ModelKind("runners.models.openai_compat:OpenAICompatModel", ApiModelConfig))
KINDS.add("llamacpp", ModelKind("runners.models.openai_compat:OpenAICompatModel", ServedModelConfig))
KINDS.add("vllm", ModelKind("runners.models.openai_compat:OpenAICompatModel", ServedModelConfig))
KINDS.add("scripted", ModelKind("runners.models.scripted:scripted_model", ScriptedModelConfig))


def config_class(kind: str) -> type[ModelConfig] | None:
    """The config class kind `kind` takes; None for a plugin kind that names none (or does not import)."""
    try:
        cls = getattr(KINDS.get(kind), "config", None)
    except UnknownName:
        return None
    return cls if isinstance(cls, type) and issubclass(cls, ModelConfig) else None


def config_classes() -> list[type[ModelConfig]]:
    """The built-in kinds' config classes, fewest fields first: a plugin kind's settings take the
    first that holds them."""
    classes = {cls for name in KINDS.names() if (cls := config_class(name)) is not None}
    return sorted(classes, key=lambda c: (len(dataclasses.fields(c)), c.__name__))


def flat_fields() -> dict[str, Any]:
    """Every built-in kind's fields with their defaults: the one flat `ModelConfig` of record schema 2.
    Job ids and judge keys hash a model config in this shape, so that earlier sweeps keep theirs (a
    field added to any kind later enters an id only away from its default: runners/core/frozen_fields.py)."""
    return {k: v for cls in config_classes() for k, v in dataclasses.asdict(cls()).items()}


def flat_defaults(model: ModelConfig | None) -> Defaults:
    """The defaults of `flat_model`'s fields: every built-in kind's, `model`'s own class last."""
    out = Defaults()
    for cls in config_classes():
        out.update(defaults_of(cls()))
    if model is not None:
        out.update(defaults_of(model))
    return out


def model_config(cfg: Any, *, recorded: bool = False, cls: type[ModelConfig] | None = None) -> ModelConfig:
    """A model config as its kind's class (or `cls`), from a dataclass, a dict or an OmegaConf node; a
    key that class lacks is an error. `recorded`: a record's config, where schema-2 records kept every
    kind's fields (another kind's fields are dropped: this kind never read them)."""
    if isinstance(cfg, ModelConfig):
        return cfg
    d = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
    assert isinstance(d, dict), type(d)
    cls = cls or config_class(str(d.get("kind", ModelConfig.kind))) or _class_holding(d, recorded)
    if recorded:
        foreign = set(flat_fields()) - {f.name for f in dataclasses.fields(cls)}
        d = {k: v for k, v in d.items() if k not in foreign}
    return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(cls), d))  # type: ignore[return-value]


def _class_holding(d: dict[str, Any], recorded: bool) -> type[ModelConfig]:
    classes, flat = config_classes(), flat_fields()
    keys = {k for k, v in d.items() if not (recorded and k in flat and flat[k] == v)}
    for cls in classes:
        if keys <= {f.name for f in dataclasses.fields(cls)}:
            return cls
    return classes[-1]  # the merge names the key no class has


def flat_model(cfg: ModelConfig) -> dict[str, Any]:
    """`cfg` as the flat schema-2 `ModelConfig` held it (what ids and judge keys hash)."""
    return {**flat_fields(), **dataclasses.asdict(cfg)}


def endpoint(cfg: ModelConfig) -> str | None:
    """The configured API endpoint (`base_url`), None for kinds that have none."""
    return cfg.base_url if isinstance(cfg, ApiModelConfig) else None


def seeded(cfg: ModelConfig, seed: int) -> ModelConfig:
    """`cfg` sampling with the job's seed where it sets none (API kinds; the others sample nothing)."""
    if isinstance(cfg, ApiModelConfig) and cfg.seed is None:
        return dataclasses.replace(cfg, seed=seed)
    return cfg


def build_model(cfg: ModelConfig, base_url: str | None = None) -> Model:
    """The client for `cfg`; `base_url` (a served model's URL) overrides `cfg.base_url`."""
    factory = KINDS.get(cfg.kind)
    if needs_server(cfg) and not base_url:
        raise ValueError(
            f"model.kind={cfg.kind} talks to a model server: start one with `served(cfg)` "
            "(the sweep does this for you) or point model.base_url at a running server"
        )
    return factory(cfg, base_url)


@contextmanager
def served(cfg: ModelConfig) -> Iterator[str | None]:
    """The endpoint URL for `cfg`, starting and stopping a server if its kind needs one and no
    `base_url` is set; for API and scripted models simply their `base_url`."""
    if not needs_server(cfg):
        yield endpoint(cfg)
        return
    assert isinstance(cfg, ServedModelConfig)
    with ModelServer(cfg) as server:
        yield server.url
