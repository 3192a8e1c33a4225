"""The sweep's console: one progress line that redraws in a terminal, plain periodic lines elsewhere.

    sweep t · 312/1,000 done · 8 running · 3 errored · 0 failed · ETA 14m05s · $12.40 spent, $39.70 expected of $50 · api.openai.com: 16/16 in flight, 4 waiting, 3×429/min

In a terminal (rich's `Live`, redrawn twice a second from the counts, not on every event) the line
is all there is until the sweep ends; when the output is not a terminal (Slurm logs, CI) the same
line is printed every `every_s` seconds (besides one line per finished job), followed by the
cells' spend when a budget or a paid model is involved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

if TYPE_CHECKING:
    from runners.sweep.watch import SweepWatch

PLAIN_EVERY_S = 30.0
SHOW_CELLS = 20


def duration(s: float) -> str:
    s = int(s)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def spend_part(watch: SweepWatch | None) -> str | None:
    """`$X spent, $Y expected of $B`: the sweep's spend so far and at completion (None without a watch)."""
    if watch is None:
        return None
    spent, expected = watch.totals()
    cap = watch.budget.cfg.sweep_usd
    held = len(watch.budget.held)
    if not (spent or expected or cap or held):
        return None  # nothing priced, nothing limited: no spend to show
    text = f"${spent:,.2f} spent, ${expected:,.2f} expected" + (f" of ${cap:,.2f}" if cap else "")
    return text + (f", {held} held by the budget" if held else "")


def limiter_part(snapshot: dict[str, Any]) -> list[str]:
    """Each provider's limiter: calls in flight over its limit, calls waiting, 429s in the last minute."""
    out = []
    for provider, s in (snapshot.get("providers") or {}).items():
        host = provider.split("://", 1)[-1].split("/", 1)[0]
        limit = "∞" if s.get("limit") is None else str(s["limit"])
        bits = [f"{s.get('in_flight', 0)}/{limit} in flight"]
        if s.get("waiting"):
            bits.append(f"{s['waiting']} waiting")
        if s.get("overloads_1m"):
            bits.append(f"{s['overloads_1m']}×429/min")
        if s.get("paused_s"):
            bits.append(f"paused {s['paused_s']:g}s")
        out.append(f"{host}: {', '.join(bits)}")
    return out


class LiveLine:
    """Shows `render()` as one redrawing line on a terminal, or prints it every `every_s` seconds."""

    def __init__(self, console: Console, render: Callable[[], str], every_s: float = PLAIN_EVERY_S,
                 details: Callable[[], list[str]] | None = None) -> None:
        self.console, self.render, self.every_s, self.details = console, render, every_s, details
        self.live = Live(console=console, refresh_per_second=2, get_renderable=self._text, transient=False) if console.is_terminal else None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _text(self) -> Text:
        return Text(self.render(), no_wrap=True, overflow="ellipsis")

    def __enter__(self) -> LiveLine:
        if self.live is not None:
            self.live.__enter__()
        elif self.every_s > 0:
            self._thread = threading.Thread(target=self._plain, name="sweep-console", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _plain(self) -> None:
        while not self._stop.wait(self.every_s):
            self.print_now()

    def print_now(self) -> None:
        lines = [self.render(), *(self.details() if self.details else [])]
        for line in lines:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def cell_lines(watch: SweepWatch | None) -> list[str]:
    """The cells' spend, most expected first (at most SHOW_CELLS), when anything is spent or expected."""
    if watch is None:
        return []
    cells = [(c, v) for c, v in watch.cells().items() if v["spent"] or v["expected"]]
    cells.sort(key=lambda cv: -cv[1]["expected"])
    lines = [f"  {c}: ${v['spent']:,.4f} spent, ${v['expected']:,.4f} expected" for c, v in cells[:SHOW_CELLS]]
    if len(cells) > SHOW_CELLS:
        lines.append(f"  … {len(cells) - SHOW_CELLS} more cells in spend.json")
    return lines
