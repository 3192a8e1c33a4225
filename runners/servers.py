"""Model servers for a sweep: one per served model (vLLM on GPUs, llama.cpp on CPU), started once as
its own Ray actor, shared by every job that uses that model, and stopped at the end."""

from __future__ import annotations

import logging
from typing import Any

import ray

from runners.config import ClusterConfig
from runners.models.config import ModelConfig
from runners.models.registry import SERVED_KINDS
from runners.models.server import ModelServer

log = logging.getLogger(__name__)


class ModelServers:
    """Context manager: `urls` maps a model id to its server's URL (None for API/scripted models)."""

    def __init__(self, models: dict[str, ModelConfig], cluster: ClusterConfig) -> None:
        self.models, self.cluster = models, cluster
        self.actors: dict[str, Any] = {}
        self.urls: dict[str, str | None] = {}

    def __enter__(self) -> ModelServers:
        try:
            for mid, cfg in self.models.items():
                if cfg.kind not in SERVED_KINDS or cfg.base_url:
                    self.urls[mid] = cfg.base_url
                    continue
                gpus = self.cluster.server_gpus * cfg.server.tensor_parallel_size if cfg.kind == "vllm" else 0
                actor = ray.remote(ModelServer).options(num_cpus=1 if cfg.kind == "llamacpp" else 0.1, num_gpus=gpus).remote(cfg)
                self.actors[mid] = actor
                self.urls[mid] = ray.get(actor.start.remote())
                log.info("model server %s up at %s", mid, self.urls[mid])
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        for mid, actor in self.actors.items():
            try:
                ray.get(actor.stop.remote(), timeout=60)
            except Exception as e:  # the actor may already be gone; its process group dies with it
                log.warning("stopping model server %s: %s", mid, e)
            ray.kill(actor)
        self.actors.clear()
