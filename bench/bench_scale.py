"""Hand-run benchmark of the driver at sweep scale (numbers go in docs/measurements.md, "Scale").

    .venv/bin/python bench/bench_scale.py                  # 20,000 jobs
    .venv/bin/python bench/bench_scale.py --jobs 2000 --keep /tmp/scale

Writes a native benchmark of many small tasks (a few shared workspaces), runs one real scripted job
per method to get realistic records, then fabricates a finished sweep of N jobs from them (job.json,
result.json, scores.json, trajectory.jsonl, evaluator_view.json, tab.json for tab methods, and
jobs.jsonl with its last lines missing, as after a driver killed mid-sweep). A fresh process — the
driver — then times what the driver does at that size: expanding the grid, the resume check,
reconciliation, progress with every job finishing, and the report: from scratch (every page), the
sweep's own last build (every finished job's pages were written as it finished: the tables, figures,
index and links from the records), the pages the driver writes as each of the last grid cell's jobs
completes, and the pages of 1% of the jobs re-scored; each with wall time and the process's peak
RSS after it. Last line: `jobs=N expand_s=… resume_s=… progress_s=… report_s=… report_last_s=…
completion_ms_per_job=… rescored_1pct_s=… peak_rss_mb=…`. `fabricate` is also what tests/runners/sweep/test_scale.py runs on.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

METHODS = ["dci", "todo", "self_refine", "self_tracking", "runningtab"]
SEEDS = 4
WORKSPACES = 10
POLICY = "# Travel policy\nArticle 7 Hotels are reimbursed at 450 yuan per night.\nArticle 8 Taxi fares need receipts.\n"
TURNS = [
    {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel reimbursement per night"]}}]},
    {"content": "Looking around.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls -R"}}]},
    {"tool_calls": [{"name": "read", "arguments": {"path": "policies/travel.md"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output && grep -i 'article 7' policies/travel.md > output/guide.md"}}]},
    {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
    {"content": "Done."},
    {"content": "Final."},
]
LEDGER_MISSING = 50  # ledger lines a killed driver never wrote (reconciliation writes them)
LIVE_EVERY = 1000  # a grid cell's jobs here: those whose pages the completion phase writes


def write_benchmark(root: Path, tasks: int) -> Path:
    """A native benchmark of `tasks` small rubric tasks over a few shared workspaces."""
    for w in range(WORKSPACES):
        ws = root / "workspaces" / f"w{w}"
        (ws / "policies").mkdir(parents=True, exist_ok=True)
        (ws / "policies" / "travel.md").write_text(POLICY)
        for i in range(4):
            (ws / "archive").mkdir(exist_ok=True)
            (ws / "archive" / f"note_{i}.md").write_text(f"old note {i} of workspace {w}\n")
    lines = []
    for t in range(tasks):
        rubrics = [{"text": "Mentions 450 yuan per night", "check": {"type": "contains", "file": "output/guide.md", "values": ["450"]}},
                   {"text": f"Mentions task {t}'s taxi rule"}]
        lines.append({"id": f"t{t:05d}", "prompt": f"Write travel guide number {t}.", "workspace": f"w{t % WORKSPACES}",
                      "output": "output/guide.md", "rubrics": rubrics})
    (root / "tasks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (root / "script.jsonl").write_text("".join(json.dumps(x) + "\n" for x in TURNS))
    return root


def overrides(bench: Path, methods: list[str], seeds: int) -> list[str]:
    return ["benchmark=native", f"benchmark.path={bench}", "model=scripted", f"model.script={bench / 'script.jsonl'}", "model.cache=off",
            f"grid.method=[{','.join(methods)}]", f"grid.seed=[{','.join(map(str, range(seeds)))}]", "judge=rule",
            "tracker=none", f"out={bench.parent}", "sweep=scale"]


def grid_for(jobs: int) -> tuple[int, list[str], int]:
    """(tasks, methods, seeds) whose product is `jobs` (rounded up to a whole number of tasks)."""
    per_task = len(METHODS) * SEEDS
    return max(1, -(-jobs // per_task)), METHODS, SEEDS


def compose_root(over: list[str]) -> Any:
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from runners.config.schema import CONF_DIR, register, to_root

    register()
    GlobalHydra.instance().clear()
    initialize_config_dir(config_dir=str(CONF_DIR), version_base=None)  # stays initialized for expand()
    return to_root(compose("config", overrides=over))


def templates(specs: list[Any], scratch: Path) -> dict[str, dict[str, str]]:
    """One real record per method (the first spec of each), as {file name: text}."""
    from runners.job.run import run_and_score

    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        method = spec.cfg.method.name
        if method in out:
            continue
        d = scratch / spec.job_id
        run_and_score(spec.cfg, spec.task_id, d, spec.job_id, None)
        out[method] = {p.relative_to(d).as_posix(): p.read_text() for p in d.rglob("*") if p.is_file()}
        out[method]["__job_id__"] = spec.job_id
    return out


def fabricate(specs: list[Any], sdir: Path, tpl: dict[str, dict[str, str]], missing: int = LEDGER_MISSING) -> None:
    """Finished records of every spec from the method's template (ids, task, seed and scores
    varied), and jobs.jsonl without its last `missing` lines."""
    from runners.config.schema import job_record_config

    sdir.mkdir(parents=True, exist_ok=True)
    configs: dict[int, dict[str, Any]] = {}
    ledger = []
    for n, spec in enumerate(specs):
        t = tpl[spec.cfg.method.name]
        d = sdir / spec.job_id
        d.mkdir()
        config = configs.setdefault(id(spec.cfg), job_record_config(spec.cfg))
        job = {**json.loads(t["job.json"]), "job_id": spec.job_id, "task_id": spec.task_id, "seed": spec.cfg.seed, "config": config}
        (d / "job.json").write_text(json.dumps(job, indent=1, default=str))
        result = {**json.loads(t["result.json"]), "job_id": spec.job_id, "chars_read": 100 + n % 900}
        (d / "result.json").write_text(json.dumps(result, indent=1))
        scores = {**json.loads(t["scores.json"]), "task_id": spec.task_id}
        for i, item in enumerate(scores.get("items", [])):
            item["passed"] = (n + i) % 3 != 0
        scores["metrics"]["pass_rate"] = sum(bool(i["passed"]) for i in scores["items"]) / max(1, len(scores["items"]))
        (d / "scores.json").write_text(json.dumps(scores, indent=1))
        for name, text in t.items():
            if name not in ("job.json", "result.json", "scores.json", "__job_id__"):
                (d / name).parent.mkdir(parents=True, exist_ok=True)
                (d / name).write_text(text.replace(t["__job_id__"], spec.job_id))
        ledger.append({"job_id": spec.job_id, "status": "ok", "attempts": 1, "wall_s": 1.0, "stop_reason": result["stop_reason"],
                       "error": None, "record_attempt": 1, "sandbox": result.get("sandbox"), "judge_key": scores.get("judge_key"),
                       "time": time.time()})
    kept = ledger[: max(0, len(ledger) - missing)]
    (sdir / "jobs.jsonl").write_text("".join(json.dumps(e) + "\n" for e in kept))


def _rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak RSS of this process (RUSAGE_CHILDREN: of its largest child process)."""
    return resource.getrusage(who).ru_maxrss / 1024


def rescore_some(sdir: Path, every: int) -> list[Path]:
    """Flip the first rubric of every `every`-th job's scores.json (as a re-scoring rewrites it; a
    packed record is unpacked first, as `runningtab score` does)."""
    from runners.core.job_record import has_file, record_ids, unpacked

    dirs = [unpacked(sdir / j) for j in [j for j in record_ids(sdir) if has_file(sdir / j, "scores.json")][::every]]
    for d in dirs:
        scores = json.loads((d / "scores.json").read_text())
        scores["items"][0]["passed"] = not scores["items"][0]["passed"]
        (d / "scores.json").write_text(json.dumps(scores, indent=1))
    return dirs


def inodes(path: Path, besides: tuple[str, ...] = ()) -> int:
    """Files and folders under `path` (itself included, links not followed), the top names `besides` left out."""
    if not path.exists():
        return 0
    total = 1
    for top, dirs, files in os.walk(path):
        if top == str(path):
            dirs[:] = [d for d in dirs if d not in besides]
            files = [f for f in files if f not in besides]
        total += len(dirs) + len(files)
    return total


def _timed(rows: list[tuple[str, float, float, str]], name: str, fn: Callable[[], str]) -> None:
    t0 = time.perf_counter()
    note = fn()
    rows.append((name, time.perf_counter() - t0, _rss_mb(), note))


def resume_check(specs: list[Any], sdir: Path) -> set[str]:
    """What run_sweep does to find the complete jobs (re-scoring stale ones in the same pass)."""
    from runners.job.rescore import resume_scan
    from runners.sweep.ledger import Ledger

    return resume_scan(specs, sdir, Ledger(sdir).records())[1]


def measure(bench: Path, pack: bool = False) -> dict[str, float]:
    """The driver's work on the fabricated sweep, phase by phase (run in a fresh process); `pack`:
    its records packed per grid cell first (what a sweep of `storage.pack_from` jobs does as they
    are booked), and every phase reads them from the packs."""
    from rich.console import Console

    from eval.report import write_report
    from runners.core.record_types import Result
    from runners.core.storage import LocalStorage
    from runners.sweep.grid import expand
    from runners.sweep.ledger import Ledger
    from runners.sweep.progress import Progress
    from runners.sweep.reconcile import reconcile
    from runners.sweep.scheduler import Outcome
    from runners.sweep.uploads import Uploader
    from runners.tracking.tracker import NoTracker

    meta = json.loads((bench / "grid.json").read_text())
    over = overrides(bench, meta["methods"], meta["seeds"])
    sdir = bench.parent / "scale"
    rows: list[tuple[str, float, float, str]] = []
    state: dict[str, Any] = {}

    def do_expand() -> str:
        state["specs"] = expand(compose_root(over), over, None)
        return f"{len(state['specs'])} specs"

    def do_pack() -> str:
        from runners.core.record_pack import pack_record
        from runners.sweep.packing import pack_name

        state["inodes_before"] = inodes(sdir, ("report",))
        n = sum(pack_record(sdir, s.job_id, pack_name(s.cfg)) for s in state["specs"])
        state["inodes_after"] = inodes(sdir, ("report",))
        return f"{n} records packed; the sweep's files and folders but its report {state['inodes_before']:,} -> {state['inodes_after']:,}"

    def do_resume() -> str:
        state["local"] = resume_check(state["specs"], sdir)
        return f"{len(state['local'])} complete"

    def do_reconcile() -> str:
        done = [s for s in state["specs"] if s.job_id in state["local"]]
        counts = reconcile(done, sdir, None, Uploader(LocalStorage(), sdir.name), NoTracker(), Ledger(sdir))
        return f"ledger +{counts['ledger']}"

    def do_progress() -> str:
        specs = state["specs"]
        for terminal in (True, False):
            sink = io.StringIO()
            with Progress(specs, 0, console=Console(file=sink, force_terminal=terminal, width=120)) as p:
                for s in specs:
                    p.start(s)
                    p.finish(Outcome(s, "ok", 1, 1.0, result=Result(s.job_id, "finished", sandbox="bwrap")))
        return f"{len(specs)} jobs, live + plain"

    def do_report_parts() -> str:  # what of the report is loading and analyses (the rest: HTML pages)
        from eval.report.build import run_analyses
        from eval.report.load import load_sweep

        t0 = time.perf_counter()
        sweep = load_sweep(sdir)
        load_s = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as out:
            run_analyses(sweep, Path(out))
        return f"load_sweep {load_s:.1f} s, then the analyses"

    def do_report() -> str:  # from scratch
        shutil.rmtree(sdir / "report", ignore_errors=True)
        out = write_report(sdir)
        return f"{sum(1 for _ in (out / 'jobs').iterdir())} job pages; page workers' peak RSS {_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB"

    def do_report_last() -> str:  # the sweep's own last build: each finished job's pages were written as it finished
        write_report(sdir)
        return "tables, figures, index and links.js from the records; no page to write"

    def do_completion() -> str:  # the driver's part: the pages of the last grid cell's jobs, each as its record completes
        from eval.report.load import roles
        from eval.report.pages.completed import at_completion
        from runners.sweep.driver import _groups

        groups, last = _groups(state["specs"]), state["specs"][-LIVE_EVERY:]
        ids, out = {s.job_id for s in last}, sdir / "report"
        for sub in ("jobs", "compare"):  # as before they finished: none of their pages yet
            for p in (out / sub).iterdir():
                if p.name.removesuffix(".html").partition("__vs__")[0] in ids:
                    p.unlink()
        base, treat = roles(sdir, None, None)
        t0 = time.perf_counter()
        pages = sum(len(at_completion(sdir, s.job_id, groups[s.job_id], base, treat)) for s in last)
        state["completion_ms"] = (time.perf_counter() - t0) * 1000 / len(last)
        return f"{len(last)} jobs, {pages} pages: {state['completion_ms']:.1f} ms a job"

    def do_rescored() -> str:  # 1% of the jobs re-scored (scores.json rewritten): their pages and side-by-sides
        from eval.report.pages.completed import rescored

        dirs = rescore_some(sdir, 100)
        rescored(dirs)
        return f"{len(dirs)} jobs re-scored: their pages written again (the sweep loaded once)"

    for name, fn in (("expand", do_expand), *((("pack", do_pack),) if pack else ()), ("resume", do_resume), ("reconcile", do_reconcile), ("progress", do_progress),
                     ("analyses", do_report_parts), ("report", do_report), ("report_last", do_report_last),
                     ("completion", do_completion), ("rescored", do_rescored)):
        _timed(rows, name, fn)
    print(f"{'phase':10} {'wall s':>8} {'peak RSS MB':>12}  note")
    for name, wall, rss, note in rows:
        print(f"{name:10} {wall:8.2f} {rss:12.0f}  {note}")
    jobs = len(state["specs"])
    records, report = inodes(sdir, ("report",)), inodes(sdir / "report")
    print(f"files and folders a job: records {records / jobs:.2f} ({records:,}), report {report / jobs:.2f} ({report:,})")
    return {name: wall for name, wall, _, _ in rows} | {"peak_rss_mb": _rss_mb(), "jobs": jobs, "completion_ms": state["completion_ms"],
                                                        "inodes_per_job": (records + report) / jobs}


def prepare(bench: Path, jobs: int) -> None:
    """The benchmark, the real template records and the fabricated sweep (in this process)."""
    from runners.sweep.grid import expand

    tasks, methods, seeds = grid_for(jobs)
    write_benchmark(bench, tasks)
    (bench / "grid.json").write_text(json.dumps({"tasks": tasks, "methods": methods, "seeds": seeds}))
    over = overrides(bench, methods, seeds)
    specs = expand(compose_root(over), over, None)
    t0 = time.perf_counter()
    tpl = templates(specs, bench / "templates")
    fabricate(specs, bench.parent / "scale", tpl)
    print(f"fabricated {len(specs)} records in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir, removed)")
    ap.add_argument("--pack", action="store_true", help="pack the records per grid cell first (storage.pack_from)")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the driver process
    args = ap.parse_args()
    if args.measure:
        r = measure(args.measure, args.pack)
        print(f"jobs={r['jobs']} expand_s={r['expand']:.2f} resume_s={r['resume']:.2f} reconcile_s={r['reconcile']:.2f} "
              f"progress_s={r['progress']:.2f} report_s={r['report']:.2f} report_last_s={r['report_last']:.2f} "
              f"completion_ms_per_job={r['completion_ms']:.1f} rescored_1pct_s={r['rescored']:.2f} peak_rss_mb={r['peak_rss_mb']:.0f} "
              f"inodes_per_job={r['inodes_per_job']:.2f}" + (f" pack_s={r['pack']:.2f}" if args.pack else ""))
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        if not (work / "bench" / "grid.json").exists():
            prepare(work / "bench", args.jobs)
        subprocess.run([sys.executable, __file__, "--measure", str(work / "bench"), *(["--pack"] if args.pack else [])], check=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
