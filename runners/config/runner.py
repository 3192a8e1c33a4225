"""Typed config schemas owned by the runner (the agent, methods, the sweep's grid, storage,
tracking and cluster). Each YAML group in `conf/` extends one of these; see `runners/config/schema.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runners.config.slurm import SlurmConfig
from runners.core.config_fields import Enters, setting
from runners.core.harness_names import OWN_LOOP
from runners.core.paths import PATH, PATH_OR_NAME, path_field
from tab.config import TabConfig

_AGENT = Enters.JOB_ID | Enters.SWEEP_NAME


@dataclass
class AgentConfig:
    """The harness settings of SPEC section 2 (paper settings by default)."""

    max_turns: int = setting(_AGENT, default=300)
    time_limit_s: float = setting(_AGENT, default=3600.0)
    context_level: int = setting(_AGENT, default=3)
    # where per-job workspaces are materialized (None: the system temp dir)
    work_dir: str | None = setting(Enters.NOTHING, default=None, path=PATH)
    # who runs the episode: `dci`, our own loop (SPEC section 2), or a production harness run in the
    # job's sandbox against the job's model (a module of runners/harnesses/agents/: docs/harnesses.md)
    harness: str = setting(_AGENT, default=OWN_LOOP)


@dataclass
class MethodConfig:
    """A method: which hooks it plugs into the environment. `tab` null means no tab. `plugins`:
    more plugin kinds, by registered name or dotted path (`mypkg.hooks:make`, a factory
    `(method, ctx) -> EnvPlugin`; see docs/extending.md), plugged in after the built-in ones."""

    name: str = "dci"
    todo: bool = False
    self_refine: bool = False
    tab: TabConfig | None = None
    plugins: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)


@dataclass
class GridConfig:
    """One list per axis; the sweep runs their product (times the benchmark's tasks). By default the
    groups `conf/config.yaml` chooses, so a sweep given no axis runs what `runners.job` would."""

    benchmark: list[str] = setting(Enters.SWEEP_NAME, default_factory=lambda: ["builtin"])
    agent: list[str] = setting(Enters.SWEEP_NAME, default_factory=lambda: [OWN_LOOP])  # the harnesses (conf/agent/)
    method: list[str] = setting(Enters.SWEEP_NAME, default_factory=lambda: ["dci"])
    model: list[str] = setting(Enters.SWEEP_NAME, default_factory=lambda: ["smollm2"])
    seed: list[int] = setting(Enters.SWEEP_NAME, default_factory=lambda: [0])
    tasks: list[str] = setting(Enters.SWEEP_NAME, default_factory=list)
    slice: str | None = setting(Enters.NOTHING, default=None)  # which part of the sweep this driver runs


@dataclass
class ReportConfig:
    """Which methods the analyses compare: every paired comparison is against `baseline`
    (Table 1 paired, Figures 2 and 5, the side-by-side pages), Table 4's ablations against
    `treatment`. An experiment names them; they never change a job.

    `live_every`: while the sweep runs, its tables and figures are computed again from the records
    in the background after every this many finished jobs (`runners/sweep/live_report.py`; each job's
    pages are written as it finishes); 0: only at the end."""

    baseline: str = setting(Enters.SWEEP_NAME, default="dci")
    treatment: str = setting(Enters.SWEEP_NAME, default="runningtab")
    live_every: int = setting(Enters.NOTHING, default=1000)


@dataclass
class BudgetConfig:
    """What a sweep may spend, in USD at the models' prices (all optional; null = no limit).

    `sweep_usd`, `cell_usd`: the scheduler starts no pair of jobs whose expected cost would take the
    sweep's (or its grid cell's) spend past them, and once the spend reaches them each running job
    stops at its next paid call (`stop_reason: budget`: not a result, run again when the budget admits
    it); the expected cost is the mean spend of the cell's finished jobs, else `estimate_usd`, else
    `job_usd`. `job_usd`: a job whose cost reaches it stops with `stop_reason: job_budget`, a result
    scored on what it left (a run with a higher `job_usd` continues and replaces it). Spend counts
    what was paid: a reply from the model-call cache costs nothing. `allow_unpriced`: false refuses
    to start while a model's price is missing or a placeholder (the paper presets set it false).
    None of this changes a job id (runners/job/identity.py).
    """

    sweep_usd: float | None = None
    cell_usd: float | None = None
    job_usd: float | None = None
    estimate_usd: float | None = None
    allow_unpriced: bool = True

    @property
    def limits_spend(self) -> bool:
        """Whether a sweep or cell budget holds the spend (the one test of it: the scheduler pairs and
        admits jobs under it, the preflight asks for an estimate)."""
        return self.sweep_usd is not None or self.cell_usd is not None


@dataclass
class PlanConfig:
    """What the plan (`runningtab plan`, and `--cfg job`) assumes where the grid cannot tell: a
    model call's `latency_s` (its reply; the tool's run is small beside it), the stated token figures
    per job of each benchmark (`tokens`: a file of conf/tokens/, or a path), a `pilot` sweep whose own
    records replace them, and `tasks`: the count of a benchmark whose task list is not on this
    machine, by its name in the grid (`+plan.tasks.workspace_bench=100`). Never part of a job.
    See runners/plan/ and docs/sweeps.md#the-plan."""

    latency_s: float = 5.0
    tokens: str = path_field(default="stated", kind=PATH_OR_NAME)
    pilot: str | None = path_field()
    tasks: dict[str, int] = field(default_factory=dict)


@dataclass
class TrackerConfig:
    """Experiment tracking (`kind`: wandb | jsonl | none, or a dotted path to a factory; see
    runners/tracking/tracker.py). W&B runs offline unless configured."""

    kind: str = "wandb"
    project: str = "runningtab"
    entity: str | None = None
    mode: str | None = None
    dir: str | None = path_field()


@dataclass
class ClusterConfig:
    """Ray: where to run (None = a local Ray), the episode actors, and failure handling (`retries`:
    lost actors within a run; `error_retries` and `error_wait_s`: host failures within a run).

    Jobs run as asyncio tasks in `actors` long-lived episode actors (None: one per `actor_cpus`
    CPUs the cluster has free once the model servers are up), at most `max_in_flight` at once
    over the whole cluster, spread evenly over the actors."""

    address: str | None = None
    num_cpus: int | None = None
    actors: int | None = None
    actor_cpus: float = 0.5
    max_in_flight: int = 8
    retries: int = 2
    # A job the host failed (its record ends in env_error/model_error, or its judge could not read it)
    # runs again within the run up to this many times, after error_wait_s seconds, doubled at each
    # retry (30 + 60 + 120 s: an outage of a few minutes heals without a human); every later run of
    # the sweep runs what is still not a result again (its record keeps the earlier attempts' errors).
    error_retries: int = 3
    error_wait_s: float = 30.0
    job_timeout_s: float | None = None
    server_gpus: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)
    slurm: SlurmConfig = field(default_factory=SlurmConfig)
