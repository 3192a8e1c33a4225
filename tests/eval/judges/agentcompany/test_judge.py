"""TheAgentCompany: the loader on the real samples and on fixture tasks, and the judge running
fixture evaluator.py files (in the benchmark's style) through the compatibility layer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.benchmarks import BenchmarkError, load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.config import JudgeConfig
from eval.judges import JudgeError, make_judge
from eval.judges.base import InfrastructureFailure
from tests.helpers.eval_records import FIXTURES, SAMPLES, FakeModel, bash_call, make_job

TAC = FIXTURES / "agentcompany"


def _bench(tasks_dir: Path = TAC / "tasks", **kw):
    return load_benchmark(AgentCompanyConfig(name="agentcompany", tasks_dir=str(tasks_dir), export_dir=str(TAC / "export"), **kw))


def _judge(tmp_path: Path, model: FakeModel | None = None):
    return make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "cache")), "agentcompany", model)


def test_loader_on_the_real_samples() -> None:
    bench = _bench(SAMPLES / "theagentcompany")
    assert [t.id for t in bench.tasks()] == [
        "admin-make-spreadsheet", "admin-remove-pages-pdf", "ds-answer-numerical-data-question", "ds-coffee-shop-database-management",
        "ds-fix-table-values-and-missing-answers", "ds-format-excel-sheets", "ds-stock-analysis-slides", "finance-budget-variance",
        "hr-check-attendance-one-day", "hr-new-grad-job-description", "hr-organize-talent-info", "hr-populate-salary-increase-memo",
        "research-answer-questions-on-paper", "sde-copy-table-from-pdf-to-xlsx", "sde-create-sqlite-database", "sde-run-rising-wave-locally",
    ] and bench.default_judge == "agentcompany"  # (ds-sql-exercise has no dependencies: only by name)
    drinks = bench.task("admin-make-spreadsheet")
    assert [c.points for c in drinks.checkpoints] == [2, 1, 1, 1]
    assert "diet coke is not written on the same line" in drinks.checkpoints[0].text.lower()
    assert drinks.stage == {"drinks_survey.csv": SAMPLES / "theagentcompany" / "admin-make-spreadsheet" / "drinks_survey.csv"}
    assert drinks.workspace == TAC / "export" and "mounted in your workspace" in drinks.prompt
    variance = bench.task("finance-budget-variance")
    assert [c.points for c in variance.checkpoints] == [1, 3]
    assert variance.stage == {}  # budget.xlsx etc. are grader references, kept out of the workspace


def test_subset_include_exclude_and_errors(tmp_path: Path) -> None:
    assert [t.id for t in _bench().tasks()] == ["fs-broken", "fs-drinks-count", "fs-env-probe", "fs-report-upload"]  # not sde-with-gitlab
    assert [t.id for t in _bench(include=["fs-drinks-count", "fs-report-upload"], exclude=["fs-report-upload"]).tasks()] == ["fs-drinks-count"]
    with pytest.raises(BenchmarkError, match=r"neither file-server-only nor dependency-free tasks .*\['sde-with-gitlab'\]"):
        _bench(include=["sde-with-gitlab"])
    with pytest.raises(BenchmarkError, match="needs benchmark.tasks_dir"):
        load_benchmark(AgentCompanyConfig(name="agentcompany", export_dir=str(tmp_path)))
    with pytest.raises(BenchmarkError, match="export_dir=.*does not exist"):
        load_benchmark(AgentCompanyConfig(name="agentcompany", tasks_dir=str(TAC / "tasks"), export_dir=str(tmp_path / "x")))


def test_evaluator_reads_the_workspace_copy(tmp_path: Path) -> None:
    task = _bench().task("fs-drinks-count")
    assert task.stage == {"drinks.csv": TAC / "tasks" / "fs-drinks-count" / "drinks.csv"}
    good = _judge(tmp_path).score(task, make_job(tmp_path / "a", {"drinks.csv": "drink,quantity\nApple Juice,4\nMilk,1\nTea,1\n"}))
    assert [(i["points"], i["earned"]) for i in good["items"]] == [(2, 2), (1, 1)]
    assert good["metrics"] == {"success": 1.0, "score": 1.0} and good["items"][1]["text"].startswith("Count correctly")
    wrong = _judge(tmp_path).score(task, make_job(tmp_path / "b", {"drinks.csv": "drink,quantity\nApple Juice,3\nMilk,1\nTea,1\n"}))
    assert wrong["final_score"] == {"total": 3, "result": 2} and wrong["metrics"] == {"success": 0.0, "score": pytest.approx(2 / 6)}
    untouched = _judge(tmp_path).score(task, make_job(tmp_path / "c"))  # the staged template only
    assert untouched["final_score"] == {"total": 3, "result": 0}


@pytest.mark.slow
def test_file_server_llm_checkpoint_and_strategy(tmp_path: Path) -> None:
    task = _bench().task("fs-report-upload")
    export_before = sorted(p.relative_to(TAC / "export") for p in (TAC / "export").rglob("*"))
    read = bash_call("cat /tmp/rt-ws-1/workspace/Documents/Financials/expenses.csv")
    deliverable = {"Documents/Reports/summary.txt": "Total expenses: 1234"}
    yes = FakeModel("Yes, it does.")
    full = _judge(tmp_path, yes).score(task, make_job(tmp_path / "a", deliverable, messages=read))
    assert [i["earned"] for i in full["items"]] == [1, 1, 2] and full["metrics"] == {"success": 1.0, "score": 1.0}
    (part,) = yes.sent[0][0]["content"]  # one text part, as the benchmark's evaluate_with_llm sends it
    prompt = part["text"]
    assert prompt.startswith('Does the content """Total expenses: 1234""" indicate the total expenses of the quarter?')
    assert 'Please answer "yes" if it does, or "no" if it does not.' in prompt
    no = _judge(tmp_path, FakeModel("No.", name="judge-says-no")).score(task, make_job(tmp_path / "b", deliverable, messages=read))
    assert no["final_score"] == {"total": 4, "result": 2} and no["metrics"]["score"] == pytest.approx(0.25)
    unread = _judge(tmp_path, FakeModel("yes")).score(task, make_job(tmp_path / "c", deliverable))
    assert [i["earned"] for i in unread["items"]] == [0, 1, 2] and unread["final_score"] == {"total": 4, "result": 4}  # bonus_for_completing_final
    nothing = _judge(tmp_path, FakeModel("yes")).score(task, make_job(tmp_path / "d"))
    assert nothing["final_score"] == {"total": 4, "result": 0}
    assert sorted(p.relative_to(TAC / "export") for p in (TAC / "export").rglob("*")) == export_before  # the export is untouched


def test_llm_checkpoint_without_a_judge_model_fails_and_is_counted(tmp_path: Path) -> None:
    task = _bench().task("fs-report-upload")
    scores = _judge(tmp_path).score(task, make_job(tmp_path / "a", {"Documents/Reports/summary.txt": "Total expenses: 1234"}))
    assert [i["earned"] for i in scores["items"]] == [0, 1, 0] and scores["judge_failures"] == 1


def test_no_secrets_reach_the_evaluator(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    scores = _judge(tmp_path).score(_bench().task("fs-env-probe"), make_job(tmp_path / "a"))
    assert scores["metrics"]["success"] == 1.0


def test_broken_or_missing_evaluator_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="(?s)evaluator.py failed .*undefined_helper"):
        _judge(tmp_path).score(_bench().task("fs-broken"), make_job(tmp_path / "a"))
    sample = _bench(SAMPLES / "theagentcompany").task("admin-make-spreadsheet")
    with pytest.raises(JudgeError, match="evaluator.py not found"):
        _judge(tmp_path).score(sample, make_job(tmp_path / "b"))


def test_evaluator_cannot_write_into_the_export(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TAC / "tasks" / "fs-drinks-count", tasks / "fs-writer")
    (tasks / "fs-writer" / "evaluator.py").write_text(
        "from scoring import Result, Checkpoint\n\n"
        "def grade_checkpoints(trajectory=''):\n"
        "    open('/workspace/Documents/Reports/2023_report.txt', 'w').write('overwritten')\n"
        "    return Result([Checkpoint(1, 1)])\n"
    )
    _judge(tmp_path).score(_bench(tasks).task("fs-writer"), make_job(tmp_path / "a"))
    assert (TAC / "export" / "Documents" / "Reports" / "2023_report.txt").read_text() == "Report 2023: total 999\n"


PAPER_RULE_OUT = ["ml-generate-gradcam", "sde-run-rising-wave-locally"]  # another website or an external model
COUNT_MATCHED_OUT = ["ds-format-excel-sheets", "ml-generate-gradcam"]  # 96 - 4 - 4 = 88 checkpoints, no rule


def test_paper_preset_follows_the_papers_wording_and_serves_the_file_server(compose_cfg, tmp_path: Path) -> None:
    """Issue 41 (1, 2): the file-server-only tasks without those that need another website or an
    external model (31 tasks, 90 checkpoints), served, so that a share link can be made."""
    cfg = compose_cfg(["benchmark=agentcompany_paper", f"benchmark.tasks_dir={tmp_path / 'tasks'}", f"benchmark.export_dir={TAC / 'export'}"])
    assert cfg.benchmark.name == "agentcompany" and cfg.benchmark.exclude == PAPER_RULE_OUT  # before: the count-matched list
    assert cfg.benchmark.file_server == "served"  # before: mounted, where no share link can be made
    for name in ("fs-drinks-count", "ds-format-excel-sheets", *PAPER_RULE_OUT):
        shutil.copytree(TAC / "tasks" / "fs-drinks-count", tmp_path / "tasks" / name)
    tasks = load_benchmark(cfg.benchmark).tasks()
    assert [t.id for t in tasks] == ["ds-format-excel-sheets", "fs-drinks-count"]
    assert all(t.extra["file_server"] == "served" and "password theagentcompany" in t.prompt for t in tasks)


def test_count_matched_preset_is_a_named_alternative(compose_cfg, tmp_path: Path) -> None:
    cfg = compose_cfg(["benchmark=agentcompany_paper88", f"benchmark.tasks_dir={tmp_path / 'tasks'}", f"benchmark.export_dir={TAC / 'export'}"])
    assert cfg.benchmark.exclude == COUNT_MATCHED_OUT and cfg.benchmark.file_server == "served"


def test_paper_preset_on_the_real_samples(compose_cfg) -> None:
    """Of the samples, the paper's rule keeps every file-server-only task but sde-run-rising-wave-locally."""
    cfg = compose_cfg(["benchmark=agentcompany_paper", f"benchmark.tasks_dir={SAMPLES / 'theagentcompany'}",
                       f"benchmark.export_dir={TAC / 'export'}"])
    ids = [t.id for t in load_benchmark(cfg.benchmark).tasks()]
    assert "ds-format-excel-sheets" in ids and "sde-run-rising-wave-locally" not in ids and len(ids) == 15


def test_mounted_preface_says_no_share_link_can_be_made() -> None:
    """Issue 41 (2): mounted, no server runs; the agent is told so instead of failing to make a link."""
    prompt = _bench().task("fs-drinks-count").prompt
    assert "no share link" in prompt.lower() and "file_server=served" not in prompt


def _fixture_task(tmp_path: Path, name: str, evaluator: str):
    tasks = tmp_path / "tasks"
    shutil.copytree(TAC / "tasks" / "fs-drinks-count", tasks / name)
    (tasks / name / "evaluator.py").write_text(evaluator)
    return _bench(tasks).task(name)


SPIN = """
from scoring import Result, Checkpoint
from common import grader, evaluate_with_llm

def grade_checkpoints({params}):
    checkpoints = [Checkpoint(2, 2)]
    result = Result(checkpoints)
    {read}
    while True:
        pass
"""


@pytest.mark.slow
def test_an_evaluator_stopped_by_a_limit_before_reading_agent_files_leaves_the_job_unscored(tmp_path: Path) -> None:
    """Issue 25 (6): a limit hit is the agent's doing only once the evaluator opened what the agent made
    (the trajectory it is handed, as every evaluator is, does not count)."""
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c"), evaluator_timeout_s=3), "agentcompany")
    task = _fixture_task(tmp_path, "fs-spin", SPIN.format(params="trajectory=''", read="open('/workspace/drinks.csv').read()"))
    with pytest.raises(JudgeError, match=r"evaluator.py failed \((timeout|cpu_time) limit before it opened anything the agent made"):
        judge.score(task, make_job(tmp_path / "a"))  # drinks.csv is the staged input, not the agent's
    scores = judge.score(task, make_job(tmp_path / "b", {"drinks.csv": "drink,quantity\n"}))  # now the agent's
    assert scores["evaluator_failure"]["outcome"] in ("timeout", "cpu_time") and scores["evaluator_failure"]["agent_files_read"] == ["drinks.csv"]
    assert [(i["points"], i["earned"]) for i in scores["items"]] == [(2, 2), (1, 0)]  # checkpoints.md: 2 + 1 points
    assert scores["final_score"] == {"total": 3, "result": 2} and scores["evaluator_failure"]["handed_trajectory"]


RAISES = """
from scoring import Result, Checkpoint

def grade_checkpoints():
    checkpoints = [Checkpoint(2, 2)]
    result = Result(checkpoints)
    {body}
    return result
"""


@pytest.mark.parametrize(("deliverable", "body", "error"), [
    ({"link.txt": b"\xff\xfe http://x"}, "open('/workspace/link.txt').read()", "UnicodeDecodeError"),  # made by the agent
    ({}, "open('/workspace/answer.txt').read()", "FileNotFoundError"),  # never made by the agent
    ({"drinks.csv/inside.txt": "a folder where the file was"}, "open('/workspace/drinks.csv').read()", "IsADirectoryError"),
])
def test_an_evaluator_that_raises_on_what_the_agent_left_is_a_result(tmp_path: Path, deliverable: dict, body: str, error: str) -> None:
    """Issue 48 (1): an exception on a path the agent made, changed or never made is the agent's
    doing: scored on what it left (the checkpoint done keeps its point), the outcome named. Before:
    unscored ("exit 1"), or the judge's own view building raised FileExistsError on the swap."""
    task = _fixture_task(tmp_path, "fs-raises", RAISES.format(body=body))
    scores = _judge(tmp_path).score(task, make_job(tmp_path / "job", deliverable))
    failure = scores["evaluator_failure"]
    assert (failure["outcome"], failure["error"], failure["handed_trajectory"]) == ("raised", error, False)
    assert failure["agent_files_read"] == [body.split("'")[1].removeprefix("/workspace/")] and failure["checkpoints_done"] == 1
    assert scores["final_score"] == {"total": 3, "result": 2}  # checkpoints.md: 2 + 1 points, the second never made


def test_an_evaluator_that_raises_before_reading_anything_of_the_agents_leaves_the_job_unscored(tmp_path: Path) -> None:
    """The host's failure: at import (a missing module), or on a file of the task's own the agent left unchanged."""
    for name, evaluator in (("fs-import", "import not_a_module_here\n" + RAISES.format(body="")),
                            ("fs-own", RAISES.format(body="open('/workspace/drinks.csv').read(); 1 / 0"))):
        task = _fixture_task(tmp_path, name, evaluator)
        with pytest.raises(InfrastructureFailure, match=r"the job stays unscored|cannot be scored here"):
            _judge(tmp_path).score(task, make_job(tmp_path / name, {"other.txt": "x"}))


class SlowJudge(FakeModel):
    def complete(self, messages, tools):
        import time

        time.sleep(6)
        return super().complete(messages, tools)


@pytest.mark.slow
def test_an_evaluator_stopped_while_the_judge_model_answers_leaves_the_job_unscored(tmp_path: Path) -> None:
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c"), evaluator_timeout_s=3), "agentcompany", SlowJudge("yes"))
    task = _fixture_task(tmp_path, "fs-slow-judge", SPIN.format(params="trajectory=''", read="open('/workspace/drinks.csv').read(); evaluate_with_llm('x', 'y')"))
    with pytest.raises(JudgeError, match=r"hit its timeout limit while waiting for the judge model"):
        judge.score(task, make_job(tmp_path / "a", {"drinks.csv": "drink,quantity\n"}))


def test_the_evaluator_gets_the_agents_caps(tmp_path: Path) -> None:
    """Memory (RLIMIT_AS), file size and CPU time as the job's env settings give them."""
    probe = """
import resource
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=''):
    mem = resource.getrlimit(resource.RLIMIT_AS)[0]
    fsize = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    cpu = resource.getrlimit(resource.RLIMIT_CPU)[0]
    return Result([Checkpoint(1, int(mem == 512 * 1024 * 1024)), Checkpoint(1, int(fsize == 8 * 1024 * 1024)), Checkpoint(1, int(0 < cpu <= 31))])
"""
    task = _fixture_task(tmp_path, "fs-caps", probe)
    job = {"job_id": "j", "benchmark": "agentcompany", "task_id": "fs-caps", "method": "dci", "model": "m", "seed": 0,
           "config": {"env": {"max_memory_bytes": 512 * 1024 * 1024, "max_file_bytes": 8 * 1024 * 1024}}}
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c"), evaluator_timeout_s=30), "agentcompany")
    scores = judge.score(task, make_job(tmp_path / "a", job=job))
    assert [i["earned"] for i in scores["items"]] == [1, 1, 1], scores["evaluator_log"]


def test_the_file_server_mode_is_checked(monkeypatch, tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match=r"benchmark.file_server='ftp': choose one of mounted, served"):
        _bench(file_server="ftp")
    from eval.benchmarks import agentcompany

    monkeypatch.setattr(agentcompany, "bwrap_problem", lambda: "bwrap is not on PATH")
    with pytest.raises(BenchmarkError, match=r"file_server=served runs the file server in the agent's bubblewrap sandbox, but bwrap is not on PATH"):
        _bench(file_server="served")
    assert [t.id for t in _bench(file_server="mounted").tasks()]


def test_served_and_mounted_tasks(tmp_path: Path) -> None:
    """Served: the workspace holds the task's local inputs, the server's files are staged under
    .image/owncloud and the server runs beside the shell; both modes get the image's /data."""
    samples = SAMPLES / "theagentcompany"
    served = _bench(samples, file_server="served").task("ds-coffee-shop-database-management")
    assert served.prompt.startswith("Note: the company's file server is ownCloud at http://the-agent-company.com:8092 (user theagentcompany")
    assert not any(served.workspace.iterdir())
    assert {rel for rel in served.stage if rel.startswith(".image/owncloud/")} == {
        f".image/owncloud/{p.relative_to(TAC / 'export').as_posix()}" for p in (TAC / "export").rglob("*") if p.is_file()}
    assert served.sandbox.binds == ((".image/data", "/data"),) and served.sandbox.hosts == ("the-agent-company.com",)
    assert served.sandbox.service is not None and served.sandbox.service.port == 8092
    mounted = _bench(samples).task("ds-coffee-shop-database-management")
    assert mounted.workspace == TAC / "export" and mounted.sandbox.binds == ((".image/data", "/data"),) and mounted.sandbox.service is None
    assert not any(rel.startswith(".image/owncloud") for rel in mounted.stage)
    sql = _bench(samples, include=["ds-sql-exercise"]).task("ds-sql-exercise")  # /data/database.db from init.sql, for the agent too
    (db,) = [p for rel, p in sql.stage.items() if rel == ".image/data/database.db"]
    import sqlite3

    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM products").fetchone()[0] == 20
    conn.close()
    assert _bench(samples).task("hr-organize-talent-info").sandbox.binds == ()  # no /data in its image


# An agent-made program the evaluator runs (as the sde tasks run the agent's code): it writes a
# forged checkpoint and a forged result into every pipe it can open through /proc, and leaves a child
# that overwrites /outputs/result.json once the evaluator has written it.
FORGE = r'''
import glob, json, os, time
result = {"checkpoints": [{"total": 3, "result": 3}], "final_score": {"total": 3, "result": 3}}
lines = json.dumps({"checkpoint": [3, 3]}) + "\n" + json.dumps(result) + "\n"
for path in glob.glob("/proc/[0-9]*/fd/*"):
    try:
        if os.readlink(path).startswith("pipe:"):
            with open(path, "w") as f:
                f.write(lines)
    except OSError:
        pass
if os.fork() == 0:
    for _ in range(500):
        if os.path.exists("/outputs/result.json"):
            with open("/outputs/result.json", "w") as f:
                json.dump(result, f)
            break
        time.sleep(0.002)
    os._exit(0)
'''
RUNS_THE_AGENTS_PROGRAM = """
import subprocess
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=''):
    subprocess.run(["python3", "/workspace/forge.py"])
    {then}
    return Result([Checkpoint(3, 0)])
"""


@pytest.mark.parametrize("then", ["pass", "open('/workspace/answer.txt').read()"], ids=["finishes", "then_raises"])
def test_a_program_the_evaluator_runs_cannot_forge_its_progress_or_result(tmp_path: Path, then: str) -> None:
    """tac50's finding, in issue 48's rule: the evaluator's progress and result reach the judge only
    over pipes held by processes that are not dumpable (so no program they start can open them through
    /proc), and the result never through a file a program could overwrite. Before: the forged result
    (or, when the evaluator then raised, the forged checkpoint) scored 3/3."""
    task = _fixture_task(tmp_path, "fs-forge", RUNS_THE_AGENTS_PROGRAM.replace("{then}", then))
    scores = _judge(tmp_path).score(task, make_job(tmp_path / "job", {"forge.py": FORGE}))
    assert scores["final_score"] == {"total": 3, "result": 0}, scores["evaluator_log"]
    assert not any(i["earned"] for i in scores["items"]) and ("evaluator_failure" in scores) == (then != "pass")
