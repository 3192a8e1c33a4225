"""Issue 48 (4): a job its disk quota stopped is a result, written and scored, also when its writer
filled the disk the record is on. The agent's /tmp, HOME and saved outputs are freed as soon as its
processes are killed (envs/sandbox.py `Shell.release`), before the call's tool message and the
rest of the record are written. Before, the disk stayed full until the job's scratch was removed,
after the record: `cannot write the job record (... No space left on device)`, the job unfinished
and run again on resume, where it did it again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envs.sandbox import bwrap_problem
from runners.core.job_record import JobRecord
from tests.conftest import write_native, write_script

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")]
REPO = Path(__file__).resolve().parents[3]
TASK = {"id": "t", "prompt": "Write output/report.md.", "workspace": "w", "output": "output/",
        "rubrics": [{"text": "report", "check": {"type": "contains", "file": "output/report.md", "values": ["hello"]}}]}
QUOTA = 8 << 20  # its file size cap: 7.75 MB


@pytest.fixture
def disk(tmp_path: Path):
    """A 24 MB tmpfs (root only) holding the record, the workspace and the agent's /tmp (TMPDIR)."""
    root = tmp_path / "disk"
    root.mkdir()
    if os.getuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(root)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield root
    finally:
        subprocess.run(["umount", "-l", str(root)])


def test_a_writer_that_fills_the_disk_past_its_quota_leaves_a_scored_record(tmp_path: Path, disk: Path) -> None:
    """The disk has the quota and 512 KB free (other jobs' records fill the rest): a writer past its
    quota fills it before the watchdog's poll stops it."""
    bench = write_native(tmp_path / "bench", [TASK], {"w/in.txt": "x\n"})
    # 40 KB of output: its tool message needs pages of its own on the full disk
    command = ("head -c 40000 /dev/zero | tr '\\0' x; echo; mkdir -p output; echo hello > output/report.md; "
               "head -c 7M /dev/zero > /tmp/f1; head -c 7M /dev/zero > /tmp/f2")
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "others").write_bytes(b"\1" * (free - QUOTA - (512 << 10)))
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                                                 {"content": "Done."}])
    (disk / "tmp").mkdir()
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", "task=t", "method=dci",
           "model=scripted", f"model.script={script}", "env.sandbox=bwrap", f"out={disk / 'out'}",
           f"agent.work_dir={disk / 'work'}", f"env.disk_quota_bytes={QUOTA}", "judge=rule"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "TMPDIR": str(disk / "tmp")})
    assert r.returncode == 0, r.stderr[-3000:]
    job = Path(r.stdout.strip().splitlines()[-1])
    result = json.loads((job / "result.json").read_text())
    assert result["stop_reason"] == "disk_quota" and not result["errored"] and "disk_quota" in result["limits_hit"], result
    tool = [m for m in JobRecord(job).trajectory() if m["role"] == "tool"]
    assert "disk quota (8.0 MB) was exceeded" in tool[0]["content"]
    assert [i["passed"] for i in JobRecord(job).scores["items"]] == [True]  # judged on what it left: its report
    assert os.listdir(disk / "tmp") == [] and os.listdir(disk / "work") == []  # every scratch removed
