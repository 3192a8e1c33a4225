"""The `model` config group's schema: what every model kind has, and what every kind spoken to over
the OpenAI-compatible API has. The other kinds' classes sit beside their implementation
(`runners/models/server.py`: `ServedModelConfig`, `runners/models/scripted.py`: `ScriptedModelConfig`);
`runners/models/registry.py` says which kind takes which class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omegaconf import MISSING

from runners.core.config_fields import ALL, Enters, setting
from runners.core.paths import PATH, PATH_OR_NAME

# what a model setting changes (runners/core/config_fields.py): the agent's model in a job id and a
# sweep's name, the judge's in its key, and which reply a call gets in the call cache
_REPLY = ALL  # sampling and identity of the model: changes everything
_RUN = Enters.NOTHING  # how a reply is fetched, billed or cached: changes nothing


@dataclass
class ModelConfig:
    """One model: what every kind has. `kind`: openai | llamacpp | vllm | scripted, or a dotted path
    (see runners/models/registry.py).

    `concurrency` caps requests in flight per endpoint (0 = no cap): across the whole process, and in
    a sweep across every actor through the provider's shared limiter (runners/models/rate_limit.py),
    which also halves it on 429/overload and grows it back. Prices are USD per million tokens:
    `pricing` names the provider's dated pricing file (`conf/pricing/<name>.yaml`, or a path) whose
    entry for `name` gives input, cached-input and output prices and tiers; without one,
    `price_in_per_mtok`/`price_out_per_mtok`. `cache`: off | read | write | read_write, the model-call
    cache (runners/models/call_cache.py); null = the entry point's default (read_write in a sweep, off
    for runners.job); `cache_dir`: its folder (null = $RUNNINGTAB_CALL_CACHE, else `<out>/.cache/calls`, beside
    the records; several sweeps may share one). None of these change a job id. `name` (the model id sent to the API) has no default: a
    config that leaves it unset is refused before anything runs ("model.name has no value …", `to_root`).
    """

    kind: str = setting(_REPLY, default="scripted")
    # the config's name in conf/model/ (each YAML sets it); labels jobs and records, never a reply
    id: str = setting(Enters.JOB_ID | Enters.JUDGE_KEY | Enters.SWEEP_NAME, default="model")
    name: str = setting(_REPLY, default=MISSING)
    concurrency: int = setting(_RUN, default=0)
    price_in_per_mtok: float = setting(_RUN, default=0.0)
    price_out_per_mtok: float = setting(_RUN, default=0.0)
    pricing: str | None = setting(_RUN, default=None, path=PATH_OR_NAME)  # a name in conf/pricing/, or a file
    cache: str | None = setting(_RUN, default=None)
    cache_dir: str | None = setting(_RUN, default=None, path=PATH)

    def for_task(self, task_id: str) -> ModelConfig:
        """The config one task's job runs with: the same for every kind but one that takes a setting
        per task (the scripted model's `script_dir`)."""
        return self


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
    `rpm`, `tpm`: the provider's requests and tokens per minute for this key (0 = no limit), kept by
    one limiter per provider (`base_url` + `api_key_env`) shared by every actor of a sweep.
    """

    # which provider answers (a judge's verdicts do not depend on where its model is reached)
    base_url: str | None = setting(Enters.JOB_ID | Enters.CACHE_KEY | Enters.SWEEP_NAME, default=None)
    api_key_env: str | None = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default=None)
    temperature: float | None = setting(_REPLY, default=None)
    top_p: float | None = setting(_REPLY, default=None)
    max_tokens: int | None = setting(_REPLY, default=None)
    seed: int | None = setting(_REPLY, default=None)
    extra_body: dict[str, Any] = setting(_REPLY, default_factory=dict)
    # what later turns send back (it reaches the cache key through the messages themselves)
    echo_extra: list[str] = setting(Enters.JOB_ID | Enters.JUDGE_KEY | Enters.SWEEP_NAME, default_factory=list)
    timeout_s: float = setting(_RUN, default=120.0)
    call_timeout_s: float = setting(_RUN, default=900.0)
    max_reply_bytes: int = setting(_RUN, default=16 * 2**20)
    max_retries: int = setting(_RUN, default=6)
    backoff_base_s: float = setting(_RUN, default=1.0)
    backoff_max_s: float = setting(_RUN, default=60.0)
    rpm: int = setting(_RUN, default=0)
    tpm: int = setting(_RUN, default=0)
