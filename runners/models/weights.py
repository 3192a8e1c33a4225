"""A served model's weights by their content: what the model-call cache's key holds for them.

A path says nothing about what is there now: new weights copied to the same `model.server.model_path`
would get the old weights' cached replies. So the key holds `sha256:<hex>`, a digest of the files'
contents (a folder: every file in it, by relative path; links followed, the folder is the user's). It is
computed once and kept by each file's size and mtime: in this process, and on disk beside the cache
(`<cache_dir>/_weights/`), so the episode actors of a sweep (and later sweeps) hash a model once, not
once each. A new copy of the weights changes a size or an mtime, so the digest is computed again.

A `model_path` that names no local file or folder (a hub id such as `Qwen/Qwen3-32B`, resolved by
the server to whatever revision it finds) has no content here to key by: `WeightsUnknown`, and the
cache is refused for that model (runners/job/model.py says so).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from envs.safeio import make_dirs, read_regular, write_json

MAX_FILES = 10_000
CHUNK = 1 << 20
MEMO_DIR = "_weights"
_memo: dict[str, tuple[list[list[Any]], str]] = {}  # resolved path -> (sizes and mtimes, digest)


class WeightsUnknown(ValueError):
    """The served model's weights are not local files: their content cannot be keyed."""


def served_weights(cfg: Any, cache_dir: Path | None) -> str | None:
    """The digest of the weights a served model config starts its server with (the embedded GGUF
    for llama.cpp without `model_path`); None for a model this sweep does not serve."""
    from runners.models.server import needs_server

    if not needs_server(cfg):
        return None
    path = cfg.server.model_path
    if not path and cfg.kind == "llamacpp":
        from runners.models.embedded import embedded_gguf

        path = embedded_gguf()
    if not path:
        raise WeightsUnknown(f"model {cfg.name!r} has no model.server.model_path")
    return weights_digest(path, None if cache_dir is None else Path(cache_dir) / MEMO_DIR)


def weights_digest(model_path: str, memo_dir: Path | None = None) -> str:
    """`sha256:<hex>` of the files at `model_path`, recomputed only when a file's size or mtime changed."""
    root = Path(model_path).expanduser()
    files = _files(root, model_path)
    resolved = str(root.resolve())
    signature = [[rel, st.st_size, st.st_mtime_ns] for rel, _, st in files]
    hit = _memo.get(resolved)
    if hit is not None and hit[0] == signature:
        return hit[1]
    memo = None if memo_dir is None else memo_dir / f"{hashlib.sha256(resolved.encode()).hexdigest()[:32]}.json"
    digest = _remembered(memo, resolved, signature)
    if digest is None:
        with _locked(memo):  # the other actors of the sweep wait for this one's digest
            digest = _remembered(memo, resolved, signature) or _hash(files)
            if memo is not None:
                write_json(memo, {"path": resolved, "files": signature, "digest": digest})
    _memo[resolved] = (signature, digest)
    return digest


def _files(root: Path, named: str) -> list[tuple[str, Path, os.stat_result]]:
    """(relative path, path, stat) of each regular file: `root` itself, or every file under it."""
    if root.is_file():
        return [("", root, root.stat())]
    if not root.is_dir():
        raise WeightsUnknown(f"model.server.model_path={named!r} is not a local file or folder")
    found = []
    for folder, dirs, names in os.walk(root, followlinks=True):
        dirs.sort()
        for name in sorted(names):
            p = Path(folder) / name
            if p.is_file():
                found.append((p.relative_to(root).as_posix(), p, p.stat()))
            if len(found) > MAX_FILES:
                raise WeightsUnknown(f"model.server.model_path={named!r} holds more than {MAX_FILES} files")
    return found


def _hash(files: list[tuple[str, Path, os.stat_result]]) -> str:
    total = hashlib.sha256()
    for rel, path, _ in files:
        one = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(CHUNK):
                one.update(chunk)
        total.update(json.dumps([rel, one.hexdigest()]).encode())
    return f"sha256:{total.hexdigest()}"


def _remembered(memo: Path | None, resolved: str, signature: list[list[Any]]) -> str | None:
    if memo is None:
        return None
    try:
        data = read_regular(memo.parent, memo.name, 4 * MAX_FILES * 256)
        doc = json.loads(data) if data else None
    except (OSError, ValueError):
        return None
    if isinstance(doc, dict) and doc.get("path") == resolved and doc.get("files") == signature and isinstance(doc.get("digest"), str):
        return doc["digest"]
    return None


class _locked:
    """An exclusive lock on `<memo>.lock` (nothing without a memo)."""

    def __init__(self, memo: Path | None) -> None:
        self.memo, self.fd = memo, -1

    def __enter__(self) -> None:
        if self.memo is not None:
            make_dirs(self.memo.parent)
            self.fd = os.open(self.memo.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
