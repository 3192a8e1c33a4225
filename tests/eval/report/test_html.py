"""The HTML report opened in headless Chromium (Debian package `chromium`): the results table and a
job page render, with no console error, and every resource is inside the pages or beside them.
The viewer's own behaviour (tab panel per turn, filters, side by side) is in tests/eval/report/test_viewer.py."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from eval.report import write_report
from tests.helpers.report_sweeps import build_sweep_a, build_sweep_b

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install -y chromium)")


def open_page(page: Path | str, profile: Path) -> tuple[str, list[str]]:
    """The page's DOM after load, and the console messages Chromium logged (`page`: a file, or a
    file URL with a fragment)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           "--enable-logging=stderr", "--v=0", "--dump-dom", page if isinstance(page, str) else page.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sdir = tmp_path_factory.mktemp("html") / "s"
    build_sweep_a(sdir)
    build_sweep_b(sdir)
    return write_report(sdir)


def test_console_errors_are_detected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    _, console = open_page(bad, tmp_path / "profile")
    assert any("Uncaught ReferenceError" in line for line in console)


def test_index_shows_the_results_and_links_every_job(report: Path, tmp_path: Path) -> None:
    dom, console = open_page(report / "index.html", tmp_path / "profile")
    assert console == []
    table1 = re.search(r'<table id="table1">(.*?)</table>', dom, re.DOTALL)
    assert table1 is not None
    assert "<th>rubric_pass_rate</th>" in table1.group(1) and '<td class="best">' in table1.group(1)
    assert dom.count("<tr>") > 40
    for name in ("table1_vs_dci", "table3", "figure2", "figure4_left", "figure5", "table4", "jobs"):
        assert f'id="{name}"' in dom, name
    assert "right part skipped: no probe results" in dom and "failed with" not in dom  # no analysis crashed
    for alt in ("Figure 2", "Figure 4 (left)", "Figure 5 (wb)"):
        assert f'<img alt="{alt}" src="data:image/png;base64,' in dom, alt
    jobs = re.findall(r'href="(jobs/[^"]+\.html)"', re.search(r'id="jobs-table">(.*?)</table>', dom, re.DOTALL).group(1))
    assert len(jobs) == 36 and all((report / j).is_file() for j in jobs)


def test_pages_need_nothing_from_outside(report: Path) -> None:
    pages = [report / "index.html", *sorted((report / "jobs").glob("*.html")), *sorted((report / "compare").glob("*.html"))]
    assert len(pages) > 37
    for page in pages:
        html = page.read_text()
        job = ['<script type="application/json" id="viewer-data">', '<script src="../links.js">', "<script>"]  # the links every build writes
        assert re.findall(r"<script[^>]*>", html) in ([], ["<script>"], job), page.name
        for src in re.findall(r'src="([^"]*)"', html):
            assert src.startswith("data:") or (src == "../links.js" and (page.parent / src).is_file()), (page.name, src[:40])
        for href in re.findall(r'href="([^"]*)"', html):
            assert href.startswith(("#", "data:")) or (page.parent / href.split("#")[0]).is_file(), (page.name, href)


def test_job_page_shows_trajectory_tab_and_scores(report: Path, tmp_path: Path) -> None:
    dom, console = open_page(report / "jobs" / "wb__t1__runningtab__m1__s0.html", tmp_path / "profile")
    assert console == []
    assert "The tab over time" in dom and "tab_add → r1, r2" in dom and "finish check (open)" in dom
    assert "The tab after turn 5" in dom and "(C) Review at t5 (tool)" in dom
    assert "Trajectory and tab, turn by turn" in dom and "Evaluator view" not in dom  # the judges read the same
    assert "Items (4 of 4 passed)" in dom
    dom, console = open_page(report / "jobs" / "wb__t9__runningtab__m1__s0.html", tmp_path / "profile2")
    assert console == []
    assert "Supplier list: Acme Corp" in dom
    delivered = dom.split('<h2 id="deliverable">Deliverable</h2>')[1].split("<h2>")[0]  # the file's text under its link
    assert re.search(r'<h4 class="file"><a href="[^"]+/output/report.md">output/report.md</a></h4>\s*<pre class="delivered">The total is 999.</pre>', delivered)
    assert "output/report.md" in dom and "[tab] +L1 a.md" in dom
    full, view = dom.split("Trajectory and tab, turn by turn")[1].split("Evaluator view: tab traces removed")
    assert "Supplier list: Acme Corp" in view and "tab_add" not in view and "tab_add" in full
    assert "55,000: shown t2 · read L1 · lost" in dom  # where a failed rubric's value went


def test_headings_say_a_thing_once_and_the_jobs_table_fits(report: Path) -> None:
    """A table under its section is not headed by the section's words again; metrics are in % on every
    page (as in Table 1); the jobs table names a job by its id's last part (the rest are its columns)."""
    index = (report / "index.html").read_text()
    assert index.count("Table 1: main results") == 1
    heads = re.findall(r"<h([23])>([^<]*)</h\1>", index)
    for (level, text), (next_level, next_text) in zip(heads, heads[1:], strict=False):
        if level == "2" and next_level == "3":
            assert not next_text.startswith(text), (text, next_text)
    links = re.findall(r'<a href="jobs/([^"]+)\.html" title="([^"]+)">([^<]+)</a>', index)
    assert links and all(title == job and len(text) < len(job) for job, title, text in links)
    page = (report / "jobs" / "wb__t9__runningtab__m1__s0.html").read_text()
    assert re.search(r"pass_rate \d+\.\d%", page) and "pass_rate 0." not in page  # the job's own scores.json metrics
