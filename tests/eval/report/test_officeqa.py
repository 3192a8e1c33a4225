"""The report names the OfficeQA reward version the answers were scored by (from scores.json)."""

from __future__ import annotations

from pathlib import Path

from eval.benchmarks import load_benchmark
from eval.benchmarks.officeqa import Config as OfficeQAConfig
from eval.config import JudgeConfig
from eval.judges import make_judge
from eval.report.analyses import table1
from eval.report.load import load_sweep
from tests.helpers.eval_records import SAMPLES, make_job
from tests.helpers.report_sweeps import write_job


def test_table1_notes_the_reward_version(tmp_path: Path) -> None:
    cfg = OfficeQAConfig(name="officeqa", questions=str(SAMPLES / "officeqa" / "officeqa_pro_head5.csv"), corpus=str(tmp_path), reward="460ad51")
    task = load_benchmark(cfg).task("UID0001")
    scores = make_judge(JudgeConfig(name="auto"), "officeqa").score(task, make_job(tmp_path / "j", final_answer="<FINAL_ANSWER>2602</FINAL_ANSWER>"))
    sweep = tmp_path / "sweep"
    for method in ("dci", "runningtab"):
        write_job(sweep, "officeqa", "UID0001", method, "m1", 0, scores)
    section = table1.build(load_sweep(sweep), tmp_path / "out")
    assert "answers scored by databricks/officeqa reward.py@460ad51" in section.tables[0].notes
