"""Issue 48 (3): nothing the agent runs reaches the shell session's supervisor, its pipes or the
service's readiness. Served TheAgentCompany's first command `printf '0 0\\n' > /proc/1/fd/1` wrote a
forged status line: the runner read "the server was not listening before anything of the agent's
ran" and ended the job `env_error` while the server was up, and every later exit code was shifted
by one. Each attack here is the job's first command in a sandbox with a real server beside it; the
calls after it must get their own exit codes, the server its answers, and the job no error."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall, ToolResult
from envs.sandbox import bwrap_problem
from envs.sandbox_extras import SandboxExtras, Service

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"needs bubblewrap: {bwrap_problem()}")
PORT = 8093
SERVER = Service("http", (sys.executable, "-m", "http.server", str(PORT), "--bind", "127.0.0.1", "--directory", "{workspace}"), PORT)
PY = "python3 -c"
ATTACKS = {
    "forged status line": "printf '0 0\\n' > /proc/1/fd/1",
    "forged lines through $PPID": "printf '0 1\\n5 1\\n' > /proc/$PPID/fd/1",
    "a command number injected": "echo 9 > /proc/1/fd/0",
    "the next command number stolen": "(exec cat /proc/1/fd/0 > /tmp/stolen &); sleep 0.3",
    "its descriptors reopened": "exec 3</proc/1/fd/1 4>/proc/1/fd/0 5</proc/1/fd/2",
    "ptrace": f"{PY} 'import ctypes,sys; c=ctypes.CDLL(None,use_errno=True); sys.exit(c.ptrace(16,1,0,0)==0)'",
    "its memory opened for writing": f"{PY} 'open(\"/proc/1/mem\",\"wb\")'",
    "its status pipe taken by pidfd_getfd": f"{PY} 'import ctypes,os; c=ctypes.CDLL(None); fd=c.syscall(438,os.pidfd_open(1),1,0); "
                                            "fd >= 0 and os.write(fd, b\"0 0\\n\")'",
    "signals": "for s in KILL TERM INT HUP QUIT STOP USR1 USR2 PIPE ALRM SEGV; do kill -$s 1; done; kill -9 -1",
    "its own descriptors closed": "exec 0<&- 1>&- 2>&-; sleep 0.1",
}


def bash(env: WorkspaceEnv, command: str, turn: int = 1) -> ToolResult:
    return env.execute(ToolCall("c", "bash", json.dumps({"command": command})), turn)


def served(tmp_path: Path, service: Service = SERVER) -> WorkspaceEnv:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "page.txt").write_text("served\n")
    return WorkspaceEnv(ws, dataclasses.replace(EnvConfig(), sandbox="bwrap"), [], SandboxExtras(service=service))


def sandbox_pid(env: WorkspaceEnv) -> int:
    assert env.shell.session is not None and env.shell.session.proc is not None
    return env.shell.session.proc.pid


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_no_first_command_ends_the_job_or_shifts_the_exit_codes_after_it(tmp_path: Path, attack: str) -> None:
    env = served(tmp_path)
    try:
        first = bash(env, ATTACKS[attack])
        assert first.stop is None and "not listening" not in first.content, first.content
        launcher = sandbox_pid(env)
        for turn, code in enumerate((3, 0, 4, 0), start=2):
            result = bash(env, f"exit {code}", turn)
            assert (result.meta["exit_code"], result.stop) == (code, None), (attack, code, result.content)
        got = bash(env, f"curl -s http://127.0.0.1:{PORT}/page.txt; cat /tmp/stolen 2>/dev/null || true", 6)
        assert (got.content, got.meta["exit_code"], got.stop) == ("served", 0, None)
        assert sandbox_pid(env) == launcher  # the same sandbox: its supervisor was never stopped
    finally:
        env.close()


def test_the_supervisor_is_out_of_reach_and_says_why(tmp_path: Path) -> None:
    """Not dumpable (it runs an execute-only copy of sh): its descriptors, memory and tracing need
    CAP_SYS_PTRACE, which no process of the sandbox has. PID 1 catching only SIGCHLD (which only
    wakes its wait): a signal from inside that it does not catch never arrives, so a command's own
    exit code is its own too (`kill -INT 1` cut its wait short: 130)."""
    env = served(tmp_path)
    try:
        out = bash(env, "ls /proc/1/fd/1; cat /proc/1/environ; cat /proc/1/exe > /dev/null; "
                        "grep -E '^(CapEff|SigCgt)' /proc/1/status").content
        assert out.count("Permission denied") == 3, out
        assert "CapEff:\t0000000000000000" in out and "SigCgt:\t0000000000010000" in out, out
        result = bash(env, "for s in INT QUIT CHLD TERM HUP USR1; do kill -$s 1; done; sleep 0.2; exit 8", 2)
        assert result.meta["exit_code"] == 8, result.content
    finally:
        env.close()


def test_a_service_that_never_listens_ends_the_job_before_its_first_command_runs(tmp_path: Path) -> None:
    """The runner's own wait, from outside the sandbox: the command is never sent, so nothing of the
    agent's has run when the job ends in an environment error."""
    env = served(tmp_path, Service("mute", ("/bin/sh", "-c", "exec sleep 60"), PORT, start_s=0.5))
    try:
        result = bash(env, "touch ran; echo hi")
        assert result.stop == "env_error" and result.meta["exit_code"] is None, result.content
        assert "(mute) was not listening on port 8093 0.5 s after it was started" in result.content
        assert not (tmp_path / "ws" / "ran").exists()
    finally:
        env.close()


def test_a_supervisor_killed_from_outside_costs_that_call_only(tmp_path: Path) -> None:
    """However the supervisor ends during a command (from inside it cannot), that call reports it and
    the job goes on in a new sandbox with its server: never an environment error."""
    env = served(tmp_path)
    try:
        assert bash(env, "true").stop is None
        inside = int(Path(f"/proc/{sandbox_pid(env)}/task/{sandbox_pid(env)}/children").read_text().split()[0])
        result_box: list[ToolResult] = []
        import threading

        call = threading.Thread(target=lambda: result_box.append(bash(env, "sleep 30; echo unreached", 2)))
        call.start()
        time.sleep(1)
        os.kill(inside, signal.SIGKILL)
        call.join(60)
        (result,) = result_box
        assert result.stop is None and "unreached" not in result.content and result.meta["exit_code"] != 0, result.content
        again = bash(env, f"curl -s http://127.0.0.1:{PORT}/page.txt", 3)
        assert (again.content, again.meta["exit_code"], again.stop) == ("served", 0, None)
    finally:
        env.close()
