"""Issue 50 (8): `make demo` ended after 12 minutes with every metric 0.00 and no picture of what the
tab does (SmolLM2 never reads a file). It now keeps the embedded model's sweep, adds the tab at work
(a built-in reference solution replayed under DCI and RunningTab) and ends with what to look at and
what to do next. Here the embedded model is swapped for a script, as a user's overrides would, run
from another folder with a relative `out`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from runners.sweep.demo import OWN_BENCHMARK
from tests.conftest import compose_root, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]


def test_the_demo_ends_with_the_tab_at_work_and_the_next_command(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}, {"content": "done"}])
    cmd = [sys.executable, "-m", "runners.sweep.demo", "model=scripted", f"model.script={script}", "grid.benchmark=[builtin]",
           "tracker=none", "out=out"]
    r = subprocess.run(cmd, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"},
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    out = tmp_path / "out"
    guide = r.stdout[r.stdout.index("What to look at:"):]
    pages = [Path(word) for word in guide.split() if word.endswith(".html")]
    assert pages[0] == out / "demo" / "report" / "index.html" and all(p.is_file() for p in pages), guide
    tab_page, compare = pages[1], pages[2]
    assert tab_page.parent == out / "demo_tour" / "report" / "jobs" and "__runningtab__" in tab_page.name
    assert compare.parent.name == "compare" and compare.name == f"{tab_page.stem}__vs__dci.html"
    tab = json.loads((out / "demo_tour" / tab_page.stem / "tab.json").read_text())
    files = {e["path"] for e in tab["read_log"]}
    assert f"({len(tab['read_log'])} excerpts of {len(files)} files)" in guide and len(files) >= 3  # the tab at work, read from its record
    assert not (out / "demo_tour" / tab_page.stem / "scores.json").exists()  # a replay: nothing judges it
    assert OWN_BENCHMARK in guide
    compose_root(shlex.split(OWN_BENCHMARK)[2:])  # the command composes (every key and group exists)
    again = subprocess.run(cmd, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"},
                           capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and (again.stdout + again.stderr).count(", 0 to run") == 2, again.stderr[-2000:]  # both resumed, nothing twice
