"""The driver's paths at sweep scale, CI-sized (issue 15 item 3): a few hundred fabricated finished
records (bench/bench_scale.py makes them from real scripted jobs) through the grid's ids, the
resume check from the ledger, reconciliation, progress and the report."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from rich.console import Console

import runners.core.job_record
import runners.job.rescore
import runners.job.resume
import runners.sweep.reconcile
from bench.bench_scale import fabricate, overrides, templates, write_benchmark
from eval.benchmarks import load_benchmark
from eval.report import write_report
from eval.report.load import _TABS, TAB_CACHE, load_sweep
from runners.config.schema import CONF_DIR, register, to_root
from runners.core.record_files import write_json
from runners.core.record_types import Result
from runners.core.storage import LocalStorage
from runners.job.identity import JobSpec, job_id
from runners.job.rescore import resume_scan
from runners.job.resume import Reruns, is_final
from runners.sweep.grid import expand
from runners.sweep.ledger import Ledger
from runners.sweep.progress import Progress
from runners.sweep.reconcile import reconcile
from runners.sweep.scheduler import Outcome
from runners.sweep.uploads import Uploader
from runners.tracking.tracker import NoTracker

TASKS, METHODS, SEEDS, MISSING = 60, ["dci", "runningtab"], 2, 20  # 240 jobs, 20 never reached the ledger


@pytest.fixture(scope="module")
def scale(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[JobSpec], Path]:
    root = tmp_path_factory.mktemp("scale")
    bench = write_benchmark(root / "bench", TASKS)
    over = overrides(bench, METHODS, SEEDS)
    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        specs = expand(to_root(compose("config", overrides=over)), over, None)
    fabricate(specs, root / "scale", templates(specs, root / "templates"), missing=MISSING)
    return specs, root / "scale"


def copy_of(scale: tuple[list[JobSpec], Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(scale[1], tmp_path / "scale"))


def complete(specs: list[JobSpec], sdir: Path, from_ledger: bool) -> set[str]:
    logged = Ledger(sdir).records() if from_ledger else {}
    return {s.job_id for s in specs if is_final(sdir / s.job_id, True, Reruns.of(s.cfg), logged.get(s.job_id))}


def count_reads(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[str]:
    """The job directories whose result.json `module` reads."""
    seen: list[str] = []
    real = runners.core.job_record.read_result

    def counting(job_dir: Path) -> dict[str, Any] | None:
        seen.append(Path(job_dir).name)
        return real(job_dir)

    monkeypatch.setattr(module, "read_result", counting)
    return seen


def test_expanded_ids_are_the_single_job_ids(scale: tuple[list[JobSpec], Path]) -> None:
    """Hashing each cell's config once and each task once gives exactly the ids `job_id` gives."""
    specs, _ = scale
    assert len(specs) == TASKS * len(METHODS) * SEEDS == len({s.job_id for s in specs})
    tasks = {t.id: t for t in load_benchmark(specs[0].cfg.benchmark).tasks()}
    assert [job_id(s.cfg, tasks[s.task_id]) for s in specs] == [s.job_id for s in specs]


def test_resume_from_the_ledger_agrees_with_the_records(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    ids = [s.job_id for s in specs]
    later = max(e["time"] for e in Ledger(sdir).entries()) + 60
    # removed after its ledger line: not complete, although the ledger says ok
    (sdir / ids[0] / "result.json").unlink()
    (sdir / ids[1] / "scores.json").unlink()
    # rewritten after its ok line as an errored record with retries left (a later run's actor)
    result = json.loads((sdir / ids[2] / "result.json").read_text())
    write_json(sdir / ids[2] / "result.json", {**result, "stop_reason": "env_error", "errored": True, "attempt": 1})
    os.utime(sdir / ids[2] / "result.json", (later, later))
    # the ledger's last line says error: the record itself decides (an errored record is never complete, however often tried)
    for jid, attempt in ((ids[3], 1), (ids[4], 3)):
        write_json(sdir / jid / "result.json", {**result, "job_id": jid, "stop_reason": "model_error", "errored": True, "attempt": attempt})
        Ledger(sdir).append({"job_id": jid, "status": "error", "record_attempt": attempt, "stop_reason": "model_error"})
    # the ledger says error, but a later attempt finished ok after the line
    Ledger(sdir).append({"job_id": ids[5], "status": "error", "record_attempt": 1, "stop_reason": "env_error", "time": 1.0})
    # a line without a time, a failed line, and a torn last line are never trusted, never fatal
    Ledger(sdir).append({"job_id": ids[6], "status": "failed", "error": "actor died"})
    with open(sdir / "jobs.jsonl", "a") as f:
        f.write(json.dumps({"job_id": ids[7], "status": "ok"}) + "\n" + '{"job_id": "torn", "sta')

    from_files = complete(specs, sdir, from_ledger=False)
    reads = count_reads(monkeypatch, runners.job.resume)
    from_ledger = complete(specs, sdir, from_ledger=True)
    assert from_ledger == from_files
    assert from_ledger == set(ids) - {ids[0], ids[1], ids[2], ids[3], ids[4]}
    # only the records the ledger cannot vouch for are opened: unlisted, errored, newer, untimed
    unlisted = set(ids[-MISSING:])
    assert set(reads) == unlisted | {ids[2], ids[3], ids[4], ids[5], ids[7]} and len(reads) == len(set(reads))


def test_resume_reads_no_scores_the_ledger_vouches_for(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger line of a scored job names its judge key: a resume opens no scores.json it vouches
    for (100,000 reads were two thirds of a resume), and opens those written after their line (a
    re-score) or logged with another judge key, or never logged."""
    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    ids = [s.job_id for s in specs]
    later = max(e["time"] for e in Ledger(sdir).entries()) + 60
    scores = sdir / ids[0] / "scores.json"
    os.utime(scores, (later, later))  # re-scored after its line
    Ledger(sdir).append({"job_id": ids[1], "status": "ok", "record_attempt": 1, "judge_key": "another judge", "time": later})
    opened: list[str] = []
    real = runners.job.rescore.read_scores_of
    monkeypatch.setattr(runners.job.rescore, "read_scores_of", lambda d: opened.append(Path(d).name) or real(d))
    rescored, done = resume_scan(specs, sdir, Ledger(sdir).records())
    assert rescored == [] and done == set(ids)
    assert sorted(opened) == sorted({ids[0], ids[1], *ids[-MISSING:]})


def test_reconcile_reads_only_what_the_ledger_lacks(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    done = [s for s in specs if s.job_id in complete(specs, sdir, from_ledger=True)]
    reads = count_reads(monkeypatch, runners.sweep.reconcile)

    def run() -> dict[str, int]:
        return reconcile(done, sdir, None, Uploader(LocalStorage(), sdir.name), NoTracker(), Ledger(sdir))

    assert run() == {"ledger": MISSING, "tracker": MISSING, "bucket": 0}
    assert sorted(reads) == sorted(s.job_id for s in specs[-MISSING:])
    assert {e["job_id"] for e in Ledger(sdir).entries()} == {s.job_id for s in specs}
    reads.clear()
    assert run() == {"ledger": 0, "tracker": 0, "bucket": 0} and reads == []


def test_progress_at_scale(scale, monkeypatch: pytest.MonkeyPatch) -> None:
    specs, _ = scale
    plain = io.StringIO()
    with Progress(specs, 0, console=Console(file=plain, width=80)) as p:
        for s in specs:
            p.start(s)
            p.finish(Outcome(s, "ok", 1, 1.0, result=Result("", "finished", sandbox="bwrap")))
    lines = plain.getvalue().splitlines()
    assert len(lines) == 1 + len(specs)  # one unwrapped line per job, however long its id
    assert lines[-1].startswith(f"[{len(specs)}/{len(specs)}] ok ") and lines[-1].endswith(f"{specs[-1].job_id} (finished, 1.0 s)")

    live, built, real = io.StringIO(), [], Progress.table
    monkeypatch.setattr(Progress, "table", lambda self: built.append(1) or real(self))
    with Progress(specs, 0, console=Console(file=live, force_terminal=True, width=120)) as p:
        for s in specs:
            p.start(s)
            p.finish(Outcome(s, "error", 1, 1.0, result=Result("", "env_error", sandbox="none")))
    assert len(built) < len(specs)  # drawn on refresh, not rebuilt on each of the 600 events
    last = live.getvalue().rsplit("sweep progress", 1)[-1]
    assert f"{len(specs)} UNSANDBOXED" in last and str(len(specs) // len(METHODS)) in last


def test_report_at_scale(scale, tmp_path: Path) -> None:
    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    Ledger(sdir).append({"job_id": specs[0].job_id, "status": "failed", "error": "actor died"})
    sweep = load_sweep(sdir)
    assert len(sweep.jobs) == len(specs)
    by_cell: dict[tuple[str, int], list[Any]] = {}
    for j in sweep.jobs:
        by_cell.setdefault((j.method, j.seed), []).append(j)
    assert len(by_cell) == len(METHODS) * SEEDS
    for jobs in by_cell.values():  # one config dict per cell, shared by its tasks' jobs
        assert all(j.config is jobs[0].config for j in jobs)
    tabbed = [j for j in sweep.jobs if j.method == "runningtab"]
    assert all(j.tab is not None and "requirements" in j.tab for j in tabbed) and len(_TABS._tabs) <= TAB_CACHE
    assert all(j.tab is None for j in sweep.jobs if j.method == "dci")
    tab = tabbed[0].dir / "tab.json"
    write_json(tab, {**json.loads(tab.read_text()), "requirements": []})
    assert tabbed[0].tab["requirements"] == []  # a rewritten tab is read again
    assert sweep.failed_attempts() == {specs[0].job_id: "failed: actor died"}

    out = write_report(sdir)
    index = (out / "index.html").read_text()
    assert f"<p>{len(specs)} jobs.</p>" in index and sum(1 for _ in (out / "jobs").iterdir()) == len(specs)
    table1 = (out / "table1.md").read_text()
    assert "dci" in table1 and "runningtab" in table1


def test_a_job_page_reads_each_file_of_its_record_once(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page reads the trajectory in several places; within `reading` it is read from disk once,
    and nothing stays held after (20,000 trajectories would not fit)."""
    from eval.report.pages.jobpage import job_html
    from runners.core.job_record import JobRecord

    sdir = copy_of(scale, tmp_path)
    job = next(j for j in load_sweep(sdir).jobs if j.method == "runningtab")
    reads: list[str] = []
    real = JobRecord.trajectory
    monkeypatch.setattr(JobRecord, "trajectory", lambda self: reads.append(self.dir.name) or real(self))
    with job.reading():
        page = job_html(job)
    assert reads == [job.dir.name] and job.job_id in page
    job.trajectory  # noqa: B018 - outside `reading`: read again, not held
    assert len(reads) == 2


def test_the_rescore_check_reads_no_result_the_ledger_vouches_for(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runners.job.rescore import rescore
    from runners.job.resume import ledger_vouches

    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    logged = Ledger(sdir).records()
    vouched = {s.job_id for s in specs if ledger_vouches(sdir / s.job_id, logged.get(s.job_id))}
    reads = count_reads(monkeypatch, runners.job.resume)
    assert rescore(specs, sdir, logged) == []  # the same judge: nothing re-scored
    assert specs[0].cfg.judge.name != "none" and vouched and reads and not set(reads) & vouched


def test_the_resume_scan_checks_each_record_once(scale, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resume finds the complete jobs and the stale scores in one pass: each record's result.json is
    stat'ed at most once and its scores.json opened once (twice each before, and the job dir stat'ed)."""
    from runners.job.rescore import resume_scan

    specs, _ = scale
    sdir = copy_of(scale, tmp_path)
    logged = Ledger(sdir).records()
    expected = {s.job_id for s in specs if is_final(sdir / s.job_id, True, Reruns.of(s.cfg), logged.get(s.job_id))}
    touched: dict[str, int] = {}
    real_stat, real_open = os.stat, open

    def stat(path: Any, *a: Any, **k: Any) -> Any:
        touched[f"stat {path}"] = touched.get(f"stat {path}", 0) + 1
        return real_stat(path, *a, **k)

    def opened(path: Any, *a: Any, **k: Any) -> Any:
        touched[f"open {path}"] = touched.get(f"open {path}", 0) + 1
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr("builtins.open", opened)
    rescored, complete = resume_scan(specs, sdir, logged)
    monkeypatch.undo()
    assert rescored == [] and complete == expected and len(complete) > len(specs) // 2
    assert touched and max(touched.values()) == 1, max(touched.items(), key=lambda kv: kv[1])
