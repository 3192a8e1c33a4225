"""The few chart shapes the report draws, with matplotlib's file-only backend (no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def stacked_bars(path: Path, title: str, labels: list[str], series: dict[str, list[float]], xlabel: str) -> Path:
    """One horizontal bar per label, split into the series (shares that add up to 100)."""
    fig, ax = _pyplot().subplots(figsize=(7.5, 0.55 * len(labels) + 1.6))
    left = [0.0] * len(labels)
    for (name, vals), color in zip(series.items(), COLORS, strict=False):
        ax.barh(labels, vals, left=left, label=name, color=color)
        for i, v in enumerate(vals):
            if v >= 6:
                ax.text(left[i] + v / 2, i, f"{v:.0f}", ha="center", va="center", fontsize=8, color="white")
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel(xlabel)
    ax.invert_yaxis()
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right", framealpha=0.8)
    return _save(fig, path)


def grouped_bars(
    path: Path, title: str, groups: list[str], series: dict[str, list[float | None]], ylabel: str,
    scale: tuple[float, float] = (0.0, 100.0),
) -> Path | None:
    """Bars per group, one per series (missing values left out); None, and no file, when there is no
    value to draw. The y axis spans at least `scale` (its units: a % or points axis never shrinks to
    matplotlib's ±0.04 around bars that are all 0)."""
    values = [v for vals in series.values() for v in vals if v is not None]
    if not values:
        return None
    fig, ax = _pyplot().subplots(figsize=(max(5.0, 1.2 * len(groups) * max(1, len(series)) ** 0.5 + 2), 3.6))
    width = 0.8 / max(1, len(series))
    for k, ((name, vals), color) in enumerate(zip(series.items(), COLORS, strict=False)):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(groups))]
        pts = [(x, v) for x, v in zip(xs, vals, strict=True) if v is not None]
        ax.bar([p[0] for p in pts], [p[1] for p in pts], width=width, label=name, color=color)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_ylim(min(scale[0], *values), max(scale[1], *values) * 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)
    return _save(fig, path)


def _pyplot() -> Any:
    """pyplot on the file-only backend (a report never opens a window), imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path
