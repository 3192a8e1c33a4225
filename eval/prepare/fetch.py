"""Getting a benchmark's published files onto disk, and building a prepared folder from them.

Sources are kept under `<out>/.sources/` so that an interrupted run resumes: Hugging Face downloads
resume file by file (`huggingface_hub` into a local folder), a git fetch or an archive unpacked
to the end is not repeated. The prepared folder is then built beside its final place from hard
links into the sources (a copy across file systems) and renamed into place only when complete.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Protocol

from eval.prepare.manifest import Manifest, write

DONE = ".complete"  # marks a source unpacked to the end


class PrepareError(RuntimeError):
    """Preparing cannot go on; the message says what is missing and how to get it."""


def hub_download(repo: str, revision: str, dest: Path, local_flag: str, allow: list[str] | None = None) -> tuple[Path, str]:
    """Download the dataset repository `repo` at `revision` into `dest` (resumable); returns the folder
    and the commit it resolved to. Gated datasets take the token of `HF_TOKEN` / `hf auth login`.
    `local_flag`: the preparer's flag that takes a local copy instead, which the messages name."""
    try:
        from huggingface_hub import HfApi, snapshot_download
        from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError
    except ImportError as e:  # pragma: no cover - a dependency of the project
        raise PrepareError(f"huggingface_hub is not installed ({e}): pip install -e .") from None
    how = (f"download it where the Hub is reachable (`hf download {repo} --repo-type dataset --revision {revision} "
           f"--local-dir DIR`) and pass {local_flag} DIR")
    try:
        commit = HfApi().dataset_info(repo, revision=revision).sha or revision
        snapshot_download(repo, repo_type="dataset", revision=commit, local_dir=dest, allow_patterns=allow)
    except GatedRepoError:
        raise PrepareError(f"{repo} is gated: request access on https://huggingface.co/datasets/{repo}, then set "
                           "HF_TOKEN (or run `hf auth login`) and run this again") from None
    except RepositoryNotFoundError:
        raise PrepareError(f"{repo} (revision {revision}) was not found on the Hub; {how}") from None
    except Exception as e:  # noqa: BLE001 - httpx, OS and Hub errors all mean "not downloaded"
        raise PrepareError(f"could not download {repo} from the Hugging Face Hub ({type(e).__name__}: {e}); {how}") from None
    return dest, commit


def local_source(path: str, what: str) -> Path:
    p = Path(path).expanduser().resolve()
    if not p.exists():
        raise PrepareError(f"{what}: {p} does not exist")
    return p


def link_tree(src: Path, dst: Path, skip_hidden: bool = True, link: bool = True) -> int:
    """Hard-link every regular file under `src` into `dst` (copying when linking is not possible, or
    `link` is false); symlinks are not followed. Returns the number of files."""
    n = 0
    for parent, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not (skip_hidden and d.startswith(".")) and not os.path.islink(os.path.join(parent, d)))
        rel = Path(parent).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            if skip_hidden and name.startswith("."):
                continue
            s = Path(parent) / name
            if s.is_symlink() or not s.is_file():
                continue
            if link:
                link_file(s, dst / rel / name)
            else:
                shutil.copy2(s, dst / rel / name)
            n += 1
    return n


def link_file(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        shutil.copy2(src, dst)


def unpack_zip(archive: Path, dest: Path) -> Path:
    """Unpack a zip archive into `dest` once (zipfile keeps every member inside `dest`)."""
    if (dest / DONE).is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    try:
        with zipfile.ZipFile(archive) as z:
            for member in z.infolist():
                if not member.filename.startswith("__MACOSX/"):
                    z.extract(member, dest)
    except (zipfile.BadZipFile, OSError) as e:
        raise PrepareError(f"{archive} cannot be unpacked ({e}); download it again") from None
    (dest / DONE).touch()
    return dest


class MemberCheck(Protocol):
    """What an archive's members must be (checked as each is unpacked), and what the whole must hold."""

    def __call__(self, member: tarfile.TarInfo) -> None: ...  # PrepareError: refused
    def finish(self) -> None: ...  # PrepareError: the archive lacks what it should hold


def unpack_tar(source: Path | IO[bytes], dest: Path, check: MemberCheck | None = None) -> Path:
    """Unpack a tar archive (a file, compressed or not, or a stream) into `dest` once, with tarfile's
    `data` filter: no absolute paths, no links leaving `dest`, no devices; `check` sees every member
    first and the whole at the end (a refusal leaves nothing unpacked)."""
    if (dest / DONE).is_file():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)

    def keep(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        if check is not None:
            check(member)
        return tarfile.data_filter(member, path)

    try:
        if isinstance(source, Path):
            with tarfile.open(source, mode="r:*") as t:
                t.extractall(dest, filter=keep)
        else:
            with tarfile.open(fileobj=source, mode="r|*") as t:
                t.extractall(dest, filter=keep)
        if check is not None:
            check.finish()
    except PrepareError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except (tarfile.TarError, OSError, EOFError) as e:
        shutil.rmtree(dest, ignore_errors=True)
        raise PrepareError(f"{source if isinstance(source, Path) else 'the archive'} cannot be unpacked ({e})") from None
    (dest / DONE).touch()
    return dest


def unpack_output(cmd: list[str], dest: Path, what: str, check: MemberCheck | None = None) -> Path:
    """Unpack the tar archive that `cmd` writes to its stdout into `dest` once; the command's own
    error, when it fails, is the message (its empty output is not)."""
    if (dest / DONE).is_file():
        return dest
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    unpacked: PrepareError | None = None
    try:
        unpack_tar(proc.stdout, dest, check)
    except PrepareError as e:
        unpacked = e
    finally:
        err = proc.communicate()[1]
    if proc.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        raise PrepareError(f"{what}: `{' '.join(cmd)}` failed: {err.decode(errors='replace').strip()[-400:]}")
    if unpacked:
        raise unpacked
    return dest


def run(cmd: list[str], what: str, cwd: Path | None = None) -> str:
    """Run a command; a failure is a PrepareError naming it and its last output."""
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PrepareError(f"{what}: `{' '.join(cmd)}` could not run ({e})") from None
    if r.returncode != 0:
        raise PrepareError(f"{what}: `{' '.join(cmd)}` failed: {(r.stderr or r.stdout).strip()[-800:]}")
    return r.stdout


def check_loads(name: str, fields: dict[str, str]) -> None:
    """The prepared folder loads with the benchmark's own loader (`eval/benchmarks/<name>.py`), with at
    least one task: every input it names is there."""
    import importlib

    from eval.benchmarks.base import BenchmarkError

    loader = importlib.import_module(f"eval.benchmarks.{name}")
    try:
        tasks = loader.load(loader.Config(**fields))
    except BenchmarkError as e:
        raise PrepareError(f"the prepared folder does not load: {e}") from None
    if not tasks:
        raise PrepareError(f"the prepared folder loads no {name} task")


@contextmanager
def building(out: Path, manifest: Manifest) -> Iterator[Path]:
    """A folder to build `<out>/<benchmark>/` in: on success its manifest is written and it replaces
    the old folder in one rename; on failure it is removed and the old folder stays."""
    final = out / manifest.benchmark
    tmp = out / f".{manifest.benchmark}.building"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
        write(tmp, manifest)
        old = out / f".{manifest.benchmark}.old"
        shutil.rmtree(old, ignore_errors=True)
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
