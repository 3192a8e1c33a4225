"""Table 1: per benchmark × harness × model × method, each metric as mean ± std over seeds (best marked), and
each method against DCI over the same tasks and seeds (difference, hierarchical-bootstrap 95%
interval and paired permutation p-value, `paired.py`). A method is compared with DCI within its
harness (`agent.harness`): our own loop's jobs with our own loop's, Codex's with Codex's. The
harness column is shown only when a job ran another harness than our own (`dci`).

Each row says how many jobs were planned, how many are results and how many are not, by kind
(`accounting.py`: errored, unscored, unfinished, not started). Only results are in the means and
intervals; a pair of the paired comparison is dropped when either side is not a result, and a
method whose not-results differ from its baseline's by more than a few jobs is flagged in a note.
A job whose evaluator failed on what the agent left is a result (counted in a note). Jobs whose
shell ran without a sandbox are counted per row and in a note.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from eval.judges.metrics import counts
from eval.report.analyses import accounting, paired
from eval.report.analyses.leaderboard import leaderboard
from eval.report.analyses.stats import metric_names, over_seeds, per_seed
from eval.report.load import Job, Sweep
from eval.report.method_names import harness_key, label, method_key
from eval.report.section import Section, Skip, Table, fmt, p_text, pct, signed
from runners.core.harness_names import is_own_loop

Key = tuple[str, str, str, str]  # benchmark, harness, model, method


def cells(jobs: Iterable[Job]) -> dict[Key, list[Job]]:
    """Scored jobs that are results (not errored) by (benchmark, harness, model, method)."""
    out: dict[Key, list[Job]] = defaultdict(list)
    for j in jobs:
        if j.scores is not None and not j.errored:
            out[(j.benchmark, j.harness, j.model, j.method)].append(j)
    return out


def errored_cells(jobs: Iterable[Job]) -> dict[Key, list[Job]]:
    """Errored jobs by (benchmark, harness, model, method), scored or not."""
    out: dict[Key, list[Job]] = defaultdict(list)
    for j in jobs:
        if j.errored:
            out[(j.benchmark, j.harness, j.model, j.method)].append(j)
    return out


def order(k: Key) -> tuple:
    return k[0], harness_key(k[1]), k[2], method_key(k[3])


def setting_name(benchmark: str, harness: str, model: str) -> str:
    """`benchmark · model`, the harness after the benchmark when it is not our own loop."""
    return " · ".join([benchmark, *([] if is_own_loop(harness) else [harness]), model])


def cell_name(k: Key) -> str:
    """`benchmark · model · method`, the harness after the benchmark when it is not our own loop."""
    return f"{setting_name(*k[:3])} · {k[3]}"


def any_harness(keys: Iterable[Key]) -> bool:
    """Whether a production harness ran (then tables show the harness column)."""
    return any(not is_own_loop(k[1]) for k in keys)


def _per_cell(counts_: dict[Key, int]) -> str:
    keys = sorted((k for k, n in counts_.items() if n), key=order)
    return "; ".join(f"{cell_name(k)}: {counts_[k]}" for k in keys)


def record_notes(groups: dict[Key, list[Job]], errored: dict[Key, list[Job]]) -> list[str]:
    """How many jobs errored (left out) and how many results ran unsandboxed, per cell."""
    notes = []
    n_err = {k: len(js) for k, js in errored.items()}
    if sum(n_err.values()):
        notes.append(f"{sum(n_err.values())} errored job(s) (a failure of the host: env_error, model_error, the sweep's or "
                     f"its cell's budget) are not results and are left out of every mean and interval; the same command "
                     f"runs them again: {_per_cell(n_err)}")
    n_open = {k: sum(j.unsandboxed for j in js) for k, js in groups.items()}
    if sum(n_open.values()):
        notes.append(f"{sum(n_open.values())} job(s) ran unsandboxed (result.json sandbox \"none\": the agent's shell had "
                     f"no isolation, see docs/env.md): {_per_cell(n_open)}")
    return notes


def variant_notes(groups: dict[Key, list[Job]]) -> list[str]:
    """The other pass rates, for the cells where they differ from the table's rubric_pass_rate (some
    rubric never judged, or extra rows): over every rubric (unjudged as failed) and over the judged
    rubrics (one row each), mean over seeds as in the table."""
    notes = []
    for k, js in sorted(groups.items(), key=lambda kv: order(kv[0])):
        c = counts([j.scores for j in js])
        if not (c["unjudged"] or c["extra_rows"]):
            continue
        seeds = per_seed(js).values()
        parts = []
        for name, what in (("pass_rate", "over every rubric, unjudged as failed"), ("pass_rate_judged", "over judged rubrics only")):
            vals = [s[name] for s in seeds if name in s]
            if vals:
                parts.append(f"{name} {fmt(pct(sum(vals) / len(vals)))} ({what})")
        if parts:
            notes.append(f"{cell_name(k)}: rubric_pass_rate counts the rows the judge wrote ({c['unjudged']} unjudged "
                         f"rubric(s) without one, {c['extra_rows']} extra row(s)); " + ", ".join(parts)
                         + f", mean over {len(seeds)} seed(s)")
    return notes


def unscored_notes(jobs: Iterable[Job], groups: dict[Key, list[Job]]) -> list[str]:
    """Jobs left out for want of scores (unfinished, or their judge failed for a reason of the host's:
    re-scorable), and results whose evaluator failed on what the agent left (TheAgentCompany: scored,
    unfinished checkpoints 0)."""
    notes = []
    unscored = [j for j in jobs if j.scores is None and not j.errored]
    if unscored:
        failed = sum(j.result is not None for j in unscored)
        parts = [f"{len(unscored) - failed} unfinished"] * (failed < len(unscored)) + [
            f"{failed} unscored (its judge failed on evidence the agent cannot write: a failure of the host; scored "
            "again on resume, or by python -m eval.score)"] * bool(failed)
        notes.append(f"{len(unscored)} job(s) have no scores.json and are left out: {', '.join(parts)}")
    on_files = {k: sum(bool(j.scores.get("evaluator_failure")) for j in js if j.scores) for k, js in groups.items()}
    if sum(on_files.values()):
        outcomes = Counter(str(j.scores["evaluator_failure"].get("outcome") or j.scores["evaluator_failure"].get("limit"))
                           for js in groups.values() for j in js if j.scores and j.scores.get("evaluator_failure"))
        named = ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
        notes.append(f"{sum(on_files.values())} scored job(s) whose evaluator failed on what the agent left ({named}; "
                     f"the checkpoints it did not finish count 0): {_per_cell(on_files)}")
    return notes


def results_table(name: str, title: str, groups: dict[Key, list[Job]], errored: dict[Key, list[Job]] | None = None,
                  rows_of: dict[Key, accounting.Accounting] | None = None) -> Table:
    """Mean ± std over seeds per group, the best mean of each metric per (benchmark, harness, model) in
    bold when one group alone has it (a tie marks none); where each row's planned jobs went
    (`rows_of`: `accounting.by_row`; without it, the results and errored jobs given); what the group's
    jobs cost: total USD and tokens per job. A group with no result has a row with its counts and no numbers."""
    errored = errored or {}
    if rows_of is None:
        rows_of = {k: accounting.of_jobs(["result"] * len(groups.get(k, [])) + ["errored"] * len(errored.get(k, [])))
                   for k in set(groups) | set(errored)}
    keys = sorted(set(groups) | set(errored) | set(rows_of), key=order)
    harnesses = any_harness(keys)
    axes = ["benchmark", *["harness"] * harnesses, "model", "method"]
    metrics = metric_names([j for js in groups.values() for j in js])
    columns = [*axes, "seeds", "planned", "results", *accounting.NOT_RESULTS, "unsandboxed"]
    for m in metrics:
        columns += [m, f"{m}_std"]
    columns += ["best", "cost_usd", "tokens_per_job"]
    stats = {k: over_seeds(groups.get(k, [])) for k in keys}
    means: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for (b, h, mo, _), st in stats.items():
        for m, s in st.items():
            means[(b, h, mo, m)].append(s.mean)
    unique_best = {bm: max(vs) for bm, vs in means.items() if sum(abs(v - max(vs)) < 1e-12 for v in vs) == 1}
    show_open = any(j.unsandboxed for js in groups.values() for j in js)
    head = [*axes, "seeds", "planned", "results", "not results"] + ["unsandboxed"] * show_open
    rows, shown, best = [], [], set()
    for i, k in enumerate(keys):
        jobs, st, acc = groups.get(k, []), stats[k], rows_of.get(k, accounting.Accounting())
        shown_key = list(k) if harnesses else [k[0], k[2], k[3]]
        n_seeds, n_open = len({j.seed for j in jobs}), sum(j.unsandboxed for j in jobs)
        row: list = [*shown_key, n_seeds, acc.planned, len(jobs), *acc.kinds().values(), n_open]
        cells_ = [*shown_key, str(n_seeds), str(acc.planned), str(len(jobs)), acc.text()] + [str(n_open)] * show_open
        winners = []
        for m in metrics:
            s = st.get(m)
            row += [pct(s.mean), pct(s.std)] if s else [None, None]
            cells_.append(f"{fmt(pct(s.mean))} ± {fmt(pct(s.std))}" if s else "")
            top = unique_best.get((k[0], k[1], k[2], m))
            if s and top is not None and abs(s.mean - top) < 1e-12:
                winners.append(m)
                best.add((i, len(head) + metrics.index(m)))
        cost, tokens = spend(jobs)
        row += [";".join(winners), cost, tokens]
        rows.append(row)
        shown.append([*cells_, f"${cost:.4f}" if jobs else "", f"{tokens:,.0f}" if tokens is not None else ""])
    return Table(name, title, columns, rows, display=([*head, *metrics, "cost (USD)", "tokens/job"], shown), best=best)


def spend(jobs: list[Job]) -> tuple[float, float | None]:
    """What a group's jobs cost in all (USD), and their mean tokens (in + out) per job."""
    results = [j.result for j in jobs if j.result is not None]
    cost = sum(r.cost for r in results)
    tokens = sum(r.tokens_in + r.tokens_out for r in results) / len(results) if results else None
    return cost, tokens


def paired_table(groups: dict[Key, list[Job]], reference: str = "dci") -> Table:
    """Each method minus `reference` on the same benchmark, harness, model, tasks and seeds."""
    harnesses = any_harness(groups)
    axes = ["benchmark", *["harness"] * harnesses, "model", "method"]
    columns = [*axes, "metric", "pairs", "tasks", "method_value", f"{reference}_value", "diff", "ci_low", "ci_high",
               "p_value", "rubrics_gained", "rubrics_lost"]
    rows = []
    for b, h, mo, me in sorted(groups, key=order):
        ref = groups.get((b, h, mo, reference))
        if me == reference or not ref:
            continue
        for m in metric_names(groups[(b, h, mo, me)]):
            p = paired.compare(groups[(b, h, mo, me)], ref, m)
            if p is not None:
                rows.append([b, *[h] * harnesses, mo, me, m, p.pairs, p.tasks, pct(p.method), pct(p.reference), pct(p.diff),
                             pct(p.low), pct(p.high), p.p, p.gained, p.lost])
    n = len(axes) - 3  # rows are shifted right by the harness column when it is shown
    rubric = any(r[12 + n] is not None for r in rows)
    shown = [[*r[:6 + n], fmt(r[6 + n]), fmt(r[7 + n]), signed(r[8 + n]), f"[{signed(r[9 + n])}, {signed(r[10 + n])}]", p_text(r[11 + n])]
             + ([f"+{r[12 + n]} / -{r[13 + n]}" if r[12 + n] is not None else ""] if rubric else []) for r in rows]
    head = [*axes, "metric", "pairs", "tasks", "method", label(reference), "Δ", "95% CI", "p"]
    display = (head + ["rubrics +/−"] * rubric, shown)
    within = ", within each harness" if harnesses else ""
    title = (f"Table 1 (paired): each method minus {label(reference)} on the same tasks and seeds{within} (points; 95% CI: "
             "bootstrap over tasks, then seeds; p: paired permutation test)")
    table = Table(f"table1_vs_{reference}", title, columns, rows, display=display)
    table.notes.append(
        f"a pair is a (task, seed) where both methods' jobs are results (a pair is dropped when either side is errored, "
        f"unscored, unfinished or not started); the interval resamples tasks, then each drawn "
        f"task's seeds, with replacement ({paired.SAMPLES:,} resamples, seed {paired.SEED}); p swaps the two methods within "
        f"tasks (every pattern up to {paired.EXACT_TASKS} tasks, else {paired.FLIPS:,} random ones)"
    )
    if rubric:
        table.notes.append("pass_rate pairs rubric by rubric (task × rubric index, on each seed): rubrics +/− counts the "
                           f"rubric runs only the method passed / only {label(reference)} passed, and Δ = (+ − −) / rubric runs compared")
    return table


COST_NOTE = ("cost (USD): what the cell's scored jobs' replies cost at the model's prices, replies from the model-call cache "
             "included (the same on every re-run); what the sweep paid providers is `spent` (spend.json and the sweep's last "
             "lines), where cached replies are free")


def build(sweep: Sweep, out: Path) -> Section:
    groups, errored = cells(sweep.jobs), errored_cells(sweep.jobs)
    if not groups and not errored:
        raise Skip("no scored jobs (no scores.json in any job directory)")
    title = ("Table 1: main results (%, mean ± std over seeds of the results; planned jobs, results and not results; "
             "the best per benchmark and model in bold, none on a tie; cost and tokens of the cell's jobs)")
    rows_of = accounting.by_row(sweep)
    main = results_table("table1", title, groups, errored, rows_of)
    section = Section("table1", "Table 1: main results", tables=[main])
    main.notes += accounting.flagged(rows_of, sweep.baseline)
    main.notes.append(COST_NOTE)
    main.notes += unscored_notes(sweep.jobs, groups)
    main.notes += record_notes(groups, errored)
    if not groups:
        main.notes.append("no job produced a result: every scored job errored")
    for k, js in sorted(groups.items()):
        seeds, tasks = {j.seed for j in js}, {j.task_id for j in js}
        if len(js) < len(seeds) * len(tasks):
            main.notes.append(f"{cell_name(k)}: {len(js)} scored jobs for {len(seeds)} seeds × {len(tasks)} tasks; "
                              "seeds average different task sets (the paired comparison uses common pairs only)")
    for b in sorted({k[0] for k in groups}):
        c = counts([j.scores for k, js in groups.items() if k[0] == b for j in js])
        if c["unjudged"] or c["judge_failures"] or c["extra_rows"]:
            main.notes.append(f"{b}: {c['unjudged']} of {c['rubrics']} rubrics never judged (no row in rubric_pass_rate, failed in "
                              f"pass_rate), {c['extra_rows']} extra row(s), {c['judge_failures']} failed judge call(s)")
    main.notes += variant_notes(groups)
    rules = sorted({j.scores["rule"] for js in groups.values() for j in js if "rule" in j.scores})
    if rules:
        main.notes.append("answers scored by " + ", ".join(rules))
    board = leaderboard(groups)
    if board is not None:
        section.tables.append(board)
    ref = sweep.baseline
    if any(k[3] == ref for k in groups):
        section.tables.append(paired_table(groups, ref))
    elif any(k[3] == ref for k in errored):
        section.notes.append(f"paired comparison skipped: every {label(ref)} job errored")
    else:
        section.notes.append(f"paired comparison skipped: the sweep has no {label(ref)} jobs (report.baseline={ref})")
    return section
