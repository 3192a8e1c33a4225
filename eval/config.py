"""Config schemas of the `benchmark` and `judge` groups (`conf/benchmark/*.yaml`, `conf/judge/*.yaml`).

One dataclass per group; each loader or judge reads only the fields it documents
(docs/benchmarks.md) and fails with a message naming the missing one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runners.models.config import ModelConfig

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO_ROOT / ".cache"


@dataclass
class BenchmarkConfig:
    """Which benchmark, and where its data is.

    name: builtin | native | workspace_bench | agentcompany | officeqa.
    builtin: `suite` (workspace | company | qa) and `seed`; generated on first use under
      `cache_dir` (or into `path` when set).
    native: `path` (a folder with tasks.jsonl and workspaces/).
    workspace_bench: `dataset` + `split` (HF cache) or `path` (a local parquet/JSON/JSONL export),
      and `workspaces` (the folder holding `filesys/` and `data/`); `roles` maps a persona to its
      `filesys/` folder when the default (`<persona_snake_case>_raw`) does not fit.
    agentcompany: `tasks_dir` (a checkout's `workspaces/tasks`) and `export_dir` (the file server's
      files, the folder that holds `Documents/`); `include`/`exclude` task names.
    officeqa: `questions` (CSV) and `corpus` (folder of treasury_bulletin_YYYY_MM.*); `reward` the
      reward rule's version (eval/officeqa_reward: 309dc01 | 460ad51 | 0da20e9).
    All: `ids` keeps only these task ids (in this order), `limit` the first N.
    """

    name: str = "builtin"
    path: str | None = None
    suite: str = "workspace"
    seed: int = 0
    questions: str | None = None
    corpus: str | None = None
    dataset: str | None = None
    split: str | None = None
    workspaces: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    tasks_dir: str | None = None
    export_dir: str | None = None
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    limit: int | None = None
    reward: str = "309dc01"
    cache_dir: str | None = None

    @property
    def label(self) -> str:
        """How records and tables name this benchmark (the built-in one by suite)."""
        return f"builtin-{self.suite}" if self.name == "builtin" else self.name


@dataclass
class JudgeConfig:
    """How jobs are scored.

    name: auto (the benchmark's own judge) | rule | llm_rubric | agentcompany | officeqa | none.
    model: the judge LLM (a `ModelConfig`, checked like the agent's) for the judges that call one
      (llm_rubric; agentcompany's LLM checkpoints); None for the judges that call none.
    cache_dir: where judge calls are cached (default `<repo>/.cache/judge`).
    max_retries: extra attempts when the LLM's answer cannot be parsed.
    """

    name: str = "auto"
    model: ModelConfig | None = None
    cache_dir: str | None = None
    max_retries: int = 2
    max_file_chars: int = 40_000
    max_total_chars: int = 160_000
    max_trajectory_chars: int = 30_000
    evaluator_timeout_s: float = 600.0


def cache_root(configured: str | None) -> Path:
    """The cache folder: the configured one, else `<repo>/.cache`."""
    return Path(configured).expanduser() if configured else DEFAULT_CACHE
