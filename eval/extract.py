"""Text, tables and headings out of deliverable files (docx, xlsx, pptx, pdf, csv, md, txt, json).

Judges read office files as text, the way Workspace-Bench's judge does; the rule judge's checks
also need their tables and headings. Unreadable files give empty results, never an exception:
a broken deliverable fails its checks instead of crashing the scoring.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)

Table = list[list[str]]
TEXT_SUFFIXES = {".md", ".txt", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".html", ".xml", ".log", ".py"}


def cell_str(value: object) -> str:
    """A spreadsheet cell as text: integers without '.0', dates as ISO dates."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def file_text(path: Path) -> str:
    """The readable text of a file; office formats extracted, others decoded as UTF-8."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".docx":
            return _docx_text(path)
        if suffix in (".xlsx", ".xlsm"):
            return "\n\n".join(f"[sheet {name}]\n" + "\n".join("\t".join(r) for r in rows) for name, rows in _xlsx_sheets(path))
        if suffix == ".pptx":
            return _pptx_text(path)
        if suffix == ".pdf":
            return _pdf_text(path)
        data = path.read_bytes()
    except Exception as e:  # noqa: BLE001 - a broken deliverable is scored, not fatal
        log.warning("cannot extract text from %s: %s", path, e)
        return ""
    if suffix not in TEXT_SUFFIXES and b"\x00" in data[:4096]:
        return ""
    return data.decode("utf-8", errors="replace")


def file_tables(path: Path) -> list[Table]:
    """Every table in a file: csv/tsv, xlsx sheets, docx/pptx tables, markdown pipe tables, JSON records."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            text = path.read_text(encoding="utf-8-sig", errors="replace")
            rows = [r for r in csv.reader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ",")]
            return [[r for r in rows if any(c.strip() for c in r)]]
        if suffix in (".xlsx", ".xlsm"):
            return [rows for _, rows in _xlsx_sheets(path)]
        if suffix == ".docx":
            import docx

            return [[[c.text for c in row.cells] for row in t.rows] for t in docx.Document(str(path)).tables]
        if suffix == ".pptx":
            return _pptx_tables(path)
        if suffix == ".json":
            return _json_tables(json.loads(path.read_text(encoding="utf-8")))
        if suffix == ".pdf":
            return markdown_tables(_pdf_text(path))
    except Exception as e:  # noqa: BLE001
        log.warning("cannot read tables from %s: %s", path, e)
        return []
    return markdown_tables(file_text(path))


def file_headings(path: Path) -> list[str]:
    """Headings in document order: markdown `#` lines, docx Title/Heading paragraphs, pptx slide titles."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".docx":
            import docx

            return [
                p.text.strip()
                for p in docx.Document(str(path)).paragraphs
                if p.text.strip() and (p.style.name.startswith("Heading") or p.style.name == "Title")
            ]
        if suffix == ".pptx":
            from pptx import Presentation

            titles = []
            for slide in Presentation(str(path)).slides:
                title = slide.shapes.title
                if title is not None and title.text.strip():
                    titles.append(title.text.strip())
            return titles
    except Exception as e:  # noqa: BLE001
        log.warning("cannot read headings from %s: %s", path, e)
        return []
    return [m.group(2).strip() for m in re.finditer(r"^(#{1,6})\s+(.+?)\s*#*\s*$", file_text(path), re.M)]


def markdown_tables(text: str) -> list[Table]:
    """Pipe tables (`| a | b |`) in markdown text; the `|---|` separator row is dropped."""
    tables: list[Table] = []
    current: Table = []
    for line in text.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|") or (s.count("|") >= 2 and current):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c) or not any(cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def _docx_text(path: Path) -> str:
    import docx

    d = docx.Document(str(path))
    parts = [p.text for p in d.paragraphs]
    for t in d.tables:
        parts.extend("\t".join(c.text for c in row.cells) for row in t.rows)
    return "\n".join(parts)


def _xlsx_sheets(path: Path) -> list[tuple[str, Table]]:
    import openpyxl

    wb = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    try:
        sheets = []
        for ws in wb.worksheets:
            rows = [[cell_str(v) for v in row] for row in ws.iter_rows(values_only=True)]
            sheets.append((ws.title, [r for r in rows if any(c.strip() for c in r)]))
        return sheets
    finally:
        wb.close()


def _pptx_text(path: Path) -> str:
    from pptx import Presentation

    out = []
    for i, slide in enumerate(Presentation(str(path)).slides, start=1):
        out.append(f"[slide {i}]")
        for shape in slide.shapes:
            if shape.has_text_frame:
                out.append(shape.text_frame.text)
            elif getattr(shape, "has_table", False) and shape.has_table:
                out.extend("\t".join(c.text for c in row.cells) for row in shape.table.rows)
    return "\n".join(out)


def _pptx_tables(path: Path) -> list[Table]:
    from pptx import Presentation

    return [
        [[c.text for c in row.cells] for row in shape.table.rows]
        for slide in Presentation(str(path)).slides
        for shape in slide.shapes
        if getattr(shape, "has_table", False) and shape.has_table
    ]


def _pdf_text(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)


def _json_tables(obj: object) -> list[Table]:
    if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        header = list(dict.fromkeys(k for r in obj for k in r))
        return [[header] + [[cell_str(r.get(k)) for k in header] for r in obj]]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _json_tables(v)]
    return []
