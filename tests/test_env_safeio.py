"""Host-side opens inside the workspace never follow a symlink and never block on a FIFO."""

import json
import os
import subprocess
import sys
import threading

import pytest

from envs.safeio import UnsafePath, lstat_inside, open_regular, read_regular, walk_regular


def _ws(tmp_path):
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "a.txt").write_text("alpha\n")
    (tmp_path / "secret.txt").write_text("host secret\n")
    return ws


def test_regular_file_is_read(tmp_path):
    ws = _ws(tmp_path)
    assert read_regular(ws, "d/a.txt") == b"alpha\n"
    assert read_regular(ws, "d/a.txt", limit=2) == b"al"
    with open_regular(ws, "d/a.txt") as f:
        assert f.read() == b"alpha\n"


def test_symlinked_file_and_folder_are_refused(tmp_path):
    ws = _ws(tmp_path)
    os.symlink(tmp_path / "secret.txt", ws / "link.txt")
    os.symlink(tmp_path, ws / "up")
    assert read_regular(ws, "link.txt") is None
    assert read_regular(ws, "up/secret.txt") is None
    with pytest.raises(UnsafePath):
        open_regular(ws, "up/secret.txt")


def test_traversal_is_refused(tmp_path):
    ws = _ws(tmp_path)
    assert read_regular(ws, "../secret.txt") is None
    assert read_regular(ws, str(tmp_path / "secret.txt")) is None


def test_fifo_does_not_block(tmp_path):
    ws = _ws(tmp_path)
    os.mkfifo(ws / "f")
    out = []
    t = threading.Thread(target=lambda: out.append(read_regular(ws, "f")), daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "opening a FIFO blocked"
    assert out == [None]


def test_walk_yields_only_regular_files_and_skips_links(tmp_path):
    ws = _ws(tmp_path)
    os.symlink(tmp_path, ws / "up")
    os.symlink(tmp_path / "secret.txt", ws / "s.txt")
    os.mkfifo(ws / "f")
    (ws / ".runningtab").mkdir()
    (ws / ".runningtab" / "x").write_text("x")
    assert [r for r, _ in walk_regular(ws, skip=frozenset({".runningtab"}))] == ["d/a.txt"]
    assert lstat_inside(ws, "s.txt") is not None and lstat_inside(ws, "up/secret.txt") is None


def test_write_json_replaces_whole_or_not_at_all(tmp_path):
    """The one atomic JSON writer (records, judge cache, the MCP session's tab.json, the probe)."""
    from envs.safeio import write_json

    path = tmp_path / "new" / "rec.json"
    write_json(path, {"a": "é", "when": tmp_path})  # folders made; non-JSON values as text
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": "é", "when": str(tmp_path)}
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError):
        write_json(path, {"loop": loop})
    assert json.loads(path.read_text(encoding="utf-8"))["a"] == "é"  # the old file is intact
    assert os.listdir(path.parent) == ["rec.json"]  # no temp file left behind


def test_write_json_is_spelled_once():
    import eval.judges.client
    import runners.core.record_files
    from envs import safeio

    assert runners.core.record_files.write_json is safeio.write_json
    assert not [n for n, v in vars(eval.judges.client).items() if callable(v) and "write" in n and v is not safeio.write_json]


def test_the_tab_imports_nothing_of_the_runner():
    code = "import sys, tab.mcp.session, tab.tab; print(sorted(m for m in sys.modules if m.split('.')[0] in ('runners', 'eval')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
