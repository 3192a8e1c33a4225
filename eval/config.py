"""Config schemas of the `benchmark` and `judge` groups (`conf/benchmark/*.yaml`, `conf/judge/*.yaml`),
and of `data`, where prepared benchmark data is.

One dataclass per group; each loader or judge reads only the fields it documents
(docs/benchmarks.md) and fails with a message naming the missing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH, path_field
from runners.models.config import ApiModelConfig

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO_ROOT / ".cache"


# The bounds on reading an agent-made file for judging (`judge.extract.*`).
#
# Every deliverable is hostile input: a 1.5 KB spreadsheet can claim a million rows, a 400 KB docx can
# inflate to gigabytes, a 2 KB PDF can hold a million pages. A file past any of these bounds is
# unreadable, and every check that reads it fails with the bound it crossed as the reason. The
# defaults are far above what a real deliverable needs (docs/benchmarks.md, "Reading deliverables").
MiB = 1 << 20


@dataclass
class ExtractLimits:
    """What reading one file may take (eval/judges/extract/read.py inside the limits, eval/judges/extract/worker.py the process).

    file_bytes: a file larger on disk is not opened.
    text_bytes: a plain text file (md, csv, json, ...) larger than this is not read.
    text_chars: the text extracted from any format.
    cells, rows: all the tables of one file together (an xlsx's empty cells between real ones count).
    zip_members, zip_part_bytes, zip_total_bytes: a docx/xlsx/pptx's members, one member and all of
      them decompressed (declared in the zip's directory and counted while inflating, before any
      library parses the file).
    zip_ratio: a member's decompressed size over its compressed size, for members over 1 MiB.
    pdf_pages: pages, counted in the page tree before any page is read.
    memory_bytes: the address space of the process that reads one file (RLIMIT_AS).
    cpu_s: its CPU time (RLIMIT_CPU); wall_s: its wall time.
    job_wall_s: the wall time of all the files of one job's scoring; a file asked for after it is
      spent is unreadable without being opened.
    """

    file_bytes: int = 64 * MiB
    text_bytes: int = 8 * MiB
    text_chars: int = 4_000_000
    cells: int = 500_000
    rows: int = 100_000
    zip_members: int = 10_000
    zip_part_bytes: int = 64 * MiB
    zip_total_bytes: int = 256 * MiB
    zip_ratio: float = 100.0
    pdf_pages: int = 2_000
    memory_bytes: int = 1024 * MiB
    cpu_s: float = 30.0
    wall_s: float = 60.0
    job_wall_s: float = 180.0


@dataclass
class BenchmarkConfig:
    """Which benchmark, and where its data is: what every benchmark has.

    name: builtin | native | workspace_bench | agentcompany | officeqa, or a dotted path.
    path: where its data is (native: a folder with tasks.jsonl and workspaces/).
    ids: keep only these task ids (in this order); limit: the first N.

    A benchmark with settings of its own has its config class beside its loader, extending this
    one (`eval/benchmarks/<name>.py`: `Config`), named by its YAML (`conf/benchmark/<name>.yaml`).
    """

    name: str = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default="native")
    # where and which tasks: each task's content enters its id (runners/job/identity.py), not these
    path: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    ids: list[str] = setting(Enters.SWEEP_NAME, default_factory=list)
    limit: int | None = setting(Enters.SWEEP_NAME, default=None)

    @property
    def label(self) -> str:
        """How records and tables name this benchmark."""
        return self.name


@dataclass
class DataConfig:
    """Where `python -m eval.prepare NAME --out DATA` wrote each benchmark's data (`DATA/NAME`), by
    benchmark loader name: `data.workspace_bench=DATA/workspace_bench`. In a grid each cell reads its
    own benchmark's entry, so one override per benchmark serves the whole grid (`agentcompany_paper`
    reads `data.agentcompany`). It says where data is, not what a job does: it stays out of job ids
    and records; the benchmark's own paths, resolved from it, are recorded."""

    workspace_bench: str | None = path_field()
    agentcompany: str | None = path_field()
    officeqa: str | None = path_field()


_VERDICT = Enters.JUDGE_KEY | Enters.SWEEP_NAME  # can change a verdict (runners/core/config_fields.py)


@dataclass
class JudgeConfig:
    """How jobs are scored.

    name: auto (the benchmark's own judge) | rule | llm_rubric | llm_rubric_fulltext | wb_agent |
      agentcompany | officeqa | none.
    model: the judge LLM (an `ApiModelConfig`: judges call a model over the OpenAI-compatible API) for the judges that call one
      (llm_rubric, wb_agent; agentcompany's LLM checkpoints); None for the judges that call none.
    cache_dir: where judge calls are cached (default beside the records scored: `<out>/.cache/judge`).
    max_retries: extra attempts when the LLM's answer has no verdict object (llm_rubric_fulltext,
      wb_agent; llm_rubric makes one call, as Workspace-Bench's judge does).
    agent_max_turns, agent_time_limit_s, agent_max_cost: the budget of the wb_agent judge's run
      (turns, seconds, dollars at the judge model's prices); then it is asked for its verdict.
    extract: the bounds on reading the agent's files (`ExtractLimits` above); a file past one is
      unreadable for every check and judge that reads it.
    """

    name: str = setting(_VERDICT, default="auto")
    model: ApiModelConfig | None = setting(_VERDICT, default=None)  # its fields as declared (JUDGE_KEY)
    cache_dir: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    max_retries: int = setting(Enters.SWEEP_NAME, default=2)
    max_file_chars: int = setting(_VERDICT, default=40_000)
    max_total_chars: int = setting(_VERDICT, default=160_000)
    max_trajectory_chars: int = setting(_VERDICT, default=30_000)
    evaluator_timeout_s: float = setting(Enters.SWEEP_NAME, default=600.0)
    agent_max_turns: int = setting(_VERDICT, default=30)
    agent_time_limit_s: float = setting(_VERDICT, default=900.0)
    agent_max_cost: float = setting(_VERDICT, default=1.0)
    extract: ExtractLimits = setting(_VERDICT, default_factory=ExtractLimits, whole=True)


def checkout_cache(configured: str | None) -> Path:
    """Where eval keeps what it derives once and reuses (generated benchmarks, evaluator images): the
    configured folder, else the checkout's `<repo>/.cache`. Not the model-call cache, which sits beside
    the records (`runners.models.call_cache.call_cache_folder`)."""
    return Path(configured).expanduser() if configured else DEFAULT_CACHE


def judge_config(node: Any) -> JudgeConfig:
    """A `JudgeConfig` from a dict (a record's `config.judge`), an OmegaConf node or a YAML file path
    (without a defaults list). Its model is always an `ApiModelConfig`; records of schema 2 kept every
    model kind's fields, which are dropped here."""
    if isinstance(node, JudgeConfig):
        return node
    from omegaconf import DictConfig, OmegaConf

    recorded = isinstance(node, dict)
    if isinstance(node, str | Path):
        node = OmegaConf.load(node)
    d = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
    assert isinstance(d, dict), type(d)
    model = d.pop("model", None)  # records from before the model was typed kept `{}` for none
    jc = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(JudgeConfig), d))
    assert isinstance(jc, JudgeConfig), type(jc)
    from runners.models.registry import model_config

    jc.model = model_config(model, recorded=recorded, cls=ApiModelConfig) if model else None  # type: ignore[assignment]
    return jc
