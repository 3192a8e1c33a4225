"""A runaway writer in one job of a real sweep (`runners.sweep`, real local Ray, the scripted model
driving bash under bubblewrap) on a small disk that holds the records and the workspaces: the job
that fills it ends alone, `disk_quota`, and every other job completes (issue 36, "disk space
while the agent runs").

Before, the per-file cap was the only limit: `yes > big` filled the disk, and the other jobs'
records failed (`cannot write the job record (... No space left on device)`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from envs.sandbox import bwrap_problem
from runners.sweep.ledger import Ledger
from tests.conftest import write_native, write_script

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")]
REPO = Path(__file__).resolve().parents[3]
REPORT = {"type": "contains", "file": "output/report.md", "values": ["hello"]}


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 24 MB tmpfs (root only): the sweep's records and its jobs' workspaces."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.getuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)])


def test_a_runaway_writer_ends_its_own_job_and_every_other_job_completes(tmp_path: Path, small_disk: Path) -> None:
    tasks = [{"id": f"t{i}", "prompt": "Write the report.", "workspace": "plain", "output": "output/",
              "rubrics": [{"text": "The report is there.", "check": REPORT}]} for i in range(3)]
    tasks.append({"id": "runaway", "prompt": "Write the report.", "workspace": "runaway", "output": "output/",
                  "rubrics": [{"text": "The report is there.", "check": REPORT}]})
    bench = write_native(tmp_path / "bench", tasks, {"plain/in.txt": "x\n", "runaway/in.txt": "x\n", "runaway/runaway": "yes\n"})
    # The runaway fills the disk and holds it; the others write their report a moment later.
    # `yes > big` stops at the quota (the per-file cap is at most the quota), then more files follow.
    command = ("if [ -e runaway ]; then yes > big; for i in $(seq 1 100); do head -c 1000000 /dev/zero > f$i; sleep 0.05; done; "
               "echo 'still writing'; sleep 30; fi; "
               "sleep 3; mkdir -p output && echo hello > output/report.md && echo written")
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": command, "timeout": 120}}]},
                                                 {"content": "Done."}])
    out = small_disk / "out"
    cmd = [sys.executable, "-m", "runners.sweep", "grid.benchmark=[native]", f"benchmark.path={bench}", "benchmark.limit=null",
           "grid.method=[dci]", "grid.model=[scripted]", f"model.script={script}", "grid.seed=[0]", "judge=rule",
           "tracker=none", f"out={out}", "sweep=quota", f"agent.work_dir={small_disk / 'work'}", "env.sandbox=bwrap",
           "env.disk_quota_bytes=4194304", "cluster.actors=1", "cluster.max_in_flight=4", "report.live_every=0"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    sdir = out / "quota"
    entries = list(Ledger(sdir).entries())
    by_task = {json.loads((sdir / e["job_id"] / "job.json").read_text())["task_id"]: e for e in entries}
    assert sorted(by_task) == ["runaway", "t0", "t1", "t2"], err[-3000:]
    assert {t: e["status"] for t, e in by_task.items()} == dict.fromkeys(by_task, "ok"), [e.get("error") for e in entries]
    assert proc.returncode == 0, err[-3000:]
    for task, entry in by_task.items():
        job = sdir / entry["job_id"]
        result = json.loads((job / "result.json").read_text())
        tool = [json.loads(line) for line in (job / "trajectory.jsonl").read_text().splitlines()
                if json.loads(line)["role"] == "tool"]
        if task != "runaway":
            assert result["stop_reason"] == "finished" and "written" in tool[0]["content"]
            assert [it["passed"] for it in json.loads((job / "scores.json").read_text())["items"]] == [True]
            continue
        assert result["stop_reason"] == "disk_quota" and {"disk_quota", "file_size"} <= set(result["limits_hit"]), result
        assert "disk quota (4.0 MB)" in result["error"] and result["wall_s"] < 30, result
        assert "still writing" not in tool[0]["content"] and "disk quota" in tool[0]["content"], tool[0]["content"]
        assert "big" in result["deliverable"] and not result["errored"]
        assert [it["passed"] for it in json.loads((job / "scores.json").read_text())["items"]] == [False]  # scored as left
    assert os.listdir(small_disk / "work") == []  # every workspace removed
