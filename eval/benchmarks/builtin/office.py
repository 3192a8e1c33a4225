"""Deterministic office files: the same content gives the same bytes.

Office writers stamp the current time into their zip entries and core properties; here every
zip entry gets a fixed date and `docProps/core.xml` fixed created/modified times. PDFs come from
reportlab with `invariant=1` and uncompressed page streams (plain ASCII text only).

A document is a list of blocks: ("title", text), ("heading", text, level), ("para", text),
("bullets", [text, ...]), ("table", [[cell, ...], ...]) (first row = header).
"""

from __future__ import annotations

import csv
import io
import re
import textwrap
import zipfile
from pathlib import Path
from typing import Any

FIXED_ZIP_DATE = (2024, 1, 1, 0, 0, 0)
FIXED_W3CDTF = "2024-01-01T00:00:00Z"
Block = tuple[Any, ...]


def normalize_zip(data: bytes) -> bytes:
    """Rewrite an OOXML zip with fixed entry dates and fixed core-property times."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                text = body.decode("utf-8")
                text = re.sub(r"(<dcterms:(created|modified)\b[^>]*>)[^<]*(</dcterms:\2>)", rf"\g<1>{FIXED_W3CDTF}\g<3>", text)
                body = text.encode("utf-8")
            zi = zipfile.ZipInfo(info.filename, date_time=FIXED_ZIP_DATE)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, body)
    return out.getvalue()


def _save(path: Path, doc: Any) -> None:
    buf = io.BytesIO()
    doc.save(buf)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(normalize_zip(buf.getvalue()))


def write_docx(path: Path, blocks: list[Block], author: str = "Records Office") -> None:
    import docx

    d = docx.Document()
    d.core_properties.author = author
    d.core_properties.last_modified_by = author
    d.core_properties.comments = ""
    for b in blocks:
        kind = b[0]
        if kind == "title":
            d.add_heading(b[1], level=0)
        elif kind == "heading":
            d.add_heading(b[1], level=b[2] if len(b) > 2 else 1)
        elif kind == "para":
            d.add_paragraph(b[1])
        elif kind == "bullets":
            for item in b[1]:
                d.add_paragraph(item, style="List Bullet")
        elif kind == "table":
            rows = b[1]
            t = d.add_table(rows=len(rows), cols=len(rows[0]))
            t.style = "Table Grid"
            for i, row in enumerate(rows):
                for j, cell in enumerate(row):
                    t.cell(i, j).text = str(cell)
    _save(path, d)


def write_xlsx(path: Path, sheets: list[tuple[str, list[list[Any]]]], author: str = "Finance") -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    wb.properties.creator = author
    for name, rows in sheets:
        ws = wb.create_sheet(title=name[:31])
        for row in rows:
            ws.append(list(row))
    _save(path, wb)


def write_pptx(path: Path, slides: list[tuple[str, list[str]]]) -> None:
    """Slides of (title, bullet lines); the first slide uses the title layout."""
    from pptx import Presentation

    p = Presentation()
    p.core_properties.last_modified_by = "Communications"
    p.core_properties.author = "Communications"
    for i, (title, lines) in enumerate(slides):
        slide = p.slides.add_slide(p.slide_layouts[0 if i == 0 else 1])
        slide.shapes.title.text = title
        if lines:
            slide.placeholders[1].text = "\n".join(lines)
    _save(path, p)


def write_pdf(path: Path, blocks: list[Block]) -> None:
    """A plain report: Helvetica text lines, tables as aligned columns. ASCII only."""
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, invariant=1, pageCompression=0)
    c.setAuthor("Reporting")
    y = 800.0

    def line(text: str, size: int = 10, lead: float = 14.0) -> None:
        nonlocal y
        if y < 60:
            c.showPage()
            y = 800.0
        c.setFont("Helvetica-Bold" if size > 10 else "Helvetica", size)
        c.drawString(56, y, text)
        y -= lead

    for b in blocks:
        kind = b[0]
        if kind == "title":
            line(b[1], 16, 26)
        elif kind == "heading":
            line(b[1], 12, 20)
        elif kind == "para":
            for chunk in textwrap.wrap(b[1], 95):
                line(chunk)
            y -= 6
        elif kind == "bullets":
            for item in b[1]:
                for k, chunk in enumerate(textwrap.wrap(item, 90)):
                    line(("- " if k == 0 else "  ") + chunk)
        elif kind == "table":
            widths = [max(len(str(r[j])) for r in b[1]) + 3 for j in range(len(b[1][0]))]
            for row in b[1]:
                line("".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
            y -= 6
    c.showPage()
    c.save()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def markdown(blocks: list[Block]) -> str:
    """The same blocks as markdown (for .md sources and for reference deliverables)."""
    out = []
    for b in blocks:
        kind = b[0]
        if kind == "title":
            out.append(f"# {b[1]}\n")
        elif kind == "heading":
            out.append(f"{'#' * ((b[2] if len(b) > 2 else 1) + 1)} {b[1]}\n")
        elif kind == "para":
            out.append(f"{b[1]}\n")
        elif kind == "bullets":
            out.append("\n".join(f"- {i}" for i in b[1]) + "\n")
        elif kind == "table":
            rows = [[str(c) for c in r] for r in b[1]]
            out.append("\n".join(["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])] + ["| " + " | ".join(r) + " |" for r in rows[1:]]) + "\n")
    return "\n".join(out)


def csv_text(rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()
