"""Per-job workspaces: a fresh view of the source folder that the agent may change, and what it changed.

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
import shutil
import stat
import subprocess
from pathlib import Path, PurePosixPath

from envs import overlay
from envs.config import MATERIALIZE_METHODS
from envs.safeio import UnsafePath, lstat_inside, open_regular, walk_regular

log = logging.getLogger(__name__)

BOOKKEEPING_DIR = ".runningtab"  # the harness's own files in a workspace (saved bash outputs); never a deliverable




def materialize(
    source: Path | None, dest: Path, stage: dict[str, Path] | None = None, method: str = "copy"
) -> Path:
    """Make `dest` a fresh workspace: `source` (overlaid or copied) plus `stage` files.

    `stage` maps workspace-relative destinations to files (e.g. Workspace-Bench inputs stored as
    `data/<hash>_<name>`, staged under their original names); a staged file wins over a source file
    at the same path. Modes and modification times are kept (diff_workspace relies on them).
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
        target = dest / _check_rel(rel)
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
    shutil.rmtree(dest, ignore_errors=True)


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


def diff_workspace(
    source: Path | None, stage: dict[str, Path] | None, workspace: Path
) -> tuple[list[str], list[str]]:
    """(created or modified, deleted) workspace-relative file paths, sorted.

    A file is unchanged when size and mtime match its origin (the staged file or the source file at
    the same path); when only the mtime differs the contents decide. `.runningtab/` is ignored.
    The workspace is read through `envs/safeio.py`: links are never followed out, FIFOs never opened.
    """
    origin = dict(_walk(Path(source))) if source is not None else {}
    for rel, src in (stage or {}).items():
        origin[str(_check_rel(rel))] = Path(src)
    current = _workspace_files(os.path.realpath(workspace))
    changed = [rel for rel, target in current.items() if rel not in origin or _differs(workspace, target, origin[rel])]
    deleted = [rel for rel in origin if rel not in current]
    return sorted(changed), sorted(deleted)


def copy_files(workspace: Path, rels: list[str], dest: Path) -> list[str]:
    """Copy workspace files (e.g. diff_workspace's changed list) to `dest` at their relative paths.

    A link counts as the file it points to when that is a regular file inside the workspace; the
    file is opened through `envs/safeio.py`, so a folder swapped for a link meanwhile is skipped.
    """
    root = os.path.realpath(workspace)
    copied = []
    for rel in rels:
        target = _inside_target(root, rel)
        try:
            if target is None:
                raise UnsafePath(rel)
            src = open_regular(root, target)
        except UnsafePath:
            log.warning("not copying %s: not a regular file inside the workspace", rel)
            continue
        out = Path(dest) / _check_rel(rel)
        out.parent.mkdir(parents=True, exist_ok=True)
        with src, open(out, "wb") as f:
            shutil.copyfileobj(src, f)
            st = os.fstat(src.fileno())
        os.chmod(out, stat.S_IMODE(st.st_mode))
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
        copied.append(rel)
    return copied


def _cp(args: list[str]) -> None:
    cmd = ["cp", "-L", "--preserve=mode,timestamps", "--reflink=auto", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(f"copying the workspace failed ({' '.join(cmd)}): {proc.stderr.strip()[:1000]}")


def _check_rel(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts or p.parts[0] == BOOKKEEPING_DIR:
        raise ValueError(f"{rel!r} is not a plain workspace-relative path (no leading /, no .., not {BOOKKEEPING_DIR}/)")
    return p


def _walk(root: Path) -> list[tuple[str, Path]]:
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


def _workspace_files(root: str) -> dict[str, str]:
    """Workspace-relative path -> the link-free relative path of the regular file it is (a link inside counts)."""
    files: dict[str, str] = {}
    for rel, st in walk_regular(root, skip=frozenset({BOOKKEEPING_DIR}), links=True):
        target = _inside_target(root, rel) if stat.S_ISLNK(st.st_mode) else rel
        if target is not None:
            files[rel] = target
    return files


def _inside_target(root: str, rel: str) -> str | None:
    """The link-free relative path of the regular file `rel` resolves to inside root, else None."""
    real = os.path.realpath(os.path.join(root, rel))
    if not real.startswith(root + os.sep):
        return None
    target = os.path.relpath(real, root)
    st = lstat_inside(root, target)
    return target if st is not None and stat.S_ISREG(st.st_mode) else None


def _differs(workspace: Path, target: str, origin: Path) -> bool:
    root = os.path.realpath(workspace)
    a, b = lstat_inside(root, target), origin.stat()
    if a is None or a.st_size != b.st_size:
        return True
    if a.st_mtime_ns == b.st_mtime_ns:
        return False
    try:
        with open_regular(root, target) as f, open(origin, "rb") as g:
            while True:
                x, y = f.read(1 << 20), g.read(1 << 20)
                if x != y:
                    return True
                if not x:
                    return False
    except UnsafePath:
        return True
