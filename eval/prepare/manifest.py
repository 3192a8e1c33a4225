"""The manifest of a prepared benchmark folder: where its data came from and what it holds.

`manifest.json` beside the data lists the sources (repository, revision, resolved commit), the
folder's parts (the files and folders the loader reads), and every file under them with its size
and sha256; `digest` is the sha256 of that listing, so two folders with the same digest hold the
same bytes. `check` compares a folder with its manifest by listing and size (a stat walk, cheap
enough for every sweep start); `check(full=True)` re-hashes every file.

The manifest is data `check` verifies, never the truth about what is data: the parts walked are
the ones the benchmark's loader reads (its preparer's `PARTS`, given by the caller), not the ones the
manifest names; every entry must be a well-formed [relative path, size, sha256]; `digest`, `files`
and `bytes` must be what the entries add up to. A manifest that fails any of these is refused in
one line (ManifestError), as a folder that does not match it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.safeio import open_regular, walk_regular, write_json

MANIFEST = "manifest.json"
SCHEMA = 1
_SHOWN = 3  # differences named in a message, per kind


class ManifestError(ValueError):
    """A prepared folder is missing, or does not match its manifest; the message says how to fix it."""


@dataclass
class Manifest:
    """What `eval.prepare` wrote: `parts` are relative to the folder; `entries` [path, size, sha256]."""

    benchmark: str
    variant: str
    parts: list[str]
    sources: list[dict[str, Any]]
    entries: list[list[Any]] = field(default_factory=list)
    command: str = ""

    @property
    def digest(self) -> str:
        return listing_digest(self.entries)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "benchmark": self.benchmark, "variant": self.variant, "command": self.command,
                "sources": self.sources, "parts": self.parts, "files": len(self.entries),
                "bytes": sum(e[1] for e in self.entries), "digest": self.digest, "entries": self.entries}


def listing_digest(entries: Iterable[list[Any]]) -> str:
    h = hashlib.sha256()
    for path, size, sha in sorted(entries):
        h.update(f"{path}\t{size}\t{sha}\n".encode())
    return "sha256:" + h.hexdigest()


def file_sha256(root: Path, rel: str) -> str:
    h = hashlib.sha256()
    with open_regular(root, rel) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def walk_parts(root: Path, parts: list[str]) -> dict[str, int]:
    """{relative path: size} of every regular file of the parts (a part is a file or a folder)."""
    out: dict[str, int] = {}
    for part in parts:
        p = root / part
        if p.is_file() and not p.is_symlink():
            out[part] = p.stat().st_size
        elif p.is_dir() and not p.is_symlink():
            out.update({f"{part}/{rel}": st.st_size for rel, st in walk_regular(p)})
    return out


def write(root: Path, manifest: Manifest) -> Manifest:
    """Hash every file of the parts into the manifest and write it atomically to `root/manifest.json`."""
    manifest.entries = [[rel, size, file_sha256(root, rel)] for rel, size in sorted(walk_parts(root, manifest.parts).items())]
    write_json(root / MANIFEST, manifest.to_json())
    return manifest


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _entry_problem(e: Any) -> str | None:
    if not isinstance(e, list) or len(e) != 3:
        return "not a [path, size, sha256] list"
    path, size, sha = e
    if not isinstance(path, str) or not path or path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/")):
        return "its path is not a plain relative path"
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "its size is not an integer >= 0"
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        return "its sha256 is not 64 hex digits"
    return None


def _verify(path: Path, doc: dict[str, Any], parts: list[str]) -> None:
    """The manifest is well formed and adds up: its parts are the loader's, its entries are
    [path, size, sha256] once each, and its digest, file count and byte count are theirs."""
    again = "; prepare the data again"
    if doc.get("parts") != parts:
        raise ManifestError(f"{path} lists parts {doc.get('parts')!r:.80}, but the loader reads {parts}{again}")
    for n, e in enumerate(doc["entries"]):
        problem = _entry_problem(e)
        if problem:
            raise ManifestError(f"{path}: entry {n} ({e!r:.80}): {problem}{again}")
    paths = [e[0] for e in doc["entries"]]
    if len(set(paths)) != len(paths):
        raise ManifestError(f"{path} lists a file twice{again}")
    if doc.get("digest") != listing_digest(doc["entries"]):
        raise ManifestError(f"{path}: its digest {doc.get('digest')!r:.80} is not the digest of its entries{again}")
    if doc.get("files") != len(paths) or doc.get("bytes") != sum(e[1] for e in doc["entries"]):
        raise ManifestError(f"{path}: its files/bytes ({doc.get('files')!r:.20}, {doc.get('bytes')!r:.20}) are not its entries' "
                            f"({len(paths)}, {sum(e[1] for e in doc['entries'])}){again}")


def read(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.is_file():
        raise ManifestError(f"{root} has no {MANIFEST}: it was not written by `python -m eval.prepare` (or not to the end); "
                            "prepare it again, or point the benchmark's own paths at hand-made data")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ManifestError(f"{path} cannot be read ({e}); prepare the data again") from None
    if (not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("entries"), list)
            or not isinstance(doc.get("benchmark"), str)):
        raise ManifestError(f"{path} is not a manifest this version reads (schema {SCHEMA}); prepare the data again")
    return doc


def check(root: Path, benchmark: str, parts: list[str], full: bool = False) -> dict[str, Any]:
    """Raise ManifestError unless `root`'s manifest is well formed and adds up, and `root` holds under
    `parts` (what the loader reads) exactly the files it lists, at their sizes (and, with `full`,
    their contents); returns the manifest."""
    if not root.is_dir():
        raise ManifestError(f"data folder {root} does not exist: run `python -m eval.prepare {benchmark} --out DIR`")
    doc = read(root)
    if doc.get("benchmark") != benchmark:
        raise ManifestError(f"{root} holds prepared {doc.get('benchmark')!r} data, not {benchmark!r}")
    _verify(root / MANIFEST, doc, parts)
    listed = {e[0]: (e[1], e[2]) for e in doc["entries"]}
    found = walk_parts(root, parts)
    missing = sorted(set(listed) - set(found))
    extra = sorted(set(found) - set(listed))
    resized = sorted(p for p in set(listed) & set(found) if listed[p][0] != found[p])
    changed = sorted(p for p in set(listed) & set(found) if p not in resized and full and file_sha256(root, p) != listed[p][1])
    problems = [f"{len(v)} {what} ({', '.join(v[:_SHOWN])}{', …' if len(v) > _SHOWN else ''})"
                for what, v in (("missing", missing), ("not in the manifest", extra), ("of another size", resized),
                                ("changed", changed)) if v]
    if problems:
        raise ManifestError(f"{root} does not match its manifest ({doc.get('files')} files, {doc.get('digest')}): "
                            f"{'; '.join(problems)}. Prepare it again: {doc.get('command') or 'python -m eval.prepare'}")
    return doc
