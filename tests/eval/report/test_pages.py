"""Pages written with their records (issue 27, item 2).

A job's page is written when its record completes or is re-scored, a side-by-side page when the
second job of its pair completes; a build computes the tables from the records, writes only pages
that are missing and `links.js` (each job page draws its side-by-side links from it), so no finished
page is ever written again by a build; `python -m eval.report --pages` renders them all again
after a change to the report's code (there is no cache to go stale).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from bench.bench_viewer import write_scripted_job
from eval.report import write_report
from eval.report.__main__ import main
from eval.report.pages.completed import at_completion, rescored
from runners.sweep.live_report import LiveReport
from tests.eval.report.test_html import CHROMIUM, open_page

RT, DCI, NO_REVIEW = "wb__t1__runningtab__m1__s0", "wb__t1__dci__m1__s0", "wb__t1__runningtab_no_review__m1__s0"
GROUP = {j: [DCI, RT] for j in (DCI, RT)}


def _pages(out: Path) -> dict[str, tuple[int, int]]:
    """Every page's (inode, mtime_ns): a page written again (renamed over) gets a new inode."""
    return {f"{sub}/{p.name}": (p.stat().st_ino, p.stat().st_mtime_ns) for sub in ("jobs", "compare") for p in sorted((out / sub).glob("*.html"))}


def _links(out: Path) -> dict[str, list[list[str]]]:
    text = (out / "links.js").read_text()
    m = re.fullmatch(r"window\.REPORT_LINKS = (.*);\n", text, re.DOTALL)
    assert m is not None, text[:200]
    return json.loads(m.group(1))


def test_a_job_page_is_written_when_its_record_completes(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    live = LiveReport(sdir, every=0, groups=GROUP)
    live.finished(DCI)
    out = sdir / "report"
    assert (out / "jobs" / f"{DCI}.html").is_file()
    assert not list((out / "compare").iterdir())  # its partner has not finished: no side-by-side yet
    before = _pages(out)
    write_scripted_job(sdir, "runningtab", 6, 2)
    live.finished(RT)  # the second of the pair
    after = _pages(out)
    assert set(after) == {f"jobs/{DCI}.html", f"jobs/{RT}.html", f"compare/{RT}__vs__dci.html"}
    assert after[f"jobs/{DCI}.html"] == before[f"jobs/{DCI}.html"]  # the partner's page is not touched


def test_a_job_without_a_record_gets_no_page_and_no_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    (sdir / DCI / "result.json").unlink()  # the job failed before its record completed
    assert at_completion(sdir, DCI, [DCI], "dci", "runningtab") == []
    (sdir / DCI / "result.json").write_text("{}")
    (sdir / DCI / "job.json").write_text("{not json")  # a page that cannot be made: logged, never raised
    assert at_completion(sdir, DCI, [DCI], "dci", "runningtab") == []
    assert DCI in caplog.text and "next report build" in caplog.text


def test_a_build_never_rewrites_a_finished_page_and_lists_new_jobs_in_links(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    write_scripted_job(sdir, "runningtab", 6, 2)
    out = write_report(sdir, workers=0)
    before = _pages(out)
    assert _links(out) == {DCI: [["vs runningtab", f"compare/{RT}__vs__dci.html"]], RT: [["vs dci", f"compare/{RT}__vs__dci.html"]]}
    write_scripted_job(sdir, "runningtab_no_review", 6, 2)  # a new job, finished after the last build
    write_report(sdir, workers=0)
    after = _pages(out)
    assert {k: v for k, v in after.items() if k in before} == before  # same inode, same mtime: not written again
    assert set(after) - set(before) == {f"jobs/{NO_REVIEW}.html", f"compare/{NO_REVIEW}__vs__dci.html"}
    links = _links(out)
    assert ["vs runningtab_no_review", f"compare/{NO_REVIEW}__vs__dci.html"] in links[DCI]  # the old page's new link
    assert links[NO_REVIEW] == [["vs dci", f"compare/{NO_REVIEW}__vs__dci.html"]]


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")
@pytest.mark.slow
def test_a_finished_page_shows_links_to_partners_newer_than_it_from_disk(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    out = write_report(sdir, workers=0)
    page = out / "jobs" / f"{DCI}.html"
    dom, console = open_page(page, tmp_path / "p1")
    assert console == [] and 'id="side-by-side"' in dom and "hidden" in re.search(r'<p id="side-by-side"[^>]*>', dom).group(0)
    write_scripted_job(sdir, "runningtab", 6, 2)
    written = page.stat().st_mtime_ns
    write_report(sdir, workers=0)
    assert page.stat().st_mtime_ns == written
    dom, console = open_page(page, tmp_path / "p2")  # file://, the links from ../links.js
    assert console == [] and f'href="../compare/{RT}__vs__dci.html"' in dom
    (out / "links.js").unlink()  # no links file (before any build): the page points to the index
    dom, _ = open_page(page, tmp_path / "p3")
    assert 'href="../index.html#jobs"' in dom and "__vs__" not in dom


def test_pages_renders_every_page_again_with_todays_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to tab/match.py (which job pages use through tab/render.py) reaches every page with
    `--pages`; the cache this replaced kept such pages as they were, calling them current."""
    import tab.render

    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    write_scripted_job(sdir, "runningtab", 6, 2)
    assert main([str(sdir), "--workers", "0"]) == 0
    out = sdir / "report"
    before = _pages(out)
    marker = "clipped-by-changed-match"
    monkeypatch.setattr(tab.render, "clip", lambda line, wanted, limit: marker)  # tab.match.clip as render uses it
    assert main([str(sdir), "--workers", "0"]) == 0
    assert _pages(out) == before and marker not in (out / "jobs" / f"{RT}.html").read_text()  # a build leaves pages be
    assert main([str(sdir), "--workers", "0", "--pages"]) == 0
    after = _pages(out)
    assert set(after) == set(before) and all(after[k][0] != before[k][0] for k in before)  # every page written again
    assert marker in (out / "jobs" / f"{RT}.html").read_text()


def test_a_rescored_job_gets_its_pages_again(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    write_scripted_job(sdir, "runningtab", 6, 2)
    write_scripted_job(sdir, "dci", 6, 2, task="t2")
    out = write_report(sdir, workers=0)
    before = _pages(out)
    scores = json.loads((sdir / DCI / "scores.json").read_text()) if (sdir / DCI / "scores.json").is_file() else {"metrics": {}, "items": []}
    scores["metrics"]["pass_rate"] = 0.125
    (sdir / DCI / "scores.json").write_text(json.dumps(scores))
    rescored([sdir / DCI])
    after = _pages(out)
    changed = {k for k in before if after[k] != before[k]}
    assert changed == {f"jobs/{DCI}.html", f"compare/{RT}__vs__dci.html"}  # its page and its side-by-side; no other
    assert "12.5%" in (out / "jobs" / f"{DCI}.html").read_text()


def test_a_build_writes_missing_pages_and_removes_those_of_jobs_gone(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    write_scripted_job(sdir, "dci", 6, 2)
    write_scripted_job(sdir, "runningtab", 6, 2)
    out = write_report(sdir, workers=0)
    (out / "jobs" / f"{DCI}.html").unlink()  # e.g. the driver could not write it
    os.rename(sdir / RT, tmp_path / "gone")
    write_report(sdir, workers=0)
    assert set(_pages(out)) == {f"jobs/{DCI}.html"}
    assert _links(out) == {}
