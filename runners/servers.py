"""Model servers for a sweep: each served model (vLLM on GPUs, llama.cpp on CPU) started once as its
own Ray actor(s) — `model.server.replicas` of them — shared by every job that uses that model, and
stopped at the end (see runners/replicas.py for placement and spreading)."""

from __future__ import annotations

import logging
from typing import Any

from runners.config import ClusterConfig
from runners.models.config import ModelConfig
from runners.models.registry import endpoint
from runners.models.server import ServedModelConfig, needs_server

log = logging.getLogger(__name__)


class ModelServers:
    """Context manager: `urls` maps a model id to its replicas' URLs, or to `model.base_url`
    (None for scripted models) when nothing is served; `slots` the jobs one replica of a served
    model serves at once, where that is capped. `owner`: the label every server carries
    (runners/models/lifeline.py), by which a later start of the sweep stops what a killed driver left."""

    def __init__(self, models: dict[str, ModelConfig], cluster: ClusterConfig, owner: str | None = None) -> None:
        self.models, self.cluster, self.owner = models, cluster, owner
        self.actors: dict[str, Any] = {}
        self.urls: dict[str, list[str] | str | None] = {}
        self.slots: dict[str, int] = {}

    def __enter__(self) -> ModelServers:
        from runners.replicas import replica_slots, start_replicas

        public = self.cluster.address is not None  # agents on other nodes must reach the servers
        try:
            for mid, cfg in self.models.items():
                if not needs_server(cfg):
                    self.urls[mid] = endpoint(cfg)
                    continue
                assert isinstance(cfg, ServedModelConfig)
                self.actors[mid] = start_replicas(cfg, cfg.server.replicas, self.cluster.server_gpus, public, self.owner)
                self.urls[mid] = [r.url for r in self.actors[mid]]
                if (slots := replica_slots(cfg)) is not None:
                    self.slots[mid] = slots
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        from runners.replicas import stop_replicas

        for mid, replicas in self.actors.items():
            cfg = self.models[mid]
            assert isinstance(cfg, ServedModelConfig)
            stop_replicas(replicas, timeout_s=cfg.server.stop_grace_s + 5)  # a stop takes its grace period at most
        self.actors.clear()
