"""The job's shell session (envs/shell_session.py): one bubblewrap sandbox per job, each bash call a
child of a supervisor in it. It must behave as a sandbox per call does where the agent could tell
or exploit the difference: nothing a call leaves behind survives it, a timeout or a killed
supervisor costs only that call, and the runner's command files are out of the agent's reach."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem
from tests.helpers.open_files import held_open

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"needs bubblewrap: {bwrap_problem()}")


def bash(env: WorkspaceEnv, command: str, timeout: int | None = None) -> tuple[str, int | None]:
    args = {"command": command, **({"timeout": timeout} if timeout else {})}
    import json

    result = env.execute(ToolCall("c", "bash", json.dumps(args)), 1)
    return result.content, result.meta.get("exit_code")


@pytest.fixture
def env(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    e = WorkspaceEnv(ws, dataclasses.replace(EnvConfig(), sandbox="bwrap"))
    assert e.shell.session is not None
    yield e
    e.close()


def sandbox_pid(env: WorkspaceEnv) -> int:
    assert env.shell.session is not None and env.shell.session.proc is not None
    return env.shell.session.proc.pid


def test_calls_share_one_sandbox_but_nothing_a_call_starts_outlives_it(env: WorkspaceEnv) -> None:
    assert bash(env, "cat a.txt") == ("hello", 0)
    first = sandbox_pid(env)
    out, code = bash(env, "sleep 300 & setsid sleep 301 & (nohup sleep 302 >/dev/null 2>&1 &) ; echo started")
    assert (out, code) == ("started", 0)
    out, _ = bash(env, "ps -e -o comm= | sort | uniq -c")
    assert "sleep" not in out  # killed when the call that started them returned
    assert sandbox_pid(env) == first  # and still the same sandbox


def test_each_call_is_a_fresh_shell_with_bash_as_dollar_zero(env: WorkspaceEnv) -> None:
    bash(env, "export X=1; cd /tmp; f() { :; }")
    assert bash(env, 'echo "[$X] $(pwd) $0"; type f >/dev/null 2>&1 || echo no-f') == (
        f"[] {env.agent_root} /bin/bash\nno-f",
        0,
    )
    assert bash(env, "exit 7")[1] == 7
    assert bash(env, "kill -9 $$")[1] == 137


def test_a_timeout_ends_the_sandbox_and_the_next_call_gets_a_new_one(env: WorkspaceEnv) -> None:
    bash(env, "true")
    first = sandbox_pid(env)
    started = time.monotonic()
    out, code = bash(env, "echo before; sleep 60", timeout=1)
    assert time.monotonic() - started < 10 and code is None and out.startswith("before")
    assert "timed out" in out
    assert bash(env, "cat a.txt") == ("hello", 0)
    assert sandbox_pid(env) != first


def test_commands_cannot_kill_the_supervisor(env: WorkspaceEnv) -> None:
    """It is the sandbox's PID 1: signals from inside do not reach it; `kill -9 -1` ends only the call."""
    bash(env, "true")
    first = sandbox_pid(env)
    assert bash(env, "kill -9 $PPID 1; echo still") == ("still", 0)
    bash(env, "sleep 30 & kill -9 -1")  # everything it can reach
    assert bash(env, "echo back") == ("back", 0)
    assert sandbox_pid(env) == first


def test_the_runners_command_files_are_read_only_to_the_agent(env: WorkspaceEnv) -> None:
    commands = env.shell.session.commands_dir
    out, code = bash(env, f"echo 'rm -rf /' > {commands}/9; touch {commands}/x; ls {commands}")
    assert out.count("Read-only file system") == 2, out
    assert not os.path.exists(f"{commands}/9") and not os.path.exists(f"{commands}/x")
    assert bash(env, "echo next") == ("next", 0)  # the next command is still the one the runner sent


def test_close_ends_the_sandbox(env: WorkspaceEnv) -> None:
    bash(env, "true")
    pid = sandbox_pid(env)
    env.close()
    time.sleep(0.2)
    assert not os.path.exists(f"/proc/{pid}") or "zombie" in Path(f"/proc/{pid}/status").read_text()


def _extras_env(tmp_path: Path, extras, **cfg) -> WorkspaceEnv:
    ws = tmp_path / "ws"
    ws.mkdir()
    return WorkspaceEnv(ws, dataclasses.replace(EnvConfig(), sandbox="bwrap", **cfg), [], extras)


def test_a_service_runs_beside_the_shell_and_comes_back_when_killed(tmp_path: Path) -> None:
    """A task's service (a server on the sandbox's loopback, under a host name of its own) survives
    the killing after each call, and a call that killed it gets it started again before the next."""
    import sys

    from envs.sandbox_extras import SandboxExtras, Service

    service = Service("http", (sys.executable, "-m", "http.server", "8099", "--bind", "127.0.0.1", "--directory", "{workspace}"), 8099)
    env = _extras_env(tmp_path, SandboxExtras(hosts=("files.example",), service=service))
    try:
        bash(env, "echo served > page.txt")
        assert bash(env, "curl -s http://files.example:8099/page.txt") == ("served", 0)
        assert bash(env, "curl -s http://files.example:8099/page.txt") == ("served", 0)  # still there after the reaping
        bash(env, "pkill -f http.server; sleep 0.3")
        assert bash(env, "curl -s http://files.example:8099/page.txt") == ("served", 0)
        assert bash(env, "curl -s -m 2 http://example.com/ >/dev/null; echo $?")[0] != "0"  # still no network beyond loopback
    finally:
        env.close()


def test_a_process_just_started_is_never_taken_for_gone() -> None:
    """The supervisor reads a process's state from /proc; a read the shell's signals cut short left it
    empty, and a service just started was taken for dead (in a CI run its job's first command then
    met a dead server: 0/3), or the reaping skipped a live process (4-5 in 3,000 here, before)."""
    import subprocess

    from envs.safeio import remove_tree
    from envs.sandbox import bwrap_argv, make_scratch
    from envs.shell_session import PROC_STATE

    loop = PROC_STATE + """
    gone=0
    for n in $(seq 1 3000); do
      /bin/sh -c 'exec sleep 5' </dev/null >/dev/null 2>&1 &
      spid=$!
      disown "$spid"
      state "$spid"
      case $v in Z*|"") gone=$((gone+1)) ;; esac
      kill -9 "$spid"
    done
    state "$spid"; sleep 0.2; state "$spid"
    echo "gone=$gone last=${v:-none}"
    """
    scratch = make_scratch()
    try:
        argv = [*bwrap_argv(scratch, scratch, []), "--as-pid-1", "/bin/bash", "-c", loop]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout.split()
    finally:
        remove_tree(scratch)
    assert out[0] == "gone=0" and out[1] in ("last=none", "last=Z"), out


def test_a_service_not_listening_at_the_jobs_first_command_is_an_environment_error(tmp_path: Path) -> None:
    """The task's server is started before anything of the agent's runs: when it is not listening by
    the end of its wait, every call reached a dead server and the job was scored as the agent's
    (a CI run's TheAgentCompany reference: its upload failed, 0/3). It is the environment's error
    (the job is retried, never scored), as the evaluator's own file server is."""
    import sys

    from envs.sandbox_extras import SandboxExtras, Service

    service = Service("late", (sys.executable, "-c", "import time; time.sleep(60)"), 8097, start_s=0.3)
    env = _extras_env(tmp_path, SandboxExtras(service=service))
    try:
        result = env.execute(ToolCall("c", "bash", '{"command": "echo hi"}'), 1)
        assert result.stop == "env_error" and result.is_error, result.content
        assert "(late) was not listening on port 8097 0.3 s after it was started" in result.content
    finally:
        env.close()


def test_a_service_not_listening_after_the_agent_wrote_is_not_the_environments_error(tmp_path: Path) -> None:
    """The agent's `write` runs before its first bash call, in the workspace the service reads: a
    server that does not listen then may be the agent's doing, and an environment error would take
    its job out of the tables (and run it again). The call says so instead."""
    from envs.sandbox_extras import SandboxExtras, Service

    service = Service("picky", ("/bin/sh", "-c", "[ -e broken ] && exit 3; exec sleep 60"), 8094, start_s=0.3)
    env = _extras_env(tmp_path, SandboxExtras(service=service), write_tool=True)
    try:
        wrote = env.execute(ToolCall("w", "write", '{"path": "broken", "content": "x"}'), 1)
        assert not wrote.is_error, wrote.content
        result = env.execute(ToolCall("c", "bash", '{"command": "echo hi"}'), 2)
        assert result.stop is None and "(picky) was not listening on port 8094" in result.content, result.content
    finally:
        env.close()


def test_a_service_the_agent_stopped_is_said_in_its_calls_not_an_error(tmp_path: Path) -> None:
    """Once the agent's commands have run, a server that does not come back (the agent may have
    stopped it) is the agent's doing: its call says so and goes on."""
    import sys

    from envs.sandbox_extras import SandboxExtras, Service

    serve = f"[ -e no-server ] && exit 3; exec {sys.executable} -m http.server 8096 --bind 127.0.0.1"
    service = Service("http", ("/bin/sh", "-c", serve), 8096, start_s=30)
    env = _extras_env(tmp_path, SandboxExtras(service=service))
    try:
        assert bash(env, "echo page > p.txt; curl -s http://127.0.0.1:8096/p.txt") == ("page", 0)
        bash(env, "touch no-server; pkill -f http.server; sleep 0.3")
        out, code = bash(env, "echo still-here")
        assert code == 0 and out.startswith("still-here") and "not listening on port 8096" in out, out
        bash(env, "rm no-server")
        assert bash(env, "curl -s http://127.0.0.1:8096/p.txt") == ("page", 0)
    finally:
        env.close()


@pytest.mark.parametrize("session", [True, False])
def test_a_bound_folder_swapped_for_a_link_never_mounts_what_it_points_to(tmp_path: Path, session: bool) -> None:
    """Bubblewrap follows links in a bind's source: a `.image/data` the agent made a link to / would
    bind the host's root at /data when the next sandbox starts. It is made a folder again first."""
    from envs.sandbox_extras import SandboxExtras

    env = _extras_env(tmp_path, SandboxExtras(binds=((".image/data", "/data"),)), shell_session=session)
    try:
        bash(env, "echo mine > /data/a.txt")
        assert (env.root and Path(env.root, ".image", "data", "a.txt").read_text()) == "mine\n"
        bash(env, "rm -rf .image/data && ln -s / .image/data")
        if session:
            bash(env, "sleep 5", timeout=1)  # a timeout ends the sandbox: the next call starts a new one
        out, _ = bash(env, "ls /data; ls -ld .image/data")
        assert "etc" not in out.split() and "usr" not in out.split() and out.startswith("drwx")
    finally:
        env.close()



def test_a_command_runs_when_the_process_holds_over_1024_files(tmp_path: Path) -> None:
    """Seen at 1,024 in flight: every bash call failed with `filedescriptor out of range in select()`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with held_open():
        e = WorkspaceEnv(ws, dataclasses.replace(EnvConfig(), sandbox="bwrap"))
        try:
            out, code = bash(e, "echo hi; sleep 0.2; echo there")
            assert code == 0 and out.split() == ["hi", "there"], out
            assert e.shell.session is not None and e.shell.session._status > 1024
        finally:
            e.close()
