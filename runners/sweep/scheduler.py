"""Running job specs on a few long-lived episode actors: bounded in flight, one `ray.wait` loop,
outcomes as they finish.

The actors (runners/sweep/actors.py; by default one per CPU the cluster offers) each hold up to
`ceil(max_in_flight / actors)` jobs as asyncio tasks. A served model's replicas take as many jobs
at once as they serve requests (runners/sweep/model_servers.py): the next job to start is the first waiting
one whose model has room. A job's own failure is already in its record
(or is its exception) and is never retried; a job over its limit is stopped by its actor and
recorded as `time_limit`. An actor whose process dies, or whose node is lost, loses only its
in-flight jobs: they run again on the actors left (and a new actor takes its place when the
cluster can place one). Each outcome says which node ran it.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError

from runners.config.runner import ClusterConfig
from runners.core.job_record import RecordWriteError
from runners.core.record_types import Result
from runners.job.identity import JobSpec
from runners.sweep.actors import EpisodeActor

log = logging.getLogger(__name__)
BACKSTOP_S = 30.0  # past its limit plus this, a job's actor is not answering: it is killed
SCAN_S = 1.0  # how often the running jobs are checked against the backstop


@dataclass
class Outcome:
    """What became of one job: `ok`, `error` (its record ends in env_error/model_error), `failed`
    (died after retries, or an error outside the record) or `timeout`."""

    spec: JobSpec
    status: str
    attempts: int
    wall_s: float
    result: Result | None = None
    scores: dict[str, Any] | None = None
    error: str | None = None
    node: str | None = None  # the Ray node id of its last attempt's actor
    unscored: str | None = None  # why its judge could not read the record (an infrastructure failure; re-scorable)

    @property
    def host_failure(self) -> str | None:
        """Why this outcome is a failure of the host that a later try may heal (None: it is not one)."""
        if self.status == "error" and self.result is not None and self.result.stop_reason in RETRIED_STOPS:
            return f"{self.result.stop_reason}: {self.error}"
        return f"unscored: {self.unscored}" if self.unscored else None


RETRIED_STOPS = ("env_error", "model_error")  # the sweep's or its cell's `budget` is the admission's business


@dataclass(eq=False)
class _Actor:
    handle: Any
    node: str | None = None  # set once it is up
    jobs: set[Any] = field(default_factory=set)  # refs of its in-flight jobs
    dead: bool = False


@dataclass
class _Running:
    spec: JobSpec
    actor: _Actor
    started: float
    attempt: int
    url: str | None


class _Fleet:
    """The episode actors, as the driver sees them: which are up, how loaded, which to replace."""

    def __init__(self, actor_cls: type, cluster: ClusterConfig, jobs: int) -> None:
        count, cpus = actor_count(cluster, jobs)
        self.capacity = math.ceil(cluster.max_in_flight / count)
        self._remote = ray.remote(actor_cls).options(  # spread over the nodes: a lost node costs its share only
            num_cpus=cpus, max_concurrency=self.capacity + 8, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD"
        )
        self.starting: dict[Any, _Actor] = {}
        self.up: list[_Actor] = []
        for _ in range(count):
            self._spawn()
        log.info("%d episode actor(s) of %g CPU, %d jobs each", count, cpus, self.capacity)

    def _spawn(self) -> None:
        actor = _Actor(self._remote.remote(self.capacity))
        self.starting[actor.handle.start.remote()] = actor

    def came_up(self, ref: Any) -> bool:
        """Whether `ref` was an actor's start (then it is up, or replaced when its start failed)."""
        actor = self.starting.pop(ref, None)
        if actor is None:
            return False
        try:
            actor.node = ray.get(ref, timeout=0)
            self.up.append(actor)
        except RayError as e:
            log.warning("an episode actor failed to start (%s); starting another", type(e).__name__)
            self._spawn()
        return True

    def free(self) -> _Actor | None:
        """The least loaded actor with room for another job."""
        best = min(self.up, key=lambda a: len(a.jobs), default=None)
        return best if best is not None and len(best.jobs) < self.capacity else None

    def lost(self, actor: _Actor) -> None:
        """`actor` died (or was killed): stop giving it jobs and start a new one in its place."""
        if actor.dead:
            return
        actor.dead = True
        self.up.remove(actor)
        ray.kill(actor.handle)
        self._spawn()

    def stop(self) -> None:
        for actor in [*self.up, *self.starting.values()]:
            try:
                ray.kill(actor.handle)
            except Exception as e:  # the cluster is going down (signalled with the driver): so are its actors
                log.warning("killing an episode actor: %s", e)


def actor_count(cluster: ClusterConfig, jobs: int) -> tuple[int, float]:
    """How many episode actors, of how many CPUs: `cluster.actors` (each given a share of the free
    CPUs when `actor_cpus` each would not fit, so that all of them start), else one per
    `actor_cpus` the cluster has free (after the model servers), never more than jobs in flight nor
    than the `jobs` to run: each actor is a process that imports the project, so a sweep of two
    jobs starts two, not one per half CPU (the start-up of a small sweep, issue 38)."""
    cpus = cluster.actor_cpus
    free = ray.available_resources().get("CPU", 0.0)
    if cluster.actors is not None:
        count = max(1, min(cluster.actors, cluster.max_in_flight))
        if count * cpus > free:
            cpus = round(free / count, 4)
            log.info(
                "cluster.actors=%d × actor_cpus=%g exceeds the %g free CPUs: %g CPU each",
                count,
                cluster.actor_cpus,
                free,
                cpus,
            )
        return count, cpus
    if free < cpus:  # everything is taken (e.g. by model servers): one actor that needs no CPU slot
        log.warning(
            "only %.2f CPU free for episode actors (cluster.actor_cpus=%g): running one with no CPU reserved",
            free,
            cpus,
        )
        return 1, 0.0
    return max(1, min(int(free // cpus), cluster.max_in_flight, jobs)), cpus


class _Pending:
    """The jobs waiting to start, per model, in the sweep's order (a job to run again goes first)."""

    def __init__(self, specs: list[JobSpec]) -> None:
        self._by_model: dict[str, list[tuple[int, JobSpec]]] = {}
        for i, spec in reversed(list(enumerate(specs))):
            self._by_model.setdefault(spec.cfg.model.id, []).append((i, spec))

    def __bool__(self) -> bool:
        return any(self._by_model.values())

    def push(self, spec: JobSpec) -> None:
        self._by_model.setdefault(spec.cfg.model.id, []).append((-1, spec))

    def pop(self, room: Callable[[str], bool]) -> JobSpec | None:
        """The first waiting job whose model has room (None: none has)."""
        heads = [(stack[-1][0], model) for model, stack in self._by_model.items() if stack and room(model)]
        return self._by_model[min(heads)[1]].pop()[1] if heads else None


def run_all(
    specs: list[JobSpec],
    sweep_dir: Path,
    cluster: ClusterConfig,
    urls: dict[str, Any],
    on_start: Callable[[JobSpec], None],
    on_done: Callable[[Outcome], None],
    actor_cls: type = EpisodeActor,
    admit: Callable[[JobSpec], bool] = lambda spec: True,
    slots: dict[str, int] | None = None,
) -> list[Outcome]:
    """Run every spec; calls `on_start`/`on_done` as jobs start and finish. Ctrl-C kills what runs.
    `admit` (the budget, runners/sweep/budget.py) may hold a job back: it is asked again when a job
    finishes, and what it still holds when nothing runs is not started. `slots`: the jobs one
    replica of a served model takes at once."""
    from runners.sweep.model_servers import ReplicaPool

    replicas = ReplicaPool(urls, slots)
    fleet = _Fleet(actor_cls, cluster, len(specs))
    _warn_capped(specs, fleet, cluster, replicas)
    pending = _Pending(specs)
    attempts: dict[str, int] = {}
    running: dict[Any, _Running] = {}
    outcomes: list[Outcome] = []
    held: list[JobSpec] = []  # refused by `admit` since the last job finished
    later = _Later(cluster)  # host failures waiting to run again
    next_scan = 0.0  # when the running jobs are next checked against their limits

    def finish(ref: Any, outcome: Outcome | None) -> None:
        for spec in reversed(held):  # budget: asked again (first held, first asked) now that a job's cost is known
            pending.push(spec)
        held.clear()
        job = running.pop(ref)
        job.actor.jobs.discard(ref)
        replicas.release(job.spec.cfg.model.id, job.url)
        if outcome is None:  # infrastructure failure: run it again
            pending.push(job.spec)
        elif not later.retry(outcome):
            outcomes.append(outcome)
            on_done(outcome)

    try:
        while pending or running or later:
            for spec in later.due():
                pending.push(spec)
            if not pending and not running:
                time.sleep(min(later.wait_s(), 1.0))  # nothing but retries waiting out their backoff
                continue
            while pending and len(running) < cluster.max_in_flight and (actor := fleet.free()):
                spec = pending.pop(replicas.room)
                if spec is None:  # every waiting job's model server is full
                    break
                if not admit(spec):
                    held.append(spec)
                    continue
                attempts[spec.job_id] = attempts.get(spec.job_id, 0) + 1
                url = replicas.acquire(spec.cfg.model.id)
                ref = actor.handle.run.remote(spec, str(sweep_dir / spec.job_id), url, _limit(spec, cluster))
                running[ref] = _Running(spec, actor, time.monotonic(), attempts[spec.job_id], url)
                actor.jobs.add(ref)
                if not later.started_before(spec):  # a retry is still the one job the progress counts as running
                    on_start(spec)
            for ref in _ready([*running, *fleet.starting], timeout=1.0):
                if not fleet.came_up(ref):
                    outcome, lost = _collect(ref, running[ref], cluster)
                    if lost:
                        fleet.lost(running[ref].actor)
                    finish(ref, outcome)
            if time.monotonic() < next_scan:  # a scan is O(jobs running): once a second, not at every finished job
                continue
            next_scan = time.monotonic() + SCAN_S
            for ref, job in list(running.items()):
                if (
                    not job.actor.dead
                    and time.monotonic() - job.started > _limit(job.spec, cluster) + BACKSTOP_S
                ):
                    log.warning(
                        "job %s: its actor did not stop it at its limit; killing the actor", job.spec.job_id
                    )
                    finish(ref, _backstop(job, sweep_dir, cluster))
                    fleet.lost(job.actor)  # its other jobs come back as lost and are retried
    finally:
        fleet.stop()
    return outcomes


class _Later:
    """Jobs a host failure ended, run again within the run after a backoff (`cluster.error_retries`
    tries, `cluster.error_wait_s` doubled each time); their outcome is handed on only once they are a
    result or out of tries."""

    def __init__(self, cluster: ClusterConfig) -> None:
        self.cluster = cluster
        self.tries: dict[str, int] = {}
        self._waiting: list[tuple[float, JobSpec]] = []

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def retry(self, outcome: Outcome) -> bool:
        """Whether `outcome` is a host failure with tries left (then it waits to run again)."""
        why = outcome.host_failure
        tried = self.tries.get(outcome.spec.job_id, 0)
        if why is None or tried >= self.cluster.error_retries:
            return False
        self.tries[outcome.spec.job_id] = tried + 1
        wait = self.cluster.error_wait_s * 2**tried
        log.warning("job %s: %s; a failure of the host, tried again in %.0f s (retry %d of %d, cluster.error_retries)",
                    outcome.spec.job_id, why[:300], wait, tried + 1, self.cluster.error_retries)
        self._waiting.append((time.monotonic() + wait, outcome.spec))
        return True

    def due(self) -> list[JobSpec]:
        now = time.monotonic()
        ready = [spec for at, spec in self._waiting if at <= now]
        self._waiting = [(at, spec) for at, spec in self._waiting if at > now]
        return ready

    def wait_s(self) -> float:
        return max(0.0, min(at for at, _ in self._waiting) - time.monotonic()) if self._waiting else 0.0

    def started_before(self, spec: JobSpec) -> bool:
        return spec.job_id in self.tries


def _warn_capped(specs: list[JobSpec], fleet: _Fleet, cluster: ClusterConfig, replicas: Any) -> None:
    """Say so when a model's server, or its `concurrency` (per actor), keeps the sweep below
    `max_in_flight`, and what would raise it."""
    actors = len(fleet.starting) + len(fleet.up)
    jobs = Counter(s.cfg.model.id for s in specs)
    for model in {s.cfg.model.id: s.cfg.model for s in specs}.values():
        wanted = min(cluster.max_in_flight, jobs[model.id])
        capacity = replicas.capacity(model.id)
        if capacity is not None:
            if capacity < wanted:
                log.warning(
                    "model %s: its server replica(s) serve %d request(s) at once in all (model.server.slots per "
                    "replica × model.server.replicas), so %d of its jobs run at once, not %d: the others wait to start "
                    "rather than queue at the server with their time limits running. More at once needs more replicas "
                    "(model.server.replicas=N, each a process with the model loaded; llama.cpp's takes a CPU)",
                    model.id, capacity, capacity, wanted,
                )
            continue  # the server, not the per-actor cap, bounds its calls
        if 0 < model.concurrency * actors < wanted:
            log.warning(
                "model %s: concurrency=%d per episode actor × %d actor(s) allows %d calls in flight, fewer than "
                "cluster.max_in_flight=%d; set model.concurrency=0 for no cap of its own",
                model.id,
                model.concurrency,
                actors,
                model.concurrency * actors,
                cluster.max_in_flight,
            )


def _ready(refs: list[Any], timeout: float) -> list[Any]:
    """Every ref that is ready, waiting up to `timeout` for the first."""
    if not refs:
        return []
    ready, rest = ray.wait(refs, num_returns=1, timeout=timeout)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    return ready


def _collect(ref: Any, job: _Running, cluster: ClusterConfig) -> tuple[Outcome | None, bool]:
    """The job's outcome (None: retry it) and whether its actor was lost."""
    wall = time.monotonic() - job.started
    try:
        out = ray.get(ref, timeout=0)
    except (RayActorError, GetTimeoutError) as e:
        if job.attempt <= cluster.retries:
            log.warning("job %s: actor on node %s lost (%s); retrying (attempt %d)",
                        job.spec.job_id, job.actor.node, type(e).__name__, job.attempt + 1)
            return None, True
        return Outcome(
            job.spec, "failed", job.attempt, wall, error=f"actor died: {e}"[:2000], node=job.actor.node
        ), True
    except RayError as e:  # the job raised outside its own record keeping; its actor is fine
        cause = getattr(e, "cause", None)  # a record that could not be written (a full disk): its one line
        error = cause.strerror if isinstance(cause, RecordWriteError) else str(e)
        return Outcome(job.spec, "failed", job.attempt, wall, error=error[:2000], node=job.actor.node), False
    result = out.result
    status = "timeout" if out.timed_out else "error" if result.errored else "ok"
    error = result.error if status != "ok" else None  # errored: counted apart, retried on resume
    return Outcome(job.spec, status, job.attempt, wall, result, out.scores, error, job.actor.node, out.unscored), False


def _limit(spec: JobSpec, cluster: ClusterConfig) -> float:
    """The sweep's hard limit: the job's own time limit plus room for one bash timeout and scoring."""
    if cluster.job_timeout_s is not None:
        return cluster.job_timeout_s
    return spec.cfg.agent.time_limit_s + spec.cfg.env.bash_timeout + 300


def _backstop(job: _Running, sweep_dir: Path, cluster: ClusterConfig) -> Outcome:
    """A job whose actor never answered past its limit: recorded as stopped, as its actor would have."""
    from runners.job.run import record_time_limit

    limit = _limit(job.spec, cluster)
    result = record_time_limit(
        sweep_dir / job.spec.job_id, job.spec.job_id, limit, time.monotonic() - job.started
    )
    return Outcome(
        job.spec,
        "timeout",
        job.attempt,
        result.wall_s,
        result=result,
        error=result.error,
        node=job.actor.node,
    )
