"""Materialized workspaces leave the source untouched; diff_workspace finds what the agent changed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from envs import overlay
from envs.config import EnvConfig
from envs.deliverable import Diff, copy_deliverable, diff_workspace
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem
from envs.workspace import discard_workspace, materialize

BWRAP = pytest.mark.skipif(bwrap_problem() is not None, reason=f"{bwrap_problem()}")
OVERLAY = pytest.mark.skipif(not overlay.can_mount(), reason="this process may not mount overlayfs")
SETUPS = [  # (sandbox, materialize method)
    ("none", "copy"),
    pytest.param("bwrap", "copy", marks=BWRAP),
    pytest.param("none", "overlay", marks=OVERLAY),
    pytest.param("bwrap", "overlay", marks=[BWRAP, OVERLAY]),
]


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file's content hash, mode and mtime."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mode, st.st_mtime_ns)
    return out


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "source"
    (src / "sub").mkdir(parents=True)
    (src / "edit_sed.txt").write_text("alpha\n")
    (src / "sub" / "append.txt").write_text("one\n")
    (src / "delete_me.txt").write_text("bye\n")
    (src / "touch_only.txt").write_text("same\n")
    (src / "readonly.txt").write_text("locked\n")
    (src / "readonly.txt").chmod(0o444)
    (src / "kept.csv").write_text("a,b\n1,2\n")
    os.symlink("kept.csv", src / "alias.csv")
    return src


@pytest.fixture
def staged(tmp_path: Path) -> dict[str, Path]:
    data = tmp_path / "data"
    data.mkdir()
    (data / "0123456789abcdef_budget.txt").write_text("budget 100\n")
    return {"inputs/budget.txt": data / "0123456789abcdef_budget.txt"}


@pytest.mark.parametrize("mode,method", SETUPS)
def test_agent_edits_never_reach_the_source(tmp_path, source, staged, mode, method):
    if method == "overlay":
        (source / "alias.csv").unlink()  # sources with symlinks are copied, not overlaid
    before = snapshot(source)
    staged_before = snapshot(staged["inputs/budget.txt"].parent)
    ws = materialize(source, tmp_path / "job" / "workspace", staged, method=method)
    assert os.path.ismount(ws) == (method == "overlay")
    assert (ws / "inputs/budget.txt").read_text() == "budget 100\n"
    env = WorkspaceEnv(ws, EnvConfig(sandbox=mode))
    script = (
        "sed -i s/alpha/beta/ edit_sed.txt && echo two >> sub/append.txt && rm delete_me.txt"
        " && touch touch_only.txt && chmod u+w readonly.txt && echo opened >> readonly.txt"
        " && echo 200 >> inputs/budget.txt && mkdir -p out && echo report > out/report.md && seq 1 5000"
    )
    r = env.execute(ToolCall("1", "bash", json.dumps({"command": script})), 1)
    env.close()
    assert not r.is_error, r.content
    assert (ws / "readonly.txt").read_text() == "locked\nopened\n"
    assert snapshot(source) == before
    assert snapshot(staged["inputs/budget.txt"].parent) == staged_before

    diff = diff_workspace(source, staged, ws)
    changed = ["edit_sed.txt", "inputs/budget.txt", "out/report.md", "readonly.txt", "sub/append.txt"]
    assert diff.changed == changed and diff.deleted == ["delete_me.txt"] and diff.links == {}
    assert r.meta["full_output"] and not (ws / ".runningtab").exists()  # saved outputs live outside the workspace

    deliverable = tmp_path / "job" / "deliverable"
    deliverable.mkdir()
    assert copy_deliverable(ws, diff, deliverable, 100, 1 << 20).files == changed
    assert (deliverable / "out/report.md").read_text() == "report\n"
    assert (deliverable / "edit_sed.txt").read_text() == "beta\n"
    discard_workspace(ws)
    assert not ws.exists() and not os.path.ismount(ws) and sorted(os.listdir(ws.parent)) == ["deliverable"]
    assert snapshot(source) == before


def test_materialize_copies_contents_modes_and_times(tmp_path, source):
    ws = materialize(source, tmp_path / "ws")
    assert snapshot(ws).keys() == snapshot(source).keys()
    for rel, (digest, mode, mtime) in snapshot(source).items():
        assert snapshot(ws)[rel] == (digest, mode, mtime), rel
    assert not (ws / "alias.csv").is_symlink()  # links are followed: the workspace is self-contained
    assert diff_workspace(source, None, ws) == Diff()


def test_diff_compares_contents_when_only_the_mtime_differs(tmp_path, source):
    ws = materialize(source, tmp_path / "ws")
    (ws / "kept.csv").write_text("a,b\n1,2\n")  # same bytes, new mtime
    (ws / "edit_sed.txt").write_text("gamma\n")  # same size, new bytes
    os.symlink("/etc/passwd", ws / "leak.txt")  # a link out of the workspace is never a deliverable
    os.symlink("kept.csv", ws / "inner_link.csv")
    diff = diff_workspace(source, None, ws)
    assert diff == Diff(changed=["edit_sed.txt"], links={"inner_link.csv": "kept.csv"})
    (tmp_path / "d").mkdir()
    assert copy_deliverable(ws, diff, tmp_path / "d", 100, 1 << 20).files == ["edit_sed.txt", "inner_link.csv"]
    assert (tmp_path / "d" / "inner_link.csv").read_text() == "a,b\n1,2\n"  # an unchanged file's bytes, once


def test_materialize_rejects_bad_input(tmp_path, source, staged):
    dest = tmp_path / "busy"
    dest.mkdir()
    (dest / "x").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        materialize(source, dest)
    with pytest.raises(ValueError, match="workspace-relative"):
        materialize(source, tmp_path / "a", {"../evil.txt": staged["inputs/budget.txt"]})
    with pytest.raises(FileNotFoundError, match="staged file"):
        materialize(source, tmp_path / "b", {"x.txt": tmp_path / "missing"})
    with pytest.raises(FileNotFoundError, match="not a directory"):
        materialize(tmp_path / "nope", tmp_path / "c")
    with pytest.raises(ValueError, match="choose one of copy, overlay, auto"):
        materialize(source, tmp_path / "d", method="hardlink")
    with pytest.raises(OSError, match="'overlay' is impossible"):
        materialize(source, tmp_path / "e", method="overlay")  # the source has a symlink (or no mount rights)


@OVERLAY
def test_auto_overlays_where_it_can_and_copies_otherwise(tmp_path, source):
    linked = materialize(source, tmp_path / "a" / "ws", method="auto")  # the source has a symlink: copied
    assert not os.path.ismount(linked) and (linked / "alias.csv").read_text() == "a,b\n1,2\n"
    (source / "alias.csv").unlink()
    plain = materialize(source, tmp_path / "b" / "ws", method="auto")
    assert os.path.ismount(plain) and diff_workspace(source, None, plain) == Diff()
    discard_workspace(plain)
    discard_workspace(linked)
    assert not plain.exists() and not linked.exists() and not os.path.ismount(plain)


def test_stage_only_workspace(tmp_path, staged):
    ws = materialize(None, tmp_path / "ws", staged)
    assert [p.name for p in ws.rglob("*") if p.is_file()] == ["budget.txt"]
    (ws / "inputs/budget.txt").unlink()
    assert diff_workspace(None, staged, ws) == Diff(deleted=["inputs/budget.txt"])
