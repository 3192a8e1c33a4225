"""Hand-run benchmark: what TheAgentCompany's file server adds to a job (numbers in docs/benchmarks.md).

    .venv/bin/python -m bench.bench_tac_fileserver [--repeat 5]

Medians over `--repeat` runs of
- the server's start on its own (process start to accepting connections, no sandbox);
- the agent's first bash call (`true`) in a bubblewrap session without and with the server beside
  it (served mode: the session waits until the server listens), and a later call with it running;
- a `curl` of a 100 KB file through the server, inside the agent's sandbox;
- one evaluation of a one-checkpoint evaluator (the sandbox, the server, the evaluator).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox_extras import SandboxExtras
from eval.tac.agent_sandbox import server_sandbox

REPO = Path(__file__).resolve().parent.parent


def server_start(tmp: Path) -> float:
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "eval.tac.fileserver", "--root", str(tmp), "--state", str(tmp / ".state"), "--port", "0"],
                         cwd=REPO, stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    took = time.perf_counter() - t
    p.kill()
    p.wait()
    return took


def bash(env: WorkspaceEnv, command: str) -> float:
    t = time.perf_counter()
    env.execute(ToolCall("c", "bash", json.dumps({"command": command})), 1)
    return time.perf_counter() - t


def agent_calls(tmp: Path, served: bool) -> tuple[float, float, float]:
    ws = tmp / f"ws-{served}-{time.monotonic_ns()}"
    (ws / ".image" / "owncloud" / "Documents").mkdir(parents=True)
    (ws / ".image" / "owncloud" / "Documents" / "f.txt").write_bytes(b"x" * 100_000)
    env = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"), [], server_sandbox(()) if served else SandboxExtras())
    try:
        first = bash(env, "true")
        later = bash(env, "true")
        url = "http://the-agent-company.com:8092/remote.php/webdav/Documents/f.txt"
        fetch = bash(env, f"curl -s -u theagentcompany:theagentcompany -o /dev/null {url}") if served else float("nan")
    finally:
        env.close()
    return first, later, fetch


def evaluation(tmp: Path) -> float:
    from eval.benchmarks.agentcompany import load_task
    from eval.config import JudgeConfig
    from eval.judges import make_judge
    from tests.helpers.eval_records import make_job

    task_dir = tmp / "tasks" / "one"
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "task.md").write_text("Do nothing.\n")
    (task_dir / "evaluator.py").write_text("from scoring import Result, Checkpoint\n\ndef grade_checkpoints(trajectory=''):\n"
                                           "    return Result([Checkpoint(1, 1)])\n")
    export = tmp / "export"
    export.mkdir(exist_ok=True)
    job = make_job(tmp / f"job-{time.monotonic_ns()}")
    judge = make_judge(JudgeConfig(name="agentcompany", cache_dir=str(tmp / "cache")), "agentcompany")
    t = time.perf_counter()
    judge.score(load_task(task_dir, export), job)
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    n = p.parse_args().repeat
    with tempfile.TemporaryDirectory(prefix="bench-tac-fs-") as d:
        tmp = Path(d)
        rows = {"server start (no sandbox)": [server_start(tmp) for _ in range(n)]}
        for served in (False, True):
            runs = [agent_calls(tmp, served) for _ in range(n)]
            label = "with the server" if served else "mounted, no server"
            rows[f"agent: first bash call, {label}"] = [r[0] for r in runs]
            rows[f"agent: later bash call, {label}"] = [r[1] for r in runs]
            if served:
                rows["agent: curl of a 100 KB file through the server"] = [r[2] for r in runs]
        rows["evaluation of a 1-checkpoint evaluator (sandbox + server + evaluator)"] = [evaluation(tmp) for _ in range(n)]
    for name, values in rows.items():
        print(f"{name:70s} median {statistics.median(values) * 1000:8.0f} ms  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})")


if __name__ == "__main__":
    main()
