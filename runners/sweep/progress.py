"""The sweep's live progress: done / errored / running / failed / remaining per method, and an ETA.

Errored jobs (their record ends on a failure of the host: env_error, model_error or the sweep's budget) are counted apart from done
ones, jobs that ran without a sandbox are marked "unsandboxed", jobs whose judge could not read their
record (an infrastructure failure) "unscored", and the first error messages are printed when the
sweep ends. On a terminal the sweep is one redrawing line (runners/sweep/console.py:
counts, ETA, spend and the providers' rate limits) and the table per method is printed at the end;
elsewhere one line per finished job, the status line every 30 s, and the table at the end.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from runners.core.harness_names import is_own_loop
from runners.job.identity import JobSpec
from runners.sweep.console import (
    PLAIN_EVERY_S,
    LiveLine,
    cell_lines,
    duration,
    limiter_part,
    spend_part,
)
from runners.sweep.scheduler import Outcome

if TYPE_CHECKING:
    from runners.sweep.watch import SweepWatch

SHOW_ERRORS = 5
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # what a log line never carries (a tab, a newline, ESC…)


def row_of(spec: JobSpec) -> str:
    """The progress table's row of a job: its method, after its harness when that is not our own loop."""
    harness = spec.cfg.agent.harness
    return spec.cfg.method.name if is_own_loop(harness) else f"{harness} · {spec.cfg.method.name}"


class Progress:
    """Counts per method (per harness and method with a production harness); a live table on a terminal, one line per finished job elsewhere."""

    def __init__(self, specs: list[JobSpec], skipped: int, console: Console | None = None,
                 watch: SweepWatch | None = None, name: str = "", every_s: float = PLAIN_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.console = console or Console(stderr=True)
        self.watch, self.name = watch, name
        self.total = {m: 0 for m in dict.fromkeys(row_of(s) for s in specs)}
        for s in specs:
            self.total[row_of(s)] += 1
        self.done: dict[str, int] = defaultdict(int)
        self.errored: dict[str, int] = defaultdict(int)
        self.failed: dict[str, int] = defaultdict(int)
        self.running: dict[str, int] = defaultdict(int)
        self.errors: list[tuple[str, str]] = []
        self.unsandboxed = 0
        self.unscored: list[tuple[str, str]] = []
        self.finished = 0  # a count, so the redraw thread never iterates a dict being written
        self.walls: list[float] = []
        self.started: dict[str, float] = {}  # the running jobs' start times, for the ETA
        self.skipped = skipped
        self.n_running = self.n_errored = self.n_failed = 0
        # the line is built when it is drawn (twice a second), not on every start and finish
        self.line = LiveLine(self.console, self.status, every_s, details=lambda: cell_lines(self.watch))
        self.live = self.line.live

    def __enter__(self) -> Progress:
        if not self.live:
            self.console.print(f"sweep: {self.n_jobs} jobs to run, {self.skipped} already complete")
        self.line.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.line.__exit__(*exc)
        if self.live:
            self.console.print(self.table())
        self.print_errors()
        held = None if self.watch is None else self.watch.budget.not_started()
        if held:
            self.console.print(held, markup=False, highlight=False, soft_wrap=True)

    def start(self, spec: JobSpec) -> None:
        self.running[row_of(spec)] += 1
        self.n_running += 1
        self.started[spec.job_id] = self.clock()

    def finish(self, o: Outcome) -> None:
        m = row_of(o.spec)
        self.running[m] -= 1
        self.n_running -= 1
        self.started.pop(o.spec.job_id, None)
        self.n_errored += o.status == "error"
        self.n_failed += o.status not in ("ok", "error")
        if self.watch is not None:
            self.watch.finished(o.spec.job_id, None if o.result is None else o.result.spend,
                                o.result is not None and o.result.stop_reason == "budget")
        {"ok": self.done, "error": self.errored}.get(o.status, self.failed)[m] += 1
        self.finished += 1
        stop = None if o.result is None else o.result.stop_reason
        if o.status != "ok":
            self.errors.append((o.spec.job_id, f"{o.status}: {o.error or stop}"))
        sandbox = None if o.result is None else o.result.sandbox
        self.unsandboxed += sandbox == "none"
        if o.unscored:
            self.unscored.append((o.spec.job_id, o.unscored))
        self.walls.append(o.wall_s)
        if not self.live:
            reason = o.error if o.result is None else stop
            mark = (" UNSANDBOXED" if sandbox == "none" else "") + (" UNSCORED" if o.unscored else "")
            line = f"[{self._finished()}/{self.n_jobs}] {o.status:7} {o.spec.job_id} ({reason}, {o.wall_s:.1f} s){mark}"
            # one log line, as it is: one write, no terminal escapes or line breaks from an error's text (rich's
            # print would turn `:name:` into an emoji, keep ESC, and measure the terminal at each job: ~0.1 ms)
            self.console.file.write(_CONTROL.sub(" ", line) + "\n")

    @property
    def n_jobs(self) -> int:
        return sum(self.total.values())

    def print_errors(self) -> None:
        """The first errors' messages, so that a sweep of errored jobs does not end looking fine."""
        if self.unscored:
            self.console.print(f"{len(self.unscored)} job(s) finished but are UNSCORED: their judge could not read the record, a failure "
                               "of the host, not of the agent (scored again on resume, or by python -m eval.score); the first:",
                               markup=False, highlight=False, soft_wrap=True)
            for job_id, msg in self.unscored[:SHOW_ERRORS]:
                self.console.print(f"  {job_id}: {msg[:500]}", markup=False, highlight=False, soft_wrap=True)
        if not self.errors:
            return
        self.console.print(f"{len(self.errors)} job(s) did not finish ok (errored jobs run again on every run of the sweep); the first:")
        for job_id, msg in self.errors[:SHOW_ERRORS]:
            self.console.print(f"  {job_id}: {msg[:500]}", markup=False, highlight=False)

    def _finished(self) -> int:
        return self.finished

    def eta_s(self) -> float | None:
        """Seconds left: the queued jobs at the finished jobs' mean wall time, plus what the running ones
        have left of it, over the slots in use (None before any job finished). A job running past the
        mean has nothing left by this measure, so the ETA never grows while it runs; `overdue` says so."""
        if not self.walls:
            return None
        mean = sum(self.walls) / len(self.walls)
        now = self.clock()
        left = [max(mean - (now - t), 0.0) for t in list(self.started.values())]
        queued = max(self.n_jobs - self.finished - len(left), 0)
        return max((sum(left) + queued * mean) / max(len(left), 1), max(left, default=0.0))

    def overdue(self) -> str | None:
        """`N running past the mean job's Xs`, when running jobs have outlived the ETA's estimate."""
        if not self.walls:
            return None
        mean, now = sum(self.walls) / len(self.walls), self.clock()
        late = sum(now - t > mean for t in list(self.started.values()))
        return f"{late} running past the mean job's {duration(mean)}" if late else None

    def status(self) -> str:
        """The one progress line: counts, ETA, spend and the providers' limiters."""
        done = self.finished - self.n_errored - self.n_failed
        parts = [f"sweep {self.name}".rstrip(), f"{done:,}/{self.n_jobs:,} done", f"{self.n_running} running",
                 f"{self.n_errored} errored", f"{self.n_failed} failed"]
        eta = self.eta_s()
        parts.append(f"ETA {duration(eta)}" if eta is not None else "ETA –")
        late = self.overdue()
        if late:
            parts.append(late)
        if self.unsandboxed:
            parts.append(f"{self.unsandboxed} UNSANDBOXED")
        if self.unscored:
            parts.append(f"{len(self.unscored)} UNSCORED")
        spend = spend_part(self.watch)
        if spend:
            parts.append(spend)
        if self.watch is not None:
            parts.extend(limiter_part(self.watch.snapshot))
        return " · ".join(parts)

    def table(self) -> Table:
        t = Table(title="sweep progress")
        for c in ("method", "done", "errored", "running", "failed", "remaining"):
            t.add_column(c)
        for m, total in self.total.items():  # .get: the redraw thread must not insert keys
            done, errored, failed, running = (c.get(m, 0) for c in (self.done, self.errored, self.failed, self.running))
            left = total - done - errored - failed - running
            t.add_row(m, str(done), str(errored), str(running), str(failed), str(left))
        eta = self.eta_s()
        notes = [f"{self.skipped} already complete"]
        if self.unsandboxed:
            notes.append(f"{self.unsandboxed} UNSANDBOXED")
        if self.unscored:
            notes.append(f"{len(self.unscored)} UNSCORED")
        if eta is not None:
            notes.append(f"ETA {eta:.0f} s")
        t.caption = " · ".join(notes)
        return t
