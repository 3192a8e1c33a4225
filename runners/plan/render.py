"""The plan as lines: jobs per benchmark and in all, the cost range, the wall time, and what each rests on."""

from __future__ import annotations

from collections.abc import Sequence

from runners.config.schema import RootConfig
from runners.plan.estimate import Plan
from runners.plan.figures import Span


def lines(plan: Plan, configs: Sequence[RootConfig], shape: str) -> list[str]:
    """The plan's lines (no comment marks: `--cfg job` adds them). `shape`: the cells a task runs in,
    e.g. `5 method(s) x 3 model(s) x 3 seed(s)`."""
    from runners.models.pricing import unpriced
    from runners.preflight.gpus import gpu_note

    counted = [r for r in plan.rows if r.jobs is not None]
    width = max(len(r.benchmark) for r in plan.rows)
    out = [f"plan: {plan.jobs:,} job(s) counted: each benchmark's tasks × its cells ({shape})"]
    for r in plan.rows:
        if r.jobs is None:
            out.append(f"  {r.benchmark:<{width}}  {r.cells} cells × ? tasks: {r.tasks.how}")
        else:
            out.append(f"  {r.benchmark:<{width}}  {r.tasks.n:,} tasks × {r.cells} cells = {r.jobs:,} jobs, {usd(r.usd)}  ({r.tasks.how})")
    missing = [r for r in plan.rows if r.jobs is None]
    total = f"  {'all':<{width}}  {plan.jobs:,} jobs, {usd(plan.usd)}"
    if missing:
        total += (f"; NOT COUNTED: {len(missing)} benchmark(s), {sum(r.cells for r in missing)} cells "
                  "(their jobs, cost and time are in none of these sums)")
    out.append(total)
    if counted:
        bases = "; ".join(f"{b}: {', '.join(e)}" for b, e in plan.bases.items())
        out.append(f"cost: {usd(plan.usd)} expected, from {bases}; × the models' prices (conf/pricing/)")
        out += [f"  {note}" for note in plan.notes]
        out.append("  by model: " + ", ".join(f"{m} {usd(s)}" for m, s in plan.by_model.items()))
        warned = {c.model.id: p for c in configs if (p := unpriced(c.model)) is not None}
        placeholders = [m for m, p in warned.items() if "placeholder" in p.why]
        if placeholders:
            out.append(f"  at placeholder prices, not checked yet: {', '.join(placeholders)} (conf/pricing/; docs/models.md)")
        if len(placeholders) < len(warned):
            out.append(f"  without a price, so at $0 here: {', '.join(m for m in warned if m not in placeholders)}")
        out.append(f"time: {hours(plan.wall_s)} expected at {plan.bound} and {plan.latency_s:g} s a model call (plan.latency_s), "
                   f"{plan.calls.lo:.0f}–{plan.calls.hi:.0f} calls a job")
    if plan.pilot is not None:
        p = plan.pilot
        per_call = sum(j.wall_s for j in p.jobs) / max(sum(j.calls for j in p.jobs), 1)
        out.append(f"pilot: {len(p.jobs)} finished job(s) in {p.folder}{f' ({p.skipped} unreadable record(s) left out)' if p.skipped else ''}; "
                   f"they took {per_call:.2f} s a call (plan.latency_s={per_call:.2g} plans with that)")
    note = gpu_note(configs)
    if note:
        out.append(note)
    return out


def usd(s: Span) -> str:
    return f"${s.lo:,.2f}–${s.hi:,.2f}"


def hours(s: Span) -> str:
    return f"{duration(s.lo)}–{duration(s.hi)}"


def duration(seconds: float) -> str:
    """`45s`, `12m`, `3h05m`, `2d04h`: to the unit below the largest."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"
