"""Today's tab over a finished sweep's recorded trajectories, with no model call:

    python -m eval.replay SWEEP [--method NAME] [--set KEY=VALUE ...] [--only TEXT] [--limit N] [--out DIR] [--json]

For every finished job with a tab (or every finished job, with `--method`), the tab this checkout
holds — its capture, candidates, review and evidence check, with the job's own tab settings or those
of `conf/method/NAME.yaml`, and `--set` overrides (e.g. `--set review_lines=5`) — runs over the
job's trajectory against the task's workspace as it was at the start (eval/replay/tab.py). It
reports what changed against the recorded `tab.json`: read-log entries and candidates gained and
lost, recorded resolutions that would now be refused (or accepted), the reviews' hits per
requirement, and the paper's Table 3 before and after. Writes `<SWEEP>/replay/<label>/`:
`replay.jsonl` (a line per job), `summary.md` (printed too, with a table of what changed per job;
`--json` prints the whole report as one JSON document instead). This is how the tab is developed
without paying for agents again.

What it cannot answer, said in its output: the agent acted on the tab it was shown; with another
tab it would have read, added and resolved differently, so these are the new tab's answers to the old
agent's actions — not what a run with the new tab would do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.benchmarks import benchmark_config, load_benchmark
from eval.replay.diff import compare, totals
from eval.replay.tab import replay_tab, tab_config_of_method
from eval.report.analyses.table3 import COLUMNS, TITLE, rows_of, summarize
from eval.report.section import Table
from runners.core.job_record import JobRecord, record_ids
from runners.core.paths import user_path
from runners.core.record_types import RecordError
from tab.config import TabConfig

log = logging.getLogger("eval.replay")
SHOW_CHANGED = 20
CHANGES = ("entries_gained", "entries_lost", "candidates_gained", "candidates_lost", "now_refused", "now_accepted")
CANNOT = ("What this replay cannot answer: the agent acted on the tab it was shown. With today's tab it would have "
          "read, added, reviewed and resolved differently, and its deliverable would differ; these numbers are today's "
          "tab answering the recorded actions, not what a run with today's tab would do or score. Reads of files the "
          "agent changed are not credited (the replay knows their final state, not when they changed).")


def parser() -> argparse.ArgumentParser:
    """The command line (its flags are the ones the summary may name)."""
    ap = argparse.ArgumentParser(prog="python -m eval.replay", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep", type=user_path, help="a finished sweep's folder")
    ap.add_argument("--method", help="replay with this method's tab settings (conf/method/NAME.yaml), also over jobs that had no tab")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a tab setting to override (repeatable)")
    ap.add_argument("--only", help="only jobs whose id contains this text")
    ap.add_argument("--limit", type=int, help="at most this many jobs")
    ap.add_argument("--out", type=user_path, help="where to write (default <SWEEP>/replay/<label>)")
    ap.add_argument("--json", action="store_true", help="print the report as one JSON document (totals, skipped, jobs, Table 3) instead of the summary")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if not args.sweep.is_dir():
        ap.error(f"{args.sweep} is not a folder")
    try:
        base = tab_config_of_method(args.method) if args.method else None
        overrides = dict(_setting(s) for s in args.set)
    except ValueError as e:
        ap.error(str(e))
    label = "__".join([args.method or "recorded", *args.set]).replace("/", "-") or "recorded"
    out = args.out or args.sweep / "replay" / label
    report = replay_sweep(args.sweep, base, overrides, args.only, args.limit)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "replay.jsonl", "w", encoding="utf-8") as f:
        for line in report["jobs"]:
            f.write(json.dumps(line, default=str) + "\n")
    text = summary(args.sweep, label, report)
    (out / "summary.md").write_text(text, encoding="utf-8")
    if args.json:
        print(json.dumps({"sweep": str(args.sweep), "label": label, "tab_code": _tab_code(), "totals": totals(report["jobs"]),
                          **report, "written": str(out)}, indent=2, default=str))
    else:
        print(text)
    print(f"written: {out}", file=sys.stderr)
    return 0


def _setting(text: str) -> tuple[str, Any]:
    key, eq, value = text.partition("=")
    if not eq or key not in {f for f in vars(TabConfig())}:
        raise ValueError(f"--set {text!r}: give KEY=VALUE with KEY one of {', '.join(sorted(vars(TabConfig())))}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def replay_sweep(sweep: Path, base: TabConfig | None, overrides: dict[str, Any], only: str | None, limit: int | None) -> dict[str, Any]:
    """Every job's replay and differences, Table 3's rows before and after, and the jobs that could
    not be replayed with why (`not_replayed`: a record of another shape is named, never a traceback)."""
    jobs, skipped, not_replayed = [], defaultdict(int), {}
    before: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    after: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    benchmarks: dict[str, Any] = {}
    for job_dir in (sweep / j for j in record_ids(sweep)):  # folders and packed records
        if only and only not in job_dir.name:
            continue
        if limit is not None and len(jobs) >= limit:
            break
        try:
            record = JobRecord(job_dir)
            if not record.finished or record.result.errored:
                skipped["not finished, or errored"] += 1
                continue
            meta = record.meta
            recorded = record.plugin("tab")
            config = base or meta.tab_config
            if config is None:
                skipped["with no tab (pass --method to replay one over them)"] += 1
                continue
            config = TabConfig.coerce({**vars(config), **overrides})
            node = meta.config.get("benchmark") or {"name": meta.benchmark}
            key = json.dumps(node, sort_keys=True, default=str)
            if key not in benchmarks:
                benchmarks[key] = load_benchmark(benchmark_config(node))
            replayed = replay_tab(record, benchmarks[key].task(meta.task_id), config)
        except (RecordError, OSError, ValueError, KeyError) as e:
            log.warning("%s: not replayed (%s: %s)", job_dir.name, type(e).__name__, e)
            skipped[f"that could not be replayed ({type(e).__name__})"] += 1
            not_replayed[job_dir.name] = f"{type(e).__name__}: {e}"
            continue
        group = (meta.benchmark, meta.method, meta.model)
        if recorded is not None:
            before[group].append(summarize(recorded))
        after[group].append(summarize(replayed))
        jobs.append({"job_id": meta.job_id, "recorded_tab": recorded is not None, **compare(recorded, replayed)})
    return {"jobs": jobs, "skipped": dict(skipped), "not_replayed": not_replayed, "table3_before": rows_of(before),
            "table3_after": rows_of(after)}


def summary(sweep: Path, label: str, report: dict[str, Any]) -> str:
    jobs = report["jobs"]
    t = totals(jobs)
    code = _tab_code()
    lines = [f"# Replay of {sweep.name} with today's tab ({label}; tab code {code})", "",
             f"{len(jobs)} job(s) replayed ({sum(j['recorded_tab'] for j in jobs)} with a recorded tab); "
             f"{t['jobs_changed']} changed. Not replayed: {_skipped(report['skipped'])}.", "",
             f"- read-log entries: +{t['entries_gained']} gained, -{t['entries_lost']} lost",
             f"- candidates: +{t['candidates_gained']} gained, -{t['candidates_lost']} lost",
             f"- recorded resolutions that would now be refused: {t['now_refused']}; refused then, accepted now: {t['now_accepted']}",
             f"- review hits (a requirement shown beside a read-log line, per review): before {t['review_hits_before']}/"
             f"{t['review_slots_before']}, after {t['review_hits_after']}/{t['review_slots_after']}", ""]
    lines += [f"- not replayed: {job} ({why})" for job, why in list(report["not_replayed"].items())[:SHOW_CHANGED]]
    lines.append(changes(jobs))
    for j in jobs:
        if j["now_refused"]:
            lines.append(f"  {j['job_id']}: now refused " + ", ".join(f"{r['id']} (turn {r['turn']}: {r['why']})" for r in j["now_refused"]))
    for name, rows in (("before (recorded)", report["table3_before"]), ("after (replayed)", report["table3_after"])):
        lines += ["", f"## Table 3, {name}", "", Table("table3", TITLE, COLUMNS, rows).markdown() if rows else "(no job)"]
    lines += ["", CANNOT, ""]
    return "\n".join(lines)


def _skipped(skipped: dict[str, int]) -> str:
    """`1 job with no tab (…); 2 jobs not finished, or errored`, or `none`."""
    return "; ".join(f"{n} job{'s' * (n != 1)} {why}" for why, n in skipped.items()) or "none"


def _plus_minus(job: dict[str, Any], what: str) -> str:
    return f"+{len(job[what + '_gained'])} -{len(job[what + '_lost'])}"


def _hits(job: dict[str, Any], side: str) -> str:
    pairs = job["review_hits"][side].values()
    return f"{sum(p[0] for p in pairs)}/{sum(p[1] for p in pairs)}"


def changes(jobs: list[dict[str, Any]]) -> str:
    """What changed per job, as a Markdown table (the first SHOW_CHANGED changed jobs; replay.jsonl has all)."""
    changed = [j for j in jobs if any(j[k] for k in CHANGES) or j["review_hits"]["before"] != j["review_hits"]["after"]]
    if not changed:
        return "No job changed."
    rows = []
    for j in changed[:SHOW_CHANGED]:
        resolutions = ", ".join(f"{len(j[k])} {k.replace('_', ' ')}" for k in ("now_refused", "now_accepted") if j[k]) or "same"
        rows.append([j["job_id"], _plus_minus(j, "entries"), _plus_minus(j, "candidates"), resolutions,
                     f"{_hits(j, 'before')} → {_hits(j, 'after')}"])
    columns = ["job", "read-log entries", "candidates", "resolutions", "review hits (before → after)"]
    text = Table("changes", "What changed, per job", columns, rows).markdown()
    more = len(changed) - SHOW_CHANGED
    return text + (f"\n\n… and {more} more changed job(s) in replay.jsonl" if more > 0 else "")


def _tab_code() -> str:
    """A digest of the tab's code in this checkout: which tab answered."""
    root = Path(__file__).resolve().parents[2] / "tab"
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]

