"""The task's service started beside a program the environment runs (envs/program.py: a production harness): the harness
runs only once the service listens; a service that does not listen ends the script with the
environment's error, so a dead server is never scored as the agent's (the shell session's rule)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from envs.program import SERVICE_DOWN_EXIT, service_start
from envs.sandbox_extras import Service


def _script(service: Service, tmp_path: Path) -> str:
    """The script's start, its log in the test's folder (inside the sandbox it is the agent's /tmp)."""
    start = service_start(service, str(tmp_path)).replace("/tmp/.runningtab-service.log", str(tmp_path / "service.log"))
    return start + "echo harness-started\n"


def test_a_service_that_never_listens_stops_the_script_before_the_harness(tmp_path: Path) -> None:
    service = Service("late", ("/bin/sh", "-c", "exit 3"), 9, start_s=0.3)
    p = subprocess.run(["bash", "-c", _script(service, tmp_path)], capture_output=True, text=True, timeout=60)
    assert p.returncode == SERVICE_DOWN_EXIT and "harness-started" not in p.stdout, (p.stdout, p.stderr)
    assert "service late was not listening on port 9 0.3 s after it was started" in p.stderr


def test_the_harness_starts_once_the_service_listens(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    service = Service("http", (sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"), port, start_s=60)
    script = _script(service, tmp_path) + "kill %1\n"
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=90, cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == "harness-started", (p.stdout, p.stderr)
