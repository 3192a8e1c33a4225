"""A job page whose record is unchanged but whose side-by-side links changed (a partner job finished
since the last build) gets its links replaced in place instead of being rendered again: rendering
a page reads its job's trajectory and replays every turn, and at the end of a sweep run cell by
cell each new job changes the links of its DCI partner's page (issue 15, item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eval.report import load, site, write_report
from tests.test_report_incremental import CHANGED, _from_scratch, _tree, sweep  # noqa: F401 (fixture)

PARTNER = "wb__t1__runningtab__m1__s0"  # compared with CHANGED (the DCI job of t1, m1, s0)


@pytest.fixture()
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The job pages rendered, by job id (workers=0: in this process)."""
    seen: list[str] = []
    real = site.job_html
    monkeypatch.setattr(site, "job_html", lambda job, links=None: seen.append(job.job_id) or real(job, links))
    return seen


def test_a_new_partner_relinks_the_unchanged_page_without_rendering_it(sweep: Path, tmp_path: Path, rendered: list[str]) -> None:  # noqa: F811
    aside = tmp_path / "aside"
    shutil.move(sweep / PARTNER, aside)
    out = write_report(sweep, workers=0)
    page = out / "jobs" / f"{CHANGED}.html"
    assert PARTNER not in page.read_text()
    shutil.move(aside, sweep / PARTNER)
    rendered.clear()
    write_report(sweep, workers=0)
    assert rendered == [PARTNER]  # the new job's page only; its partner's is relinked
    assert f"{PARTNER}__vs__dci.html" in page.read_text()
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_a_partner_gone_unlinks_the_page(sweep: Path, tmp_path: Path, rendered: list[str]) -> None:  # noqa: F811
    out = write_report(sweep, workers=0)
    shutil.rmtree(sweep / PARTNER)
    rendered.clear()
    write_report(sweep, workers=0)
    assert rendered == []
    assert PARTNER not in (out / "jobs" / f"{CHANGED}.html").read_text()
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_a_page_without_its_link_markers_is_rendered_again(sweep: Path, tmp_path: Path, rendered: list[str]) -> None:  # noqa: F811
    aside = tmp_path / "aside"
    shutil.move(sweep / PARTNER, aside)
    out = write_report(sweep, workers=0)
    page = out / "jobs" / f"{CHANGED}.html"
    page.write_text("edited by hand")
    shutil.move(aside, sweep / PARTNER)
    rendered.clear()
    write_report(sweep, workers=0)
    assert sorted(rendered) == sorted([PARTNER, CHANGED])
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_a_symlinked_page_is_replaced_not_followed(sweep: Path, tmp_path: Path) -> None:  # noqa: F811
    aside = tmp_path / "aside"
    shutil.move(sweep / PARTNER, aside)
    out = write_report(sweep, workers=0)
    page = out / "jobs" / f"{CHANGED}.html"
    target = tmp_path / "elsewhere.html"
    target.write_bytes(page.read_bytes())
    page.unlink()
    page.symlink_to(target)
    shutil.move(aside, sweep / PARTNER)
    write_report(sweep, workers=0)
    assert not page.is_symlink() and PARTNER not in target.read_text()
    assert _tree(out) == _from_scratch(sweep, tmp_path)


def test_a_build_reads_the_ledger_once(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    calls: list[int] = []
    real = load.Sweep.failed_attempts
    monkeypatch.setattr(load.Sweep, "failed_attempts", lambda self: calls.append(1) or real(self))
    write_report(sweep)
    assert len(calls) == 1  # the Markdown report and the index share the header's notes
