"""Judges by name. `auto` picks the benchmark's own judge; `none` scores nothing.

    rule          native checks (rubrics, checkpoints) and the OfficeQA rule (answers); no LLM
    llm_rubric    Workspace-Bench's own LLM judge protocol
    llm_rubric_fulltext  RunningTab's earlier, stricter full-text rubric judge
    agentcompany  TheAgentCompany's own evaluator.py per task
    officeqa      OfficeQA Pro's reward rule (Acc@0%, Acc@1%)
"""

from __future__ import annotations

from collections.abc import Callable

from eval.config import JudgeConfig
from eval.judges.base import Judge, JudgeError, scores_doc
from runners.messages import Model


def _rule(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.rule import RuleJudge

    return RuleJudge()


def _llm_rubric(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.llm_rubric import LLMRubricJudge

    return LLMRubricJudge(cfg, model)


def _llm_rubric_fulltext(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.llm_rubric import FullTextRubricJudge

    return FullTextRubricJudge(cfg, model)


def _agentcompany(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.agentcompany import AgentCompanyJudge

    return AgentCompanyJudge(cfg, model)


def _officeqa(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.rule import OfficeQAJudge

    return OfficeQAJudge()


JUDGES: dict[str, Callable[[JudgeConfig, Model | None], Judge]] = {
    "rule": _rule,
    "llm_rubric": _llm_rubric,
    "llm_rubric_fulltext": _llm_rubric_fulltext,
    "agentcompany": _agentcompany,
    "officeqa": _officeqa,
}


def judge_name(cfg: JudgeConfig, benchmark_default: str) -> str:
    """The judge that will run: the configured one, or the benchmark's own for `auto`."""
    return benchmark_default if cfg.name == "auto" else cfg.name


def make_judge(cfg: JudgeConfig, benchmark_default: str, model: Model | None = None) -> Judge | None:
    """The configured judge (None for `none`). `model` overrides the judge model (tests)."""
    name = judge_name(cfg, benchmark_default)
    if name == "none":
        return None
    if name not in JUDGES:
        raise ValueError(f"unknown judge {name!r}; valid judges: auto, none, {', '.join(JUDGES)}")
    return JUDGES[name](cfg, model)


__all__ = ["JUDGES", "Judge", "JudgeError", "judge_name", "make_judge", "scores_doc"]
