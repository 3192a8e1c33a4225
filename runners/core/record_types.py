"""The job record's documents, typed: `JobMeta` (job.json), `Result` (result.json), `Scores`
(scores.json).

Each is read with `from_json`, which checks the schema version and fills what an older record
lacks, so no reader needs `.get(key, default)`; each is written with `to_json`, which stamps the
current version. Every way a job ends (the episode's stop, an error outside it, the sweep's time
limit) produces the same `Result` shape.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from runners.core.field_checks import (
    AMOUNT,
    BOOL,
    COUNT,
    INT,
    OBJECT,
    OBJECTS,
    STR,
    STRS,
    Check,
    check_fields,
    optional,
)
from runners.core.field_checks import (
    RecordError as RecordError,  # raised by every reader of the record, imported from here as before
)
from runners.core.harness_names import OWN_LOOP, is_own_loop
from runners.core.record_files import JOB, RESULT, SCHEMA_VERSION, SCORES
from tab.config import TabConfig

# How a job ends (`Result.stop_reason`), and whose doing that is (docs/concepts.md, "Errored, failed,
# unscored"). A stop the agent's own actions (or its method's cost) can cause is a result, scored on
# what it left: its own turns, time, context, disk, its job's budget (`budget.job_usd`), a production
# harness that exits after the agent's first command ran.
RESULT_STOPS = ("finished", "turn_budget", "time_limit", "context_length", "disk_quota", "job_budget", "harness_exit")
# The host's, on evidence the agent cannot write (an environment that failed before or outside the
# agent's commands, the provider's error, the sweep's or its cell's budget): not results, left out of
# every table, retried within the run and run again by the next run of the sweep.
ERROR_STOPS = ("env_error", "model_error", "budget")


def _version(doc: dict[str, Any], what: str) -> int:
    if not isinstance(doc, dict):
        raise RecordError(f"{what} is not a JSON object")
    version = doc.get("schema_version") or 1  # records before the field are version 1
    if isinstance(version, bool) or not isinstance(version, int):
        raise RecordError(f"{what} has schema_version {version!r}, not a whole number")
    if version > SCHEMA_VERSION:
        raise RecordError(
            f"{what} has schema_version {version}, newer than this RunningTab reads ({SCHEMA_VERSION}): "
            "read it with the version that wrote it, or upgrade"
        )
    return version


def known_fields(cls: type, doc: dict[str, Any]) -> dict[str, Any]:
    """The entries of `doc` that are fields of the dataclass `cls` (a document of another version
    may hold others)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in doc.items() if k in names}


@dataclass(frozen=True)
class JobMeta:
    """What ran: the grid's axes, the task, the sandbox the agent actually got, and the job config
    (`runners.config.schema.recorded_config` turns it back into the typed config)."""

    job_id: str
    benchmark: str
    task_id: str
    method: str
    model: str
    seed: int
    config: dict[str, Any] = field(default_factory=dict)
    sandbox: str | None = None  # "bwrap", or "none": unsandboxed; None until the environment is up
    harness: str = OWN_LOOP  # who ran the episode (`agent.harness`: dci, claude_code, codex)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> JobMeta:
        """Every field checked (`JOB_FIELDS`): a record of another shape is a RecordError naming the field."""
        version = _version(doc, JOB)
        fields = known_fields(cls, check_fields(doc, JOB, JOB_FIELDS, required=JOB_REQUIRED))
        fields["config"] = fields.get("config") or {}
        if "harness" not in fields:  # a record from before the field: its config says, else our own loop ran
            agent = fields["config"].get("agent")
            harness = agent.get("harness") if isinstance(agent, dict) else None
            fields["harness"] = harness if isinstance(harness, str) and harness else OWN_LOOP
        return cls(**fields | {"schema_version": version})

    def to_json(self) -> dict[str, Any]:
        """Its fields as they are (every one is JSON already; `config` is a plain dict, written at
        once): not `asdict`, whose deep copy of the config was most of job.json's two writes a job."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | {"schema_version": SCHEMA_VERSION}

    @property
    def tab_config(self) -> TabConfig | None:
        return tab_config_of(self.config)


JOB_REQUIRED = ("job_id", "benchmark", "task_id", "method", "model", "seed")
JOB_FIELDS: dict[str, Check] = {
    "job_id": STR, "benchmark": STR, "task_id": STR, "method": STR, "model": STR, "seed": INT,
    "config": optional(OBJECT), "sandbox": optional(STR), "harness": STR, "schema_version": optional(INT),
}


def tab_config_of(config: dict[str, Any]) -> TabConfig | None:
    """The tab's settings in a recorded job config, typed (None when its method had no tab); a
    setting this version does not have (a record from another one) is left out."""
    method = config.get("method")
    tab = method.get("tab") if isinstance(method, dict) else None
    return TabConfig.coerce(known_fields(TabConfig, tab)) if isinstance(tab, dict) else None


_NULLABLE = ("turns", "error", "sandbox", "limits_hit", "budget_usd")


@dataclass(frozen=True)
class Result:
    """How the job ended. `errored` (a stop of `ERROR_STOPS`: the host's) means not a result: retried
    within the run (`cluster.error_retries`) and by every later run, each new record keeping the
    earlier attempts' errors. A job stopped at its own budget (`job_budget`, at `budget_usd`) is a
    result, replaced only by a run under a higher `budget.job_usd`; a record of the stop before it had
    its own name (`budget` with a `budget_usd`) reads as `job_budget`.

    `cost` is what the trajectory's replies cost at the model's prices; `spend` what this run paid for
    them (replies from the model-call cache, `cached_calls` of them, cost nothing)."""

    job_id: str
    stop_reason: str
    attempt: int = 1
    turns: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    chars_read: int = 0
    final_answer: str = ""
    wall_s: float = 0.0
    error: str | None = None
    earlier_errors: list[dict[str, Any]] = field(default_factory=list)
    sandbox: str | None = None
    limits_hit: list[str] | None = None
    deliverable: list[str] = field(default_factory=list)  # files and links in deliverable/
    deleted: list[str] = field(default_factory=list)
    # What the agent created or changed that deliverable/ lacks (past its caps: `limits_hit` says
    # which): judged missing, never as the workspace's original. A name ending in "/" is a folder
    # and all under it; `left_out_rest`: more was left out than listed, so every file not in
    # `deliverable` counts as left out.
    left_out: list[str] = field(default_factory=list)
    left_out_rest: bool = False
    spend: float = 0.0
    cached_calls: int = 0
    budget_usd: float | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.stop_reason == "budget" and self.budget_usd is not None:  # the job's own budget, not the sweep's
            object.__setattr__(self, "stop_reason", "job_budget")

    @property
    def errored(self) -> bool:
        return self.stop_reason in ERROR_STOPS

    @classmethod
    def from_json(cls, doc: dict[str, Any], job_id: str = "") -> Result:
        """`job_id`: the record's directory name, for a hand-written result that leaves it out. Every
        field is checked (`RESULT_FIELDS`); a null is the field's default."""
        version = _version(doc, RESULT)
        fields = {"job_id": job_id} | {k: v for k, v in known_fields(cls, doc).items() if v is not None or k in _NULLABLE}
        check_fields(fields, RESULT, RESULT_FIELDS, required=("stop_reason",))
        return cls(**fields | {"schema_version": version})

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"errored": self.errored, "schema_version": SCHEMA_VERSION}

    @property
    def paid(self) -> float:
        """What the job's runs paid providers, its earlier errored attempts included: the one reader
        of it (the sweep's budget and its closing line)."""
        return self.spend + sum(float(e.get("spend") or 0.0) for e in self.earlier_errors if isinstance(e, dict))

    def error_entry(self) -> dict[str, Any]:
        """What a later attempt keeps of this one in `earlier_errors`."""
        return {"attempt": self.attempt, "stop_reason": self.stop_reason, "error": self.error, "turns": self.turns,
                "wall_s": self.wall_s, "spend": self.spend}


RESULT_FIELDS: dict[str, Check] = {
    "job_id": STR, "stop_reason": STR, "attempt": COUNT, "turns": optional(COUNT), "tokens_in": COUNT, "tokens_out": COUNT,
    "cost": AMOUNT, "chars_read": COUNT, "final_answer": STR, "wall_s": AMOUNT, "error": optional(STR), "earlier_errors": OBJECTS,
    "sandbox": optional(STR), "limits_hit": optional(STRS), "deliverable": STRS, "deleted": STRS, "left_out": STRS,
    "left_out_rest": BOOL, "spend": AMOUNT, "cached_calls": COUNT, "budget_usd": optional(AMOUNT), "schema_version": optional(INT),
}


class Scores(TypedDict):
    """scores.json: written by the judges (`eval/judges/base.scores_doc`), completed by `eval.score`.
    `items` are the judge's own (rubrics, checkpoints, answers); `metrics` are per task."""

    judge: str
    task_id: str
    kind: str
    metrics: dict[str, float]
    items: list[dict[str, Any]]
    job_id: NotRequired[str]
    judge_key: NotRequired[str]
    benchmark: NotRequired[str]
    schema_version: NotRequired[int]


def read_scores(doc: dict[str, Any]) -> Scores:
    """A scores.json document, version-checked; version 1 named the built-in suites `builtin/<suite>`
    where job.json says `builtin-<suite>`: one label now."""
    version = _version(doc, SCORES)
    _check_scores_shape(doc)
    bench = doc.get("benchmark")
    if version == 1 and isinstance(bench, str) and bench.startswith("builtin/"):
        doc = {**doc, "benchmark": bench.replace("/", "-", 1)}
    return doc  # type: ignore[return-value]


def _check_scores_shape(doc: dict[str, Any]) -> None:
    """What the metrics and the report index into: `items` a list of objects, `metrics` numbers. A
    document of another shape is an unreadable record (unscored and named), not a crash or a zero."""
    items, metrics = doc.get("items", []), doc.get("metrics", {})
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise RecordError(f"{SCORES} is not a job's scores: its items must be a list of objects")
    if not isinstance(metrics, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in metrics.values()):
        raise RecordError(f"{SCORES} is not a job's scores: its metrics must map names to numbers")


@dataclass(frozen=True)
class Cell:
    """One grid cell: the unit of a W&B run."""

    benchmark: str
    method: str
    model: str
    seed: int
    harness: str = OWN_LOOP

    @property
    def name(self) -> str:
        """`benchmark__method__model__sN`; a production harness's cell names it after the benchmark
        (our own loop's cells keep the names they had before the harness was an axis)."""
        harness = "" if is_own_loop(self.harness) else f"__{self.harness}"
        return f"{self.benchmark}{harness}__{self.method}__{self.model}__s{self.seed}"

    @classmethod
    def of_job(cls, job: JobMeta) -> Cell:
        """The cell of a job."""
        return cls(job.benchmark, job.method, job.model, job.seed, job.harness)

    @classmethod
    def of_config(cls, cfg: Any) -> Cell:
        """The cell of a job's config (`runners.config.schema.RootConfig`)."""
        return cls(cfg.benchmark.label, cfg.method.name, cfg.model.id, cfg.seed, cfg.agent.harness)
