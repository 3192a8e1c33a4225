"""The `model` config group's schema: one dataclass for API, served, and scripted models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING, OmegaConf


@dataclass
class ServerConfig:
    """How to start a model server (kinds `vllm` and `llamacpp`); ignored by the other kinds.

    `model_path`: a HF id or local dir for vLLM, a .gguf file for llama.cpp (null = the embedded
    SmolLM2). `port` 0 picks a free port. `gpus` sets CUDA_VISIBLE_DEVICES (empty = inherit, as
    under Ray, which sets it per actor). `log_path` null = a file in the system temp dir.
    `resources`: custom Ray resources each replica holds (`{model_host: 1}` puts replicas only on
    nodes started with `ray start --resources='{"model_host": N}'`).
    """

    model_path: str | None = None
    host: str = "127.0.0.1"
    port: int = 0
    tool_call_parser: str = "hermes"
    tensor_parallel_size: int = 1
    gpus: list[int] = field(default_factory=list)
    ctx_size: int = 8192
    chat_format: str = "chatml-function-calling"
    startup_timeout_s: float = 900.0
    stop_grace_s: float = 15.0
    log_path: str | None = None
    extra_args: list[str] = field(default_factory=list)
    replicas: int = 1
    resources: dict[str, float] = field(default_factory=dict)


@dataclass
class ModelConfig:
    """One model. `kind`: openai | llamacpp | vllm | scripted (see runners/models/registry.py).

    `api_key_env` is the NAME of the environment variable that holds the key (null = send no key);
    the key itself never enters the config. Sampling fields left null are not sent, so the
    provider's default applies (reasoning models reject a temperature). `extra_body` is merged into
    every request (e.g. reasoning_effort). `echo_extra` lists reply fields (kept in
    `AssistantMessage.extra`) that must be sent back with the assistant message on later turns.
    `concurrency` caps requests in flight per base_url across the whole process (0 = no cap): the
    jobs of one episode actor share it.
    Prices are USD per million tokens. `name` (the model id sent to the API) has no default:
    a config that leaves it unset fails with "Missing mandatory value: name".
    """

    kind: str = "scripted"
    id: str = "model"  # the config's name in conf/model/ (each YAML sets it); labels jobs and records
    name: str = MISSING
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    echo_extra: list[str] = field(default_factory=list)
    timeout_s: float = 120.0
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    concurrency: int = 0
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    script: str | None = None
    server: ServerConfig = field(default_factory=ServerConfig)


def model_config(cfg: Any) -> ModelConfig:
    """A `ModelConfig` from a dataclass, a dict or an OmegaConf node; unknown keys are an error."""
    if isinstance(cfg, ModelConfig):
        return cfg
    merged = OmegaConf.merge(OmegaConf.structured(ModelConfig), cfg)
    return OmegaConf.to_object(merged)  # type: ignore[return-value]
