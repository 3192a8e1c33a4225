"""Host-side opens inside the workspace never follow a symlink and never block on a FIFO."""

import os
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
