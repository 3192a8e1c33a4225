"""A sweep's model servers (`ModelServers`: each served model started once, shared by its jobs,
stopped at the end), their replicas across a Ray cluster, and spreading jobs over them.

On a multi-node cluster an agent on one node talks to a vLLM server on another, so the server must
listen on every interface and advertise its node's address: `ClusterModelServer` does that on top
of `ModelServer`. `start_replicas` places the replicas as Ray actors (spread over the nodes, each
holding its GPUs and the custom resources `model.server.resources` asks for, so a replica runs only
on a node started with them) and starts them in parallel. `ReplicaPool` gives each new job the least busy
replica and keeps it for the whole job, so one conversation's growing prefix stays in one server's
KV cache (round-robin per request would recompute it on every replica). A replica takes at most
`replica_slots` jobs at once: llama.cpp's server answers one request at a time, and a job queued
behind others at the server would spend its time limit waiting (calls of 60-105 s each with eight
jobs on one server); it waits for a slot before it starts instead.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ray

from runners.config.runner import ClusterConfig
from runners.models.config import ModelConfig
from runners.models.registry import endpoint
from runners.models.server import (
    ModelServer,
    ServedModelConfig,
    ServerError,
    needs_server,
)

log = logging.getLogger(__name__)
WILDCARD = "0.0.0.0"
KIND_SLOTS = {"llamacpp": 1}  # requests a replica of this kind serves at once (llama-cpp-python's server: one)


class ClusterModelServer(ModelServer):
    """A `ModelServer` reachable from other nodes: binds all interfaces, advertises this node's IP."""

    def __init__(self, cfg: ServedModelConfig, owner: str | None = None) -> None:
        super().__init__(dataclasses.replace(cfg, server=dataclasses.replace(cfg.server, host=WILDCARD)), owner)

    def start(self) -> str:
        url = super().start()
        self.url = url.replace(f"//{WILDCARD}:", f"//{ray.util.get_node_ip_address()}:", 1)
        return self.url

    def pid(self) -> int | None:
        """The server process (for diagnostics and tests)."""
        return self.proc.pid if self.proc else None

    def node_id(self) -> str:
        """The Ray node this server runs on (where its resources put it)."""
        return ray.get_runtime_context().get_node_id()


@dataclass
class Replica:
    actor: Any
    url: str


def replica_slots(cfg: ServedModelConfig) -> int | None:
    """The jobs one replica serves at once: `model.server.slots`, else its kind's; None: no cap."""
    slots = cfg.server.slots if cfg.server.slots is not None else KIND_SLOTS.get(cfg.kind, 0)
    return slots or None


def replica_gpus(cfg: ServedModelConfig, server_gpus: float) -> float:
    """GPUs one replica holds: one per tensor-parallel rank (times `cluster.server_gpus`); none on CPU."""
    return server_gpus * cfg.server.tensor_parallel_size if cfg.kind == "vllm" else 0.0


def start_replicas(cfg: ServedModelConfig, count: int, server_gpus: float, public: bool,
                   owner: str | None = None) -> list[Replica]:
    """Start `count` servers of `cfg` as Ray actors and wait until all are healthy.

    `public`: bind all interfaces and advertise the node IP (a multi-node cluster); otherwise
    127.0.0.1 as in a local sweep. `owner`: the label each server carries (`ModelServer`). Fails at once, not after a scheduling hang, when the cluster
    lacks the GPUs or custom resources, or no single node holds what one replica needs; stops the
    others when one fails to start.
    """
    if count < 1:
        raise ServerError(f"model {cfg.name!r}: model.server.replicas must be >= 1, got {count}")
    gpus = replica_gpus(cfg, server_gpus)
    _check_placeable(cfg, count, gpus)
    cls = ray.remote(ClusterModelServer if public else ModelServer)
    options = {
        "num_cpus": 1 if cfg.kind == "llamacpp" else 0.1,
        "num_gpus": gpus,
        "resources": dict(cfg.server.resources),
        "max_restarts": 0,
        "scheduling_strategy": "SPREAD" if count > 1 else "DEFAULT",
    }
    actors = [cls.options(**options).remote(cfg, owner) for _ in range(count)]
    try:
        urls = ray.get([a.start.remote() for a in actors])
    except BaseException:
        stop_replicas([Replica(a, "") for a in actors])
        raise
    replicas = [Replica(a, u) for a, u in zip(actors, urls, strict=True)]
    log.info("model %s: %d replica(s) at %s", cfg.name, count, ", ".join(urls))
    return replicas


def _check_placeable(cfg: ServedModelConfig, count: int, gpus: float) -> None:
    """Ray would keep an actor it cannot place pending forever: check the cluster's shape first."""
    need = {k: v for k, v in {"GPU": gpus, **cfg.server.resources}.items() if v > 0}
    total = ray.cluster_resources()
    for name, amount in need.items():
        have = total.get(name, 0.0)
        if count * amount <= have:
            continue
        if name == "GPU":
            raise ServerError(
                f"model {cfg.name!r} needs {count} replica(s) × {amount:g} GPU(s), but the Ray cluster has {have:g} GPU(s): "
                "request more GPUs (cluster.slurm.gpus_per_node, cluster.slurm.nodes) or lower model.server.replicas "
                "or model.server.tensor_parallel_size (vLLM's CPU build holds no GPU: cluster.server_gpus=0)"
            )
        raise ServerError(
            f"model {cfg.name!r} needs {count} replica(s) × {amount:g} {name!r}, but the Ray cluster has {have:g}: "
            f"start nodes with `ray start --resources='{{\"{name}\": N}}'` or lower model.server.replicas"
        )
    nodes = [n["Resources"] for n in ray.nodes() if n["Alive"]]
    if need and not any(all(r.get(k, 0.0) >= v for k, v in need.items()) for r in nodes):
        want = ", ".join(f"{v:g} GPU(s)" if k == "GPU" else f"{v:g} {k!r}" for k, v in need.items())
        raise ServerError(f"model {cfg.name!r}: no node of the Ray cluster has {want} for one replica")


def stop_replicas(replicas: Sequence[Replica], timeout_s: float = 60.0) -> None:
    """Stop every server process, then the actors, waiting at most `timeout_s` in all (a cluster
    that is going down, e.g. signalled with the driver, answers no call). An actor that is already
    gone cannot stop its server; on Slurm the node runner (`slurm.node`) kills such orphans when Ray stops."""
    pending = {}
    for r in replicas:
        try:
            pending[r.actor.stop.remote()] = r
        except Exception as e:  # the actor handle is unusable
            log.warning("stopping a model server: %s", e)
    done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=timeout_s) if pending else ([], [])
    for ref, r in pending.items():
        try:
            ray.get(ref, timeout=0)
        except Exception as e:
            why = e if ref in done else f"no answer within {timeout_s:g} s"
            log.warning("stopping model server %s: %s", r.url or "(not started)", why)
    for r in replicas:
        try:
            ray.kill(r.actor)
        except Exception as e:  # the cluster is gone: so is the actor
            log.warning("killing a model server's actor: %s", e)


class ReplicaPool:
    """Which replica a new job uses: the one with the fewest jobs in flight, ties in turn.

    `urls` maps a model id to its replicas' URLs (a single URL, or None for API/scripted models,
    is passed through unchanged); `slots` caps the jobs in flight per replica of a model (absent: no
    cap). `room` says whether a job of the model can start now; `acquire` when it starts,
    `release` when it ends.
    """

    def __init__(self, urls: Mapping[str, str | Sequence[str] | None], slots: Mapping[str, int] | None = None) -> None:
        self._fixed: dict[str, str | None] = {}
        self._load: dict[str, dict[str, int]] = {}
        self._slots = dict(slots or {})
        self._turn = itertools.count()
        for model, u in urls.items():
            if u is None or isinstance(u, str):
                self._fixed[model] = u
            elif not u:
                raise ValueError(f"model {model!r} has no replica URL")
            else:
                self._load[model] = dict.fromkeys(u, 0)

    def room(self, model: str) -> bool:
        cap = self._slots.get(model)
        return cap is None or model not in self._load or min(self._load[model].values()) < cap

    def capacity(self, model: str) -> int | None:
        """The jobs of `model` that can run at once (None: no cap)."""
        cap = self._slots.get(model)
        return None if cap is None or model not in self._load else cap * len(self._load[model])

    def acquire(self, model: str) -> str | None:
        if model not in self._load:
            return self._fixed.get(model)
        load = self._load[model]
        least = min(load.values())
        tied = [u for u, n in load.items() if n == least]
        url = tied[next(self._turn) % len(tied)]
        load[url] += 1
        return url

    def release(self, model: str, url: str | None) -> None:
        if model in self._load and url in self._load[model]:
            self._load[model][url] = max(0, self._load[model][url] - 1)

    def in_flight(self, model: str) -> dict[str, int]:
        return dict(self._load.get(model, {}))


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
        for mid, replicas in self.actors.items():
            cfg = self.models[mid]
            assert isinstance(cfg, ServedModelConfig)
            stop_replicas(replicas, timeout_s=cfg.server.stop_grace_s + 5)  # a stop takes its grace period at most
        self.actors.clear()
