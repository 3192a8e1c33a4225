"""The `model` config group's schema: what every model kind has, and what every kind spoken to over
the OpenAI-compatible API has. The other kinds' classes sit beside their implementation
(`runners/models/server.py`: `ServedModelConfig`, `runners/models/scripted.py`: `ScriptedModelConfig`);
`runners/models/registry.py` says which kind takes which class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING


@dataclass
class ModelConfig:
    """One model: what every kind has. `kind`: openai | llamacpp | vllm | scripted, or a dotted path
    (see runners/models/registry.py).

    `concurrency` caps requests in flight per endpoint across the whole process (0 = no cap): the
    jobs of one episode actor share it. Prices are USD per million tokens. `name` (the model id sent
    to the API) has no default: a config that leaves it unset fails with "Missing mandatory value: name".
    """

    kind: str = "scripted"
    id: str = "model"  # the config's name in conf/model/ (each YAML sets it); labels jobs and records
    name: str = MISSING
    concurrency: int = 0
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0


@dataclass
class ApiModelConfig(ModelConfig):
    """A model behind an OpenAI-compatible API (kind `openai`; the served kinds extend it).

    `api_key_env` is the NAME of the environment variable that holds the key (null = send no key);
    the key itself never enters the config. Sampling fields left null are not sent, so the
    provider's default applies (reasoning models reject a temperature). `extra_body` is merged into
    every request (e.g. reasoning_effort). `echo_extra` lists reply fields (kept in
    `AssistantMessage.extra`) that must be sent back with the assistant message on later turns.

    `timeout_s` bounds the connect and each wait for the reply's next bytes; `call_timeout_s` bounds
    a whole call (its attempts and the waits between them), and so does the job's remaining time
    when the call is made for a job. `max_reply_bytes`: a longer reply is not read further and the
    call fails (a model's reply is kilobytes; a server or proxy gone wrong can send gigabytes).
    """

    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    echo_extra: list[str] = field(default_factory=list)
    timeout_s: float = 120.0
    call_timeout_s: float = 900.0
    max_reply_bytes: int = 16 * 2**20
    max_retries: int = 6
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
