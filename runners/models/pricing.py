"""Prices: one dated pricing file per provider, and the cost of one reply at them.

`conf/pricing/<provider>.yaml` (or any YAML file `model.pricing` names by path):

    provider: openai
    as_of: "2026-01-15"            # the date the prices were read off the provider's page
    source: https://openai.com/api/pricing
    placeholder: true              # not checked yet: the paper presets refuse to start (budget.allow_unpriced)
    models:
      gpt-5.4-nano: {input: 0.05, cached_input: 0.005, output: 0.40}     # USD per million tokens
      gemini-x: {input: 0.5, output: 3.0, tiers: [{above_input_tokens: 200000, input: 1.0, output: 6.0}]}

A tier applies to the whole request when its prompt has more than `above_input_tokens` tokens (as
providers bill long prompts); `cached_input` defaults to `input`. A model entry may carry its own
`placeholder`. Without `model.pricing`, the model's inline `price_in_per_mtok`/`price_out_per_mtok`
apply (cached input at the input price).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runners.models.config import ModelConfig

PRICING_DIR = Path(__file__).resolve().parents[2] / "conf" / "pricing"
MTOK = 1_000_000


class PricingError(ValueError):
    """A pricing file that is missing, unreadable, or has no valid entry for the model."""


@dataclass(frozen=True)
class Rate:
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    above_input_tokens: int = 0  # the tier starts above this many prompt tokens (0: the base rate)

    def describe(self) -> str:
        cached = self.input if self.cached_input is None else self.cached_input
        return f"${self.input:g} input, ${cached:g} cached input, ${self.output:g} output per 1M tokens"

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        cached = min(max(cached_tokens, 0), input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens - cached) * self.input + cached * cached_rate + output_tokens * self.output) / MTOK


@dataclass(frozen=True)
class Price:
    """A model's price: its base rate, its tiers, and where it came from."""

    base: Rate
    tiers: tuple[Rate, ...] = ()
    source: str = "inline"  # the pricing file and its date, or "inline" (the model config's own fields)
    placeholder: bool = False
    page: str = ""  # the provider's page the file's `source` names

    def rates(self) -> str:
        """`$0.05 input, $0.005 cached input, $0.4 output per 1M tokens` (and the tiers, when it has some)."""
        text = self.base.describe()
        for tier in self.tiers:
            text += f"; above {tier.above_input_tokens:,} prompt tokens {tier.describe()}"
        return text

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        rate = self.base
        for tier in self.tiers:  # sorted by threshold: the highest one passed applies
            if input_tokens > tier.above_input_tokens:
                rate = tier
        return rate.cost(input_tokens, cached_tokens, output_tokens)

    @property
    def free(self) -> bool:
        return not (self.base.input or self.base.output or any(t.input or t.output for t in self.tiers))


def price_of(cfg: ModelConfig) -> Price:
    """The model's price: its pricing file's entry for `cfg.name`, else its inline prices."""
    if cfg.pricing:
        path = pricing_path(cfg.pricing)
        st = _stat(path)
        return _file_price(str(path), st.st_mtime_ns, st.st_size, cfg.name)
    return _inline_price(cfg.price_in_per_mtok, cfg.price_out_per_mtok)


@functools.lru_cache(maxsize=64)
def _inline_price(price_in: float, price_out: float) -> Price:
    """One (frozen) price a pair of inline prices, not a new one each reply: two frozen dataclasses
    made a reply were ~5-18 us of the episode actor's loop a model call."""
    return Price(Rate(price_in, price_out))


def pricing_path(name: str) -> Path:
    """`conf/pricing/<name>.yaml`, or `name` itself when it is a path to a file."""
    p = Path(name).expanduser()
    if p.suffix in (".yaml", ".yml") or os.sep in name:
        return p
    return PRICING_DIR / f"{name}.yaml"


@dataclass(frozen=True)
class Unpriced:
    """Why a model has no price a paper run can rely on (`why`), what its calls are counted at
    meanwhile (`counted`: a placeholder price is used as it is; a missing one counts as $0) and how
    to give it a real one (`fix`). Two different truths, so two different messages."""

    why: str
    counted: str
    fix: str

    @property
    def warning(self) -> str:
        """The line a run that goes ahead anyway prints."""
        return f"{self.why}: {self.counted}"


def unpriced(cfg: ModelConfig) -> Unpriced | None:
    """Why `cfg` has no price a paper run can rely on (a placeholder, a missing entry, no price
    at all), or None when it has one. The scripted model prices its own turns."""
    if cfg.kind == "scripted":
        return None
    try:
        price = price_of(cfg)
    except PricingError as e:
        return Unpriced(str(e), _AT_NO_COST, "give the model an entry in its pricing file (conf/pricing/, docs/models.md)")
    if price.placeholder:
        return Unpriced(f"the price of {cfg.name!r} in {price.source} is marked placeholder (not checked yet)",
                        f"its calls are counted at that placeholder price ({price.rates()}) in costs, spend and budgets",
                        f"check it against the provider's page{_page(price)}, then set as_of and remove `placeholder` in that file")
    if price.free:
        return Unpriced(f"model {cfg.id!r} has no price", _AT_NO_COST,
                        "set model.pricing to a pricing file in conf/pricing/, or its price_*_per_mtok")
    return None


_AT_NO_COST = "its calls are counted at no cost ($0): costs, spend and budgets leave them out"


def _page(price: Price) -> str:
    return f" ({price.page})" if price.page else ""


def _stat(path: Path) -> os.stat_result:
    try:
        return path.stat()
    except OSError:
        known = ", ".join(sorted(p.stem for p in PRICING_DIR.glob("*.yaml")))
        raise PricingError(f"model.pricing: no pricing file {path} (the files in conf/pricing/: {known})") from None


@functools.lru_cache(maxsize=64)
def _file_price(path: str, mtime_ns: int, size: int, model: str) -> Price:
    """The entry for `model` (keyed by the file's stat too: an edited file is read again)."""
    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise PricingError(f"pricing file {path} cannot be read: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("models"), dict):
        raise PricingError(f"pricing file {path} needs a `models:` mapping of model name -> prices")
    entry = doc["models"].get(model)
    if not isinstance(entry, dict):
        raise PricingError(f"pricing file {path} has no entry for model {model!r}; it has: {', '.join(map(str, doc['models']))}")
    source = f"{path} (as of {doc.get('as_of', 'an unstated date')})"
    try:
        base = _rate(entry)
        tiers = tuple(sorted((_rate(t) for t in entry.get("tiers") or []), key=lambda r: r.above_input_tokens))
    except (KeyError, TypeError, ValueError) as e:
        raise PricingError(f"pricing file {path}, model {model!r}: {e} (each rate needs input and output, USD per 1M tokens)") from None
    return Price(base, tiers, source, bool(entry.get("placeholder", doc.get("placeholder", False))), str(doc.get("source") or ""))


def _rate(d: dict[str, Any]) -> Rate:
    cached = d.get("cached_input")
    return Rate(float(d["input"]), float(d["output"]), None if cached is None else float(cached), int(d.get("above_input_tokens", 0)))

