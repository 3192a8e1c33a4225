"""A sweep that packs its records (`storage.pack_from=0`): once booked, each record is in its grid
cell's pack and its folder is gone; resume, re-scoring with a new judge, the report and `runningtab
score` read and write the packed records; a record stays a few bytes of a pack, not ~11 files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from eval.report.load import load_sweep
from runners.core.job_record import JobRecord, record_ids, record_mtime
from runners.core.record_pack import PACKS
from tests.conftest import write_native, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
TASKS = 6


def sweep(bench: Path, script: Path, out: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null",
           "grid.method=[dci,runningtab]", "grid.model=[scripted]", f"model.script={script}", "grid.seed=[0]", "tracker=jsonl",
           f"out={out}", "sweep=p", "storage.pack_from=0", *overrides]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)


def test_a_packed_sweep_resumes_rescores_and_reports_from_its_packs(tmp_path: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "How many rows?", "workspace": "w", "answer": "3"} for i in range(TASKS)]
    bench = write_native(tmp_path / "bench", tasks, {"w/data.csv": "a\n1\n2\n3\n"})
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p out && wc -l data.csv > out/n.txt"}}]},
                                                 {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    out = tmp_path / "out"
    sdir = out / "p"
    first = sweep(bench, script, out, "judge=none")
    assert first.returncode == 0, first.stderr[-3000:]
    ids = record_ids(sdir)
    assert len(ids) == 2 * TASKS
    assert not [n for n in ids if (sdir / n).exists()]  # every record packed, its folder gone
    packs = sorted(p.suffix for p in (sdir / PACKS).iterdir())
    assert packs == [".idx", ".idx", ".tar", ".tar"]  # two grid cells: a pack and its index each
    ran = {n: record_mtime(sdir / n, "result.json") for n in ids}
    assert all(JobRecord(sdir / n).deliverable_files() == ["out/n.txt"] and not JobRecord(sdir / n).scored for n in ids)
    records = sum(len(d) + len(f) for top, d, f in os.walk(sdir) if not Path(top).is_relative_to(sdir / "report"))
    assert records <= len(ids) // 2 + 10, f"{records} files and folders in the sweep outside its report for {len(ids)} jobs"  # ~11 a job unpacked; 10: the sweep's own (ledger, plan, locks, logs)

    second = sweep(bench, script, out, "judge=rule")  # a new judge: the packed records are scored, not run again
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"{2 * TASKS} already complete, 0 to run" in second.stderr, second.stderr[-3000:]
    assert not [n for n in ids if (sdir / n).exists()]  # scored and packed again
    for n in ids:
        r = JobRecord(sdir / n)
        assert r.packed and record_mtime(sdir / n, "result.json") == ran[n]  # the agent did not run again
        assert r.scores is not None and r.scores["judge"] == "rule"
        assert r.scores["metrics"]["acc0"] == 1.0 or "__runningtab__" in n  # the script answers before the tab's check
    page = sdir / "report" / "jobs" / f"{ids[0]}.html"
    assert "Judge: rule" in page.read_text()
    loaded = load_sweep(sdir)
    assert sorted(j.job_id for j in loaded.jobs) == ids and not loaded.broken

    third = sweep(bench, script, out, "judge=rule")
    assert third.returncode == 0 and "0 to run" in third.stderr and "re-scored" not in third.stderr, third.stderr[-3000:]
    report = subprocess.run([sys.executable, "-m", "eval.report", str(sdir)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert report.returncode == 0, report.stderr[-3000:]
