"""Judges by name. `auto` picks the benchmark's own judge; `none` scores nothing.

    rule          native checks (rubrics, checkpoints) and the OfficeQA rule (answers); no LLM
    llm_rubric    Workspace-Bench's own LLM judge protocol
    llm_rubric_fulltext  RunningTab's earlier, stricter full-text rubric judge
    wb_agent      the judge model as a sandboxed agent inspecting the files (Workspace-Bench's current
                  agent-as-a-judge, reconstructed)
    agentcompany  TheAgentCompany's own evaluator.py per task
    officeqa      OfficeQA Pro's reward rule (Acc@0%, Acc@1%)

`judge.name` may also be the dotted path of your own (docs/extending.md): a class or function
called as `factory(cfg: JudgeConfig, model: Model | None) -> Judge`.
"""

from __future__ import annotations

from collections.abc import Callable

from eval.config import JudgeConfig
from eval.judges.base import Judge, JudgeError, scores_doc
from runners.core.messages import Model
from runners.core.registry import Registry

JudgeFactory = Callable[[JudgeConfig, Model | None], Judge]

JUDGES: Registry[JudgeFactory] = Registry("judge", reserved=("auto", "none"))


@JUDGES.register("rule")
def _rule(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.rule.judge import RuleJudge

    return RuleJudge()


JUDGES.add("llm_rubric", "eval.judges.workspace_bench.rubric_judge:LLMRubricJudge")
JUDGES.add("llm_rubric_fulltext", "eval.judges.workspace_bench.rubric_judge:FullTextRubricJudge")
JUDGES.add("wb_agent", "eval.judges.workspace_bench.agent_judge:WBAgentJudge")
JUDGES.add("agentcompany", "eval.judges.agentcompany.judge:AgentCompanyJudge")


@JUDGES.register("officeqa")
def _officeqa(cfg: JudgeConfig, model: Model | None) -> Judge:
    from eval.judges.rule.judge import OfficeQAJudge

    return OfficeQAJudge()


def judge_name(cfg: JudgeConfig, benchmark_default: str) -> str:
    """The judge that will run: the configured one, or the benchmark's own for `auto`."""
    return benchmark_default if cfg.name == "auto" else cfg.name


CALLS_MODEL = ("llm_rubric", "llm_rubric_fulltext", "agentcompany")  # the built-in judges that call judge.model


def uses_model(name: str) -> bool:
    """Whether judge `name` calls `judge.model`, so that its key must be set before a sweep starts: the
    built-in LLM judges, and a plugin whose factory says `uses_model = True`."""
    if name in CALLS_MODEL:
        return True
    if name in JUDGES.reserved or name in JUDGES.names():
        return False
    return bool(getattr(JUDGES.get(name), "uses_model", False))


def check_judge(cfg: JudgeConfig) -> None:
    """Fail before any job runs (listing the judges) when `judge.name` names no judge, or (ValueError
    from the judge's own `preflight(cfg)`, when it has one) when the judge cannot run here."""
    if cfg.name in JUDGES.reserved:
        return
    JUDGES.check(cfg.name)
    preflight = getattr(JUDGES.get(cfg.name), "preflight", None)
    if preflight is not None:
        preflight(cfg)


def make_judge(cfg: JudgeConfig, benchmark_default: str, model: Model | None = None) -> Judge | None:
    """The configured judge (None for `none`). `model` overrides the judge model (tests)."""
    name = judge_name(cfg, benchmark_default)
    if name == "none":
        return None
    return JUDGES.get(name)(cfg, model)


__all__ = ["CALLS_MODEL", "JUDGES", "Judge", "JudgeError", "JudgeFactory", "check_judge", "judge_name", "make_judge", "scores_doc",
           "uses_model"]
