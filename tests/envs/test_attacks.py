"""Issue 16 (1-5): the agent, driven through `bash` and `read`, attacks the runner and the host.

Each test is an attack that worked before the fix; the host must stay untouched and every call
must end within the job's limits. Bubblewrap tests skip (with the reason) where it cannot run.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.deliverable import copy_deliverable, diff_workspace
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}")
MODES = ["none", pytest.param("bwrap", marks=needs_bwrap)]


def call(env: WorkspaceEnv, name: str, time_left: float | None = None, **args):
    extra = {} if time_left is None else {"time_left": time_left}
    return env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)), 1, **extra)


def bounded(fn, seconds: float, unblock=lambda: None):
    """fn() in a thread; fails (after `unblock()` frees the thread) when it takes longer than `seconds`."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        unblock()
        t.join(5)
        pytest.fail(f"the call hung for more than {seconds} s")
    return out[0]


def alive(marker: str) -> list[int]:
    """Pids of live (not zombie) processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != "Z":
            found.append(int(pid))
    return found


def running(marker: str) -> bool:
    time.sleep(0.3)
    return bool(alive(marker))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("inside\n")
    return root


@pytest.mark.parametrize("mode", MODES)
def test_symlinked_output_file_or_folder_never_redirects_the_runners_write(ws, tmp_path, mode):
    victim = tmp_path / "host-file.txt"
    victim.write_text("original\n")
    victim_dir = tmp_path / "host-dir"
    victim_dir.mkdir()
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    try:
        plant = (f"mkdir -p .runningtab/bash-output && for i in 1 2 3 4; do ln -sf {victim} .runningtab/bash-output/$i.txt; done;"
                 f" ln -sfn {victim_dir} .runningtab/bash-out2; ls -la .runningtab/bash-output >/dev/null")
        call(e, "bash", command=plant)
        r = call(e, "bash", command="seq 1 3000")
        assert victim.read_text() == "original\n" and os.listdir(victim_dir) == []
        full = r.meta["full_output"]
        assert full and not full.startswith(str(ws)), full  # the runner's files live outside the workspace
        seen_as = e.shell.view.to_agent(full)  # where the agent finds it (a fixed path under bubblewrap)
        assert f"Full output: {seen_as}" in r.content
        shown = call(e, "read", path=seen_as, limit=2)
        assert not shown.is_error and shown.content.startswith("1\n2"), shown.content
        assert call(e, "bash", command=f"sed -n 3000p {seen_as}").content == "3000"
        assert call(e, "bash", command=f"echo x > {seen_as}").is_error or mode == "none"
    finally:
        e.close()


def test_fifos_and_special_files_never_hang_host_side_code(ws, tmp_path):
    os.mkfifo(ws / "f")
    os.mkfifo(ws / "run.sh")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none", write_tool=True))

    def unblock() -> None:  # a writer frees a reader stuck in open()
        for name in ("f", "run.sh"):
            try:
                os.close(os.open(ws / name, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    try:
        r = bounded(lambda: call(e, "read", path="f"), 5, unblock)
        assert r.is_error and "not a regular file" in r.content, r.content
        r = bounded(lambda: call(e, "edit", path="run.sh", old_text="a", new_text="b"), 5, unblock)
        assert r.is_error, r.content
        r = bounded(lambda: call(e, "write", path="f", content="x"), 5, unblock)
        assert r.is_error, r.content
        assert call(e, "read", path="/dev/zero").is_error
        diff = bounded(lambda: diff_workspace(None, None, ws), 5, unblock)
        assert diff.changed == ["notes.txt"]
        diff.changed = ["f", "notes.txt"]  # as if the FIFO had been a file at the diff
        (tmp_path / "d").mkdir()
        got = bounded(lambda: copy_deliverable(ws, diff, tmp_path / "d", 10, 1 << 20), 5, unblock)
        assert got.files == ["notes.txt"] and got.left_out == ["f"]
    finally:
        e.close()


def test_write_and_edit_never_follow_a_link_out(ws, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("a\n")
    os.symlink(victim, ws / "l.txt")
    os.symlink(tmp_path, ws / "out")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none", write_tool=True))
    try:
        assert call(e, "write", path="l.txt", content="pwned").is_error
        assert call(e, "write", path="out/victim.txt", content="pwned").is_error
        assert call(e, "edit", path="l.txt", old_text="a", new_text="pwned").is_error
        assert victim.read_text() == "a\n"
        assert not call(e, "write", path="sub/new.txt", content="ok").is_error
        assert (ws / "sub" / "new.txt").read_text() == "ok"
    finally:
        e.close()


def test_the_deliverable_copy_never_follows_a_swapped_folder(ws, tmp_path):
    secret = tmp_path / "host" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("host secret\n")
    (ws / "out").mkdir()
    (ws / "out" / "notes.txt").write_text("deliverable\n")
    diff = diff_workspace(None, None, ws)
    os.rename(ws / "out", ws / "out.old")
    os.symlink(secret.parent, ws / "out")  # swapped between the diff and the copy
    (tmp_path / "d").mkdir()
    got = copy_deliverable(ws, diff, tmp_path / "d", 10, 1 << 20)
    assert got.files == ["notes.txt"] and got.left_out == ["out/notes.txt"]  # judged missing, never the host's file
    assert not (tmp_path / "d" / "out").exists()


@pytest.mark.parametrize("mode", MODES)
def test_processes_left_behind_die_with_the_call(ws, mode):
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    marks = [f"{m}{os.getpid()}{len(mode)}" for m in ("71", "72", "73")]
    try:
        r = call(e, "bash", command=f"setsid sleep {marks[0]} >/dev/null 2>&1 < /dev/null & "
                                    f"nohup sleep {marks[1]} >/dev/null 2>&1 & "
                                    f"(setsid -f sleep {marks[2]} &) ; echo started")
        assert r.content == "started", r.content
        assert not [m for m in marks if running(m)]
    finally:
        e.close()
    assert not [m for m in marks if running(m)]


def test_unsandboxed_shell_holds_no_secret(ws, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-not-leak")
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    try:
        assert e.sandbox_kind == "none"
        r = call(e, "bash", command="env; tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/$$/environ")
        assert "sk-test-should-not-leak" not in r.content and "PATH=" in r.content
    finally:
        e.close()


@needs_bwrap
def test_sandbox_kind_and_preflight(ws, monkeypatch):
    from envs import sandbox

    e = WorkspaceEnv(ws, EnvConfig(sandbox="auto"))
    assert e.sandbox_kind == "bwrap" and e.limits_hit == []
    e.close()
    sandbox.preflight(EnvConfig(sandbox="bwrap"))
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox.bwrap_problem.cache_clear()
    try:
        sandbox.preflight(EnvConfig(sandbox="auto"))
        with pytest.raises(ValueError, match="apt-get install bubblewrap") as err:
            sandbox.preflight(EnvConfig(sandbox="bwrap"))
        assert "\n" not in str(err.value)
    finally:
        sandbox.bwrap_problem.cache_clear()


@needs_bwrap
def test_fork_bomb_is_capped_and_ends_in_time(ws):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap", max_processes=64, bash_timeout=5))
    try:
        start = time.monotonic()
        r = call(e, "bash", command="b() { b | b & }; b; sleep 2; echo done")
        assert time.monotonic() - start < 15, r.content
        assert "processes" in e.limits_hit, (e.limits_hit, r.content[-500:])
        assert call(e, "bash", command="echo alive").content == "alive"
    finally:
        e.close()


@needs_bwrap
def test_memory_hog_is_refused(ws):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap", max_memory_bytes=512 * 2**20))
    try:
        r = call(e, "bash", command="python -c \"b = bytearray(1500 * 2**20); print('allocated')\"")
        assert r.is_error and "allocated" not in r.content, r.content
        assert "memory" in e.limits_hit, e.limits_hit
    finally:
        e.close()


@pytest.mark.parametrize("mode", MODES)
def test_file_size_and_saved_output_are_capped(ws, mode):
    cfg = EnvConfig(sandbox=mode, max_file_bytes=8 * 2**20, bash_output_max_bytes=4 * 2**20,
                    saved_output_max_bytes=6 * 2**20)
    e = WorkspaceEnv(ws, cfg)
    try:
        r = call(e, "bash", command="head -c 20000000 /dev/zero > big.bin")
        assert r.is_error and (ws / "big.bin").stat().st_size <= 8 * 2**20, r.content
        assert "file_size" in e.limits_hit
        sizes = []
        for _ in range(3):  # `yes`: 3 x 20 MB of output, at most 4 MB saved per call and 6 MB per job
            r = call(e, "bash", command="yes | head -c 20000000")
            full = r.meta["full_output"]
            sizes.append(os.path.getsize(full) if full and os.path.exists(full) else 0)
        assert sizes[0] == 4 * 2**20 and sum(sizes) <= 6 * 2**20, sizes
        assert e.limits_hit[:1] == ["file_size"] and "saved_output_bytes" in e.limits_hit
    finally:
        e.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_call_never_outlives_the_job(ws, mode):
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    try:
        start = time.monotonic()
        r = call(e, "bash", time_left=2.0, command="sleep 60; echo never", timeout=900)
        assert time.monotonic() - start < 6
        assert r.is_error and "never" not in r.content
        assert "tool_timeout_clamped" in e.limits_hit
    finally:
        e.close()


def test_the_loop_passes_the_remaining_job_time(ws, tmp_path):
    from runners.agent.loop import run_episode
    from runners.config.runner import AgentConfig
    from runners.models.scripted import ScriptedModel, ScriptedModelConfig

    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 60", "timeout": 900}}]}) + "\n")
    model = ScriptedModel(ScriptedModelConfig(name="scripted", kind="scripted", script=str(script)))
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    try:
        start = time.monotonic()
        res = run_episode(model, e, "go", AgentConfig(time_limit_s=2.0))
        assert time.monotonic() - start < 8 and res.stop_reason == "time_limit"
    finally:
        e.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_command_longer_than_the_argument_limit_runs(ws, mode):
    body = "\n".join(f"line {i:06d} " + "x" * 60 for i in range(2000))  # ~140 KB
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    try:
        r = call(e, "bash", command=f"cat > big.txt <<'EOF'\n{body}\nEOF\nwc -l < big.txt")
        assert not r.is_error and r.content == "2000", r.content[:300]
        assert (ws / "big.txt").read_text() == body + "\n"
        assert call(e, "bash", command="exit 3").meta["exit_code"] == 3
        assert "command not found" in call(e, "bash", command="nosuchcmd_zz").content
    finally:
        e.close()


def test_the_tab_never_opens_a_fifo_it_attributes_output_to(ws):
    from tab.capture.workspace_files import Workspace

    os.mkfifo(ws / "run.sh")
    (ws / "ok.sh").write_text("echo ok\r\n")
    unblock = lambda: os.close(os.open(ws / "run.sh", os.O_WRONLY | os.O_NONBLOCK))  # noqa: E731
    assert bounded(lambda: Workspace(ws).text("run.sh"), 5, unblock) is None
    assert Workspace(ws).text("ok.sh") == "echo ok\n"
