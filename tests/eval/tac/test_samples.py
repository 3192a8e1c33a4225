"""The six real TheAgentCompany task folders of shared/samples, scored by their own evaluator.py
through the agentcompany judge: a correct deliverable (written here) gets the benchmark's full
marks, an empty one what the benchmark's own image gives it (zero, except where noted)."""

from __future__ import annotations

import csv
import io
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from envs.workspace import materialize
from eval.benchmarks import load_benchmark
from eval.benchmarks.agentcompany import Config as AgentCompanyConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.tac.references import deliverable, slides
from runners.core.messages import AssistantMessage
from tests.helpers.eval_records import SAMPLES, FakeModel, bash_call, make_job

TASKS = SAMPLES / "theagentcompany"
SAMPLE_TASKS = (
    "admin-remove-pages-pdf", "ds-fix-table-values-and-missing-answers", "ds-sql-exercise",
    "hr-check-attendance-one-day", "research-answer-questions-on-paper", "sde-create-sqlite-database",
    "ds-stock-analysis-slides", "hr-organize-talent-info",
)
ATTENDANCE = "Documents/Human Resources Team/Attendance"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agentcompany judge needs bubblewrap (CI installs it)")


class EqualityJudge:
    """A judge model for `evaluate_with_llm`: "yes" exactly when the content equals the predicate."""

    name = "equality-judge"

    def complete(self, messages, tools) -> AssistantMessage:
        m = re.match(r'Does the content """(.*)""" indicate (.*)\? Please answer', messages[0]["content"][0]["text"], re.S)
        return AssistantMessage(content="yes" if m and m.group(1).strip() == m.group(2).strip() else "no")


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    """A file-server export holding the folders these tasks browse."""
    root = tmp_path_factory.mktemp("export")
    (root / ATTENDANCE).mkdir(parents=True)
    shutil.copyfile(TASKS / "hr-check-attendance-one-day" / "attendance-2024-03-01.csv", root / ATTENDANCE / "attendance-2024-03-01.csv")
    (root / "Documents" / "Financials").mkdir(parents=True)
    (root / "Documents" / "Financials" / "July-September 2024 Financials.ods").write_bytes(b"ods")
    (root / "Documents" / "Research").mkdir(parents=True)
    return root


def _task(export: Path, name: str):
    cfg = AgentCompanyConfig(name="agentcompany", tasks_dir=str(TASKS), export_dir=str(export), include=list(SAMPLE_TASKS))
    return load_benchmark(cfg).task(name)


def _score(tmp_path: Path, task, deliverable=None, messages=None, model=None) -> dict:
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "cache")), "agentcompany", model)
    return judge.score(task, make_job(tmp_path / "job", deliverable, messages=messages))


def _xlsx(fill) -> bytes:
    buf = io.BytesIO()
    wb = fill()
    wb.save(buf)
    return buf.getvalue()


def _corrected_table(tmp: Path) -> bytes:
    task = "ds-fix-table-values-and-missing-answers"
    return deliverable(task, TASKS / task, tmp).local["corrected_other_corp_area_totals.xlsx"]


def _attendance_summary() -> bytes:
    with open(TASKS / "hr-check-attendance-one-day" / "attendance-2024-03-01.csv", newline="") as f:
        rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(f)]
    perfect = [r["Name"] for r in rows if "17:30" <= r["Clock-out"] <= "18:00"]
    assert 0 < len(perfect) < len(rows)

    def fill():
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active.append(["Name"])
        for name in perfect:
            wb.active.append([name])
        return wb

    return _xlsx(fill)


def _financial_db(path: Path) -> bytes:
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE financial_categories (category_id INTEGER PRIMARY KEY, category_name TEXT, category_type TEXT);"
            "CREATE TABLE financial_details (detail_id INTEGER PRIMARY KEY, category_id INTEGER, month TEXT, actual REAL,"
            " budget REAL, variance REAL, percent_of_budget REAL);"
            "INSERT INTO financial_categories VALUES (1, 'Total Income', 'Income'), (2, 'Software Development Services', 'Income'),"
            " (3, 'Consulting', 'Income');"
            "INSERT INTO financial_details VALUES (1, 1, '2024-07', 150000, 160000, -10000, 93.75),"
            " (2, 1, '2024-08', 140000, 175000, -35000, 80.0), (3, 1, '2024-09', 170000, 165000, 5000, 103.0),"
            " (4, 2, '2024-07', 70000, 80000, -10000, 87.5), (5, 3, '2024-07', 25000, 20000, 5000, 125.0);"
        )
    db.close()
    return path.read_bytes()


def _research_sheet() -> str:
    answers = (TASKS / "research-answer-questions-on-paper" / "eval_data" / "answers.txt").read_text().splitlines()
    assert len(answers) == 11 and not any(":" in a for a in answers)
    return "".join(f"Question {i + 1}: {a}\n" for i, a in enumerate(answers))


@pytest.mark.slow
def test_admin_remove_pages_pdf(tmp_path: Path, export: Path) -> None:
    task = _task(export, "admin-remove-pages-pdf")
    assert [c.points for c in task.checkpoints] == [1, 1, 1]  # "(1 point)" headings
    pdf = (TASKS / "admin-remove-pages-pdf" / "expected_openhands_short.pdf").read_bytes()
    assert _score(tmp_path / "ok", task, {"openhands_short.pdf": pdf})["final_score"] == {"total": 3, "result": 3}
    assert _score(tmp_path / "empty", task)["final_score"] == {"total": 3, "result": 0}


@pytest.mark.slow
def test_ds_fix_table_values_reads_the_reference_copied_into_workspace(tmp_path: Path, export: Path) -> None:
    task = _task(export, "ds-fix-table-values-and-missing-answers")
    assert task.stage == {"ref_data.xlsx": TASKS / "ds-fix-table-values-and-missing-answers" / "ref_data.xlsx"}
    assert [c.points for c in task.checkpoints] == [2, 2, 2]  # "1. [2pts] ..." items
    materialize(task.workspace, tmp_path / "ws", task.stage)  # what the agent gets: the export plus the COPY'd reference
    assert (tmp_path / "ws" / "ref_data.xlsx").read_bytes() == (TASKS / "ds-fix-table-values-and-missing-answers" / "ref_data.xlsx").read_bytes()
    assert (tmp_path / "ws" / ATTENDANCE).is_dir()
    good = _score(tmp_path / "ok", task, {"corrected_other_corp_area_totals.xlsx": _corrected_table(tmp_path)})
    assert good["final_score"] == {"total": 6, "result": 6} and good["metrics"] == {"success": 1.0, "score": 1.0}
    assert _score(tmp_path / "empty", task)["final_score"] == {"total": 6, "result": 0}


def test_ds_sql_exercise_no_dependencies(tmp_path: Path, export: Path) -> None:
    task = _task(export, "ds-sql-exercise")
    answers = {"task1.txt": "20\n", "task2.txt": "3\n",
               "task3.txt": '"Gaming Laptop G1", 1799.99,\n"Professional Laptop T1", 1299.99,\n"Tablet Pro T1", 899.99\n'}
    good = _score(tmp_path / "ok", task, answers)
    assert good["final_score"] == {"total": 6, "result": 6}
    assert any("apt-get install -y sqlite3" in s["step"] for s in good["image_skipped"])
    assert _score(tmp_path / "empty", task)["final_score"] == {"total": 6, "result": 0}


@pytest.mark.slow
def test_hr_check_attendance_sees_the_percent_encoded_folder_url(tmp_path: Path, export: Path) -> None:
    task = _task(export, "hr-check-attendance-one-day")
    read = bash_call(f'head "{ATTENDANCE}/attendance-2024-03-01.csv"')
    good = _score(tmp_path / "ok", task, {"2024-03-attendance-summary.xlsx": _attendance_summary()}, read)
    assert [i["earned"] for i in good["items"]] == [1, 1, 1] and good["final_score"] == {"total": 3, "result": 3}
    unread = _score(tmp_path / "unread", task, {"2024-03-attendance-summary.xlsx": _attendance_summary()})
    assert [i["earned"] for i in unread["items"]] == [0, 1, 1]  # bonus_for_completing_final then gives 3
    assert _score(tmp_path / "empty", task)["final_score"] == {"total": 3, "result": 0}


def test_research_answers_from_utils(tmp_path: Path, export: Path) -> None:
    task = _task(export, "research-answer-questions-on-paper")
    files = {"noise_simulation_paper.pdf": b"%PDF-1.4", "noise_simulation_analysis_sheet.txt": _research_sheet()}
    good = _score(tmp_path / "ok", task, files, model=EqualityJudge())
    assert good["final_score"] == {"total": 12, "result": 12} and good["judge_failures"] == 0
    assert _score(tmp_path / "empty", task, model=EqualityJudge())["final_score"] == {"total": 12, "result": 0}


def test_sde_create_sqlite_database_opens_it_from_workspace_cwd(tmp_path: Path, export: Path) -> None:
    task = _task(export, "sde-create-sqlite-database")
    files = {"financial_report.db": _financial_db(tmp_path / "f.db"), "July-September 2024 Financials.ods": b"ods"}
    read = bash_call('ls "Documents/Financials"')
    good = _score(tmp_path / "ok", task, files, read)
    assert good["final_score"] == {"total": 8, "result": 8}
    # Checkpoint 3 (`import sqlite3`) passes in any image; bonus_for_completing_any then grants checkpoint 1.
    empty = _score(tmp_path / "empty", task)
    assert [i["earned"] for i in empty["items"]] == [0, 0, 1, 0, 0, 0, 0, 0] and empty["final_score"] == {"total": 8, "result": 2}


STOCK = TASKS / "ds-stock-analysis-slides"
PRESENTATION = "Documents/Financials/stock_presentation"


@pytest.mark.slow
def test_ds_stock_analysis_slides_saves_its_figures_under_utils(tmp_path: Path, export: Path) -> None:
    """The evaluator writes slide images to /utils/figs, as the benchmark's image lets it."""
    task = _task(export, "ds-stock-analysis-slides")
    files = {
        f"{PRESENTATION}/stock_cleaned.csv": (STOCK / "stock_data.csv").read_bytes(),
        f"{PRESENTATION}/stock_analysis.pptx": slides(STOCK / "stock_data.csv", tmp_path),
        f"{PRESENTATION}/stock_analysis_script.md": "Good morning, board members. Slide 1 ... Thank you for being here.\n",
    }
    yes = FakeModel("yes")
    good = _score(tmp_path / "ok", task, files, model=yes)
    assert [i["earned"] for i in good["items"]] == [1, 5, 2], good["evaluator_log"]
    assert good["final_score"] == {"total": 8, "result": 8}
    assert sum(1 for sent in yes.sent if len(sent[0]["content"]) == 2) == 5  # one image question per slide
    assert _score(tmp_path / "empty", task, model=FakeModel("yes"))["final_score"] == {"total": 8, "result": 0}


def _xlsx_bomb() -> bytes:
    """Issue 25's bomb: ~1.5 KB, a sheet claiming A1:XFD1048576 and holding two cells, the second at
    the far corner (reading it pads a million rows of 16,384 cells: gigabytes, minutes)."""
    import zipfile

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
        '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<workbook {ns} xmlns:r="{rel}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<worksheet {ns}><dimension ref="A1:XFD1048576"/><sheetData>'
        '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row></sheetData></worksheet>',
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in parts.items():
            z.writestr(name, text)
    return buf.getvalue()


def _bomb_job(tmp_path: Path, memory: int) -> Path:
    job = {"job_id": "bomb", "benchmark": "agentcompany", "task_id": "hr-check-attendance-one-day", "method": "dci", "model": "m",
           "seed": 0, "config": {"env": {"max_memory_bytes": memory}}}
    read = bash_call(f'head "{ATTENDANCE}/attendance-2024-03-01.csv"')
    return make_job(tmp_path, {"2024-03-attendance-summary.xlsx": _xlsx_bomb()}, messages=read, job=job)


@pytest.mark.slow
def test_an_xlsx_bomb_under_the_memory_cap_scores_zero(tmp_path: Path, export: Path) -> None:
    """Issue 25 (6): under the agent's 1 GiB memory cap the bomb's reads fail inside the evaluator's
    graders, which score them 0: the job is scored (it ran to the timeout, unscored, before)."""
    task = _task(export, "hr-check-attendance-one-day")
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c"), evaluator_timeout_s=60), "agentcompany")
    scores = judge.score(task, _bomb_job(tmp_path / "job", 1 << 30))
    assert [i["earned"] for i in scores["items"]] == [1, 0, 0] and scores["final_score"] == {"total": 3, "result": 1}
    assert "evaluator_failure" not in scores


@pytest.mark.slow
def test_an_xlsx_bomb_past_the_timeout_scores_its_unfinished_checkpoints_zero(tmp_path: Path, export: Path) -> None:
    """Issue 25 (6): stopped by its timeout while reading the agent's xlsx, the evaluator has failed on
    the agent's files: checkpoint 1 (done) keeps its point, the two it never finished score 0."""
    task = _task(export, "hr-check-attendance-one-day")
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp_path / "c"), evaluator_timeout_s=8), "agentcompany")
    scores = judge.score(task, _bomb_job(tmp_path / "job", 8 << 30))
    assert [i["earned"] for i in scores["items"]] == [1, 0, 0] and scores["final_score"] == {"total": 3, "result": 1}
    assert scores["evaluator_failure"] == {"outcome": "timeout", "limit": "timeout", "error": None, "handed_trajectory": True,
                                           "agent_files_read": ["2024-03-attendance-summary.xlsx"], "checkpoints_done": 1}


def test_checkpoint_texts_come_with_the_evaluators_checkpoints(tmp_path: Path, export: Path) -> None:
    """Issue 26 (3): the evaluator returns 4 checkpoints; checkpoints.md names them (two as "Checkpint")."""
    task = _task(export, "hr-organize-talent-info")
    empty = _score(tmp_path / "empty", task)
    assert [i["points"] for i in empty["items"]] == [1, 1, 1, 1] and empty["final_score"] == {"total": 4, "result": 0}
    assert [i["text"].split(" for ")[-1] for i in empty["items"][1:]] == [
        "Emily Johnson is included in the summary.csv file.", "Michael Davis is included in the summary.csv file.",
        "Sarah Thompson is included in the summary.csv file."]


# --- Issue 26 (4): the seven task folders behind the defects, through the job and as in the image ---

ORIGINAL = Path(__file__).resolve().parents[2] / "fixtures" / "tac_original"
# (task, file-server mode, deliverable) -> the original's score (points, total): correct deliverables get
# full marks except a share link that a mounted workspace cannot make (link.txt holds the file's WebDAV
# URL, which the benchmark fetches without credentials: 401, only "link.txt names the server" passes).
SEVEN_CASES = {
    **{(t, mode, "correct"): full for t, full in (
        ("ds-stock-analysis-slides", (8, 8)), ("hr-populate-salary-increase-memo", (7, 7)), ("ds-coffee-shop-database-management", (10, 10)),
        ("ds-answer-numerical-data-question", (6, 6)), ("hr-organize-talent-info", (4, 4))) for mode in ("mounted", "served")},
    ("hr-new-grad-job-description", "served", "correct"): (3, 3), ("sde-copy-table-from-pdf-to-xlsx", "served", "correct"): (5, 5),
    ("hr-new-grad-job-description", "mounted", "correct"): (1, 3), ("sde-copy-table-from-pdf-to-xlsx", "mounted", "correct"): (1, 5),
    ("hr-new-grad-job-description", "served", "plain"): (1, 3), ("sde-copy-table-from-pdf-to-xlsx", "served", "plain"): (1, 5),
    **{(t, "mounted", "empty"): (0, total) for t, total in (
        ("ds-stock-analysis-slides", 8), ("hr-populate-salary-increase-memo", 7), ("hr-new-grad-job-description", 3),
        ("sde-copy-table-from-pdf-to-xlsx", 5), ("ds-coffee-shop-database-management", 10), ("ds-answer-numerical-data-question", 6),
        ("hr-organize-talent-info", 4))},
}


@pytest.fixture(scope="module")
def seven_export(tmp_path_factory) -> Path:
    from tests.helpers.tac_seven import write_export

    return write_export(tmp_path_factory.mktemp("export7"))


def original_base() -> Path | None:
    """A checkout's `workspaces/base_image` (RT_TAC_BASE_IMAGE): the benchmark's own common.py, config.py
    and scoring.py, which the project never copies; None when none is given."""
    import os

    base = os.environ.get("RT_TAC_BASE_IMAGE")
    return Path(base) if base else None


def install_original(utils: Path, evaluator: Path, task_dir: Path) -> None:
    """/utils as the benchmark's image has it: its own common/config/scoring (from `original_base`),
    the evaluator, our runner."""
    base = original_base()
    assert base is not None
    shutil.copytree(ORIGINAL, utils, dirs_exist_ok=True)  # the stand-ins for litellm and rocketchat_API
    for name in ("common.py", "config.py", "scoring.py"):
        shutil.copyfile(base / name, utils / name)
    shutil.copyfile(Path(__file__).resolve().parents[3] / "eval" / "tac" / "run_evaluator.py", utils / "run_evaluator.py")
    shutil.copyfile(evaluator, utils / "evaluator.py")


def _run_seven(tmp_path: Path, export: Path, name: str, mode: str, kind: str):
    """The scripted agent's job through runners' job code, in its real sandbox; (cfg, task, job dir)."""
    from eval.tac.references import Deliverable, deliverable
    from eval.tac.scripted_agent import agent_script
    from runners.job.identity import job_id
    from runners.job.run import run_job
    from tests.conftest import compose_root, write_script

    d = Deliverable() if kind == "empty" else deliverable(name, TASKS / name, tmp_path)
    d.plain_link = kind == "plain"
    script = write_script(tmp_path / "turns.jsonl", agent_script(d, mode == "served"))
    cfg = compose_root(["benchmark=agentcompany", f"benchmark.tasks_dir={TASKS}", f"benchmark.export_dir={export}", f"benchmark.include=[{name}]",
                        f"benchmark.file_server={mode}", "method=runningtab", "model=scripted", f"model.script={script}",
                        f"judge.cache_dir={tmp_path / 'cache'}", "env.sandbox=bwrap"])
    task = load_benchmark(cfg.benchmark).task(name)
    jid = job_id(cfg, task.id)
    result = run_job(cfg, task, tmp_path / jid, jid)
    assert result.stop_reason == "finished", result.error
    return cfg, task, tmp_path / jid


@pytest.mark.slow
@pytest.mark.parametrize(("name", "mode", "kind"), sorted(SEVEN_CASES))
def test_the_seven_score_as_their_original_evaluators(tmp_path: Path, seven_export: Path, monkeypatch, name: str, mode: str, kind: str) -> None:
    """Issue 26 (4): each task's deliverable, made by a scripted agent in its sandbox, scored by the
    project's helpers and by the benchmark's own (as in its image): the same checkpoints, the same score."""
    from eval.judges.agentcompany import judge as judge_module
    from eval.score.records import score_job
    from eval.tac.scripted_agent import RuleJudge

    cfg, task, job_dir = _run_seven(tmp_path, seven_export, name, mode, kind)
    ours = score_job(job_dir, cfg.judge, task=task, model=RuleJudge())
    expected = dict(zip(("result", "total"), SEVEN_CASES[(name, mode, kind)], strict=True))
    assert ours["final_score"] == expected, ours["evaluator_log"]  # the original's score, read off its evaluator
    if original_base() is None:
        return  # the benchmark's own helpers are not in the project: RT_TAC_BASE_IMAGE runs them too
    monkeypatch.setattr(judge_module, "install_base_utils", install_original)
    original = score_job(job_dir, cfg.judge, task=task, model=RuleJudge())
    assert original["final_score"] == expected, original["evaluator_log"]
    assert [i["earned"] for i in ours["items"]] == [i["earned"] for i in original["items"]]
