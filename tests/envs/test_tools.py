"""The `read` and `bash` tools: Pi's truncation rules and notices, errors, timeouts, big outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from envs.config import EnvConfig
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem

MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}"))]


def call(env: WorkspaceEnv, name: str, turn: int = 1, **args):
    return env.execute(ToolCall(id="c", name=name, arguments=json.dumps(args)), turn)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def env(ws: Path):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="auto"))
    yield e
    e.close()


# ---------------------------------------------------------------- read


def test_read_head_line_limit_and_continuation(env, ws):
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    r = call(env, "read", path="a.txt")
    assert not r.is_error
    body, notice = r.content.split("\n\n")
    assert body.splitlines() == [f"line {i}" for i in range(1, 2001)]
    assert notice == "[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"
    r2 = call(env, "read", path="a.txt", offset=2001)
    assert r2.content.splitlines() == [f"line {i}" for i in range(2001, 3001)]  # the rest fits: no notice


def test_read_byte_limit_keeps_whole_lines(env, ws):
    (ws / "b.txt").write_text("".join(f"{i:04d}" + "x" * 95 + "\n" for i in range(1000)))  # 100 bytes a line
    r = call(env, "read", path="b.txt")
    body, notice = r.content.split("\n\n")
    lines = body.split("\n")
    assert len(lines) == 512 and len(body.encode()) <= 51200  # 512 lines * 99 bytes + 511 newlines
    assert all(len(line) == 99 for line in lines)
    assert notice == "[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]"


def test_read_offset_limit_notice_and_past_end(env, ws):
    (ws / "c.txt").write_text("\n".join(f"r{i}" for i in range(1, 101)))  # no trailing newline
    r = call(env, "read", path="c.txt", offset=10, limit=3)
    assert r.content == "r10\nr11\nr12\n\n[88 more lines in file. Use offset=13 to continue.]"
    assert call(env, "read", path="c.txt", offset=100).content == "r100"
    past = call(env, "read", path="c.txt", offset=101)
    assert past.is_error and past.content == "Offset 101 is beyond end of file (100 lines total)"
    assert call(env, "read", path="c.txt", limit=0).is_error


def test_read_single_huge_line_shows_its_start_and_says_how_to_get_more(env, ws):
    (ws / "one.txt").write_text("é" * 100_000 + "\nsecond line\n")  # 200 KB first line (2-byte chars)
    r = call(env, "read", path="one.txt")
    assert not r.is_error
    shown, notice = r.content.split("\n\n")
    assert set(shown) == {"é"} and len(shown.encode()) == 51200  # cut on a character boundary
    assert "Line 1 is 195.3KB, over the 50.0KB limit" in notice
    assert "sed -n '1p' one.txt | tail -c +51201 | head -c 51200" in notice
    assert "Use offset=2 to continue" in notice
    assert call(env, "read", path="one.txt", offset=2).content == "second line"


def test_read_empty_file_and_small_configured_limits(ws):
    (ws / "empty.txt").write_text("")
    (ws / "five.txt").write_text("1\n2\n3\n4\n5\n6\n7\n")
    e = WorkspaceEnv(ws, EnvConfig(read_max_lines=5, sandbox="none"))
    assert call(e, "read", path="empty.txt").content == "[The file is empty.]"
    assert call(e, "read", path="five.txt").content == "1\n2\n3\n4\n5\n\n[Showing lines 1-5 of 7. Use offset=6 to continue.]"
    e.close()


def test_read_refuses_binary_files_with_advice(env, ws):
    from docx import Document
    from reportlab.pdfgen import canvas

    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    doc = Document()
    doc.add_paragraph("Travel policy")
    doc.save(ws / "policy.docx")
    c = canvas.Canvas(str(ws / "report.pdf"))
    c.drawString(72, 720, "Quarterly report")
    c.save()
    cases = {"blob.bin": "binary file", "pic.png": "image (PNG)", "policy.docx": "docx.Document",
             "report.pdf": "pdftotext"}
    for name, expected in cases.items():
        r = call(env, "read", path=name)
        assert r.is_error and expected in r.content, (name, r.content)


def test_read_missing_file_and_directory(env, ws):
    (ws / "d").mkdir()
    assert "File not found: nope.txt" in call(env, "read", path="nope.txt").content
    assert "is a directory" in call(env, "read", path="d").content


# ---------------------------------------------------------------- bash


def test_bash_tail_line_limit_saves_full_output_readable_by_read(env, ws):
    r = call(env, "bash", command="seq 1 3000")
    body, notice = r.content.split("\n\n")
    assert body.splitlines() == [str(i) for i in range(1001, 3001)]
    saved = ws / r.meta["full_output"]
    seen_as = env.shell.view.to_agent(str(saved))  # where the agent finds it (a fixed path under bubblewrap)
    assert notice == f"[Showing lines 1001-3000 of 3000. Full output: {seen_as}]"
    assert saved.read_text().splitlines() == [str(i) for i in range(1, 3001)]
    head = call(env, "read", path=seen_as, limit=2)
    assert head.content.startswith("1\n2\n\n[2998 more lines")


def test_bash_tail_byte_limit(env):
    r = call(env, "bash", command="for i in $(seq 1000 1999); do printf '%s%095d\\n' $i 0; done")  # 100 B lines
    body, notice = r.content.split("\n\n")
    lines = body.split("\n")
    assert len(lines) == 512 and lines[-1].startswith("1999") and lines[0].startswith("1488")
    assert notice.startswith("[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: ")


def test_bash_single_long_last_line(env):
    r = call(env, "bash", command="head -c 100000 /dev/zero | tr '\\0' a; echo")
    body, notice = r.content.split("\n\n")
    assert body == "a" * 51200
    assert notice.startswith("[Showing last 50.0KB of line 1 (line is 97.7KB). Full output: ")


def test_bash_short_output_no_file_and_exit_codes(env, ws):
    r = call(env, "bash", command="echo out; echo err >&2")
    assert r.content == "out\nerr" and not r.is_error and r.meta["full_output"] is None
    assert not (ws / ".runningtab").exists()  # short outputs never touch the disk
    r = call(env, "bash", command="echo partial; exit 3")
    assert r.is_error and r.content == "partial\n\nCommand exited with code 3"
    assert call(env, "bash", command="true").content == "(no output)"


def _pids_with(marker: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    pids.append(int(d))
            except OSError:
                pass
    return pids


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for init to reap it), after a short grace."""
    for _ in range(20):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in "ZX":
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("mode", MODES)
def test_bash_timeout_kills_the_command_and_its_children(ws, mode):
    e = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    marker = f"31{os.getpid() % 1000}.{len(mode)}7"  # a unique sleep duration to find the child by
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.extend(_pids_with(f"sleep\x00{marker}"))
            time.sleep(0.05)

    t = threading.Thread(target=watch)
    t.start()
    try:
        r = call(e, "bash", command=f"echo started; sleep {marker} & sleep {marker}; echo never", timeout=2)
    finally:
        done.set()
        t.join()
        e.close()
    assert r.is_error and r.meta["timed_out"]
    assert r.content == "started\n\nCommand timed out after 2 seconds; it and all the processes it started were killed."
    assert seen, "the sleeps never showed up in /proc"
    time.sleep(0.1)
    assert _pids_with(f"sleep\x00{marker}") == []


def test_bash_background_children_end_with_the_command(ws):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    marker = f"27{os.getpid() % 1000}.3"
    r = call(e, "bash", command=f"sleep {marker} & echo $!")
    e.close()
    assert not r.is_error
    assert not _alive(int(r.content))


def test_bash_timeout_above_max_is_clamped(ws):
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none", bash_timeout=1, bash_timeout_max=2))
    r = call(e, "bash", command="sleep 5", timeout=60)
    e.close()
    assert r.content.startswith("[timeout 60 s is above the maximum; used 2 s]")
    assert "timed out after 2 seconds" in r.content


@pytest.mark.slow
def test_bash_printing_1gb_keeps_memory_flat(tmp_path):
    """Run in a child so the measurement is this feature's peak RSS, not the test session's."""
    script = tmp_path / "big.py"
    script.write_text(
        "import json, resource, sys, tempfile\n"
        "from envs.config import EnvConfig\nfrom envs.environment import WorkspaceEnv\nfrom envs.protocol import ToolCall\n"
        "env = WorkspaceEnv(tempfile.mkdtemp(dir=sys.argv[1]), EnvConfig(bash_output_max_bytes=4 << 20))\n"
        "env.execute(ToolCall('0', 'bash', json.dumps({'command': 'seq 1 100000'})), 1)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = env.execute(ToolCall('1', 'bash', json.dumps({'command': 'yes 0123456789abcdefghi | head -c 1000000000'})), 2)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'grew_kb': after - before, 'meta': r.meta, 'tail': r.content[-400:]}))\n"
    )
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["meta"]["output_bytes"] == 1_000_000_000
    assert out["grew_kb"] < 30_000, out  # the 1 GB never sat in memory
    assert "[Showing lines 49998001-50000000 of 50000000." in out["tail"]
    assert "(the saved file holds only the first 4.0MB of 953.7MB)" in out["tail"]


# ---------------------------------------------------------------- optional write/edit


def test_write_and_edit_tools_are_opt_in_and_confined(ws):
    off = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
    assert [t["function"]["name"] for t in off.tools()] == ["read", "bash"]
    off.close()
    e = WorkspaceEnv(ws, EnvConfig(sandbox="none", write_tool=True))
    assert not call(e, "write", path="out/r.md", content="alpha beta\n").is_error
    assert (ws / "out/r.md").read_text() == "alpha beta\n"
    assert not call(e, "edit", path="out/r.md", old_text="beta", new_text="gamma").is_error
    assert (ws / "out/r.md").read_text() == "alpha gamma\n"
    assert "Could not find" in call(e, "edit", path="out/r.md", old_text="zzz", new_text="y").content
    assert call(e, "write", path="../escape.txt", content="x").is_error
    assert not (ws.parent / "escape.txt").exists()
    e.close()
