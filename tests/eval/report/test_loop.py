"""The report on records the real loop wrote: DCI and RunningTab on the scripted model over a
native task, scored by the rule judge, then every analysis that applies."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from eval.config import BenchmarkConfig, JudgeConfig
from eval.report import write_report
from eval.report.analyses.tabview import render_markdown
from eval.report.load import load_sweep
from runners.config.runner import AgentConfig, MethodConfig
from runners.config.schema import RootConfig
from runners.job.run import run_and_score
from runners.models import ScriptedModelConfig
from tab.config import TabConfig
from tests.conftest import write_native, write_script

POLICY = "Article 7 Hotels: 450 yuan per night.\nArticle 8 Taxi fares need receipts.\n"
TURNS = [
    {"tool_calls": [{"name": "tab_add", "arguments": {"requirements": ["hotel rate", "taxi receipts"]}}]},
    {"tool_calls": [{"name": "read", "arguments": {"path": "policies/travel.md"}}]},
    {"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output && grep -i 'article 7' policies/travel.md > output/guide.md"}}]},
    {"tool_calls": [{"name": "tab_review", "arguments": {}}]},
    {"tool_calls": [{"name": "tab_resolve", "arguments": {"id": "r1", "status": "done", "entries": ["L1"]}}]},
    {"content": "Done."},
    {"content": "Final."},
]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loop")
    task = {"id": "guide", "prompt": "Write a travel guide.", "workspace": "travel", "output": "output/guide.md",
            "rubrics": [{"text": "States the hotel rate of 450 yuan", "check": {"type": "contains", "values": ["450"]}},
                        {"text": 'Says that taxi fares need "receipts"', "check": {"type": "contains", "values": ["receipts"]}}]}
    bench = write_native(root / "bench", [task], {"travel/policies/travel.md": POLICY})
    script = write_script(root / "turns.jsonl", TURNS)
    sdir = root / "sweep"
    for method in ("dci", "runningtab"):
        cfg = RootConfig(
            benchmark=BenchmarkConfig(name="native", path=str(bench)),
            method=MethodConfig(name=method, tab=TabConfig() if method == "runningtab" else None),
            model=ScriptedModelConfig(kind="scripted", name="scripted", script=str(script)),
            judge=JudgeConfig(name="rule"),
            agent=AgentConfig(max_turns=10, time_limit_s=120),
        )
        jid = f"native__guide__{method}__scripted__s0"
        run_and_score(cfg, "guide", sdir / jid, jid, None)
    return sdir


def table(report: Path, name: str) -> dict[str, dict[str, str]]:
    with open(report / f"{name}.csv", newline="") as f:
        return {r["method"]: r for r in csv.DictReader(f)}


def test_report_on_real_records(sweep: Path) -> None:
    report = write_report(sweep)
    t1 = table(report, "table1")
    # Both deliver the Article 7 line only: 450 passes, "receipts" fails.
    assert float(t1["dci"]["rubric_pass_rate"]) == 50.0 and float(t1["runningtab"]["rubric_pass_rate"]) == 50.0
    paired = table(report, "table1_vs_dci")["runningtab"]
    assert float(paired["diff"]) == 0.0 and paired["pairs"] == "1"
    t3 = table(report, "table3")["runningtab"]
    # the review at turn 4 showed both open requirements beside a line of L1 (hotel / taxi receipts)
    assert (t3["requirements"], t3["read_log_entries"], t3["distinct_files"]) == ("2.0", "1.0", "1.0")
    assert float(t3["excerpt_chars"]) >= len(POLICY.strip()) and float(t3["review_coverage_pct"]) == 100.0
    assert float(t3["resolved_citing_pct"]) == 100.0
    f2 = table(report, "figure2")
    # "receipts" was read (shown) and is missing from the guide, for both methods
    for m in ("dci", "runningtab"):
        assert (f2[m]["failed"], f2[m]["shown_missing"]) == ("1", "1"), m
    left = table(report, "figure4_left")["runningtab"]
    assert (left["missing"], left["in_read_log"]) == ("1", "1")
    md = (report / "report.md").read_text()
    assert "Skipped: no ablation jobs" in md and "thirds need at least 3" in md
    assert (report / "jobs" / "native__guide__runningtab__scripted__s0.html").is_file()


def test_tab_view_of_a_real_record(sweep: Path) -> None:
    job = load_sweep(sweep).job("native__guide__runningtab__scripted__s0")
    view = render_markdown(job)
    assert "tab_add → r1, r2" in view and "+L1 policies/travel.md" in view
    assert "review (tool)" in view and "tab_resolve r1 done" in view and "finish check (" in view
    assert "#### The tab at the end" in view and "(A) Requirements: 2" in view
