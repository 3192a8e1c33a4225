"""A corrupted ledger (`jobs.jsonl`) never stops a sweep from resuming or loses a later line
(issue 25, "a corrupted ledger line"): bytes that are not UTF-8, a line cut short by a killed
driver, lines of the wrong shape or types."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runners.sweep.ledger import Ledger
from tests.conftest import write_script

REPO = Path(__file__).resolve().parents[3]
GOOD = {"job_id": "a", "status": "ok", "record_attempt": 1, "time": 1.0}


def test_unreadable_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD).encode(),
        b"\xff\xfe not utf-8 \x80",  # a disk error, or bytes from another tool
        b"\x00" * 40,  # what a crash leaves on some file systems
        b"[1, 2]",
        json.dumps({"job_id": "b", "status": "ok", "record_attempt": "abc"}).encode(),
        json.dumps({"status": "ok", "record_attempt": 1}).encode(),  # no job id
        json.dumps({"job_id": ["c"], "status": "error"}).encode(),
        json.dumps({"job_id": "d", "status": "timeout", "record_attempt": 2, "time": 3.0}).encode(),
    ]
    (tmp_path / "jobs.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    ledger = Ledger(tmp_path)
    records = ledger.records()
    assert set(records) == {"a", "d"} and records["d"].record_attempt == 2
    assert [e["job_id"] for e in ledger.entries()] == ["a", "d"]
    assert ledger.skipped == 6


def test_a_line_appended_after_a_cut_one_is_kept(tmp_path: Path) -> None:
    """A driver killed mid-write leaves a last line without its end; the next line appended must not
    be glued to it (it was: the job vanished from the ledger)."""
    (tmp_path / "jobs.jsonl").write_text(json.dumps(GOOD) + "\n" + '{"job_id": "cut", "sta')
    Ledger(tmp_path).append({"job_id": "next", "status": "ok", "record_attempt": 1})
    assert [e["job_id"] for e in Ledger(tmp_path).entries()] == ["a", "next"]


@pytest.mark.slow
def test_a_sweep_resumes_over_a_corrupted_ledger(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
                                                 {"content": "done"}])
    cmd = [sys.executable, "-m", "runners.sweep", "model=scripted", f"model.script={script}", "grid.benchmark=[builtin]",
           "grid.method=[dci,runningtab]", "grid.tasks=[ws-01-resource-saving-manual,ws-02-purchase-order-summary]",
           "tracker=jsonl", f"out={tmp_path / 'out'}", "sweep=t", "cluster.max_in_flight=4", "report.live_every=0"]
    first = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    path = tmp_path / "out" / "t" / "jobs.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    wrong = json.loads(lines[0])
    wrong["record_attempt"] = "abc"
    lines[0] = json.dumps(wrong).encode() + b"\n"
    lines[1] = b"\xff\xfe\x00garbage\n"
    lines[3] = lines[3][:30]  # cut, as by a driver killed while writing it
    path.write_bytes(b"".join(lines))

    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 jobs, 4 already complete, 0 to run" in again.stderr  # complete records are not run again
    assert "unreadable line" in again.stdout and "report:" in again.stderr  # (logging goes to stdout)
    ids = [e["job_id"] for e in Ledger(path.parent).entries()]
    assert len(set(ids)) == 4  # the jobs whose lines were lost are logged again (reconciled)
