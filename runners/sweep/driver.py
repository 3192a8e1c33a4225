"""The sweep driver: `python -m runners.sweep [experiment=NAME] [sweep=NAME] [overrides…]`.

The root config is the default: no experiment unless one is named. Expands the grid into jobs,
skips those whose complete record exists (locally or in storage), serves each served model once,
runs the rest as Ray actors, scores, stores and tracks each job as it finishes, and prints the
results table. Re-running the same command resumes a killed sweep.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from envs.safeio import make_dirs, write_bytes
from runners.config.schema import CONF_DIR, RootConfig, listed_axes, to_root
from runners.sweep.stopping import say

if TYPE_CHECKING:
    from runners.sweep.local_ray import LocalRay

log = logging.getLogger("runners.sweep")


# Hydra's own overrides, not settings: which experiment (the sweep is named by it) and Hydra's.
_NOT_SETTINGS = ("experiment", "hydra")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")
_DROPPED = str.maketrans("", "", "[]'\"")
NAME_MAX = 100


def sweep_dir_for(root: RootConfig, experiment: str | None, overrides: Sequence[str] = ()) -> Path:
    """`<out>/<sweep>`: `sweep=NAME`, else the experiment's name, else a name derived from the overrides."""
    return Path(root.out) / (root.sweep or experiment or derived_name(overrides))


def derived_name(overrides: Sequence[str]) -> str:
    """The name of a sweep with neither `sweep=` nor `experiment=`: its overrides, sorted, joined
    by `__` (unsafe characters become `-`), plus a hash of them, so that two different commands
    never share a directory and the same command (in any order) resumes. `default` without any."""
    listed = listed_axes(overrides)  # `model=X` beside `grid.model=[…]` only chose the root's group
    kept = sorted(o for o in overrides if not _excluded(o) and o.partition("=")[0] not in listed)
    if not kept:
        return "default"
    digest = hashlib.sha256("\n".join(kept).encode()).hexdigest()[:8]
    readable = "__".join(map(_readable, kept))[:NAME_MAX].rstrip("-_.")
    return f"{readable}__{digest}"


def _readable(override: str) -> str:
    """`key=value` with a path shown by its last part and list brackets and quotes dropped."""
    key, eq, value = override.partition("=")
    if "/" in value:
        value = value.rstrip("/").rsplit("/", 1)[-1]
    return _UNSAFE.sub("-", key + eq + value.translate(_DROPPED)).strip("-")


@functools.cache
def not_in_name() -> tuple[str, ...]:
    """Overrides that never change a job or its score, so adding or changing them resumes the same
    sweep: the settings declared without `Enters.SWEEP_NAME` (runners/core/config_fields.py) — where
    records, scratch and prepared data go, storage, tracking, the cluster, the Slurm slice, the live
    report's refreshes, budgets, and every model setting that is not in a job id (timeouts, retries,
    prices, the call cache, how a server starts)."""
    from runners.core.config_fields import Enters, walk
    from runners.models.registry import config_classes

    kinds = {"model": list(config_classes())}
    return (*_NOT_SETTINGS, *dict.fromkeys(path for path, e, _ in walk(RootConfig, extra_classes=kinds) if not e & Enters.SWEEP_NAME))


def _excluded(override: str) -> bool:
    key = override.split("=", 1)[0].lstrip("+~")
    return any(key == k or key.startswith(f"{k}.") for k in not_in_name())


def run_sweep(root: RootConfig, overrides: list[str], experiment: str | None) -> dict[str, Any]:
    """Everything the CLI does, callable from code (tests, Slurm array tasks); in what it returns,
    `held` is the line saying a budget held the sweep, `not_results` the line saying how many planned
    jobs are not results and how to run them again (None: none), `budget_only` whether the budget
    alone left them so. Raises `SweepBusy` when another driver runs this sweep (or a slice sharing
    its jobs), and `Interrupted`, carrying its status line, once SIGINT or SIGTERM has stopped it cleanly."""
    from runners.sweep.ending import write_sweep_plan
    from runners.sweep.local_ray import LocalRay
    from runners.sweep.ownership import DriverLock
    from runners.sweep.stopping import interruptible

    grid, specs, sdir = _specs_and_dir(root, overrides, experiment)
    with interruptible() as signals, DriverLock(sdir, _part(root)), LocalRay(root.cluster) as cluster:  # nothing is written before the lock is held
        write_bytes(sdir / "sweep.yaml", OmegaConf.to_yaml(OmegaConf.structured(root)).encode())
        write_sweep_plan(sdir, grid)  # a job that never starts is still counted, as not started
        return _drive(root, specs, sdir, overrides, signals, cluster)


def _drive(root: RootConfig, specs: list[Any], sdir: Path, overrides: list[str], signals: Any, cluster: LocalRay) -> dict[str, Any]:
    """Resume, reconcile, run what is left, write the report: the sweep, once its folder is ours.
    Ray starts in the background (`cluster`, a `LocalRay`) as soon as jobs remain to run."""
    from runners.core.storage import build_storage
    from runners.job.rescore import resume_scan
    from runners.job.scratch import clean_stale, tag
    from runners.models.lifeline import owner_label, stop_orphans
    from runners.sweep.ledger import Ledger
    from runners.sweep.live_report import LiveReport
    from runners.sweep.model_servers import ModelServers
    from runners.sweep.packing import Packer, pack_name
    from runners.sweep.progress import Progress
    from runners.sweep.reconcile import reconcile
    from runners.sweep.scheduler import run_all
    from runners.sweep.stopping import Interrupted, status_line
    from runners.sweep.uploads import Uploader
    from runners.sweep.watch import SweepWatch
    from runners.tracking.tracker import build_tracker

    storage = build_storage(root.storage)
    name = sdir.name
    stored = _stored(storage, name, any(s.cfg.judge.name != "none" for s in specs))
    ledger = Ledger(sdir)
    logged = ledger.records()  # read once: a record it vouches for is stat'ed, not read
    rescored, local = resume_scan(specs, sdir, logged)  # a new judge re-scores finished records, it does not re-run them
    todo = [s for s in specs if s.job_id not in local and s.job_id not in (stored or set())]
    if root.budget.limits_spend:
        from runners.sweep.budget import paired

        todo = paired(todo)  # a pair admitted together starts together
    skipped = len(specs) - len(todo)
    if todo:
        cluster.begin()  # Ray's start overlaps the tracker, the reconciling and the live report
    tracker = build_tracker(root.tracker, name, sdir, specs)
    uploader = Uploader(storage, name)
    packer = Packer(sdir) if 0 <= root.storage.pack_from <= len(specs) else None
    part = _part(root)
    packs = {s.job_id: pack_name(s.cfg, part) for s in specs} if packer else {}
    clean_stale([s.job_id for s in specs], {s.cfg.agent.work_dir for s in specs})  # none of them runs yet
    servers_scope = tag(str(sdir.resolve()))
    stop_orphans(servers_scope)  # the model servers of this sweep's killed drivers
    reconcile([s for s in specs if s.job_id in local], sdir, stored, uploader, tracker, ledger, packer, lambda s: packs.get(s.job_id, ""))
    if packer:
        packer.leftovers(local, packs)  # complete records a killed driver left in folders (an upload under way retries from the pack)
    for spec in rescored:  # the bucket gets the new scores.json
        uploader.submit(sdir / spec.job_id, lambda error, job=spec.job_id: error and log.warning("upload of %s failed: %s", job, error))
    if rescored:
        from eval.report.pages.completed import rescored as rescored_pages

        rescored_pages(sdir / s.job_id for s in rescored)  # their pages show the new scores
        say(f"sweep {name}: re-scored {len(rescored)} finished job(s) with judge {specs[0].cfg.judge.name} (not re-run)")
    say(f"sweep {name}: {len(specs)} jobs, {skipped} already complete, {len(todo)} to run -> {sdir}")

    to_run = {s.job_id for s in todo}
    live = LiveReport(sdir, root.report.live_every, already=[s.job_id for s in specs if s.job_id not in to_run], groups=_groups(specs))
    progress: Progress | None = None
    watch: SweepWatch | None = None

    def done(outcome: Any) -> None:
        from runners.sweep.bookkeeping import book_job

        booked = book_job(outcome, sdir, uploader, tracker, ledger, packer, packs.get(outcome.spec.job_id, ""))
        assert progress is not None
        progress.finish(outcome)
        live.finished(outcome.spec.job_id, booked)  # its pages from the record as booked, not read again

    try:
        if todo:
            cluster.ready()
            signals.install()  # Ray's core worker put its native SIGTERM handler (a dump, then abort) in place of ours
            with (ModelServers({s.cfg.model.id: s.cfg.model for s in todo}, root.cluster, owner_label(servers_scope)) as servers,
                  SweepWatch(sdir, root.budget, specs, todo, tracker) as watch,  # rate limits, spend, budgets
                  Progress(todo, skipped, watch=watch, name=name) as progress):
                run_all(todo, sdir, root.cluster, servers.urls, progress.start, done, admit=watch.admit, slots=servers.slots)
    except KeyboardInterrupt:  # the actors and servers are stopped by now; the records done are kept
        stop = Interrupted(signals.caught or signal.SIGINT)  # Ray's wait raises a plain one for ours
        now, in_flight = (progress.finished, sum(progress.running.values())) if progress else (0, 0)
        stop.status = status_line(stop.signum, len(specs), skipped, now, in_flight, resume_command(overrides))
        live.abort()
        raise stop from None
    finally:
        uploader.drain()
        if packer:
            packer.drain()  # after the uploads: a record is packed once its ledger line is written
        tracker.flush()  # W&B cells whose jobs did not all finish, marked partial
        jobs_done = time.monotonic()
        live.close()
    _report(sdir, tracker, jobs_done)
    from runners.sweep.money import money_line

    closing = getattr(tracker, "closing_line", None)
    for line in (money_line(sdir, [s.job_id for s in specs], None if watch is None else watch.totals()[0]),
                 closing() if closing is not None else None):
        if line:
            say(line)
    from runners.sweep.ending import ending

    end = ending(specs, to_run, sdir)
    held = set() if watch is None else watch.budget.held
    return {"sweep_dir": str(sdir), "jobs": len(specs), "ran": len(todo), "skipped": skipped,
            "held": None if watch is None else watch.budget.held_line(),
            "not_results": end.line(name, resume_command(overrides)) if end.not_results else None,
            "budget_only": end.budget_only(len(held))}


def resume_command(overrides: Sequence[str]) -> str:
    """A command that resumes this sweep, in the form the user typed it (`runningtab sweep` or
    `python -m runners.sweep`): the overrides as typed (the grid's root choices, which the command
    line adds again, left out)."""
    from runners.cli import typed_command
    from runners.preflight.command_line import typed

    return shlex.join([*typed_command("runners.sweep"), *typed(overrides)])


def _part(root: RootConfig) -> tuple[int, int] | None:
    """The Slurm slice this driver runs (`grid.slice=I/N`), None for the whole sweep."""
    if not root.grid.slice:
        return None
    from runners.sweep.grid import parse_slice

    return parse_slice(root.grid.slice)


def _specs_and_dir(root: RootConfig, overrides: list[str], experiment: str | None) -> tuple[list[Any], list[Any], Path]:
    """The grid's jobs, this driver's (this Slurm slice of them, if one is set) and the sweep's folder (made, still empty)."""
    from runners.sweep.grid import expand

    grid = specs = expand(root, overrides, experiment)
    part = _part(root)
    if part is not None:
        from runners.sweep.grid import slice_specs

        specs = slice_specs(specs, *part)
    sdir = sweep_dir_for(root, experiment, overrides)
    make_dirs(sdir)
    return grid, specs, sdir


def _stored(storage: Any, sweep: str, scored: bool) -> set[str] | None:
    """The jobs complete in the bucket, or None when it cannot be read (resume from local records
    only; uploads are retried by a later run)."""
    try:
        return storage.final_jobs(sweep, scored=scored)
    except Exception as e:  # boto3 raises many types; all mean "cannot tell"
        log.warning("the bucket could not be listed (%s: %s): resuming from the local records only", type(e).__name__, e)
        return None


def _groups(specs: Sequence[Any]) -> dict[str, list[str]]:
    """Each job's fellows on its benchmark, harness, task, model and seed: the jobs its side-by-side
    pages pair it with (`eval/report/pages/completed.py`)."""
    by_key: dict[tuple[str, str, str, str, int], list[str]] = {}
    for s in specs:
        by_key.setdefault((s.cfg.benchmark.label, s.cfg.agent.harness, s.task_id, s.cfg.model.id, s.cfg.seed), []).append(s.job_id)
    return {j: fellows for fellows in by_key.values() for j in fellows}


def _report(sdir: Path, tracker: Any, jobs_done: float) -> None:
    """Write the paper's tables and figures for this sweep (also logged to the tracker's summary
    run) and print its Table 1, the results table. A failing report never fails a sweep whose
    records are all written."""
    from rich.console import Console
    from rich.markdown import Markdown

    from eval.report import write_report

    try:
        report = write_report(sdir, tracker)  # the tables from the records; the pages of finished jobs are written already
    except Exception:
        log.exception("the report of %s could not be written; run python -m eval.report %s", sdir, sdir)
        return
    table1 = report / "table1.md"
    if table1.exists():
        Console(width=200).print(Markdown(table1.read_text()))
    say(f"report: {report / 'index.html'} (written in {time.monotonic() - jobs_done:.1f} s, the wait for a running refresh included)")


def _experiment() -> str | None:
    """The experiment named on the command line, None when none is."""
    choice = HydraConfig.get().runtime.choices.get("experiment")
    return None if choice in (None, "null") else choice


def command_overrides() -> list[str]:
    """The command line's overrides as typed. Hydra keeps them in a config node, where a value that
    interpolates (`model.script_dir=DIR/${agent.harness}`) reads resolved against the root's config:
    every cell of the grid was then given the root's value (its first harness), not its own."""
    task = HydraConfig.get().overrides.task
    return [str(o) for o in OmegaConf.to_container(task, resolve=False)]  # type: ignore[union-attr]


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base=None)
def main(cfg: DictConfig) -> None:
    from runners.config.schema import UnknownKeys
    from runners.core.record_types import RecordError
    from runners.models.call_cache import SWEEP_CACHE
    from runners.models.server import ServerError
    from runners.preflight.config_checks import ConfigError
    from runners.sweep.budget import HELD_EXIT
    from runners.sweep.ending import NOT_RESULTS_EXIT
    from runners.sweep.ownership import SweepBusy
    from runners.sweep.stopping import Interrupted, exit_stopped

    given = HydraConfig.get().overrides
    # Hydra keeps `hydra.searchpath` (your configs outside the checkout) apart from the task's overrides;
    # every cell of the grid is composed with it, and the resume line repeats it
    overrides = [*command_overrides(), *(o for o in given.hydra if o.partition("=")[0].lstrip("+") == "hydra.searchpath")]
    try:
        out = run_sweep(to_root(cfg, SWEEP_CACHE), overrides, _experiment())
    except UnknownKeys as e:  # said with every other refusal of the command line
        from runners.preflight.command_line import every_refusal, typed
        from runners.sweep.grid import check_command_line

        sys.exit(every_refusal(e, typed(overrides), check_command_line))
    except (ConfigError, RecordError, SweepBusy) as e:  # a record this version cannot read is left as it is
        sys.exit(f"error: {e}")
    except ServerError as e:  # a model server that did not start (its log named); Ray's wrapper holds its own error as `cause`
        sys.exit(f"error: {getattr(e, 'cause', None) or e}")
    except Interrupted as stop:
        exit_stopped(stop)
    # the last line, and an exit code of its own: CI and scripts tell "done" from "held" and from "not all results"
    if out["held"]:
        say(out["held"])
    if out["not_results"] and not out["budget_only"]:
        say(out["not_results"])
        sys.exit(NOT_RESULTS_EXIT)
    if out["held"]:
        sys.exit(HELD_EXIT)

