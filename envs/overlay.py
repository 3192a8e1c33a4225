"""Kernel overlayfs workspaces: the source as a read-only lower layer, the agent's changes in an upper one.

Used by `materialize` where the runner may mount (root or CAP_SYS_ADMIN; checked once with a trial
mount): mounting is constant-time whatever the source's size, and the source is never written
(overlayfs copies a file up before any change). The merged view is a real directory on the host,
so `read`, the tab's capture and `diff_workspace` work on it unchanged. It must be unmounted when
the job is done: `discard_workspace` does that.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from envs.safeio import remove_tree


def layers_dir(dest: Path) -> Path:
    """Where the upper and work layers of the overlay mounted at `dest` live (beside it)."""
    return dest.parent / f".{dest.name}.overlay"


def usable_source(source: Path) -> bool:
    """Overlay options cannot carry ',' ':' or '\\' in paths, and symlinks in the source would
    resolve in the merged view (possibly out of it), so such sources are copied instead."""
    if any(c in str(source) for c in ",:\\"):
        return False
    for d, dirs, files in os.walk(source):
        for name in (*dirs, *files):
            if os.path.islink(os.path.join(d, name)):
                return False
    return True


def mount(source: Path, dest: Path) -> None:
    """Mount an overlay of `source` at `dest` (an empty directory)."""
    layers = layers_dir(dest)
    (layers / "upper").mkdir(parents=True)
    (layers / "work").mkdir()
    opts = f"lowerdir={os.path.realpath(source)},upperdir={layers / 'upper'},workdir={layers / 'work'}"
    proc = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(dest)], capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(layers, ignore_errors=True)
        raise OSError(f"mounting an overlay workspace at {dest} failed: {proc.stderr.strip()}")


def is_overlay(dest: Path) -> bool:
    return os.path.ismount(dest) and layers_dir(dest).is_dir()


def unmount(dest: Path) -> None:
    proc = subprocess.run(["umount", str(dest)], capture_output=True, text=True)
    if proc.returncode != 0:  # busy (a process still inside): detach now, the kernel frees it later
        subprocess.run(["umount", "-l", str(dest)], capture_output=True, text=True, check=True)
    remove_tree(layers_dir(dest))


@functools.cache
def can_mount() -> bool:
    """Whether this process can mount overlayfs (tried once with a trial mount)."""
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return False
    tmp = Path(tempfile.mkdtemp(prefix="runningtab-overlay-probe-"))
    try:
        (tmp / "lower").mkdir()
        (tmp / "lower" / "f").write_text("x")
        (tmp / "merged").mkdir()
        mount(tmp / "lower", tmp / "merged")
        ok = (tmp / "merged" / "f").read_text() == "x"
        unmount(tmp / "merged")
        return ok
    except (OSError, subprocess.CalledProcessError):
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
