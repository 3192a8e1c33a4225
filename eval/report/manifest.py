"""The report's manifest (`report/manifest.jsonl`): what the last build read and wrote, so that a
re-build (a resumed or re-scored sweep, `python -m eval.report` again) reads only the records that
changed and re-renders only their pages.

Per job directory it keeps the stamp of the record files the report reads (size and mtime of
job.json, result.json, scores.json, tab.json, the trajectory, the evaluator view and every file of
the deliverable, all taken with lstat: no link is followed), the job's row (what `load.read_job`
reads) and the derived data the analyses computed (`MEMO`); per page, a digest of the stamps it was
rendered from. A manifest written by other report code (`code_version`) or with other settings, or
one that cannot be read whole, is not trusted: the report is rebuilt from scratch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from envs.safeio import write_json
from eval.report.fates import Fate
from eval.report.kept_results import KeptResults, Untrusted
from eval.report.load import Job, Kept, shared_config
from eval.report.values import Value
from runners.core.record_files import (
    DELIVERABLE,
    EXTRACTED,
    JOB,
    RESULT,
    SCORES,
    SHOWN,
    TAB,
    TRAJECTORY,
    VIEW,
)
from runners.core.record_types import Result

log = logging.getLogger(__name__)

MANIFEST = "manifest.jsonl"
FORMAT = 2  # the manifest's own shape (1: one JSON document, manifest.json)
STAMPED = (JOB, RESULT, SCORES, TAB, SHOWN, TRAJECTORY, VIEW, EXTRACTED)
# Modules outside eval/report whose code shapes the report (their source is part of the version).
DEPENDS = ("eval.judges.matching", "eval.judges.extract.read", "eval.judges.extract.extracted", "eval.judges.extract.office", "eval.judges.extract.session", "eval.judges.metrics", "envs.context", "envs.harness_texts", "tab.config", "tab.render",
           "tab.stats", "runners.core.record_types", "runners.core.job_record", "runners.config.runner")  # fmt: skip

Stamp = list[Any]
_NAMES = frozenset((*STAMPED, DELIVERABLE))
_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result))


def sweep_subdirs(sweep_dir: Path) -> list[Path]:
    """The sweep's subdirectories, sorted by name (`stamp` tells the job directories: theirs has job.json;
    `load.job_dirs` asks each folder instead)."""
    with os.scandir(sweep_dir) as it:
        names = sorted(e.name for e in it if e.is_dir())
    return [sweep_dir / n for n in names]


def stamp(job_dir: Path) -> Stamp:
    """The record files' [size, mtime_ns, type] (None when absent), then the deliverable's files as
    [path, size, mtime_ns]: all from lstat, no link followed (a symlinked folder is not entered)."""
    found: dict[str, os.stat_result] = {}
    try:
        with os.scandir(job_dir) as it:
            for e in it:
                if e.name in _NAMES:
                    found[e.name] = e.stat(follow_symlinks=False)
    except OSError:
        pass
    out: Stamp = [[st.st_size, st.st_mtime_ns, stat.S_IFMT(st.st_mode)] if (st := found.get(n)) else None for n in STAMPED]
    files: list[list[Any]] = []
    d = found.get(DELIVERABLE)
    if d is not None and stat.S_ISDIR(d.st_mode):
        _files(os.path.join(job_dir, DELIVERABLE), "", files)
    out.append(files)
    return out


def _files(path: str, prefix: str, out: list[list[Any]]) -> None:
    try:
        with os.scandir(path) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            _files(e.path, f"{prefix}{e.name}/", out)
        else:
            out.append([prefix + e.name, st.st_size, st.st_mtime_ns])


@lru_cache(maxsize=1)
def code_version() -> str:
    """A digest of the report's code (every module of eval/report and `DEPENDS`)."""
    h = hashlib.sha256(f"format {FORMAT}".encode())
    files = sorted(Path(__file__).parent.glob("*.py"))
    for mod in DEPENDS:
        spec = importlib.util.find_spec(mod)
        if spec is not None and spec.origin:
            files.append(Path(spec.origin))
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def digest(*parts: Any) -> str:
    """What a page or a job's version is a digest of (stamps and links)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()  # stamps and links: lists, str, int, None


# Derived data kept across builds: key in `Job.memo` -> (to JSON, from JSON given the job).
def _fates_to(fs: list[Fate]) -> list[Any]:
    out = []
    for f in fs:
        values = [[v.text, v.number, list(v.span) if v.span else None] for v in f.values]
        at = {id(v): i for i, v in enumerate(f.values)}  # shown, delivered, in_log hold the same objects
        out.append([values, *([at[id(v)] if id(v) in at else f.values.index(v) for v in vs] for vs in (f.shown, f.delivered, f.in_log))])
    return out


def _fates_from(doc: list[Any], job: Job) -> list[Fate]:
    if not doc:
        return []  # a job without rubric items or without a shown log (the stamp says which file it had)
    items = [i for i in (job.scores or {}).get("items", []) if i.get("kind") == "rubric"]
    if len(items) != len(doc):
        raise Untrusted(f"{job.job_id}: the kept rubric fates do not match its scores")
    out = []
    for item, (values, shown, delivered, in_log) in zip(items, doc, strict=True):
        vs = [Value(t, n, tuple(s) if s else None) for t, n, s in values]
        out.append(Fate(item, vs, [vs[i] for i in shown], [vs[i] for i in delivered], [vs[i] for i in in_log]))
    return out


def _plain(doc: Any, job: Job) -> Any:
    return doc


MEMO: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Job], Any]]] = {
    "fates": (_fates_to, _fates_from),
    "has_tab": (lambda v: v, _plain),
    "tab_settings": (lambda v: v, _plain),
    "tab_row": (lambda v: v, _plain),
    "metrics": (list, _plain),  # the metric names its scores carry (`stats.metric_names`)
    "index_row": (lambda v: v, _plain),  # its row of the index, with what it depends on (`viewer_index._kept_row`)
}


@dataclass(frozen=True)
class Settled:
    """Job folders whose records had all been written when build `build` began (the sweep's driver
    knows: the jobs finished before its last live refresh started). With that build's manifest, a
    build takes their kept stamps instead of stamping them again; with any other, it stamps all."""

    build: str
    names: frozenset[str]

    def write(self, path: Path) -> Path:
        """To `path` (atomically: `write_json`), for a build in another process."""
        write_json(path, {"build": self.build, "names": sorted(self.names)})
        return path

    @classmethod
    def read(cls, path: Path) -> Settled:
        """As `write` wrote it; ValueError (or OSError) saying what is wrong otherwise."""
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not (isinstance(doc, dict) and isinstance(doc.get("build"), str) and isinstance(doc.get("names"), list)
                and all(isinstance(n, str) for n in doc["names"])):  # fmt: skip
            raise ValueError(f"{path} is not a list of settled job folders with the build they were settled for")
        return cls(doc["build"], frozenset(doc["names"]))


class Manifest:
    """The last build's manifest (empty when there was none), and the one this build writes.

    JSON Lines: a header (format, key, the id of the build, the distinct job configs by digest, the pages' keys, the
    analyses' kept results: `kept_results.py`), then
    one line per job, `<dir name as JSON>\t<row>`. A job whose record and kept data are unchanged
    is written as the line it was read from."""

    def __init__(self, key: dict[str, Any], header: dict[str, Any] | None = None, lines: dict[str, str] | None = None) -> None:
        self.key = key
        self.last_build: str | None = (header or {}).get("build")  # the id of the build that wrote it
        self.build: str | None = None  # this build's: None when not named (`write_report(build_id=)`)
        self.old_pages: dict[str, str] = (header or {}).get("pages", {})
        self._old_configs: dict[str, Any] = (header or {}).get("configs", {})
        self._old_lines = lines or {}
        self.pages: dict[str, str] = {}
        self.stamps: dict[str, Stamp] = {}  # this build's, by job directory name
        self._reused: dict[str, str] = {}  # the old line of each job taken from it
        self._by_cid: dict[str, dict[str, Any]] = {}
        self.results = KeptResults((header or {}).get("results", {}))  # the analyses' kept results

    @classmethod
    def read(cls, out: Path, key: dict[str, Any]) -> Manifest:
        """The manifest in `out`; Untrusted when it exists but cannot be used."""
        path = out / MANIFEST
        if not path.is_file():
            return cls(key)
        try:
            with open(path, encoding="utf-8") as f:
                header = json.loads(f.readline())
                lines = {}
                for line in f:
                    name, tab, row = line.rstrip("\n").partition("\t")
                    if not tab:
                        raise ValueError("a job line without its name")
                    lines[json.loads(name)] = row
        except (OSError, ValueError) as e:
            raise Untrusted(f"{path} cannot be read: {e}") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("key") != key:
            raise Untrusted(f"{path} was written by other report code or with other settings")
        if not all(isinstance(header.get(k), dict) for k in ("pages", "configs", "results")):
            raise Untrusted(f"{path} is not a report manifest")
        return cls(key, header, lines)

    def vouched(self, settled: Settled | None) -> frozenset[str]:
        """The folders whose kept stamps this build may take (`Settled`)."""
        return settled.names if settled is not None and settled.build == self.last_build else frozenset()

    def cached_job(self, d: Path, st: Stamp | None, configs: dict[str, dict[str, Any]]) -> Job | None:
        """The job as the last build read it, when its record files are unchanged since (`st`
        None: the caller vouches for that, see `Settled`), with its stamp kept for this build."""
        line = self._old_lines.get(d.name)
        if line is None:
            return None
        try:
            entry = json.loads(line)
            if st is not None and entry["stamp"] != st:
                return None
            job_id, bench, task, method, model, seed, cid = entry["meta"]
            result = None if entry["result"] is None else Result(**entry["result"])
            job = Job(d, job_id, bench, task, method, model, seed, self._config(configs, cid), result, entry["scores"])
            for name, doc in entry["memo"].items():
                job.memo[name] = Kept(doc, MEMO[name][1])  # decoded if an analysis or page asks
            job.version = entry["version"]
            if not isinstance(job.version, str):
                raise TypeError(f"version {job.version!r} is not a digest")
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise Untrusted(f"the manifest's entry of {d.name} is not usable: {type(e).__name__}: {e}") from None
        self._reused[d.name] = line
        self.stamps[d.name] = entry["stamp"]
        return job

    def _config(self, configs: dict[str, dict[str, Any]], cid: str) -> dict[str, Any]:
        """The loader's shared dict of the kept config `cid` (serialized once per config, not per job)."""
        if cid not in self._by_cid:
            self._by_cid[cid] = shared_config(configs, self._old_configs[cid])
        return self._by_cid[cid]

    def keep(self, job: Job, st: Stamp) -> None:
        """Record this build's stamp of a job (its row is taken at `write`, with what the analyses derived)."""
        self.stamps[job.dir.name] = st
        job.version = digest(st)

    def write(self, out: Path, jobs: list[Job]) -> None:
        """Atomically (a build killed before this leaves the last manifest, whose stamps stay true)."""
        cids: dict[int, str] = {}  # the loader shares one dict per distinct config
        configs: dict[str, Any] = {}
        lines = []
        for j in jobs:
            if id(j.config) not in cids:
                cids[id(j.config)] = cid = hashlib.blake2b(json.dumps(j.config, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()
                configs[cid] = j.config
            kept = self._reused.get(j.dir.name)
            if kept is None or not all(isinstance(v, Kept) for k, v in j.memo.items() if k in MEMO):
                memo = {k: v.doc if isinstance(v, Kept) else MEMO[k][0](v) for k, v in sorted(j.memo.items()) if k in MEMO}
                kept = json.dumps({
                    "stamp": self.stamps[j.dir.name],
                    "version": j.version,
                    "meta": [j.job_id, j.benchmark, j.task_id, j.method, j.model, j.seed, cids[id(j.config)]],
                    "result": None if j.result is None else {k: getattr(j.result, k) for k in _RESULT_FIELDS},
                    "scores": j.scores,
                    "memo": memo,
                }, default=str, separators=(",", ":"))  # fmt: skip
            lines.append(f"{json.dumps(j.dir.name)}\t{kept}\n")
        header = {"format": FORMAT, "key": self.key, "build": self.build, "configs": configs, "pages": dict(sorted(self.pages.items())),
                  "results": dict(sorted(self.results.used.items()))}  # fmt: skip
        tmp = out / f".{MANIFEST}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(header, default=str, separators=(",", ":")) + "\n")  # dumps: json.dump's encoder is the slow Python one
            f.writelines(lines)
        os.replace(tmp, out / MANIFEST)
