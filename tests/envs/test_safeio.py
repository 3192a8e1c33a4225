"""Host-side opens inside the workspace never follow a symlink and never block on a FIFO."""

import json
import os
import subprocess
import sys
import threading

import pytest

from envs.safeio import (
    UnsafePath,
    lstat_inside,
    open_regular,
    read_regular,
    walk_regular,
)


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


def test_the_walk_and_the_removal_take_any_depth(tmp_path):
    """Python's own walks recurse and stopped at ~1,000 levels (issue 25): these never do."""
    from envs.safeio import Walk, remove_tree

    here = tmp_path / "t"
    here.mkdir()
    fd = os.open(here, os.O_RDONLY)
    for _ in range(3000):  # deeper than PATH_MAX allows naming from the top: made with dir fds
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(os.open("x.txt", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)
    assert [r for r, _ in walk_regular(here)] == ["d/" * 3000 + "x.txt"]
    walk = Walk(here, enter=lambda rel, st: rel.count("/") < 9)
    assert len(list(walk)) == 10 and not walk.truncated
    remove_tree(here, check=True)
    assert not here.exists()


def test_a_walk_reads_at_most_max_names_of_a_folder(tmp_path):
    from envs.safeio import Walk

    for i in range(50):
        (tmp_path / f"f{i}").write_text("x")
    walk = Walk(tmp_path, max_names=10)
    assert len(list(walk)) == 10 and walk.truncated


def test_a_sparse_copy_keeps_the_holes(tmp_path):
    from envs.safeio import copy_sparse

    src = tmp_path / "sparse"
    with open(src, "wb") as f:
        f.truncate(64 * 2**20)
        f.seek(32 * 2**20)
        f.write(b"middle")
    with open(src, "rb") as f, open(tmp_path / "copy", "wb") as g:
        copy_sparse(f, g, os.fstat(f.fileno()).st_size)
    copy = tmp_path / "copy"
    assert copy.stat().st_size == 64 * 2**20 and copy.stat().st_blocks * 512 <= 1 << 20
    with open(copy, "rb") as g:
        g.seek(32 * 2**20 - 2)
        assert g.read(8) == b"\0\0middle"


def test_names_that_are_not_utf8_round_trip_through_json_and_show_escaped(tmp_path):
    from envs.names import shown
    from envs.safeio import write_json

    name = os.fsdecode(b"out/bad\xff\xfe.md")
    write_json(tmp_path / "r.json", {"files": [name, "caf\u00e9"], "model": "\ud800"})
    raw = (tmp_path / "r.json").read_bytes()
    raw.decode("utf-8")  # valid UTF-8
    doc = json.loads(raw)
    assert os.fsencode(doc["files"][0]) == b"out/bad\xff\xfe.md" and doc["files"][1] == "caf\u00e9"
    assert doc["model"] == "\ud800" and b"caf\xc3\xa9" in raw  # other text stays as it is
    assert shown(name) == "out/bad\\xff\\xfe.md" and shown("\ud800") == "\\ud800" and shown("caf\u00e9") == "caf\u00e9"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_what_the_runner_writes_takes_the_umask_and_never_more_than_0644(tmp_path, umask):
    from envs.safeio import make_dirs, open_append, write_json

    old = os.umask(umask)
    try:
        write_json(tmp_path / "a" / "b" / "r.json", {})
        with open_append(tmp_path / "a" / "t.jsonl") as f:
            f.write(b"{}\n")
        make_dirs(tmp_path / "c" / "d")
    finally:
        os.umask(old)
    modes = {p.relative_to(tmp_path).as_posix(): p.stat().st_mode & 0o7777 for p in tmp_path.rglob("*")}
    want = {p: (0o755 if (tmp_path / p).is_dir() else 0o644) & ~umask for p in modes}
    assert modes == want  # before: r.json 0600 (mkstemp), folders 0777 & ~umask


def test_a_small_tree_is_removed_without_starting_rm_and_no_link_is_followed(tmp_path):
    """A job's folders are removed in the runner's process (starting rm cost ~2 ms of CPU per folder);
    a link inside, to a folder or a file outside, goes as a name: what it points to stays."""
    import resource

    from envs.safeio import remove_tree

    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "keep.txt").write_text("kept")
    tree = tmp_path / "tree"
    for d in ("a/b/c", "d"):
        (tree / d).mkdir(parents=True)
        for i in range(5):
            (tree / d / f"f{i}.txt").write_text("x")
    (tree / "a" / "to-dir").symlink_to(outside)
    (tree / "a" / "b" / "to-file").symlink_to(outside / "keep.txt")
    os.mkfifo(tree / "fifo")
    link = tmp_path / "top-link"
    link.symlink_to(outside)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    remove_tree(tree, check=True)
    remove_tree(link, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert not tree.exists() and not os.path.lexists(link)
    assert (outside / "keep.txt").read_text() == "kept" and (outside / "sub").is_dir()
    assert (after.ru_minflt, after.ru_utime, after.ru_stime) == (before.ru_minflt, before.ru_utime, before.ru_stime)


def test_a_tree_deeper_than_the_in_process_removal_goes_is_removed_whole(tmp_path):
    """Past MAX_DEPTH the removal in the runner's process stops part-way, and rm removes the rest."""
    from envs.safeio import remove_tree
    from envs.tree_removal import MAX_DEPTH

    tree = tmp_path / "tree"
    deep = tree.joinpath(*["d"] * (MAX_DEPTH + 5))
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    for i in range(20):
        (tree / f"top{i}.txt").write_text("x")
    remove_tree(tree, check=True)
    assert not tree.exists()
