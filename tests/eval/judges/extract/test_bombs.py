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

from runners.core.record_files import EXTRACTED
from tests.conftest import write_native
from tests.helpers import deliverable_bombs as bombs
from tests.helpers.eval_records import make_job

REPO = Path(__file__).resolve().parents[4]
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
}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = [
        {"id": name, "prompt": "Write the report.", "workspace": "w", "output": "output/",
         "rubrics": [{"text": f"The {name} file holds the content.", "check": {**check, "file": rel}}]}
        for name, (rel, _, check, _, _) in CASES.items()
    ]
    return write_native(tmp_path_factory.mktemp("bombs"), tasks, {"w/readme.txt": "inputs\n"})


def score_capped(job: Path) -> subprocess.CompletedProcess[str]:
    """`python -m eval.score JOB` under the memory cap; a bomb that outlives TIMEOUT_S fails the test."""
    cmd = f'ulimit -S -H -v {MEMORY_KB} && exec "$0" -m eval.score "$1"'
    return subprocess.run(["bash", "-c", cmd, sys.executable, str(job)], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.mark.parametrize("name", list(CASES))
def test_a_bomb_in_the_deliverable_ends_scored_with_its_reason(name: str, bench: Path, tmp_path: Path) -> None:
    rel, make, _check, passes, reason = CASES[name]
    meta = {"job_id": name, "benchmark": "native", "task_id": name, "method": "dci", "model": "m", "seed": 0,
            "config": {"benchmark": {"name": "native", "path": str(bench)}, "judge": {"name": "rule"}}}
    job = make_job(tmp_path / name, {rel: make(), "output/other.md": "# Other\n"}, job=meta)
    out = score_capped(job)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    item = json.loads((job / "scores.json").read_text())["items"][0]
    assert item["passed"] is passes, item
    assert reason in item["reason"], item


# ------------------------------------------------------------ through the single-job entry point
E2E_RUBRICS = [  # (file the agent writes, its bytes, the check, passes?)
    ("output/dim.xlsx", bombs.xlsx_dimension_bomb, {"type": "row", "cells": ["Name", 42]}, True),
    ("output/notes.docx", lambda: bombs.docx_zip_bomb(100 << 20), {"type": "contains", "values": ["Summary"]}, False),
    ("output/deck.pptx", lambda: bombs.pptx_zip_bomb(100 << 20), {"type": "headings", "values": ["Deck"]}, False),
    ("output/big.xlsx", lambda: bombs.xlsx_zip_bomb(100 << 20), {"type": "contains", "values": ["Atlas"]}, False),
    ("output/scan.pdf", bombs.pdf_page_bomb, {"type": "contains", "values": ["Page text"]}, False),
    ("output/readme.md", lambda: bombs.redos_markdown().encode(), {"type": "headings", "values": ["Title"]}, True),
    ("output/summary.md", lambda: b"# Summary\n\nDone: 3 files.\n", {"type": "contains", "values": ["Done", 3]}, True),
]


def bomb_turns(files: list[tuple[str, bytes]]) -> list[dict[str, Any]]:
    """Scripted turns whose bash writes each file (base64 in a heredoc), then finish."""
    import base64

    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output"}}]}]
    for rel, data in files:
        body = base64.encodebytes(data).decode()
        turns.append({"tool_calls": [{"name": "bash", "arguments": {"command": f"base64 -d > {rel} <<'B64'\n{body}B64\nls -l {rel}"}}]})
    return [*turns, {"content": "Done."}]


@pytest.mark.slow
def test_a_job_whose_agent_writes_bombs_ends_scored_with_the_reasons(tmp_path: Path) -> None:
    """`python -m runners.job` (scripted model, bash under bubblewrap) under a 2 GiB address space: the
    job ends scored, the bombs' rubrics fail with their reasons, the real content is still judged."""
    task = {"id": "bombs", "prompt": "Write the report.", "workspace": "w", "output": "output/",
            "rubrics": [{"text": f"{rel} holds the content.", "check": {**check, "file": rel}} for rel, _, check, _ in E2E_RUBRICS]}
    bench = write_native(tmp_path / "bench", [task], {"w/readme.txt": "inputs\n"})
    script = tmp_path / "turns.jsonl"
    script.write_text("".join(json.dumps(t) + "\n" for t in bomb_turns([(rel, make()) for rel, make, _, _ in E2E_RUBRICS])))
    args = ["benchmark=native", f"benchmark.path={bench}", "task=bombs", "method=dci", "model=scripted", f"model.script={script}",
            f"out={tmp_path / 'o'}", f"env.max_memory_bytes={1 << 30}"]
    cmd = f'ulimit -S -H -v {2 * MEMORY_KB} && exec "$0" -m runners.job "$@"'
    out = subprocess.run(["bash", "-c", cmd, sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    job = Path(out.stdout.strip().splitlines()[-1])
    assert json.loads((job / "result.json").read_text())["stop_reason"] == "finished"
    items = json.loads((job / "scores.json").read_text())["items"]
    assert [it["passed"] for it in items] == [passes for *_, passes in E2E_RUBRICS], [it["reason"] for it in items]
    reasons = {it["check"]["file"]: it["reason"] for it in items}
    assert "word/document.xml' inflates to" in reasons["output/notes.docx"]
    assert "ppt/slides/slide1.xml' inflates to" in reasons["output/deck.pptx"]
    assert "xl/worksheets/sheet1.xml' inflates to" in reasons["output/big.xlsx"]
    assert "more than 2,000 pages" in reasons["output/scan.pdf"]
    kept = {f["path"]: f for f in json.loads((job / EXTRACTED).read_text())["files"]}
    assert "Done: 3 files." in kept["output/summary.md"]["text"] and "inflates to" in kept["output/notes.docx"]["error"]
