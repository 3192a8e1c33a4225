"""Issue 50 (5): every evaluator of TheAgentCompany runs here, or is refused with its reason. Each
case is a small task folder written here in the shape of a real one (the task it stands for named),
scored by the agentcompany judge in its real sandbox; each failed before (left unscored, crashed,
refused, or handing out points for a service that is not here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.judges.base import InfrastructureFailure
from eval.tac import dockerfile
from eval.tac.evaluator_needs import problem
from tests.helpers.eval_records import FIXTURES, SAMPLES, FakeModel, make_job

TAC = FIXTURES / "agentcompany"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agentcompany judge needs bubblewrap")


def task_folder(tmp_path: Path, evaluator: str, files: dict[str, str] | None = None, name: str = "fs-case") -> Path:
    """A file-server task folder (task.md, checkpoints.md, dependencies.yml of a real one) with this evaluator."""
    folder = tmp_path / "tasks" / name
    shutil.copytree(TAC / "tasks" / "fs-drinks-count", folder)
    (folder / "evaluator.py").write_text(evaluator)
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def score(tmp_path: Path, folder: Path, deliverable: dict[str, str] | None = None, model=None) -> dict:
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(folder.parent), export_dir=str(TAC / "export"), include=[folder.name])
    task = load_benchmark(cfg).task(folder.name)
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "cache")), "agentcompany", model or FakeModel("no"))
    return judge.score(task, make_job(tmp_path / "job", deliverable))


# admin-get-best-vendor-quote: `from litellm import logging` (no `logging` in the stand-in: unscored before)
LITELLM_LOGGING = """from litellm import logging
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=""):
    logging.warning("checking")
    return Result([Checkpoint(1, 1)])
"""

# sde-add-wiki-page: its evaluator imports `prompts`, a file of its own folder (ONBUILD COPY *.py /utils/)
OWN_HELPER = """from prompts import EXPECTED
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=""):
    return Result([Checkpoint(1, int(EXPECTED == "wiki"))])
"""

# research-reproduce-figures (`COPY eval_data/* /utils`) and sde-copilot-arena-server-setup (`RUN mkdir -p /app/logs`)
IMAGE_FILES = """import os
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=""):
    return Result([Checkpoint(1, int(open("/utils/figure2.txt").read() == "fig")), Checkpoint(1, int(os.path.isfile("/utils/table1.txt")))])
"""

# sde-sotopia-update-ci: `git -C /workspace/sotopia branch --list` (python:3.12 has git; before: no git in
# the sandbox), over a repository the agent made: a program its config names (fsmonitor) never runs
GIT = """import os, subprocess
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=""):
    made = subprocess.run(["git", "init", "-q", "-b", "main", "/tmp/repo"], capture_output=True).returncode == 0
    with open("/tmp/repo/.git/config", "a") as f:
        f.write("[core]\\n\\tfsmonitor = touch /tmp/pwned\\n")
    listed = subprocess.run(["git", "-C", "/tmp/repo", "status", "--short", "--branch"], capture_output=True, text=True).stdout
    return Result([Checkpoint(1, int(made and "main" in listed)), Checkpoint(1, int(not os.path.exists("/tmp/pwned")))])
"""


@needs_bwrap
@pytest.mark.parametrize(("evaluator", "files", "earned"), [
    (LITELLM_LOGGING, {}, [1]),
    (OWN_HELPER, {"prompts.py": "EXPECTED = 'wiki'\n"}, [1]),
    (IMAGE_FILES, {"Dockerfile": "FROM base\nRUN mkdir -p /app/logs\nCOPY eval_data/* /utils\n", "eval_data/figure2.txt": "fig",
                   "eval_data/table1.txt": "t"}, [1, 1]),
    (GIT, {}, [1, 1]),
], ids=["litellm-logging", "own-helper-module", "glob-copy-and-mkdir-outside", "git"])
def test_evaluators_that_were_unscored_crashed_or_refused_are_scored(tmp_path: Path, evaluator: str, files: dict, earned: list) -> None:
    folder = task_folder(tmp_path, evaluator, files)
    assert problem(folder) is None
    scores = score(tmp_path, folder)
    assert [i["earned"] for i in scores["items"]] == earned, scores["evaluator_log"]


def test_the_image_steps_that_are_not_replayed_are_listed_when_the_plan_is_made(tmp_path: Path) -> None:
    folder = task_folder(tmp_path, IMAGE_FILES, {"Dockerfile": "FROM base\nRUN mkdir -p /app/logs /data/x\nCOPY eval_data/* /utils\n",
                                                 "eval_data/a.txt": "a"})
    plan = dockerfile.plan(folder)
    assert plan.mkdirs == ["/data/x"] and [c.sources for c in plan.copies] == [(folder / "eval_data" / "a.txt",)]
    assert [line for line, _ in plan.skipped] == ["RUN mkdir -p /app/logs /data/x"] and "/app/logs: an empty folder outside" in plan.skipped[0][1]
    (folder / "Dockerfile").write_text("FROM base\nCOPY eval_data/*.csv /utils\n")
    with pytest.raises(dockerfile.DockerfileError, match="matches no file of the task folder"):
        dockerfile.plan(folder)
    (folder / "Dockerfile").write_text("FROM base\nCOPY eval_data/a.txt /etc/hosts\n")
    with pytest.raises(dockerfile.DockerfileError, match="outside the folders replayed here"):  # refused at load, never at scoring
        dockerfile.plan(folder)


# pm-distribute-information ("everyone was messaged": nobody to message on a chat that is not there) and
# sde-add-all-repos-to-docs (GitLab's projects fetched once, outside any grader, then read by two checkpoints)
NOTHING_LEFT = """import requests
from scoring import Result, Checkpoint
from common import create_rocketchat_client, grader, make_gitlab_request

rocket = create_rocketchat_client()

@grader
def everyone_messaged():
    members = rocket.channels_members(channel="project-graphdb").json().get("members", [])
    return all(m["username"] in "nobody" for m in members)

@grader
def every_project_listed(projects):
    return all(p["name"] in "README" for p in projects)

@grader
def issues_closed():
    try:
        open_issues = requests.get("http://the-agent-company.com:8929/api/v4/issues?state=opened", timeout=5).json()
    except requests.RequestException:
        open_issues = []
    return open_issues == []

@grader
def file_written():
    return open("/workspace/answer.txt").read().strip() == "42"

def grade_checkpoints(trajectory=""):
    checkpoints = [Checkpoint(1, int(file_written()))]
    response = make_gitlab_request(None, "projects")
    projects = response.json() if response is not None else []
    checkpoints += [Checkpoint(1, int(everyone_messaged())), Checkpoint(1, int(every_project_listed(projects))),
                    Checkpoint(2, 2 * int(every_project_listed(projects))), Checkpoint(1, int(issues_closed()))]
    return Result(checkpoints)
"""


@needs_bwrap
def test_a_checkpoint_whose_service_is_absent_is_unreachable_never_passed(tmp_path: Path) -> None:
    """Before: 6/6 here with only the file done (the chat's empty member list, GitLab's empty project
    list twice, a refused connection read as no open issue), none of them marked unreachable. Now:
    what a grader reached marks its checkpoint; GitLab's projects, fetched outside any grader, mark
    every checkpoint made after the fetch (what it fetched may feed any of them), not the one before."""
    scores = score(tmp_path, task_folder(tmp_path, NOTHING_LEFT), {"answer.txt": "42\n"})
    items = scores["items"]
    assert [i["earned"] for i in items] == [1, 0, 0, 0, 0] and scores["final_score"] == {"total": 6, "result": 1}, scores["evaluator_log"]
    assert [i.get("unreachable") for i in items] == [None, ["gitlab", "chat"], ["gitlab"], ["gitlab"], ["gitlab"]]
    assert [i.get("withheld") for i in items] == [None, 1, 1, 2, 1]  # what the evaluator gave, not counted
    assert scores["unreachable_checkpoints"] == 4


# sde-run-rising-wave-locally: its second checkpoint queries the agent's RisingWave with `psql`,
# which the task's image installs with apt-get and this sandbox does not have
RISING_WAVE = SAMPLES / "theagentcompany" / "sde-run-rising-wave-locally"


@needs_bwrap
@pytest.mark.slow
def test_rising_wave_tops_out_at_half_marks_and_says_why(tmp_path: Path) -> None:
    """A risingwave binary that runs (the agent could not download one here: no network) passes
    checkpoint 1; checkpoint 2 needs psql: 1/2 at most, its second checkpoint marked unreachable
    (the docs said 0/2 for any agent)."""
    folder = tmp_path / "tasks" / RISING_WAVE.name
    shutil.copytree(RISING_WAVE, folder)
    job = make_job(tmp_path / "job", {"risingwave": "#!/usr/bin/env python3\nimport time\ntime.sleep(30)\n"})  # runs until stopped
    (job / "deliverable" / "risingwave").chmod(0o755)
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(folder.parent), export_dir=str(TAC / "export"))
    task = load_benchmark(cfg).task(RISING_WAVE.name)
    scores = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c")), "agentcompany").score(task, job)
    assert scores["final_score"] == {"total": 2, "result": 1}, scores["evaluator_log"]
    assert [i.get("unreachable") for i in scores["items"]] == [None, ["program psql"]]


def test_an_evaluator_this_python_cannot_run_is_refused_with_its_reason(tmp_path: Path) -> None:
    """hr-create-career-ladder's f-string (Python 3.12 syntax, the image's python:3.12) and a module
    the evaluators' Python lacks, named with the task's own pip line; the judge leaves such a job
    unscored with the same words (re-scorable), before any sandbox."""
    import sys

    py312 = task_folder(tmp_path, 'from scoring import Result\nnames = ["a"]\nq = f"{" ".join(names)}"\n', name="py312")
    if sys.version_info < (3, 12):
        assert "does not compile on this Python 3.11 (line 3" in (problem(py312) or "") and "python:3.12" in problem(py312)
    else:
        assert problem(py312) is None
    missing = task_folder(tmp_path, "import gremlin_pythonx\nfrom helper import X\n", {"helper.py": "import bs4x\nX = 1\n",
                          "Dockerfile": "FROM base\nRUN pip install gremlinpythonx==3.7.3\n"}, name="missing")
    why = problem(missing)
    assert why is not None and "imports gremlin_pythonx, bs4x," in why and "RUN pip install gremlinpythonx==3.7.3" in why
    with pytest.raises(InfrastructureFailure, match="cannot be scored here: its evaluator imports gremlin_pythonx"):
        score(tmp_path, missing)
    assert problem(task_folder(tmp_path, "import pandas, fitz, bs4, astor, gremlin_python, pdf2image\n", name="installed")) is None
