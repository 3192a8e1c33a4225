"""The report as a static site: `index.html` (tables, figures, every job), one page per job, and
`compare/` with the side-by-side views.

Self-contained (see `html.py`): the pages open from disk anywhere.
"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

from eval.report.html import page, section_html
from eval.report.jobpage import job_html
from eval.report.load import Sweep, header_notes
from eval.report.section import Section
from eval.report.viewer_assets import script_tag
from eval.report.viewer_compare import compare_html, compare_name, pairs
from eval.report.viewer_index import jobs_section


def index_html(sweep: Sweep, sections: list[Section], compare: dict[str, list[tuple[str, str]]]) -> str:
    toc = " · ".join(f'<a href="#{html.escape(s.name)}">{html.escape(s.title.split(":")[0])}</a>' for s in sections)
    body = [f"<h1>Report of sweep {html.escape(sweep.name)}</h1>", f"<p>{toc} · <a href=\"#jobs\">Jobs</a></p>"]
    body.append(f"<p>{len(sweep.jobs)} jobs, {len(sweep.scored())} scored.</p>")
    body += [f'<p class="skip">{html.escape(n)}</p>' for n in header_notes(sweep)]
    body += [section_html(s) for s in sections]
    body.append(f'<section id="jobs"><h2>Jobs</h2>{jobs_section(sweep, compare)}</section>')
    return page(f"Report: {sweep.name}", "\n".join(body), script_tag())


def write_site(sweep: Sweep, sections: list[Section], out: Path) -> Path:
    """index.html, a page per job and a side-by-side page per comparison (`viewer_compare.pairs`)."""
    (out / "jobs").mkdir(parents=True, exist_ok=True)
    (out / "compare").mkdir(exist_ok=True)
    compare: dict[str, list[tuple[str, str]]] = {}
    for a, b in pairs(sweep):
        name = compare_name(a, b)
        with a.reading(), b.reading():
            page_text = compare_html(a, b)
        (out / "compare" / name).write_text(page_text, encoding="utf-8")
        for j, other in ((a, b), (b, a)):
            compare.setdefault(j.job_id, []).append((f"vs {other.method}", f"compare/{quote(name)}"))
    for j in sweep.jobs:
        links = [(label, f"../{href}") for label, href in compare.get(j.job_id, [])]
        with j.reading():
            page_text = job_html(j, links)
        (out / "jobs" / f"{j.job_id}.html").write_text(page_text, encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_html(sweep, sections, compare), encoding="utf-8")
    return index
