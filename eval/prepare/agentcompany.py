"""TheAgentCompany: the tasks from the benchmark's repository at a pinned commit, and the file
server's files from its ownCloud image.

Published layout: the repository's `workspaces/tasks/<task>/` (task.md, checkpoints.md,
dependencies.yml, evaluator.py, data files), fetched at the commit or taken from a local checkout
(`--from DIR`: its work tree as it is, copied; the commit its git says is recorded); the image
`servers-owncloud` holds the company's
files in ownCloud's data folder, `/var/www/html/data/theagentcompany/files/` (`Documents/`, …).
With docker or podman here, the image is created (never started), the folder copied out and the
container removed; otherwise the folder comes as a tarball made where an engine runs
(`OWNCLOUD_TARBALL`, below). Either way the archive is checked (owncloud_archive.py: a tar, ownCloud's
layout, only folders and files, within bounds) before its files are used; a tarball is unpacked
into a source folder of its own (by path, size and time), so a corrected tarball is never answered
with an earlier one's files.

Prepared layout, what `eval/benchmarks/agentcompany.py` reads: `tasks/<task>/` and `files/`
(the folder holding `Documents/`, the agent's workspace).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

from eval.prepare.fetch import (
    DONE,
    PrepareError,
    building,
    check_loads,
    link_tree,
    local_source,
    run,
    unpack_output,
    unpack_tar,
)
from eval.prepare.manifest import Manifest
from eval.prepare.owncloud_archive import HOW, MemberRules, check_archive

NAME = "agentcompany"
REPO = "https://github.com/TheAgentCompany/TheAgentCompany.git"
COMMIT = "98b68ef82a47690c316f42fddb05baafaab56851"  # main on 2025-11-17, the tasks of release 1.0.0's images
TASKS = "workspaces/tasks"
IMAGE = "ghcr.io/theagentcompany/servers-owncloud:1.0.0"
IMAGE_DIGEST = "sha256:326406d88345899db22fc1081aa8fa15415c542a71b80486c0a2cebf59f56f63"
DATA_IN_IMAGE = "/var/www/html/data/theagentcompany/files"
OWNCLOUD_TARBALL = (f"docker create --name rt-owncloud {IMAGE} && "
                    f"docker cp rt-owncloud:{DATA_IN_IMAGE} - | gzip > owncloud-files.tar.gz && docker rm rt-owncloud")
PARTS = ["tasks", "files"]
FROM_THE_HUB = False  # one task set, from git and an image: no --lite/--full/--revision


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", default=None, help=f"the benchmark's git repository (a URL or a local clone; default {REPO})")
    p.add_argument("--commit", default=None, help=f"the commit of the tasks (default: the pinned one, {COMMIT[:12]})")
    p.add_argument("--from", dest="checkout", metavar="DIR", help="a local checkout of the benchmark's repository (DIR/workspaces/tasks), "
                   "taken as it is instead of fetching --repo at --commit")
    p.add_argument("--owncloud-tar", metavar="FILE", help=f"the file server's files as a tarball made elsewhere: {OWNCLOUD_TARBALL}")
    p.add_argument("--engine", choices=("docker", "podman"), help="the container engine to copy the files out of the image with (default: the one that runs)")


def prepare(args: argparse.Namespace, out: Path) -> Path:
    if args.checkout and (args.repo or args.commit):
        raise PrepareError("--from DIR takes a checkout as it is: give --from, or --repo/--commit to fetch, not both")
    tasks, tasks_source = _checkout(args.checkout) if args.checkout else _tasks(args.repo or REPO, args.commit or COMMIT, out)
    files, files_source = _files(args, out)
    manifest = Manifest(NAME, "file-server", PARTS, [tasks_source, files_source], command=f"python -m eval.prepare {NAME} --out {out}")
    with building(out, manifest) as root:
        # a checkout is the user's to edit: copied, never hard-linked (an edit there would change the data)
        link_tree(tasks, root / "tasks", skip_hidden=False, link=not args.checkout)
        link_tree(files, root / "files", skip_hidden=False)
        check_loads(NAME, configure(root))
    return out / NAME


def _tasks(repo: str, commit: str, out: Path) -> tuple[Path, dict[str, Any]]:
    """`workspaces/tasks` of `repo` at `commit`, fetched once (shallow) and unpacked from `git archive`."""
    if not shutil.which("git"):
        raise PrepareError("git is not installed: it fetches the benchmark's tasks (apt-get install git)")
    clone = out / ".sources" / "TheAgentCompany.git"
    if not (clone / "HEAD").is_file():
        run(["git", "init", "-q", "--bare", str(clone)], "git init")
    have = subprocess.run(["git", "-C", str(clone), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True).returncode == 0
    if not have:
        run(["git", "-C", str(clone), "fetch", "-q", "--depth", "1", repo, commit], f"fetching {commit} of {repo}")
    dest = out / ".sources" / f"tasks-{commit[:12]}"
    unpack_output(["git", "-C", str(clone), "archive", "--format=tar", commit, TASKS], dest, f"the tasks of {repo} at {commit}")
    return dest / TASKS, {"repository": repo, "commit": commit, "path": TASKS}


def _checkout(folder: str) -> tuple[Path, dict[str, Any]]:
    """`workspaces/tasks` of a local checkout, and where it came from: the checkout, and the commit
    and whether the tasks differ from it, when the folder is a git work tree."""
    root = local_source(folder, "--from")
    tasks = root / TASKS
    if not tasks.is_dir() or tasks.is_symlink():
        raise PrepareError(f"--from {root}: no {TASKS}/ folder there; give the top folder of a checkout of {REPO} "
                           f"(git clone {REPO} DIR && git -C DIR checkout {COMMIT})")
    info: dict[str, Any] = {"checkout": str(root), "path": TASKS}
    git = ["git", "-C", str(root)]
    try:
        top = subprocess.run([*git, "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True, timeout=60)
        changed = subprocess.run([*git, "status", "--porcelain", "--", TASKS], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        top = changed = None
    lines = top.stdout.split() if top is not None and top.returncode == 0 else []
    if len(lines) != 2 or Path(lines[0]).resolve() != root or changed is None or changed.returncode != 0:
        info["commit"] = "(not a git work tree)"  # or the folder is inside another repository's
        return tasks, info
    commit = lines[1]
    info["commit"] = commit if commit == COMMIT else f"{commit} (not the pinned {COMMIT})"
    if changed.stdout.strip():
        info["changed"] = len(changed.stdout.splitlines())  # files of the tasks that differ from that commit
    return tasks, info


def _files(args: argparse.Namespace, out: Path) -> tuple[Path, dict[str, Any]]:
    """The file server's files: from the tarball given, else copied out of the image."""
    how = HOW.format(path=DATA_IN_IMAGE, command=OWNCLOUD_TARBALL)
    if args.owncloud_tar:
        tar = local_source(args.owncloud_tar, "--owncloud-tar")
        st = tar.stat()
        key = hashlib.sha256(f"{tar}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:12]
        dest = out / ".sources" / f"owncloud-{key}"
        if not (dest / DONE).is_file():
            unpack_tar(tar, dest, check_archive(tar, how))
        info: dict[str, Any] = {"image": IMAGE, "path": DATA_IN_IMAGE, "from": str(tar)}
    else:
        engine = args.engine or next((e for e in ("docker", "podman") if _runs(e)), None)
        if engine is None:
            raise PrepareError("no container engine runs here (docker or podman) to copy the file server's files out of "
                               f"{IMAGE}: where one runs, make the tarball with\n  {OWNCLOUD_TARBALL}\n"
                               "then pass --owncloud-tar owncloud-files.tar.gz")
        dest = out / ".sources" / "owncloud"
        info = {"image": IMAGE, "path": DATA_IN_IMAGE, "engine": engine, "digest": copy_out(engine, dest, MemberRules(f"{IMAGE}:{DATA_IN_IMAGE}", how))}
    return documents_root(dest), info


def _runs(engine: str) -> bool:
    if not shutil.which(engine):
        return False
    try:
        return subprocess.run([engine, "info"], capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def copy_out(engine: str, dest: Path, check: MemberRules) -> str:
    """Create a container of the image (never started), stream its data folder into `dest`, remove
    the container; returns the image's digest (a warning in the manifest when it is not the pinned one)."""
    if (dest / DONE).is_file():
        return "(copied earlier)"
    cid = run([engine, "create", IMAGE], f"{engine} create {IMAGE}").strip().splitlines()[-1]
    try:
        unpack_output([engine, "cp", f"{cid}:{DATA_IN_IMAGE}", "-"], dest, "copying the file server's files out of the image", check)
    finally:
        subprocess.run([engine, "rm", "-f", cid], capture_output=True)
    digest = run([engine, "image", "inspect", "--format", "{{index .RepoDigests 0}}", IMAGE], "image digest").strip()
    return digest if digest.endswith(IMAGE_DIGEST) else f"{digest} (not the pinned {IMAGE_DIGEST})"


def documents_root(root: Path) -> Path:
    """The folder that holds `Documents/` in the unpacked data (its top, or a few levels down)."""
    for depth in ("", "*/", "*/*/", "*/*/*/"):
        for p in sorted(root.glob(f"{depth}Documents")):
            if p.is_dir() and not p.is_symlink():
                return p.parent
    raise PrepareError(f"no Documents/ folder in the file server's files ({root}); the tarball must hold ownCloud's "
                       f"{DATA_IN_IMAGE} as `docker cp` writes it:\n  {OWNCLOUD_TARBALL}")


def configure(root: Path) -> dict[str, str]:
    """The loader's settings that point it at a prepared folder."""
    return {"tasks_dir": str(root / "tasks"), "export_dir": str(root / "files")}
