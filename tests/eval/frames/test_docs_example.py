"""docs/frames.md's worked example, run as the page has it, against the report's own table1.csv for
the same sweep (tests/fixtures/sweeps/sample, copied: the report writes into the sweep folder)."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from eval.report.build import write_report

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "frames.md"
SAMPLE = "tests/fixtures/sweeps/sample"


def example() -> str:
    """The page's worked example: its Python blocks after the heading."""
    text = PAGE.read_text(encoding="utf-8").split("## Worked example", 1)[1]
    return "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))


def spoil(sweep: Path) -> None:
    """One job unfinished, one unscored, one errored, one whose last attempt failed (the ledger)."""
    jobs = sorted(p for p in sweep.iterdir() if (p / "job.json").is_file() and "workspace" in p.name)
    for name in ("result.json", "scores.json"):
        (jobs[0] / name).unlink()
    (jobs[1] / "scores.json").unlink()
    result = json.loads((jobs[2] / "result.json").read_text())
    (jobs[2] / "result.json").write_text(json.dumps(result | {"stop_reason": "env_error", "error": "the sandbox died"}))
    with open(sweep / "jobs.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"job_id": jobs[3].name, "status": "failed", "error": "the actor died"}) + "\n")


@pytest.mark.parametrize("spoiled", [False, True], ids=["as_run", "with_jobs_that_are_not_results"])
def test_the_pages_example_rebuilds_table1_of_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoiled: bool) -> None:
    sweep = tmp_path / "sample"
    shutil.copytree(REPO / SAMPLE, sweep)
    if spoiled:
        spoil(sweep)
    rows = list(csv.DictReader(open(write_report(sweep, workers=0) / "table1.csv", encoding="utf-8")))
    code = example()
    assert f'read_sweep("{SAMPLE}")' in code
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code.replace(SAMPLE, str(sweep)), str(PAGE), "exec"), scope)  # noqa: S102 - the page's own code
    table1 = scope["table1"]
    assert len(rows) == 6
    results = [r for r in rows if r["results"] != "0"]  # the report also shows a cell whose jobs all errored
    assert len(table1) == len(results) == 6 - spoiled
    jobs = scope["jobs"]
    for row in rows:
        cell = (jobs.benchmark == row["benchmark"]) & (jobs.model == row["model"]) & (jobs.method == row["method"])
        assert (jobs[cell].status == "errored").sum() == int(row["errored"])
    for row in results:
        got = table1.loc[(row["benchmark"], row["model"], row["method"])]
        for col in ("results", "rubric_pass_rate", "tcr70", "success", "score", "acc0", "acc1", "cost_usd", "tokens_per_job"):
            want = float(row[col]) if row[col] else math.nan
            assert (math.isnan(want) and math.isnan(got[col])) or got[col] == pytest.approx(want), (row["method"], col)
    assert {r["rubric_pass_rate"] for r in rows if r["benchmark"] == "builtin-workspace"} != {"100.0"}  # not every score is full
    assert any(r["errored"] == "1" for r in rows) == spoiled
    accounts = scope["accounts"].set_index(["benchmark", "model", "method"])  # the page's accounting, as Table 1 shows it
    for row in rows:
        got = accounts.loc[(row["benchmark"], row["model"], row["method"])]
        assert [int(got[c]) for c in ("planned", "results", "errored", "unscored", "unfinished")] == [
            int(row[c]) for c in ("planned", "results", "errored", "unscored", "unfinished")]
    assert (tmp_path / "frames_calls_per_job.png").stat().st_size > 1000
    if not spoiled:  # what the page says of its figure: RunningTab's finish check makes one call more per job
        calls = scope["calls"].unstack("method")
        assert list(calls.runningtab - calls.dci) == [1.0, 1.0, 1.0]


def test_the_page_shows_what_the_example_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(example().replace(SAMPLE, str(REPO / SAMPLE)), str(PAGE), "exec"), {})  # noqa: S102
    printed = "\n".join(line.rstrip() for line in capsys.readouterr().out.strip().splitlines())
    assert printed in PAGE.read_text(encoding="utf-8")  # the page's printed table is the one its code prints
