"""The report re-built over a sweep it already reported: only what changed is read and re-rendered.

A re-build re-reads the records whose files changed (size or mtime of job.json, result.json,
scores.json, tab.json, the trajectory, the evaluator view, the deliverable's files), takes every
other job from `report/manifest.jsonl`, re-renders the pages of changed jobs, removes the pages of
jobs gone from the sweep, and writes exactly what a build from scratch writes. A manifest it cannot
trust (corrupt, another code version, other settings) is ignored: everything is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from eval.report import load as load_module
from eval.report import write_report
from eval.report.manifest import MANIFEST
from tests.test_report_data import build_sweep_a, build_sweep_b

CHANGED = "wb__t1__dci__m1__s0"  # a DCI job that every other method of (t1, m1, s0) is compared with
OLD_NS = 1_000_000_000 * 1_000_000_000  # 2001-09-09: a page rewritten after the build is newer


@pytest.fixture()
def sweep(tmp_path: Path) -> Path:
    sdir = tmp_path / "s"
    build_sweep_a(sdir)
    build_sweep_b(sdir)
    return sdir


def _pages(out: Path) -> list[Path]:
    return sorted(p for sub in ("jobs", "compare") for p in (out / sub).iterdir())


def _age_pages(out: Path) -> None:
    """Every page set to an old mtime, so a rewrite (whatever the clock's granularity) shows."""
    for p in _pages(out):
        os.utime(p, ns=(OLD_NS, OLD_NS))


def _rewritten(out: Path) -> set[str]:
    return {f"{p.parent.name}/{p.name}" for p in _pages(out) if p.stat().st_mtime_ns != OLD_NS}


def _tree(root: Path) -> dict[str, bytes]:
    """Every file of a report by path (the sweep's own path, which notes name, made neutral)."""
    where = str(root.parent).encode()
    return {p.relative_to(root).as_posix(): p.read_bytes().replace(where, b"<sweep>") for p in sorted(root.rglob("*")) if p.is_file()}


def _rescore(sdir: Path, job: str) -> None:
    """Flip the first rubric of the job's scores (as a re-scoring would rewrite scores.json)."""
    path = sdir / job / "scores.json"
    scores = json.loads(path.read_text())
    item = scores["items"][0]
    item["passed"] = not item["passed"]
    share = sum(i["passed"] for i in scores["items"]) / len(scores["items"])
    scores["metrics"] = {"pass_rate": share, "tcr70": 1.0 if share >= 0.7 else 0.0}
    path.write_text(json.dumps(scores))


def _from_scratch(sdir: Path, tmp: Path) -> dict[str, bytes]:
    """What a build from scratch writes for this sweep as it is now (in a copy of it)."""
    copy = tmp / "scratch" / sdir.name
    shutil.copytree(sdir, copy, symlinks=True, copy_function=shutil.copy2)
    shutil.rmtree(copy / "report")
    return _tree(write_report(copy))


def test_unchanged_rebuild_rewrites_no_page(sweep: Path) -> None:
    out = write_report(sweep)
    _age_pages(out)
    write_report(sweep)
    assert _rewritten(out) == set()


def test_rescored_job_rerenders_its_pages_only(sweep: Path, tmp_path: Path) -> None:
    out = write_report(sweep)
    before = (out / "table1.csv").read_text()
    _age_pages(out)
    _rescore(sweep, CHANGED)
    write_report(sweep)
    compares = {f"compare/{p.name}" for p in (out / "compare").iterdir() if "__vs__dci" in p.name and "__t1__" in p.name
                and "__m1__s0" in p.name and p.name.startswith("wb__")}  # fmt: skip
    assert compares, "the changed job should have side-by-side pages"
    assert _rewritten(out) == {f"jobs/{CHANGED}.html"} | compares
    assert (out / "table1.csv").read_text() != before
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_rebuild_reads_only_changed_records(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_report(sweep)
    _rescore(sweep, CHANGED)
    opened: list[str] = []
    real = load_module.JobRecord

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, job_dir: Path) -> None:
            opened.append(Path(job_dir).name)
            super().__init__(job_dir)

    monkeypatch.setattr(load_module, "JobRecord", Counting)
    write_report(sweep)
    # the changed job, and the jobs whose side-by-side pages with it are re-rendered
    partners = {n for n in os.listdir(sweep) if n.startswith("wb__t1__") and n.endswith("__m1__s0")}
    assert CHANGED in opened
    assert set(opened) <= partners


def test_rebuild_writes_unchanged_jobs_manifest_lines_as_they_were(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.report import manifest as manifest_module

    out = write_report(sweep)
    lines = dict(line.split("\t", 1) for line in (out / MANIFEST).read_text().splitlines()[1:])
    _rescore(sweep, CHANGED)
    encoded: list[str] = []
    real = manifest_module.json.dumps

    def dumps(obj, *a, **k):
        if isinstance(obj, dict) and "stamp" in obj:
            encoded.append(obj["meta"][0])
        return real(obj, *a, **k)

    monkeypatch.setattr(manifest_module.json, "dumps", dumps)
    write_report(sweep)
    partners = {n for n in os.listdir(sweep) if n.startswith("wb__t1__") and n.endswith("__m1__s0")}
    assert CHANGED in encoded and set(encoded) <= partners, encoded  # the others: their old line
    after = dict(line.split("\t", 1) for line in (out / MANIFEST).read_text().splitlines()[1:])
    assert after.keys() == lines.keys() and after[json.dumps(CHANGED)] != lines[json.dumps(CHANGED)]
    assert all(after[n] == lines[n] for n in lines if json.loads(n) not in partners)


def test_removed_job_loses_its_pages(sweep: Path, tmp_path: Path) -> None:
    out = write_report(sweep)
    gone = "wb__t2__runningtab__m1__s0"
    assert (out / "jobs" / f"{gone}.html").is_file()
    assert any(p.name.startswith(gone) for p in (out / "compare").iterdir())
    shutil.rmtree(sweep / gone)
    write_report(sweep)
    assert not (out / "jobs" / f"{gone}.html").exists()
    assert not any(p.name.startswith(gone) for p in (out / "compare").iterdir())
    assert gone not in (out / "index.html").read_text()
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_added_job_gets_its_pages(sweep: Path, tmp_path: Path) -> None:
    moved = tmp_path / "aside"
    shutil.move(sweep / CHANGED, moved)
    out = write_report(sweep)
    assert not (out / "jobs" / f"{CHANGED}.html").exists()
    shutil.move(moved, sweep / CHANGED)
    write_report(sweep)
    assert (out / "jobs" / f"{CHANGED}.html").is_file()
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def _manifest(text: str) -> tuple[dict, dict[str, dict]]:
    """The manifest's header and its rows by job directory (JSON Lines: `<name>\\t<row>`)."""
    first, *lines = text.splitlines()
    rows = {}
    for line in lines:
        name, _, row = line.partition("\t")
        rows[json.loads(name)] = json.loads(row)
    return json.loads(first), rows


def _manifest_text(header: dict, rows: dict[str, dict]) -> str:
    return "".join(json.dumps(x) + "\n" for x in [header]) + "".join(f"{json.dumps(n)}\t{json.dumps(r)}\n" for n, r in rows.items())


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other_code", "wrong_shape", "no_name", "bad_fates"])
def test_untrusted_manifest_rebuilds_everything(sweep: Path, tmp_path: Path, damage: str) -> None:
    out = write_report(sweep)
    path = out / MANIFEST
    text = path.read_text()
    if damage == "garbage":
        path.write_text("{not json")
    elif damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "other_code":
        header, rows = _manifest(text)
        header["key"]["code"] = "0" * 64
        path.write_text(_manifest_text(header, rows))
    elif damage == "wrong_shape":
        header, rows = _manifest(text)
        rows = {name: {"stamp": entry["stamp"]} for name, entry in rows.items()}  # rows missing
        path.write_text(_manifest_text(header, rows))
    elif damage == "no_name":
        path.write_text("\n".join(line.partition("\t")[2] or line for line in text.splitlines()) + "\n")
    else:  # parses, but a kept derived value does not fit its job (found only when an analysis uses it)
        header, rows = _manifest(text)
        rows[CHANGED]["memo"]["fates"] = rows[CHANGED]["memo"]["fates"][:1]
        path.write_text(_manifest_text(header, rows))
    _age_pages(out)
    write_report(sweep)
    assert _rewritten(out) == {f"{p.parent.name}/{p.name}" for p in _pages(out)}
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_other_settings_rebuild_everything(sweep: Path) -> None:
    out = write_report(sweep)
    _age_pages(out)
    write_report(sweep, baseline="runningtab", treatment="dci")
    assert _rewritten(out) == {f"{p.parent.name}/{p.name}" for p in _pages(out)}
    assert _manifest((out / MANIFEST).read_text())[0]["key"]["baseline"] == "runningtab"


def test_stale_files_of_a_previous_report_are_removed(sweep: Path, tmp_path: Path) -> None:
    out = write_report(sweep)
    (out / "jobs" / "not_a_job.html").write_text("old")
    (out / "compare" / "old__vs__dci.html").write_text("old")
    (out / "table9.csv").write_text("old")
    write_report(sweep)
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_pages_written_by_worker_processes_are_the_same(sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.report import site

    monkeypatch.setattr(site, "POOL_PAGES", 1)
    monkeypatch.setattr(site, "CHUNK_PAGES", 5)
    monkeypatch.setattr(site, "MAX_WORKERS", 2)
    monkeypatch.setattr(site.os, "cpu_count", lambda: 2)
    here: list[int] = []  # pages written by this process (the workers import site.py afresh, unpatched)
    real = site.write_pages
    monkeypatch.setattr(site, "write_pages", lambda out, pages: here.append(len(pages)) or real(out, pages))
    out = write_report(sweep)
    assert not here, "every page is written by a worker"
    pooled = _tree(out)
    monkeypatch.setattr(site, "POOL_PAGES", 10**9)
    alone = _from_scratch(sweep, tmp_path)
    # the manifest differs: what a worker derived for its pages (fates of jobs no analysis needs) stays there
    assert {k: v for k, v in pooled.items() if k != MANIFEST} == {k: v for k, v in alone.items() if k != MANIFEST}


def test_the_pages_are_written_while_the_analyses_run(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers start before the analyses (the driver's core is not idle while they write), and an
    analysis that fails stops the build at once with its own error, keeping no half-written manifest."""
    from eval.report import build, site

    monkeypatch.setattr(site, "POOL_PAGES", 1)
    monkeypatch.setattr(site, "MAX_WORKERS", 2)
    monkeypatch.setattr(site.os, "cpu_count", lambda: 2)
    order: list[str] = []
    real_enter, real_run = site.Pages.__enter__, build.run_analyses
    monkeypatch.setattr(site.Pages, "__enter__", lambda self: order.append("pages") or real_enter(self))
    monkeypatch.setattr(build, "run_analyses", lambda s, out: order.append("analyses") or real_run(s, out))
    out = write_report(sweep)
    assert order == ["pages", "analyses"] and (out / "index.html").is_file()

    def broken(s: object, out: Path) -> None:
        raise ZeroDivisionError("an analysis bug")

    shutil.rmtree(out)
    monkeypatch.setattr(build, "run_analyses", broken)
    with pytest.raises(ZeroDivisionError, match="an analysis bug"):
        write_report(sweep)
    assert not (out / MANIFEST).exists()
