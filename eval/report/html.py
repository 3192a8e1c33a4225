"""The report as static HTML: `index.html` (tables, figures, every job) and one page per job.

Self-contained: styles and the viewer's plain script inline, figures embedded as data URIs, no
network, so the pages open from disk anywhere. Besides, `compare/` holds the side-by-side views.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from urllib.parse import quote

from eval.report.load import Job, Sweep, header_notes
from eval.report.section import Section, Table, fmt

STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1500px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0} td.best{font-weight:bold;background:#fff4c2}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:6px;margin:2px 0;font-size:12px}
.skip{color:#8a5a00} .note{color:#555;font-size:13px} img{max-width:100%;border:1px solid #ddd}
.msg{border-left:4px solid #ccc;padding-left:8px;margin:8px 0} .assistant{border-color:#4c72b0}
.tool{border-color:#55a868} .user{border-color:#dd8452} .system{border-color:#999}
.wide{overflow-x:auto} details{margin:.6em 0} summary{cursor:pointer;font-weight:bold}
"""


def page(title: str, body: str, script: str = "") -> str:
    """A whole page; `script` (the viewer's, inline) goes last, after everything it works on."""
    from eval.report.viewer_assets import STYLE as VIEWER_STYLE

    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title><style>{STYLE}{VIEWER_STYLE}</style></head>\n<body>\n{body}\n{script}</body></html>\n"
    )


def table_html(t: Table, links: dict[str, str] | None = None) -> str:
    """A table; cells equal to a key of `links` become links."""
    cols, cells = t.shown()
    out = [f"<h3>{html.escape(t.title)}</h3>", f'<div class="wide"><table id="{html.escape(t.name)}"><thead><tr>']
    out += [f"<th>{html.escape(str(c))}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    for i, row in enumerate(cells):
        out.append("<tr>")
        for j, c in enumerate(row):
            text = html.escape(str(c))
            if links and str(c) in links:
                text = f'<a href="{html.escape(links[str(c)])}">{text}</a>'
            out.append(f'<td class="best">{text}</td>' if (i, j) in t.best and c else f"<td>{text}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    out += [f'<p class="note">{html.escape(n)}</p>' for n in t.notes]
    return "".join(out)


def image(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></figure>'


def section_html(s: Section) -> str:
    out = [f'<section id="{html.escape(s.name)}"><h2>{html.escape(s.title)}</h2>']
    if s.skipped:
        out.append(f'<p class="skip">Skipped: {html.escape(s.skipped)}</p>')
    out += [f'<p class="note">{html.escape(n)}</p>' for n in s.notes]
    out += [table_html(t) for t in s.tables]
    out += [image(f.path, f.title) + (f'<p class="note">{html.escape(f.caption)}</p>' if f.caption else "") for f in s.figures]
    out.append("</section>")
    return "\n".join(out)


def index_html(sweep: Sweep, sections: list[Section], compare: dict[str, list[tuple[str, str]]]) -> str:
    from eval.report.viewer_assets import script_tag
    from eval.report.viewer_index import jobs_section

    toc = " · ".join(f'<a href="#{html.escape(s.name)}">{html.escape(s.title.split(":")[0])}</a>' for s in sections)
    body = [f"<h1>Report of sweep {html.escape(sweep.name)}</h1>", f"<p>{toc} · <a href=\"#jobs\">Jobs</a></p>"]
    body.append(f"<p>{len(sweep.jobs)} jobs, {len(sweep.scored())} scored.</p>")
    body += [f'<p class="skip">{html.escape(n)}</p>' for n in header_notes(sweep)]
    body += [section_html(s) for s in sections]
    body.append(f'<section id="jobs"><h2>Jobs</h2>{jobs_section(sweep, compare)}</section>')
    return page(f"Report: {sweep.name}", "\n".join(body), script_tag())


def write_site(sweep: Sweep, sections: list[Section], out: Path) -> Path:
    """index.html, a page per job and a side-by-side page per comparison (`viewer_compare.pairs`)."""
    from eval.report.jobpage import job_html
    from eval.report.viewer_compare import compare_html, compare_name, pairs

    (out / "jobs").mkdir(parents=True, exist_ok=True)
    (out / "compare").mkdir(exist_ok=True)
    compare: dict[str, list[tuple[str, str]]] = {}
    for a, b in pairs(sweep):
        name = compare_name(a, b)
        (out / "compare" / name).write_text(compare_html(a, b), encoding="utf-8")
        for j, other in ((a, b), (b, a)):
            compare.setdefault(j.job_id, []).append((f"vs {other.method}", f"compare/{quote(name)}"))
    for j in sweep.jobs:
        links = [(label, f"../{href}") for label, href in compare.get(j.job_id, [])]
        (out / "jobs" / f"{j.job_id}.html").write_text(job_html(j, links), encoding="utf-8")
    index = out / "index.html"
    index.write_text(index_html(sweep, sections, compare), encoding="utf-8")
    return index


def kv_table(pairs: list[tuple[str, object]]) -> str:
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(fmt(v, 4))}</td></tr>" for k, v in pairs)
    return f"<table>{rows}</table>"


def job_title(j: Job) -> str:
    return f"{j.benchmark} · {j.task_id} · {j.method} · {j.model} · seed {j.seed}"
