"""What one job of a grid cell is expected to take: its model calls and its cost in USD, each a range.

Two sources, said with every figure:

- **stated** (`plan.tokens`, conf/tokens/stated.yaml): per benchmark, calls a job and mean prompt and
  output tokens a call, each [low, high]; a job costs calls × one call at the model's price
  (conf/pricing/, `runners.models.pricing.price_of`), all input at the input price;
- **a pilot** (`plan.pilot`: a finished sweep's folder): its own records (`result.json`: calls,
  tokens, cost), matched to the cell by benchmark, method and model, else benchmark and model, else
  benchmark and method, else benchmark. A job of the pilot's own model costs what its records say
  (the provider's prompt cache included); another model's, the pilot's tokens at that model's
  price. The range is the pilot's mean ± two standard errors (one pilot job: half to twice it):
  how far the mean of so few jobs may be from the grid's, if the pilot's tasks are like the rest.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runners.config.schema import ConfigError, RootConfig

TOKENS_DIR = Path(__file__).resolve().parents[2] / "conf" / "tokens"


@dataclass(frozen=True)
class Span:
    """A range [lo, hi]."""

    lo: float
    hi: float

    def __add__(self, other: Span) -> Span:
        return Span(self.lo + other.lo, self.hi + other.hi)

    def __mul__(self, k: float) -> Span:
        return Span(self.lo * k, self.hi * k)


ZERO = Span(0.0, 0.0)


@dataclass(frozen=True)
class PerJob:
    """One job of a cell: model calls and USD, each a range, and what they rest on: `basis` (the
    source) and `entry` (which part of it: a benchmark's stated figures, the pilot jobs matched)."""

    calls: Span
    usd: Span
    basis: str
    entry: str
    note: str = ""  # what the figure leaves out (a model without a price)


@dataclass(frozen=True)
class PilotJob:
    benchmark: str
    method: str
    model: str
    calls: int
    tokens_in: int
    tokens_out: int
    usd: float
    wall_s: float


@dataclass(frozen=True)
class Pilot:
    """A pilot sweep's finished jobs (`skipped`: records that could not be read, named by count)."""

    folder: Path
    jobs: tuple[PilotJob, ...]
    skipped: int


def tokens_path(name: str) -> Path:
    """`conf/tokens/<name>.yaml`, or `name` itself when it is a path to a file."""
    p = Path(name).expanduser()
    return p if p.suffix in (".yaml", ".yml") or "/" in name else TOKENS_DIR / f"{name}.yaml"


@functools.lru_cache(maxsize=8)
def stated(name: str) -> dict[str, dict[str, Span]]:
    """The stated figures by benchmark name: {calls, prompt_tokens, output_tokens} as spans."""
    path = tokens_path(name)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        out = {str(b): {k: Span(float(v[0]), float(v[1])) for k, v in f.items()} for b, f in doc["benchmarks"].items()}
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise ConfigError(f"plan.tokens={name}: {path} is not a token figures file ({type(e).__name__}: {e}); "
                          "see conf/tokens/stated.yaml for its shape") from None
    if "default" not in out or any(set(f) != {"calls", "prompt_tokens", "output_tokens"} for f in out.values()):
        raise ConfigError(f"plan.tokens={name}: {path} needs `benchmarks:` with a `default` entry, each entry "
                          "{calls, prompt_tokens, output_tokens}: [low, high]")
    return out


def read_pilot(folder: str) -> Pilot:
    """The finished jobs of the pilot sweep at `folder` (the records its sweep wrote)."""
    from runners.core.job_record import JobRecord, record_ids

    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"plan.pilot={folder}: no such folder (give a pilot sweep's folder, e.g. outputs/pilot)")
    jobs, skipped = [], 0
    for d in (root / j for j in record_ids(root)):  # folders and packed records
        record = JobRecord(d)
        if not record.finished:
            continue
        try:
            meta, r = record.meta, record.result
            jobs.append(PilotJob(str(meta.benchmark), str(meta.method), str(meta.model), _count(r.turns), _count(r.tokens_in),
                                 _count(r.tokens_out), _amount(r.cost), _amount(r.wall_s)))
        except (ValueError, TypeError, AttributeError, RecursionError):  # RecordError is a ValueError
            skipped += 1
    if not jobs:
        raise ConfigError(f"plan.pilot={folder}: no finished job record there ({skipped} unreadable): run the pilot first "
                          "(docs/sweeps.md#the-plan)")
    return Pilot(root, tuple(jobs), skipped)


def _count(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"not a count: {v!r:.40}")
    return v


def _amount(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise ValueError(f"not an amount: {v!r:.40}")
    return float(v)


def per_job(cfg: RootConfig, pilot: Pilot | None) -> PerJob:
    """What one job of `cfg`'s cell is expected to take."""
    if pilot is not None:
        found = _matching(cfg, pilot)
        if found is not None:
            return _from_pilot(cfg, *found)
    return _from_stated(cfg)


def _matching(cfg: RootConfig, pilot: Pilot) -> tuple[list[PilotJob], str] | None:
    b, m, mo = cfg.benchmark.label, cfg.method.name, cfg.model.id
    for keep, what in ((lambda j: (j.method, j.model) == (m, mo), "benchmark, method and model"),
                       (lambda j: j.model == mo, "benchmark and model"), (lambda j: j.method == m, "benchmark and method"),
                       (lambda j: True, "benchmark")):
        jobs = [j for j in pilot.jobs if j.benchmark == b and keep(j)]
        if jobs:
            return jobs, f"matched by {what}"
    return None


def _from_pilot(cfg: RootConfig, jobs: list[PilotJob], entry: str) -> PerJob:
    from runners.models.pricing import PricingError, price_of

    basis = f"the pilot's records ({PILOT_NOTE})"
    calls = _mean_span([j.calls for j in jobs])
    if cfg.model.kind == "scripted" or all(j.model == cfg.model.id for j in jobs):
        return PerJob(calls, _mean_span([j.usd for j in jobs]), basis, entry)
    try:
        price = price_of(cfg.model)
    except PricingError:
        return PerJob(calls, ZERO, basis, entry, f"{cfg.model.id} has no price: $0")
    usd = [j.calls * price.cost(j.tokens_in // max(j.calls, 1), 0, j.tokens_out // max(j.calls, 1)) for j in jobs]
    return PerJob(calls, _mean_span(usd), basis, f"{entry}, its tokens at {cfg.model.id}'s price")


PILOT_NOTE = "the mean per job ± two standard errors"


def _mean_span(values: list[float]) -> Span:
    """The mean ± two standard errors (floored at 0); for one value, half to twice it."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Span(mean / 2, mean * 2)
    half = 2 * statistics.stdev(values) / math.sqrt(len(values))
    return Span(max(mean - half, 0.0), mean + half)


def _from_stated(cfg: RootConfig) -> PerJob:
    from runners.models.pricing import PricingError, price_of

    figures = stated(cfg.plan.tokens)
    name = cfg.benchmark.name if cfg.benchmark.name in figures else "default"
    f = figures[name]
    calls = f["calls"]
    basis = f"stated figures, not measured ({_shown(tokens_path(cfg.plan.tokens))})"
    if cfg.model.kind == "scripted":
        return PerJob(calls, ZERO, basis, name, "the scripted model prices its own turns: $0 without a pilot (plan.pilot)")
    try:
        price = price_of(cfg.model)
    except PricingError:
        return PerJob(calls, ZERO, basis, name, f"{cfg.model.id} has no price: $0")
    one = Span(price.cost(int(f["prompt_tokens"].lo), 0, int(f["output_tokens"].lo)),
               price.cost(int(f["prompt_tokens"].hi), 0, int(f["output_tokens"].hi)))
    return PerJob(calls, Span(calls.lo * one.lo, calls.hi * one.hi), basis, name)


def _shown(path: Path) -> str:
    """The token file as the user would name it: relative to the checkout when it is one of ours."""
    try:
        return str(path.relative_to(TOKENS_DIR.parents[1]))
    except ValueError:
        return str(path)
