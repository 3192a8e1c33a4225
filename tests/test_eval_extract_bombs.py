"""Hostile deliverables through the real scoring entry point (`python -m eval.score`), each run in a
subprocess under a 1 GiB address-space cap and a wall timeout, so that a bomb cannot take the
machine with it: whatever the file, the job ends scored, a file that hit a limit fails the checks
that read it with the reason in scores.json, and a file's real content is still read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import deliverable_bombs as bombs
from tests.conftest import write_native
from tests.test_eval_helpers import make_job

REPO = Path(__file__).resolve().parent.parent
MEMORY_KB = 1 << 20  # 1 GiB for the whole scoring process and what it starts
TIMEOUT_S = 120

# name -> (deliverable file, its bytes, the rubric's check, passes?, words of the reason)
CASES: dict[str, tuple[str, Callable[[], bytes], dict[str, Any], bool, str]] = {
    "xlsx_dimension": ("output/dim.xlsx", bombs.xlsx_dimension_bomb, {"type": "row", "cells": ["Name", 42]}, True, "row"),
    "xlsx_zip": ("output/big.xlsx", bombs.xlsx_zip_bomb, {"type": "contains", "values": ["Atlas"]}, False, "unreadable"),
    "docx_zip": ("output/notes.docx", bombs.docx_zip_bomb, {"type": "contains", "values": ["Summary"]}, False, "unreadable"),
    "pptx_zip": ("output/deck.pptx", bombs.pptx_zip_bomb, {"type": "headings", "values": ["Deck"]}, False, "unreadable"),
    "pdf_pages": ("output/scan.pdf", bombs.pdf_page_bomb, {"type": "contains", "values": ["Page text"]}, False, "pages"),
    "md_heading": ("output/readme.md", lambda: bombs.redos_markdown().encode(), {"type": "headings", "values": ["Title"]}, True,
                   "headings found"),
}  # fmt: skip


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = [
        {"id": name, "prompt": "Write the report.", "workspace": "w", "output": "output/",
         "rubrics": [{"text": f"The {name} file holds the content.", "check": {**check, "file": rel}}]}
        for name, (rel, _, check, _, _) in CASES.items()
    ]  # fmt: skip
    return write_native(tmp_path_factory.mktemp("bombs"), tasks, {"w/readme.txt": "inputs\n"})


def score_capped(job: Path) -> subprocess.CompletedProcess[str]:
    """`python -m eval.score JOB` under the memory cap; a bomb that outlives TIMEOUT_S fails the test."""
    cmd = f'ulimit -S -H -v {MEMORY_KB} && exec "$0" -m eval.score "$1"'
    return subprocess.run(["bash", "-c", cmd, sys.executable, str(job)], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("name", list(CASES))
def test_a_bomb_in_the_deliverable_ends_scored_with_its_reason(name: str, bench: Path, tmp_path: Path) -> None:
    rel, make, _check, passes, reason = CASES[name]
    meta = {"job_id": name, "benchmark": "native", "task_id": name, "method": "dci", "model": "m", "seed": 0,
            "config": {"benchmark": {"name": "native", "path": str(bench)}, "judge": {"name": "rule"}}}  # fmt: skip
    job = make_job(tmp_path / name, {rel: make(), "output/other.md": "# Other\n"}, job=meta)
    out = score_capped(job)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    item = json.loads((job / "scores.json").read_text())["items"][0]
    assert item["passed"] is passes, item
    assert reason in item["reason"], item
