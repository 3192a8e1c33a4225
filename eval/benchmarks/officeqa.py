"""OfficeQA Pro: the questions CSV (uid, question, answer, source_docs, source_files, difficulty)
and the corpus folder (treasury_bulletin_YYYY_MM.{txt,json,pdf}), which is the agent's workspace.

Multi-valued cells (source_docs, source_files) hold one value a line. `benchmark.selection` keeps the
questions a reviewed selection includes (eval/benchmarks/selection.py; the paper's subset, questions
that need no external data, is `officeqa_paper`). `benchmark.reward` names the version of the reward
rule the judge applies (eval/officeqa_reward).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from eval.benchmarks.base import BenchmarkError
from eval.benchmarks.selection import apply_selection
from eval.benchmarks.task_texts import OFFICEQA_SUFFIX
from eval.config import BenchmarkConfig
from eval.judges.officeqa_reward import DEFAULT, VERSIONS
from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH, PATH_OR_NAME
from runners.core.task import Task
from runners.core.task_extras import IdPart, TaskExtras, extra_field

REQUIRED = ("uid", "question", "answer")


@dataclass
class Config(BenchmarkConfig):
    """OfficeQA Pro: `questions` (the CSV) and `corpus` (the folder of treasury_bulletin_YYYY_MM.*);
    `reward` the reward rule's version (eval/judges/officeqa_reward: 309dc01 | 6158125 | 6da3ee1 | 23c8760 | 460ad51 | 0da20e9);
    `selection` a reviewed selection of the questions (a shipped name or a CSV path; None: all)."""

    name: str = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default="officeqa")
    questions: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)  # each question's content is in its id
    corpus: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH)
    # a judging choice: another version re-scores the records (the judge key has it), never re-runs them
    reward: str = setting(Enters.JUDGE_KEY | Enters.SWEEP_NAME, default="309dc01")
    selection: str | None = setting(Enters.SWEEP_NAME, default=None, path=PATH_OR_NAME)


@dataclass(frozen=True)
class Extras(TaskExtras):
    """A question's sources and difficulty (its record), and the reward version that judges it: a
    judging choice, out of the job id (another version re-scores the records; the judge key has it)."""

    source_files: list[str] = extra_field(IdPart.VALUE, default_factory=list)
    source_docs: list[str] = extra_field(IdPart.VALUE, default_factory=list)
    difficulty: str = extra_field(IdPart.VALUE, default="")
    reward: str = extra_field(IdPart.JUDGING, default=DEFAULT)


def _lines(cell: str | None) -> list[str]:
    return [s.strip() for s in (cell or "").splitlines() if s.strip()]


def load(cfg: Config) -> list[Task]:
    if not cfg.questions:
        raise BenchmarkError("officeqa needs benchmark.questions (the questions CSV, e.g. officeqa_pro.csv)")
    if not cfg.corpus:
        raise BenchmarkError("officeqa needs benchmark.corpus (the folder of treasury_bulletin_YYYY_MM.* files)")
    if cfg.reward not in VERSIONS:
        raise BenchmarkError(f"benchmark.reward={cfg.reward!r} is not a version of the OfficeQA reward rule; valid: {', '.join(VERSIONS)}")
    questions, corpus = Path(cfg.questions).expanduser(), Path(cfg.corpus).expanduser()
    if not questions.is_file():
        raise BenchmarkError(f"benchmark.questions={questions} does not exist")
    if not corpus.is_dir():
        raise BenchmarkError(f"benchmark.corpus={corpus} does not exist")
    with open(questions, encoding="utf-8-sig", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise BenchmarkError(f"{questions} lacks column(s) {missing}; it has {reader.fieldnames}")
        rows = list(reader)
    tasks = []
    for n, row in enumerate(rows, start=1):
        if not row["uid"] or not row["answer"]:
            raise BenchmarkError(f"{questions}: data row {n} has an empty uid or answer")
        tasks.append(
            Task(
                id=row["uid"].strip(),
                prompt=row["question"].strip() + OFFICEQA_SUFFIX,
                workspace=corpus,
                answer=row["answer"].strip(),
                extra=Extras(
                    source_files=_lines(row.get("source_files")),
                    source_docs=_lines(row.get("source_docs")),
                    difficulty=(row.get("difficulty") or "").strip(),
                    reward=cfg.reward,
                ),
            )
        )
    return apply_selection(tasks, cfg.selection) if cfg.selection else tasks
