"""`runningtab cache list|prune [DIR]` (`python -m runners.models.call_cache_cli`): what the model-call
cache holds, and removing entries by age or model.

    runningtab cache list                                  # outputs/.cache/calls (or $RUNNINGTAB_CALL_CACHE)
    runningtab cache list /big/disk/runs/.cache/calls
    runningtab cache prune --older-than 90 --dry-run       # what would go
    runningtab cache prune --model gpt-5.4-nano            # every entry of that model

`DIR` is the cache folder (`model.cache_dir`); without it, the one a sweep with the default `out` in
this folder uses. Entries are `<DIR>/<key[:2]>/<key>.json` (runners/models/call_cache.py); only
those are read or removed, as regular files reached without links, each read at most to the
cache's own cap. Age is the entry's write time (an entry is written once). `_weights/` (the served
models' weight digests) is listed, never pruned; the bucket's copies (`storage=s3`,
`<prefix>/_calls/`) are neither: a pruned entry still found there comes back on the next miss.
A removed entry costs a paid call when a job asks for it again.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from runners.models.call_cache import MAX_ENTRY_BYTES, call_cache_folder, entry_problem

PROG = "runningtab cache"
_SHARD = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
WEIGHTS = "_weights"
DAY_S = 86400.0


@dataclass(frozen=True)
class Entry:
    shard: str
    name: str
    size: int
    mtime: float


def entries(root: Path) -> Iterator[Entry]:
    """The cache's entry files, not following links (anything else in the folder is left alone)."""
    try:
        shards = sorted(d.name for d in os.scandir(root) if _SHARD.fullmatch(d.name) and d.is_dir(follow_symlinks=False))
    except FileNotFoundError:
        return
    for shard in shards:
        try:
            found = list(os.scandir(root / shard))
        except OSError:
            continue
        for f in found:
            if _ENTRY.fullmatch(f.name) and f.name.startswith(shard) and f.is_file(follow_symlinks=False):
                st = f.stat(follow_symlinks=False)
                yield Entry(shard, f.name, st.st_size, st.st_mtime)


def model_of(root: Path, e: Entry) -> str:
    """The model an entry answered for (its `model`), `(unreadable)` for one that is no valid entry."""
    from envs.safeio import read_regular

    data = read_regular(root, f"{e.shard}/{e.name}", MAX_ENTRY_BYTES + 1)
    try:
        doc = json.loads(data) if data is not None and len(data) <= MAX_ENTRY_BYTES else None
    except (ValueError, UnicodeDecodeError):
        doc = None
    if doc is None or entry_problem(doc) is not None:
        return "(unreadable)"
    return str(doc.get("model") or "(unnamed)")


def listing(root: Path) -> str:
    found = list(entries(root))
    if not found:
        return f"{root}: no model-call cache entries"
    by_model: dict[str, list[Entry]] = defaultdict(list)
    for e in found:
        by_model[model_of(root, e)].append(e)
    lines = [f"{root}: {len(found):,} entries, {_size(sum(e.size for e in found))}, written {_age(min(e.mtime for e in found))} "
             f"to {_age(max(e.mtime for e in found))}"]
    width = max(map(len, by_model))
    for model, es in sorted(by_model.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {model:<{width}}  {len(es):>9,} entries  {_size(sum(e.size for e in es)):>9}  "
                     f"newest {_age(max(e.mtime for e in es))}")
    weights = root / WEIGHTS
    if weights.is_dir() and not weights.is_symlink():
        lines.append(f"  {WEIGHTS}/ (served models' weight digests, never pruned): {len(list(weights.iterdir())):,} file(s)")
    return "\n".join(lines)


def prune(root: Path, older_than_days: float | None, model: str | None, dry_run: bool) -> str:
    now = time.time()
    gone, size = 0, 0
    for e in entries(root):
        if older_than_days is not None and now - e.mtime < older_than_days * DAY_S:
            continue
        if model is not None and model_of(root, e) != model:
            continue
        if not dry_run and not _remove(root, e):
            continue
        gone, size = gone + 1, size + e.size
    verb = "would remove" if dry_run else "removed"
    what = " and ".join(w for w in (f"written over {older_than_days:g} day(s) ago" if older_than_days is not None else "",
                                    f"of model {model}" if model else "") if w)
    return f"{root}: {verb} {gone:,} entries ({_size(size)}) {what}"


def _remove(root: Path, e: Entry) -> bool:
    """Unlink the entry in its shard, the shard opened without following a link (a swapped folder is left)."""
    try:
        fd = os.open(root / e.shard, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.unlink(e.name, dir_fd=fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def _age(mtime: float) -> str:
    days = (time.time() - mtime) / DAY_S
    return "today" if days < 1 else f"{days:,.0f} day(s) ago"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="action", required=True)
    for name, what in (("list", "entries, bytes and ages, per model"), ("prune", "remove entries by age and/or model")):
        s = sub.add_parser(name, help=what)
        s.add_argument("dir", nargs="?", type=Path, help="the cache folder (default: $RUNNINGTAB_CALL_CACHE, else outputs/.cache/calls)")
        if name == "prune":
            s.add_argument("--older-than", type=float, metavar="DAYS", help="entries written more than DAYS days ago")
            s.add_argument("--model", help="entries of this model (its name as `list` shows it)")
            s.add_argument("--dry-run", action="store_true", help="say what would go, remove nothing")
    args = p.parse_args(argv)
    try:
        root = args.dir.absolute() if args.dir else call_cache_folder(None, Path("outputs").absolute())
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.dir and not root.is_dir():
        print(f"error: {root} is not a folder (give the model-call cache's folder: model.cache_dir, or <out>/.cache/calls)", file=sys.stderr)
        return 2
    if args.action == "list":
        print(listing(root))
        return 0
    if args.older_than is None and args.model is None:
        print("error: prune needs --older-than DAYS and/or --model NAME (to empty the cache, remove its folder)", file=sys.stderr)
        return 2
    if args.older_than is not None and not args.older_than >= 0:
        print(f"error: --older-than {args.older_than}: give 0 or more days", file=sys.stderr)
        return 2
    print(prune(root, args.older_than, args.model, args.dry_run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
