"""Issue 41 (4): the evaluators' environment has what the benchmark's base image gives them.

`sotopia` (the NPC stack's client) and `litellm` (the LLM client) are imported by evaluators and by
the base image's helpers; neither can reach its service here. The evaluator sandbox has stand-ins:
`litellm.completion` asks the judge model, as the benchmark's helpers ask theirs; `sotopia` and the
other absent services (chat, GitLab, Plane) fail the checkpoint that needs them, which is recorded
on that checkpoint as unreachable, never left unscored by an import."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from tests.helpers.eval_records import FIXTURES, SAMPLES, FakeModel, make_job

TAC = FIXTURES / "agentcompany"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agentcompany judge needs bubblewrap")

USES_ABSENT_SERVICES = """# ruff: noqa  (a TheAgentCompany-style evaluator)
import litellm
from sotopia.database import AgentProfile
from scoring import Result, Checkpoint
from common import grader, get_rocketchat_personal_chat_history


@grader
def grade_checkpoint1():
    reply = litellm.completion(model="gpt-4o", messages=[{"role": "user", "content": "Is the sky blue?"}])
    return "yes" in reply.choices[0].message.content.lower() and "yes" in reply["choices"][0]["message"]["content"].lower()


@grader
def grade_checkpoint2():
    return len(get_rocketchat_personal_chat_history(None, "Sarah Johnson")) > 0


@grader
def grade_checkpoint3():
    return AgentProfile.find(AgentProfile.first_name == "Sarah").all() != []


def grade_checkpoints(trajectory="") -> Result:
    checkpoints = []
    checkpoints.append(Checkpoint(1, int(grade_checkpoint1())))
    checkpoints.append(Checkpoint(1, int(grade_checkpoint2())))
    checkpoints.append(Checkpoint(2, 2 * int(grade_checkpoint3())))
    return Result(checkpoints)
"""


def _judge(tmp_path: Path, model=None):
    return make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "cache")), "agentcompany", model)


def test_ds_format_excel_sheets_is_scored(tmp_path: Path) -> None:
    """Its evaluator imports sotopia (unused): before, no module named 'sotopia' left it unscored."""
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(SAMPLES / "theagentcompany"), export_dir=str(TAC / "export"))
    task = load_benchmark(cfg).task("ds-format-excel-sheets")
    scores = _judge(tmp_path).score(task, make_job(tmp_path / "job"))
    assert scores["final_score"] == {"total": 4, "result": 0}, scores["evaluator_log"]
    assert not any("unreachable" in i for i in scores["items"])  # the import touches no service


def test_litellm_asks_the_judge_and_absent_services_are_recorded_per_checkpoint(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TAC / "tasks" / "fs-drinks-count", tasks / "fs-services")
    (tasks / "fs-services" / "evaluator.py").write_text(USES_ABSENT_SERVICES)
    task = load_benchmark(AgentCompanyConfig(name="agentcompany", tasks_dir=str(tasks), export_dir=str(TAC / "export"))).task("fs-services")
    yes = FakeModel("Yes.")
    scores = _judge(tmp_path, yes).score(task, make_job(tmp_path / "job"))
    assert [i["earned"] for i in scores["items"]] == [1, 0, 0], scores["evaluator_log"]
    assert yes.sent and yes.sent[0][0]["content"] == "Is the sky blue?"
    assert [i.get("unreachable") for i in scores["items"]] == [None, ["chat"], ["sotopia"]]
    assert scores["unreachable_checkpoints"] == 2
