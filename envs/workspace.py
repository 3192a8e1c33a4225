"""Per-job workspaces: a fresh view of the source folder that the agent may change (what it changed:
`envs/deliverable.py`).

Two ways, same result for everything downstream (a real directory on the host):
- `copy` (default): `cp -L --reflink=auto` (copy-on-write on XFS/btrfs, a plain copy on ext4).
  Works anywhere, needs no cleanup beyond removing the directory.
- `overlay` (where the runner may mount: root or CAP_SYS_ADMIN): a kernel overlayfs with the source
  as the read-only lower layer. Constant time whatever the size (OfficeQA's corpus is GBs), but it
  must be released with `discard_workspace`.
Hard links are never used: the agent is root and edits files in place (`sed -i` aside, `echo >> f`
and openpyxl saves write the inode), so a link would let it change the source unless the source
itself were owned by another user and read-only. Numbers in docs/env.md (bench/bench_env.py).
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path, PurePosixPath

from envs import overlay
from envs.config import MATERIALIZE_METHODS
from envs.safeio import remove_tree

log = logging.getLogger(__name__)

BOOKKEEPING_DIR = ".runningtab"  # the harness's own files in a workspace (saved bash outputs); never a deliverable


def materialize(
    source: Path | None, dest: Path, stage: dict[str, Path] | None = None, method: str = "copy"
) -> Path:
    """Make `dest` a fresh workspace: `source` (overlaid or copied) plus `stage` files.

    `stage` maps workspace-relative destinations to files (e.g. Workspace-Bench inputs stored as
    `data/<hash>_<name>`, staged under their original names); a staged file wins over a source file
    at the same path. Modes and modification times are kept (envs/deliverable.diff_workspace relies on them).
    `method` (EnvConfig.materialize): copy | overlay | auto (overlay where possible, else copy).
    An overlay stays mounted until `discard_workspace(dest)`: callers that pick it must call that
    (a plain rmtree of the parent leaves the mount behind), hence copy as the default.
    """
    if method not in MATERIALIZE_METHODS:
        raise ValueError(f"materialize method {method!r}: choose one of {', '.join(MATERIALIZE_METHODS)}")
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"workspace {dest} already exists and is not empty; give each job a fresh directory")
    if source is not None and not Path(source).is_dir():
        raise FileNotFoundError(f"workspace source {source} is not a directory")
    if overlay.layers_dir(dest).exists():
        raise FileExistsError(f"{overlay.layers_dir(dest)} is left from an earlier workspace; remove it")
    dest.mkdir(parents=True, exist_ok=True)
    if source is not None:
        if not _overlaid(Path(source), dest, method):
            _cp(["-R", f"{source}/.", str(dest)])
    for rel, src in (stage or {}).items():
        target = dest / check_rel(rel)
        if not Path(src).is_file():
            raise FileNotFoundError(f"staged file {src} (for {rel}) does not exist or is not a file")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise IsADirectoryError(f"cannot stage {src} at {rel}: a directory of the source is there")
        _cp([str(src), str(target)])
    return dest


def discard_workspace(dest: Path) -> None:
    """Remove a workspace made by `materialize` (unmounting it first if it is an overlay)."""
    dest = Path(dest)
    if overlay.is_overlay(dest):
        overlay.unmount(dest)
    remove_tree(dest)


def _overlaid(source: Path, dest: Path, method: str) -> bool:
    """Mount an overlay at dest if `method` allows and it can be done; False means: copy instead."""
    if method == "copy":
        return False
    problem = ""
    if not overlay.can_mount():
        problem = "this process may not mount overlayfs (needs root or CAP_SYS_ADMIN)"
    elif not overlay.usable_source(source):
        problem = f"{source} contains symlinks or ',', ':' or '\\' in its path"
    else:
        try:
            overlay.mount(source, dest)
            return True
        except OSError as e:
            problem = str(e)
    if method == "overlay":
        raise OSError(f"materialize method 'overlay' is impossible: {problem}; use method 'copy' or 'auto'")
    log.debug("copying the workspace instead of an overlay: %s", problem)
    return False


def _cp(args: list[str]) -> None:
    cmd = ["cp", "-L", "--preserve=mode,timestamps", "--reflink=auto", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(f"copying the workspace failed ({' '.join(cmd)}): {proc.stderr.strip()[:1000]}")


def check_rel(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or p.parts[0] == BOOKKEEPING_DIR:
        raise ValueError(f"{rel!r} is not a plain workspace-relative path (no leading /, no .., not {BOOKKEEPING_DIR}/)")
    return p


def source_files(root: Path) -> list[tuple[str, Path]]:
    """(relative path, path) of every file under a source folder (ours, not the agent's: links followed)."""
    out: list[tuple[str, Path]] = []
    seen: set[tuple[int, int]] = set()

    def visit(d: str, prefix: str) -> None:
        with os.scandir(d) as it:
            for e in it:
                rel = prefix + e.name
                if not prefix and e.name == BOOKKEEPING_DIR:
                    continue
                if e.is_dir():
                    st = e.stat()
                    if (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        visit(e.path, rel + "/")
                elif e.is_file():
                    out.append((rel, Path(e.path)))

    visit(str(root), "")
    return out
