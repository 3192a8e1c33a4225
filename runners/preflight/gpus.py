"""The GPUs a sweep's served models need, against the GPUs it will have, before anything starts.

Each vLLM model the sweep serves starts `model.server.replicas` replicas of `tensor_parallel_size`
× `cluster.server_gpus` GPUs, all at once. Without a check here a sweep on a machine without them
started Ray, wrote `sweep.yaml` and `wandb/`, and ended in a traceback when Ray could not place the
first replica. The GPUs it will have:

- a Slurm submission (`slurm.launch`): `cluster.slurm.nodes` × `gpus_per_node` (a job-array task:
  one node's);
- a local sweep (no `cluster.address`, no `RAY_ADDRESS`): this machine's, as Ray counts them
  (its NVIDIA manager, limited by `CUDA_VISIBLE_DEVICES`);
- a running Ray cluster it joins: not known before it joins; `start_replicas` checks it then
  (runners/sweep/model_servers.py).

GPUs the models leave idle are not a refusal, but `--cfg job` and the plan say how many
(`gpu_note`), with the replicas that would use them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

from runners.config.runner import ClusterConfig
from runners.config.schema import RootConfig


@dataclass(frozen=True)
class Need:
    """One served model's GPUs: `replicas` × `per_replica`."""

    model: str
    replicas: int
    per_replica: float

    @property
    def total(self) -> float:
        return self.replicas * self.per_replica


@dataclass(frozen=True)
class Have:
    """The GPUs the sweep will have (`count` None: not known before it starts) and where they are,
    with `per_node` (None: one machine, or not known)."""

    count: float | None
    where: str
    per_node: float | None = None


def needs(configs: Sequence[RootConfig]) -> list[Need]:
    """Each served vLLM model of the grid once, with the GPUs its replicas hold."""
    from runners.models.server import ServedModelConfig, needs_server

    out: dict[str, Need] = {}
    for cfg in configs:
        m = cfg.model
        if m.kind == "vllm" and needs_server(m) and isinstance(m, ServedModelConfig):
            out.setdefault(m.id, Need(m.id, m.server.replicas, m.server.tensor_parallel_size * cfg.cluster.server_gpus))
    return list(out.values())


def have(cluster: ClusterConfig, on_slurm: bool) -> Have:
    """The GPUs of the cluster the sweep will run on, as far as they can be known here."""
    s = cluster.slurm
    if on_slurm:
        nodes = 1 if s.array else s.nodes
        where = ("one node of the job array (cluster.slurm.gpus_per_node)" if s.array
                 else f"the Slurm allocation (cluster.slurm.nodes={s.nodes} × cluster.slurm.gpus_per_node={s.gpus_per_node})")
        return Have(float(nodes * s.gpus_per_node), where, float(s.gpus_per_node))
    address = cluster.address or os.environ.get("RAY_ADDRESS")
    if address:
        return Have(None, f"the running Ray cluster at {address} (counted when the sweep joins it)")
    return Have(float(local_gpus()), "this machine (as Ray counts them, within CUDA_VISIBLE_DEVICES)")


def local_gpus() -> int:
    """This machine's GPUs as a local `ray.init()` would count them: its NVIDIA manager's count,
    limited by the visible devices (`CUDA_VISIBLE_DEVICES`)."""
    from ray._private.accelerators import get_accelerator_manager_for_resource

    manager = get_accelerator_manager_for_resource("GPU")
    count = manager.get_current_node_num_accelerators()
    visible = manager.get_current_process_visible_accelerator_ids()
    return count if visible is None else min(count, len(visible))


def check_gpus(configs: Sequence[RootConfig], on_slurm: bool = False) -> None:
    """Refuse a grid whose served models need more GPUs than the cluster has, or a replica more than
    one node holds; every model that does not fit is named."""
    wanted = [n for n in needs(configs) if n.total > 0]  # vLLM's CPU build (cluster.server_gpus=0) holds none
    if not configs or not wanted:
        return
    got = have(configs[0].cluster, on_slurm)
    if got.count is None:
        return
    wrong = []
    if got.per_node is not None:
        wrong += [f"model {n.model!r}: one replica needs {n.per_replica:g} GPU(s) (model.server.tensor_parallel_size × "
                  f"cluster.server_gpus) but a node has {got.per_node:g}: a replica must fit on one node; raise "
                  "cluster.slurm.gpus_per_node or lower model.server.tensor_parallel_size" for n in wanted if n.per_replica > got.per_node]
    total = sum(n.total for n in wanted)
    if total > got.count:
        parts = " + ".join(f"{n.model} {n.replicas} replica(s) × {n.per_replica:g}" for n in wanted)
        wrong.append(f"the served models need {total:g} GPU(s) ({parts}; model.server.replicas × tensor_parallel_size × "
                     f"cluster.server_gpus) but {got.where} has {got.count:g}: lower model.server.replicas or "
                     "tensor_parallel_size, run where the GPUs are (cluster.slurm.gpus_per_node, cluster.slurm.nodes), "
                     "or serve vLLM's CPU build (model=vllm_cpu cluster.server_gpus=0)")
    if wrong:
        from runners.preflight.refusals import ConfigErrors

        raise ConfigErrors(wrong)


def gpu_note(configs: Sequence[RootConfig], on_slurm: bool = False) -> str | None:
    """One line on the GPUs: how many the served models use of how many there are, and how many
    they leave idle (with the replicas that would use them); None when there is nothing to say."""
    wanted = [n for n in needs(configs) if n.total > 0]
    if not configs or not (wanted or on_slurm):
        return None
    got = have(configs[0].cluster, on_slurm)
    if not wanted and not got.count:
        return None
    total = sum(n.total for n in wanted)
    if got.count is None:
        return f"GPUs: the served models need {total:g}; {got.where}"
    if not wanted:
        return (f"GPUs: no model of the grid is served on GPUs, so all {got.count:g} of {got.where} are left idle: "
                "set cluster.slurm.gpus_per_node=0 for API models")
    idle = got.count - total
    line = f"GPUs: the served models use {total:g} of the {got.count:g} of {got.where}"
    if idle > 0 and total <= got.count:
        one = wanted[0]
        more = math.floor(idle / one.per_replica) if one.per_replica else 0
        hint = f" (model.server.replicas={one.replicas + more} would use them for {one.model})" if more else ""
        line += f"; {idle:g} left idle{hint}"
    return line
