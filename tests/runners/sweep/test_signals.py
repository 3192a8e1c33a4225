"""Ctrl-C and SIGTERM to a running sweep's driver (issue 30 §4, issue 25 "SIGTERM and SIGINT to the
driver, then resume"): one status line instead of a traceback, the episode actors and the model
server stopped, and the command it prints resumes the sweep with every job run once.

The model is served (a `vllm` stand-in on PATH that answers chat completions slowly), so that a
server is running when the signal comes. Every process the sweep starts inherits a marker in its
environment, which is how the test finds what is left of it, and only of it."""

from __future__ import annotations

import os
import secrets
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runners.sweep.ledger import Ledger

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]  # their sweeps start their own local Ray
REPO = Path(__file__).resolve().parents[3]
TASKS = "ws-01-resource-saving-manual,ws-02-purchase-order-summary,ws-03-business-travel-guide"

# Stands in for `vllm serve …`: answers /v1/models, and every chat completion after 2 s with "done".
SHIM = """#!{python}
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
args = sys.argv[1:]
opt = lambda name: args[args.index(name) + 1]
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        self._send(200, {{"object": "list", "data": [{{"id": opt("--served-model-name"), "object": "model"}}]}})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(2)
        self._send(200, {{"choices": [{{"index": 0, "message": {{"role": "assistant", "content": "done"}}, "finish_reason": "stop"}}],
                         "usage": {{"prompt_tokens": 1, "completion_tokens": 1}}}})
    def log_message(self, *a):
        pass
ThreadingHTTPServer((opt("--host"), int(opt("--port"))), Handler).serve_forever()
"""


def marked(marker: str) -> list[int]:
    """The pids of live processes that carry `marker` in their environment."""
    out = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and marker.encode() in (p / "environ").read_bytes():
                out.append(int(p.name))
        except OSError:
            continue
    return out


def wait_gone(marker: str, timeout: float = 10) -> list[str]:
    """What is still running of the marked processes after `timeout` (their command lines). The
    sweep ends its local Ray's processes, Ray's agents included, before it exits, on a signal or a
    normal exit alike (issue 40: the runtime-env agent had lingered over 60 s on its own); the
    seconds are for those processes' own exit on a loaded machine."""
    deadline = time.monotonic() + timeout
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
            for pid in left if Path(f"/proc/{pid}").exists()]


@pytest.mark.parametrize(("sig", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)],
                         ids=["ctrl-c", "sigterm", "sigterm-group"])
def test_a_signalled_driver_stops_cleanly_and_its_command_resumes(tmp_path: Path, sig: int, group: bool) -> None:
    """SIGINT to the whole process group is a terminal's Ctrl-C; SIGTERM to the driver alone is
    `kill`; SIGTERM to the group (`kill -- -PGID`, a service manager) also reaches the local Ray
    cluster's own processes, which then answer no call: the driver must not wait for them (it
    waited a minute, until Ray's client killed it, rc 1)."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "vllm").write_text(SHIM.format(python=sys.executable))
    (shim / "vllm").chmod((shim / "vllm").stat().st_mode | stat.S_IEXEC)
    marker = f"RT_SIGNAL_TEST={secrets.token_hex(8)}"
    env = {**os.environ, marker.split("=")[0]: marker.split("=")[1], "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPO)}
    args = ["model=vllm", "model.name=stub", "model.server.model_path=stub", "cluster.server_gpus=0",
            "grid.benchmark=[builtin]", "grid.method=[dci,runningtab]", "grid.seed=[0]", f"grid.tasks=[{TASKS}]", "judge=none",
            "tracker=jsonl", f"out={tmp_path / 'out'}", "sweep=t", "cluster.max_in_flight=4", "report.live_every=0"]
    sdir = tmp_path / "out" / "t"
    proc = subprocess.Popen([sys.executable, "-m", "runners.sweep", *args], cwd=REPO, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while len(Ledger(sdir).entries()) < 2:
            assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else ""
            assert time.monotonic() < deadline, "no job finished in time"
            time.sleep(0.2)
        (os.killpg if group else os.kill)(proc.pid, sig)
        signalled = time.monotonic()
        _, err = proc.communicate(timeout=120)
        stopping_s = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + sig, err[-3000:]
    assert stopping_s < 45, stopping_s  # the server's stop grace (15 s) and a margin, not Ray's minute
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    [status] = [line for line in err.splitlines() if line.startswith("sweep interrupted by")]
    name = signal.Signals(sig).name
    assert status.startswith(f"sweep interrupted by {name}: ") and " of 6 jobs complete" in status, status
    assert " in flight stopped (they run again)" in status and f"resume with: {sys.executable} -m runners.sweep " in status  # as typed
    assert wait_gone(marker) == []  # actors, Ray's own processes (its agents too) and the model server
    done = len(Ledger(sdir).entries())
    assert 2 <= done < 6

    resume = shlex.split(status.split("resume with: ", 1)[1])
    assert resume[:3] == [sys.executable, "-m", "runners.sweep"]
    assert resume[3:] == args  # what was typed, in its order; not the root's `method=dci` the command line added (issue 38)
    again = subprocess.run([sys.executable, *resume[1:]], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    ids = [e["job_id"] for e in Ledger(sdir).entries()]
    assert len(ids) == len(set(ids)) == 6  # each job once: none lost, none run twice
    assert wait_gone(marker) == []
