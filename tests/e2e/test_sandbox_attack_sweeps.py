"""Issue 48, rows 3 and 4, as a sweep runs them (`runners.sweep`, Ray, bubblewrap, the scripted
model): one honest job and one failing job, and Table 1 over both. The failing agent's attack must
not take its own 0 out of the table.

- Row 3, served TheAgentCompany (the paper preset's mode): the failing job's first command writes a
  forged status line to the shell supervisor's pipe. Before: `env_error` ("the server was not
  listening, before anything of the agent's ran") while the server was up: 100.00 over 1 job, 1 errored.
- Row 4: the failing job reserves the rest of the disk that holds the records and the workspaces with
  `fallocate -n` (FALLOC_FL_KEEP_SIZE: not checked by RLIMIT_FSIZE), in one call. Before: its record
  could not be written (unfinished, run again on resume): 100.00 over 1 job.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envs.sandbox import bwrap_problem
from tests.conftest import write_native, write_script

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")]
REPO = Path(__file__).resolve().parents[2]
DONE = {"content": "Done."}


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def sweep(out: Path, *overrides: str) -> tuple[subprocess.CompletedProcess, list[dict[str, str]]]:
    """The sweep `t` into `out`; its run and Table 1's rows."""
    cmd = [sys.executable, "-m", "runners.sweep", "tracker=none", f"out={out}", "sweep=t", "grid.method=[dci]", "model=scripted",
           "env.sandbox=bwrap", "report.live_every=0", *overrides]
    r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "WANDB_MODE": "offline", "OPENAI_API_KEY": "unused"},
                       capture_output=True, text=True, timeout=1200)
    with open(out / "t" / "report" / "table1.csv", newline="") as f:
        return r, list(csv.DictReader(f))


def figure(row: dict[str, str]) -> tuple[str, str, str, str]:
    """A Table 1 row's planned jobs, results, errored jobs and first metric (the benchmark's headline:
    success, pass rate)."""
    names = list(row)
    return row["planned"], row["results"], row["errored"], row[names[names.index("unsandboxed") + 1]]


def results(out: Path) -> dict[str, dict[str, Any]]:
    """Each job's task and its result.json (None where it has none)."""
    found = {}
    for job in (out / "t").glob("*/job.json"):
        result = job.parent / "result.json"
        found[json.loads(job.read_text())["task_id"]] = json.loads(result.read_text()) if result.exists() else None
    return found


def test_a_forged_status_line_in_served_theagentcompany_is_a_result(tmp_path: Path) -> None:
    from eval.tac.references import deliverable
    from eval.tac.scripted_agent import agent_script
    from tests.helpers.tac_seven import TASKS, write_export

    honest, failing = "hr-organize-talent-info", "ds-coffee-shop-database-management"
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    write_script(scripts / f"{honest}.jsonl", agent_script(deliverable(honest, TASKS / honest, tmp_path), served=True))
    write_script(scripts / f"{failing}.jsonl", [bash("printf '0 0\\n' > /proc/1/fd/1"), DONE])
    r, rows = sweep(tmp_path / "out", "benchmark=agentcompany", f"benchmark.tasks_dir={TASKS}",
                    f"benchmark.export_dir={write_export(tmp_path / 'export')}", f"benchmark.include=[{honest},{failing}]",
                    "benchmark.file_server=served", f"model.script_dir={scripts}", f"judge.cache_dir={tmp_path / 'judge'}")
    assert r.returncode == 0, r.stderr[-3000:]
    got = results(tmp_path / "out")
    assert {t: (res["stop_reason"], res["errored"]) for t, res in got.items()} == {honest: ("finished", False), failing: ("finished", False)}
    assert [figure(row) for row in rows] == [("2", "2", "0", "50.0")], rows


def test_fallocate_on_the_records_disk_is_refused_and_the_job_a_result(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.getuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        report = {"type": "contains", "file": "output/report.md", "values": ["hello"]}
        tasks = [{"id": t, "prompt": "Write the report.", "workspace": "w", "output": "output/",
                  "rubrics": [{"text": "The report is there.", "check": report}]} for t in ("honest", "failing")]
        bench = write_native(tmp_path / "bench", tasks, {"w/in.txt": "x\n"})
        scripts = tmp_path / "scripts"
        scripts.mkdir()
        write_script(scripts / "honest.jsonl", [bash("sleep 5; mkdir -p output && echo hello > output/report.md"), DONE])
        write_script(scripts / "failing.jsonl", [bash(": > big; fallocate -n -l $(df -B1 --output=avail . | tail -1) big; du -k big"), DONE])
        r, rows = sweep(disk / "out", "benchmark=native", f"benchmark.path={bench}", f"model.script_dir={scripts}",
                        "judge=rule", f"agent.work_dir={disk / 'work'}", "env.disk_quota_bytes=67108864", "cluster.max_in_flight=2")
        assert r.returncode == 0, r.stderr[-3000:]
        got = results(disk / "out")
        assert {t: (res["stop_reason"], res["errored"]) for t, res in got.items()} == {
            "honest": ("finished", False), "failing": ("finished", False)}, got
        assert [figure(row) for row in rows] == [("2", "2", "0", "50.0")], rows
    finally:
        subprocess.run(["umount", "-l", str(disk)])
