"""A bomb in one job's deliverable, in a real sweep (`runners.sweep`, real local Ray) of four scripted
jobs on ONE episode actor: the other three reach jobs.jsonl scored while the bomb's files are still
being read, and the bomb's job ends scored too, its rubrics failed with their reasons (issue 25, item 1).

Before, the judge read files in the actor's own thread holding the interpreter lock: a heading line
the old pattern backtracked over held it for hours, and no job on that actor reached the ledger.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from runners.sweep.ledger import Ledger
from tests.conftest import write_native, write_script
from tests.helpers import deliverable_bombs as bombs

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
SLOW_PDF = (224, 2)  # 50,176 pages: pypdf needs well over the 3 s of CPU the sweep allows a file
BOMBS = {
    "output/dim.xlsx": (bombs.xlsx_dimension_bomb, {"type": "row", "cells": ["Name", 42]}, True, "row"),
    "output/notes.docx": (lambda: bombs.docx_zip_bomb(100 << 20), {"type": "contains", "values": ["Summary"]}, False, "inflates to"),
    "output/scan.pdf": (lambda: bombs.pdf_page_bomb(*SLOW_PDF), {"type": "contains", "values": ["Page text"]}, False, "s of CPU"),
    "output/readme.md": (lambda: bombs.redos_markdown().encode(), {"type": "headings", "values": ["Title"]}, True, "headings found"),
}
REPORT = {"type": "contains", "file": "output/report.md", "values": ["Done", 3]}


def script_writing_bombs_where_asked() -> str:
    """One bash command: the report everywhere; the bombs too in a workspace that holds `bomb.txt`."""
    parts = ["mkdir -p output && printf '# Report\\n\\nDone: 3 files.\\n' > output/report.md", "if [ -e bomb.txt ]; then"]
    for rel, (make, *_) in BOMBS.items():
        parts.append(f"base64 -d > {rel} <<'B64'\n{base64.encodebytes(make()).decode()}B64")
    return "\n".join([*parts, "fi", "ls -l output"])


def test_a_bomb_stalls_no_other_job_on_its_actor(tmp_path: Path) -> None:
    plain = [{"id": f"t{i}", "prompt": "Write the report.", "workspace": "plain", "output": "output/",
              "rubrics": [{"text": "The report says it is done.", "check": REPORT}]} for i in range(3)]
    bomb = {"id": "tbomb", "prompt": "Write the report.", "workspace": "bombs", "output": "output/",
            "rubrics": [{"text": "The report says it is done.", "check": REPORT}]
                       + [{"text": f"{rel} holds the content.", "check": {**check, "file": rel}} for rel, (_, check, _, _) in BOMBS.items()]}
    bench = write_native(tmp_path / "bench", [*plain, bomb], {"plain/in.txt": "x\n", "bombs/in.txt": "x\n", "bombs/bomb.txt": "yes\n"})
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": script_writing_bombs_where_asked()}}]},
                                                 {"content": "Done."}])
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null",
           "grid.method=[dci]", "grid.model=[scripted]", f"model.script={script}", "grid.seed=[0]", "judge=rule",
           "judge.extract.cpu_s=3", "judge.extract.pdf_pages=100000", "tracker=none", f"out={out}", "sweep=bomb",
           "cluster.actors=1", "cluster.max_in_flight=4", "report.live_every=0"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:  # the sweep stalled: take its Ray with it
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 0, err[-3000:]
    sdir = out / "bomb"
    lines = [e for e in Ledger(sdir).entries() if e["status"] == "ok"]
    by_task = {json.loads((sdir / e["job_id"] / "job.json").read_text())["task_id"]: e["job_id"] for e in lines}
    assert sorted(by_task) == ["t0", "t1", "t2", "tbomb"]
    # the others were logged (scored) while the bomb's files were still being read
    assert [e["job_id"] for e in lines][-1] == by_task["tbomb"]
    for task, job in by_task.items():
        items = json.loads((sdir / job / "scores.json").read_text())["items"]
        if task != "tbomb":
            assert [it["passed"] for it in items] == [True]
            continue
        assert [it["passed"] for it in items] == [True, *(passes for _, _, passes, _ in BOMBS.values())], [it["reason"] for it in items]
        for it, (_, _, _, reason) in zip(items[1:], BOMBS.values(), strict=True):
            assert reason in it["reason"], it
