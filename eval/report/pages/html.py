"""The report's HTML building blocks: the page frame and its styles, tables, figures, sections.

Self-contained: styles inline, figures embedded as data URIs, no network, so the pages open from
disk anywhere. The site itself (index, job pages, side-by-side views) is written by `site.py`.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from eval.report.load import Job
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
    from eval.report.pages.colors import STYLE as HEAT_STYLE
    from eval.report.pages.viewer_assets import STYLE as VIEWER_STYLE

    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title><style>{STYLE}{VIEWER_STYLE}{HEAT_STYLE}</style></head>\n<body>\n{body}\n{script}</body></html>\n"
    )


def table_html(t: Table, links: dict[str, str] | None = None, under: str = "") -> str:
    """A table; cells equal to a key of `links` become links; `under`: the heading it is shown under
    (`Table.heading`)."""
    cols, cells = t.shown()
    out = [f"<h3>{html.escape(t.heading(under))}</h3>", f'<div class="wide"><table id="{html.escape(t.name)}"><thead><tr>']
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
    out += [table_html(t, under=s.title) for t in s.tables]
    out += [image(f.path, f.title) + (f'<p class="note">{html.escape(f.caption)}</p>' if f.caption else "") for f in s.figures]
    out.append("</section>")
    return "\n".join(out)


def kv_table(pairs: list[tuple[str, object]]) -> str:
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(fmt(v, 4))}</td></tr>" for k, v in pairs)
    return f"<table>{rows}</table>"


def job_title(j: Job) -> str:
    return f"{j.benchmark} · {j.task_id} · {j.harness_method} · {j.model} · seed {j.seed}"
