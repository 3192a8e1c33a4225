"""The shell session without bubblewrap (envs/reaper.py's session mode): one reaper per job, each
bash call its child. It must keep every guarantee of a reaper per call: nothing a call starts
outlives it (`setsid`, double forks), a timeout ends the call and what it left, the next call
works, each call is a fresh shell in the workspace with the clean environment."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall


def bash(env: WorkspaceEnv, command: str, timeout: int | None = None) -> tuple[str, int | None]:
    args = {"command": command, **({"timeout": timeout} if timeout else {})}
    result = env.execute(ToolCall("c", "bash", json.dumps(args)), 1)
    return result.content, result.meta.get("exit_code")


def live(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def sleepers(mark: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() in Path(f"/proc/{pid}/cmdline").read_bytes() and live(int(pid)):
                found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.fixture
def env(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    yield e
    e.close()


def test_one_reaper_serves_every_call_of_the_job(env: WorkspaceEnv) -> None:
    parents = set()
    for _ in range(5):
        out, code = bash(env, "echo $PPID; tr '\\0' ' ' < /proc/$PPID/cmdline")
        assert code == 0, out
        pid, cmdline = out.split("\n", 1)
        assert "reaper.py" in cmdline, cmdline
        parents.add(int(pid))
    assert len(parents) == 1, parents  # one reaper process for the 5 calls, not one per call
    (reaper,) = parents
    env.close()
    time.sleep(0.2)
    assert not live(reaper)


def test_what_a_call_leaves_dies_when_it_returns_and_the_reaper_stays(env: WorkspaceEnv) -> None:
    mark = f"{os.getpid() % 1000}81"
    out, code = bash(env, f"setsid sleep {mark}1 >/dev/null 2>&1 & (setsid -f sleep {mark}2 &); "
                          f"(nohup sleep {mark}3 >/dev/null 2>&1 &); echo $PPID")
    assert code == 0, out
    assert not sleepers(mark)
    assert bash(env, "echo $PPID")[0] == out  # the same reaper


def test_each_call_is_a_fresh_shell_in_the_workspace(env: WorkspaceEnv) -> None:
    bash(env, "export X=1; cd /; f() { :; }")
    assert bash(env, 'echo "[$X] $(pwd) $0"; type f >/dev/null 2>&1 || echo no-f') == (
        f"[] {env.shell.workspace} /bin/bash\nno-f", 0)
    assert bash(env, "cat a.txt") == ("hello", 0)
    assert bash(env, "exit 7")[1] == 7
    assert bash(env, "kill -9 $$")[1] == 137


def test_a_timeout_kills_the_call_and_its_setsid_leftovers_and_the_next_call_runs(env: WorkspaceEnv) -> None:
    mark = f"{os.getpid() % 1000}82"
    started = time.monotonic()
    out, code = bash(env, f"setsid sleep {mark}1 >/dev/null 2>&1 & echo before; sleep 60", timeout=1)
    assert time.monotonic() - started < 10 and out.startswith("before") and "timed out" in out, (out, code)
    assert not sleepers(mark)
    assert bash(env, "cat a.txt") == ("hello", 0)


def test_a_killed_reaper_costs_only_that_call(env: WorkspaceEnv) -> None:
    bash(env, "true")
    out, code = bash(env, "kill -9 $PPID; sleep 1; echo unreached")
    assert code != 0 and "unreached" not in out, out
    assert bash(env, "echo back") == ("back", 0)


def test_without_sessions_each_call_has_its_own_reaper(tmp_path: Path) -> None:
    e = WorkspaceEnv(tmp_path, EnvConfig(sandbox="none", shell_session=False))
    try:
        parents = {bash(e, "echo $PPID")[0] for _ in range(3)}
        assert len(parents) == 3, parents
    finally:
        e.close()


@pytest.mark.parametrize("session", [True, False])
def test_commands_get_default_signal_dispositions_not_pythons(tmp_path: Path, session: bool) -> None:
    """Python ignores SIGPIPE and SIGXFSZ; the reaper must not pass that on (`yes | head` would
    see EPIPE instead of ending, a file past its size cap an error instead of the signal)."""
    e = WorkspaceEnv(tmp_path, EnvConfig(sandbox="none", shell_session=session))
    try:
        out, code = bash(e, "grep SigIgn /proc/$$/status")
        assert code == 0 and int(out.split()[1], 16) & ((1 << 12) | (1 << 24)) == 0, out
        assert bash(e, "yes | head -c 3; echo \" ${PIPESTATUS[0]}\"") == ("y\ny 141", 0)
    finally:
        e.close()
