"""The evaluator's sandbox shaped like a TheAgentCompany task image: Dockerfile replay on the real
sample folders, what the evaluator can and cannot see, the file-server URLs, checkpoints.md formats."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.benchmarks.agentcompany import checkpoint_texts, parse_checkpoints
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.tac import dockerfile
from eval.tac.trajectory import file_urls, folder_url
from tests.helpers.eval_records import SAMPLES, make_job

TASKS = SAMPLES / "theagentcompany"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (CI installs it)")

PROBE = '''
import os, shutil, sqlite3, subprocess
from scoring import Result, Checkpoint

def grade_checkpoints(trajectory=""):
    rows = sqlite3.connect("/data/database.db").execute("SELECT COUNT(*) FROM products").fetchone()[0]
    try:
        open("/utils/x", "w")
        utils_writable = True
    except OSError:
        utils_writable = False
    ran = subprocess.run(["sh", "/workspace/agent_tool.sh"], capture_output=True).returncode
    checks = [
        os.getcwd() == "/workspace",
        rows == 20,
        os.path.isfile("/data/init.sql"),
        shutil.which("java") is None and not os.path.exists("/usr/bin/java") and not os.listdir("/usr/lib/jvm") if os.path.isdir("/usr/lib/jvm") else shutil.which("java") is None,
        utils_writable,  # as in the image (ds-stock-analysis-slides saves figures there)
        os.path.isfile("/utils/scoring.py") and os.path.isfile("/utils/evaluator.py"),
        not os.path.exists("/work/main/eval") and not os.path.exists("/etc/shadow") and not os.path.exists("/usr/local/bin"),
        ran != 0,
    ]
    return Result([Checkpoint(1, int(c)) for c in checks])
'''


def test_dockerfile_plans_of_the_samples() -> None:
    research = dockerfile.plan(TASKS / "research-answer-questions-on-paper")
    assert [(c.dest, c.into_dir) for c in research.copies] == [("/utils", True)] and research.skipped == []
    sql = dockerfile.plan(TASKS / "ds-sql-exercise")
    assert sql.mkdirs == ["/data"] and sql.sqlite == [("/data/database.db", "/data/init.sql")]
    assert [why for _, why in sql.skipped] == ["needs the network or system packages"]
    pdf = dockerfile.plan(TASKS / "admin-remove-pages-pdf")
    assert pdf.skipped == [("RUN pip install PyPDF2==3.0.1", dockerfile.PIP_REASON)]
    fix = dockerfile.plan(TASKS / "ds-fix-table-values-and-missing-answers")
    assert fix.workspace_inputs() == {"ref_data.xlsx": TASKS / "ds-fix-table-values-and-missing-answers" / "ref_data.xlsx"}
    assert dockerfile.plan(TASKS / "sde-create-sqlite-database").copies == []


def test_dockerfile_copy_rules(tmp_path: Path) -> None:
    (tmp_path / "refs").mkdir()
    (tmp_path / "refs" / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    (tmp_path / "Dockerfile").write_text(
        "FROM base\nCOPY refs /utils/refs\nCOPY b.txt /utils/renamed.txt\nCOPY b.txt \\\n  refs/a.txt /workspace/in/\nENV X=1\n"
    )
    p = dockerfile.plan(tmp_path)
    assert p.workspace_inputs() == {"in/b.txt": tmp_path / "b.txt", "in/a.txt": tmp_path / "refs" / "a.txt"}
    assert dockerfile.build(p, tmp_path / "img") == ["data", "instruction", "utils"]
    assert (tmp_path / "img" / "utils" / "refs" / "a.txt").read_text() == "a"
    assert (tmp_path / "img" / "utils" / "renamed.txt").read_text() == "b"
    assert p.skipped == [("ENV X=1", "ENV has no effect on the files the evaluator reads")]
    (tmp_path / "Dockerfile").write_text("COPY ../../etc/passwd /utils\n")
    with pytest.raises(dockerfile.DockerfileError, match="not a file of the task folder"):
        dockerfile.plan(tmp_path)


@needs_bwrap
def test_evaluator_runs_in_the_image_not_on_the_host(tmp_path: Path) -> None:
    task_dir = tmp_path / "tasks" / "probe-image"
    task_dir.mkdir(parents=True)
    for name in ("Dockerfile", "init.sql", "task.md"):
        shutil.copyfile(TASKS / "ds-sql-exercise" / name, task_dir / name)
    (task_dir / "dependencies.yml").write_text("[]\n")
    (task_dir / "evaluator.py").write_text(PROBE)
    (tmp_path / "export").mkdir()
    marker = tmp_path / "escaped"
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(tmp_path / "tasks"), export_dir=str(tmp_path / "export"), include=["probe-image"])
    task = load_benchmark(cfg).task("probe-image")
    tool = f"echo pwned > {marker}; touch /work/pwned\n"  # an agent-written program the evaluator runs
    scores = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c")), "agentcompany").score(
        task, make_job(tmp_path / "job", {"agent_tool.sh": tool})
    )
    assert [i["earned"] for i in scores["items"]] == [1] * 8, scores["evaluator_log"]
    assert not marker.exists() and not Path("/work/pwned").exists()


def test_file_server_urls_follow_owncloud() -> None:
    assert folder_url("Documents/Human Resources Team/Attendance").endswith("?dir=/Documents/Human%20Resources%20Team/Attendance")
    folder, opened = file_urls("Documents/Financials/payments.xlsx")
    assert folder == "http://the-agent-company.com:8092/index.php/apps/files/?dir=/Documents/Financials"
    assert opened.endswith("?dir=/Documents/Financials/payments.xlsx&openfile=true")
    assert "payments.xlsx&openfile=true" in opened and "dir=/Documents/Financials" in opened


@pytest.mark.parametrize(
    ("text", "points"),
    [
        ("## Checkpoint 1 (1 point)\nA\n## Checkpoint 2 (2 points)\nB\n", [1, 2]),
        ("The task has 6 points\n1. [2pts] A\n2. [2pts] B\n3. [1pt] C", [2, 2, 1]),
        ("## Checkpoint 1 (1pts)\nA\n\n## Checkpoint 2 (11pt)\nB", [1, 11]),
        ("## Checkpoint 1: (3 pts)\nA", [3]),
        ("# Checkpoints\nno points here", []),
        # the benchmark's own typos (ds-answer-numerical-data-question, hr-organize-talent-info)
        ("## Checkpoing 1 (2pts)\nA\n## Checkpoint 2 (2pts)\nB", [2, 2]),
        ("## Checkpoint 2 (1pt)\nB\n## Checkpint 3 (1pt)\nC", [1, 1]),
    ],
)
def test_checkpoint_formats(text: str, points: list[int]) -> None:
    assert [c.points for c in parse_checkpoints(text)] == points


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (CI installs it)")
def test_a_python_installed_under_tmp_is_visible_to_the_evaluator(tmp_path: Path, monkeypatch) -> None:
    """A checkout (and its .venv) under /tmp: the sandbox's own /tmp must not hide the interpreter."""
    import subprocess

    from eval.tac import sandbox

    venv = tmp_path / "venv"  # pytest's tmp_path is under /tmp
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "marker").write_text("interpreter here\n")
    real = sandbox.python_prefixes
    monkeypatch.setattr(sandbox, "python_prefixes", lambda agent_python: [*real(agent_python), str(venv)])
    (tmp_path / "ws").mkdir()
    (tmp_path / "sock").mkdir()
    (tmp_path / "hosts").write_text(sandbox.HOSTS)
    argv = sandbox.bwrap_argv({"workspace": tmp_path / "ws"}, tmp_path / "sock", tmp_path / "hosts", ["/usr/bin/cat", str(venv / "bin" / "marker")])
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=sandbox.sandbox_env())
    assert r.returncode == 0 and r.stdout == "interpreter here\n", r.stderr


def test_checkpoint_counts_of_the_samples_agree_with_their_evaluators() -> None:
    """Issue 26 (3): checkpoints.md as parsed gave 2 for 3 and 2 for 4 checkpoints of the evaluators."""
    texts = {t: parse_checkpoints((TASKS / t / "checkpoints.md").read_text()) for t in ("ds-answer-numerical-data-question", "hr-organize-talent-info")}
    assert [c.points for c in texts["ds-answer-numerical-data-question"]] == [2, 2, 2]
    assert texts["ds-answer-numerical-data-question"][0].text == "The agent correctly answers the question 1 (Tea (including ice tea))."
    assert [c.points for c in texts["hr-organize-talent-info"]] == [1, 1, 1, 1]
    assert texts["hr-organize-talent-info"][3].text.startswith("Check all required information for Sarah Thompson")


@pytest.mark.parametrize(
    ("md", "evaluator", "texts"),
    [
        # numbered headings: the evaluator's list, a text where the number and the points agree
        ("## Checkpoint 2 (2pts)\nB\n## Checkpoint 3 (2pts)\nC", [2, 2, 2], ["", "B", "C"]),
        ("## Checkpoint 1 (1pt)\nA\n## Checkpoint 2 (3pt)\nB", [1, 1], ["A", ""]),
        ("## Checkpoint 1 (1pt)\nA", [1, 1, 1], ["A", "", ""]),
        # unnumbered items: by position
        ("- [1pt] A\n- [2pts] B", [1, 2], ["A", "B"]),
    ],
)
def test_checkpoint_texts_line_up_with_the_evaluators_list(md: str, evaluator: list[int], texts: list[str]) -> None:
    assert checkpoint_texts(md, evaluator) == texts


def test_trajectory_paths_survive_any_argument_text(tmp_path: Path) -> None:
    """A heredoc of a script in a bash call is one long token: it is no path (it made the judge crash
    with 'File name too long'); a file-server URL names the file it serves."""
    from eval.tac.trajectory import named_paths
    from tests.helpers.eval_records import bash_call

    (tmp_path / "Documents" / "Human Resources Team").mkdir(parents=True)
    (tmp_path / "Documents" / "Human Resources Team" / "a.txt").write_text("x")
    calls = bash_call("python -c '" + "x = 1  # a script, not a path " * 200 + "'")
    calls += bash_call("curl -s -u u:p 'http://the-agent-company.com:8092/remote.php/webdav/Documents/Human%20Resources%20Team/a.txt'", 2)
    assert named_paths(calls, tmp_path) == ["Documents/Human Resources Team/a.txt"]
