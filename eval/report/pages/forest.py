"""The forest plot of the report's first screen: each method's paired gain over the baseline, a row per
benchmark × harness × model and method, as an inline SVG drawn here (no script, no library).

The rows are the paired table's (`table1_vs_<baseline>`, `eval/report/analyses/table1.py`): the same
pairs, differences, intervals and p-values, read from its raw rows, never computed again. Every
label has a column of its own, sized to the longest text it holds (up to a cap past which a label is
cut with an ellipsis, its whole text in the row's tooltip) and clipped to it, so no text runs into
another; the x axis is shared by every row and symmetric around 0, at least ±10 points wide.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from eval.judges.metrics import METRICS
from eval.report.analyses.accounting import Accounting
from eval.report.analyses.leaderboard import headline_of
from eval.report.analyses.table1 import setting_name
from eval.report.section import Table, p_text, signed

FONT = 12  # px, every text of the figure
ROW = 18  # px per row
PLOT = 320  # px, the plot area's width: the paper's grid with its counts fits a 1400 px window
GAP = 14  # px between columns
# A character's width in em, an upper bound by class (DejaVu Sans, among the widest sans fonts; the
# browser test measures the real widths): narrow, wide, other capitals, the rest.
NARROW, WIDE = set("fijlrtI.,:;'!|() ·"), set("mwMW@%—…#+<=>^~−")
EM = {"narrow": 0.42, "wide": 1.0, "upper": 0.83, "other": 0.67}
MAX_LABEL = 330  # px: a label column's cap (longer labels end in "…")
MIN_RANGE = 10.0  # points: the axis spans at least ±this
AXIS_BELOW = 40  # rows from which the axis is drawn below the rows too
COLORS = {"gain": "#2166ac", "loss": "#b2182b", "unsure": "#6b6b6b"}  # interval above 0, below 0, across 0
SHORT = "#8a5a00"  # a row's results / planned when some planned jobs are not results (the report's `.skip` colour)


@dataclass(frozen=True)
class ForestRow:
    benchmark: str
    harness: str
    model: str
    method: str
    metric: str
    diff: float  # points
    low: float
    high: float
    p: float
    pairs: int
    tasks: int

    @property
    def setting(self) -> str:
        """`benchmark · harness · model` (the harness only when not our own loop)."""
        return setting_name(self.benchmark, self.harness, self.model)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Its Table 1 row: (benchmark, harness, model, method)."""
        return self.benchmark, self.harness, self.model, self.method

    @property
    def kind(self) -> str:
        return "gain" if self.low > 0 else "loss" if self.high < 0 else "unsure"


def forest_rows(table: Table) -> list[ForestRow]:
    """The paired table's rows (raw values, by column name)."""
    out = []
    for raw in table.rows:
        r = dict(zip(table.columns, raw, strict=True))
        if r["diff"] is None or r["ci_low"] is None or r["ci_high"] is None:
            continue
        out.append(ForestRow(r["benchmark"], r.get("harness", "dci"), r["model"], r["method"], r["metric"], float(r["diff"]),
                             float(r["ci_low"]), float(r["ci_high"]), float(r["p_value"]), int(r["pairs"]), int(r["tasks"])))
    return out


def headline_first(rows: list[ForestRow]) -> tuple[list[ForestRow], list[ForestRow]]:
    """(each benchmark's headline metric's rows, the other metrics' rows), each in the table's order."""
    per_bench: dict[str, set[str]] = {}
    for r in rows:
        per_bench.setdefault(r.benchmark, set()).add(r.metric)
    heads = {b: headline_of([m for m in METRICS if m in ms]) for b, ms in per_bench.items()}
    return [r for r in rows if r.metric == heads[r.benchmark]], [r for r in rows if r.metric != heads[r.benchmark]]


def text_width(text: str) -> float:
    """An upper estimate of `text`'s width in px at FONT."""
    return FONT * sum(EM["narrow" if c in NARROW else "wide" if c in WIDE or not c.isascii() else "upper" if c.isupper() else "other"]
                      for c in text)


def _fit(text: str, width: float) -> str:
    """`text`, cut with an ellipsis to fit `width` px."""
    if text_width(text) <= width:
        return text
    while text and text_width(text + "…") > width:
        text = text[:-1]
    return text + "…"


def _step(span: float) -> float:
    """A tick step giving at most five ticks on each side of 0."""
    raw = span / 5
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def axis_span(rows: list[ForestRow]) -> float:
    """Half the axis: the farthest interval end, at least MIN_RANGE, rounded up to a tick."""
    far = max([MIN_RANGE, *(abs(r.low) for r in rows), *(abs(r.high) for r in rows)])
    step = _step(far)
    return math.ceil(far / step - 1e-9) * step


def counts_tip(acc: Accounting) -> str:
    """`8 of 10 planned jobs are results; 2 are not: 1 errored, 1 unfinished`: a row's accounting said whole."""
    said = f"{acc.results} of {acc.planned} planned job{'s' * (acc.planned != 1)} {'is a result' if acc.planned == 1 else 'are results'}"
    kinds = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in acc.kinds().items() if n)
    return f"{said}; {acc.not_results} {'is' if acc.not_results == 1 else 'are'} not: {kinds}" if kinds else said


def forest_svg(rows: list[ForestRow], reference: str, name: str, counts: dict[tuple[str, str, str, str], Accounting] | None = None,
               baseline: str = "") -> str:
    """The figure; `name` makes its ids its own (a page holds several). `counts`, by Table 1 row
    (`ForestRow.key`, `accounting.by_row`): a last column of the row's results / planned, in
    SHORT's colour when some planned jobs are not results, their kinds in the row's tooltip, with
    the `baseline` method's (a pair needs both sides)."""
    span = axis_span(rows)
    step = _step(span)
    texts = {
        "setting": ["setting", *(r.setting for r in rows)],
        "method": ["method", *(r.method for r in rows)],
        "metric": ["metric", *(r.metric for r in rows)],
    }
    widths = {k: min(MAX_LABEL, max(text_width(t) for t in v)) for k, v in texts.items()}
    cols: dict[str, float] = {}
    x = 8.0
    for k in ("setting", "method", "metric"):
        cols[k] = x
        x += widths[k] + GAP
    plot_x = x
    x += PLOT + GAP
    stats = [f"{signed(r.diff)} [{signed(r.low)}, {signed(r.high)}]" for r in rows]
    right = {"ci": ("Δ [95% CI]", stats), "p": ("p", [p_text(r.p) for r in rows]),
             "pairs": ("pairs · tasks", [f"{r.pairs} · {r.tasks}" for r in rows])}
    accs = [counts.get(r.key) if counts is not None else None for r in rows]
    if counts is not None:
        right["counts"] = ("results / planned", [f"{a.results} / {a.planned}" if a else "" for a in accs])
    for k, (head, vals) in right.items():
        cols[k] = x
        widths[k] = max(text_width(t) for t in [head, *vals])
        x += widths[k] + GAP
    width, top = x, 44
    below = len(rows) > AXIS_BELOW  # a long figure repeats its axis at the bottom
    height = top + ROW * len(rows) + (34 if below else 8)

    def px(v: float) -> float:
        return plot_x + (v + span) / (2 * span) * PLOT

    out = [f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-size="{FONT}" font-family="system-ui,sans-serif" role="img" '
           f'aria-label="paired gain over {html.escape(reference)}, {len(rows)} rows">', "<defs>"]
    for k, w in widths.items():
        out.append(f'<clipPath id="{name}-{k}"><rect x="{cols[k]:.1f}" y="0" width="{w + GAP / 2:.1f}" height="{height}"/></clipPath>')
    out.append("</defs>")
    # header row and axis (top and bottom)
    for k, head in (("setting", "setting"), ("method", "method"), ("metric", "metric"), *((k, v[0]) for k, v in right.items())):
        out.append(f'<text class="head" x="{cols[k]:.1f}" y="16" font-weight="bold" clip-path="url(#{name}-{k})">{html.escape(head)}</text>')
    out.append(f'<text class="head" x="{plot_x + PLOT / 2:.1f}" y="16" font-weight="bold" text-anchor="middle">'
               f"Δ points (method − {html.escape(reference)})</text>")
    ticks = [i * step for i in range(-round(span / step), round(span / step) + 1)]
    bottom = top + ROW * len(rows)
    for t in ticks:
        tx = px(t)
        color, w = ("#222", 1.2) if t == 0 else ("#ddd", 1)
        out.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{top - 6}" y2="{bottom + (4 if below else 0)}" stroke="{color}" stroke-width="{w}"/>')
        label = f"{t:+g}" if t else "0"
        for y in (top - 10, bottom + 18)[: 1 + below]:
            out.append(f'<text class="tick" x="{tx:.1f}" y="{y}" text-anchor="middle" fill="#444">{label}</text>')
    prev = None
    for i, (r, stat) in enumerate(zip(rows, stats, strict=True)):
        y = top + i * ROW
        mid = y + ROW / 2
        first = r.setting != prev
        prev = r.setting
        acc = accs[i]
        base = counts.get((r.benchmark, r.harness, r.model, baseline)) if counts is not None else None
        tip = (f"{r.setting} · {r.method}: {r.metric} Δ {stat} points, p {p_text(r.p)}, {r.pairs} pairs over {r.tasks} tasks"
               + (f"; {r.method}: {counts_tip(acc)}" if acc else "") + (f"; {reference}: {counts_tip(base)}" if base else ""))
        tally = (f' data-planned="{acc.planned}" data-results="{acc.results}" data-short="{html.escape(acc.text())}"' if acc else "")
        out.append(f'<g class="frow" data-setting="{html.escape(r.setting)}" data-method="{html.escape(r.method)}" '
                   f'data-metric="{html.escape(r.metric)}" data-kind="{r.kind}" data-diff="{r.diff!r}" data-low="{r.low!r}" '
                   f'data-high="{r.high!r}" data-p="{r.p!r}"{tally}><title>{html.escape(tip)}</title>')
        if first and i:
            out.append(f'<line x1="4" x2="{width - 4:.0f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#bbb"/>')
        at = f'y="{mid + FONT / 3:.1f}"'
        labels = {"setting": r.setting if first else "", "method": r.method, "metric": r.metric}
        labels |= {k: v[1][i] for k, v in right.items()}
        for k, text in labels.items():
            if text:
                shown = _fit(text, widths[k]) if k in texts else text
                short = f' fill="{SHORT}" font-weight="bold"' if k == "counts" and acc and acc.not_results else ""
                out.append(f'<text class="lab" data-col="{k}" x="{cols[k]:.1f}" {at} clip-path="url(#{name}-{k})"{short}>'
                           f"{html.escape(shown)}</text>")
        color = COLORS[r.kind]
        lo, hi, d = px(r.low), px(r.high), px(r.diff)
        out.append(f'<line class="ci" x1="{lo:.1f}" x2="{hi:.1f}" y1="{mid:.1f}" y2="{mid:.1f}" stroke="{color}" stroke-width="2"/>')
        for cx in (lo, hi):
            out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{mid - 5:.1f}" y2="{mid + 5:.1f}" stroke="{color}" stroke-width="1.5"/>')
        out.append(f'<rect class="pt" x="{d - 4:.1f}" y="{mid - 4:.1f}" width="8" height="8" fill="{color}"/></g>')
    out.append("</svg>")
    return "".join(out)
