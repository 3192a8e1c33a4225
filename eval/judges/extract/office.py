"""The office formats and PDF, each read once for text, tables and headings within `ExtractLimits`.

A docx, xlsx or pptx is a zip: its members are checked (count, declared and actual inflated sizes,
compression ratio) before any library parses it, so that no parser ever inflates a bomb. A
spreadsheet is read by the cells it holds, never by the size its `<dimension>` claims; a PDF's pages
are counted in its page tree before any is read.
"""

from __future__ import annotations

import zipfile
from typing import Any, BinaryIO

from eval.config import ExtractLimits, MiB
from eval.judges.extract.extracted import (
    Budget,
    Extracted,
    Table,
    Unreadable,
    cell_str,
    check_chars,
    markdown_headings,
    markdown_tables,
)

RATIO_FROM = 1 * MiB  # members smaller than this may compress as well as they like
MAX_TREE_DEPTH = 64  # a PDF page tree deeper than this is refused (a real one is a few levels)


def read(f: BinaryIO, suffix: str, limits: ExtractLimits) -> Extracted:
    """`f` read as `suffix` ('.docx', '.xlsx', '.xlsm', '.pptx', '.pdf')."""
    if suffix == ".pdf":
        return _pdf(f, limits)
    check_zip(f, limits)
    f.seek(0)
    if suffix == ".docx":
        return _docx(f, limits)
    if suffix == ".pptx":
        return _pptx(f, limits)
    return _xlsx(f, limits)


def check_zip(f: BinaryIO, limits: ExtractLimits) -> None:
    """Refuse a zip whose members are too many, would inflate too far, or inflate otherwise than declared."""
    try:
        z = zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise Unreadable(f"not a zip file ({e})") from None
    infos = z.infolist()
    if len(infos) > limits.zip_members:
        raise Unreadable(f"{len(infos):,} zip members; at most {limits.zip_members:,}")
    total = 0
    for i in infos:
        if i.file_size > limits.zip_part_bytes:
            raise Unreadable(f"zip member {i.filename!r} inflates to {i.file_size:,} bytes; at most {limits.zip_part_bytes:,}")
        if i.file_size > RATIO_FROM and i.file_size > limits.zip_ratio * max(i.compress_size, 1):
            raise Unreadable(f"zip member {i.filename!r} inflates {i.file_size / max(i.compress_size, 1):,.0f} times; at most {limits.zip_ratio:,.0f}")
        total += i.file_size
        if total > limits.zip_total_bytes:
            raise Unreadable(f"zip members inflate to more than {limits.zip_total_bytes:,} bytes")
    for i in infos:  # zipfile stops at the declared size and checks the CRC: what a parser will see
        n = 0
        try:
            with z.open(i) as m:
                while chunk := m.read(MiB):
                    n += len(chunk)
        except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError) as e:
            raise Unreadable(f"zip member {i.filename!r} cannot be inflated ({e})") from None
        if n != i.file_size:
            raise Unreadable(f"zip member {i.filename!r} inflates to {n:,} bytes, not the {i.file_size:,} it declares")


def _docx(f: BinaryIO, limits: ExtractLimits) -> Extracted:
    import docx

    d = docx.Document(f)
    budget = Budget(limits)
    tables: list[Table] = []
    for t in d.tables:
        rows = []
        for row in t.rows:
            budget.take(sum(tc.grid_span for tc in row._tr.tc_lst))  # a merged cell repeats per grid column
            rows.append([c.text for c in row.cells])
        tables.append(rows)
    paragraphs = d.paragraphs
    text = "\n".join([p.text for p in paragraphs] + ["\t".join(r) for t in tables for r in t])
    check_chars(text, limits)
    headings = [p.text.strip() for p in paragraphs if p.text.strip() and _is_heading(p.style.name if p.style is not None else "")]
    return Extracted(text, tables, headings)


def _is_heading(style: str | None) -> bool:
    return bool(style) and (style.startswith("Heading") or style == "Title")  # type: ignore[union-attr]


def _pptx(f: BinaryIO, limits: ExtractLimits) -> Extracted:
    from pptx import Presentation

    budget = Budget(limits)
    out, tables, headings = [], [], []
    for i, slide in enumerate(Presentation(f).slides, start=1):
        out.append(f"[slide {i}]")
        for shape in slide.shapes:
            if shape.has_text_frame:
                out.append(shape.text_frame.text)
            elif getattr(shape, "has_table", False) and shape.has_table:
                rows = []
                for row in shape.table.rows:
                    cells = list(row.cells)
                    budget.take(len(cells))
                    rows.append([c.text for c in cells])
                out.extend("\t".join(r) for r in rows)
                tables.append(rows)
        title = slide.shapes.title
        if title is not None and title.text.strip():
            headings.append(title.text.strip())
    text = "\n".join(out)
    check_chars(text, limits)
    return Extracted(text, tables, headings)


def _xlsx(f: BinaryIO, limits: ExtractLimits) -> Extracted:
    import openpyxl

    wb = openpyxl.load_workbook(f, read_only=True, data_only=True)
    budget = Budget(limits)
    sheets: list[tuple[str, Table]] = []
    try:
        for ws in wb.worksheets:
            ws.reset_dimensions()  # rows of the cells that exist, never padded to the size the file claims
            kept, width = [], 0
            for row in ws.iter_rows(values_only=True):
                width = max(width, len(row))
                if row.count(None) == len(row):
                    continue
                cells = [cell_str(v) for v in row]
                if any(c.strip() for c in cells):
                    budget.take(len(cells))
                    kept.append(cells)
            budget.take(sum(width - len(r) for r in kept), 0)  # every row as wide as the widest, as a sheet reads
            sheets.append((ws.title, [r + [""] * (width - len(r)) for r in kept]))
    finally:
        wb.close()
    text = "\n\n".join(f"[sheet {name}]\n" + "\n".join("\t".join(r) for r in rows) for name, rows in sheets)
    check_chars(text, limits)
    return Extracted(text, [rows for _, rows in sheets], markdown_headings(text))


def _pdf(f: BinaryIO, limits: ExtractLimits) -> Extracted:
    from pypdf import PdfReader

    reader = PdfReader(f)
    count_pages(reader.trailer["/Root"]["/Pages"], limits.pdf_pages)
    parts, chars = [], 0
    for page in reader.pages:
        parts.append(page.extract_text() or "")
        chars += len(parts[-1]) + 1
        if chars > limits.text_chars + 1:
            raise Unreadable(f"more than {limits.text_chars:,} characters of text")
    text = "\n".join(parts)
    return Extracted(text, markdown_tables(text, Budget(limits)), markdown_headings(text))


def count_pages(root: Any, cap: int) -> int:
    """The pages under the page-tree node `root`, walked without reading a page; `Unreadable` past
    `cap` pages, `cap` nodes that are no page, or a depth of MAX_TREE_DEPTH (a tree whose nodes share
    children, or loop, claims millions of pages in a few bytes)."""
    pages = nodes = 0
    stack = [(root, 0)]
    while stack:
        ref, depth = stack.pop()
        node = ref.get_object() if hasattr(ref, "get_object") else ref
        kids = node.get("/Kids") if hasattr(node, "get") else None
        if kids is None:
            pages += 1
            if pages > cap:
                raise Unreadable(f"more than {cap:,} pages")
            continue
        nodes += 1
        if depth >= MAX_TREE_DEPTH or nodes > cap:
            raise Unreadable(f"a page tree of more than {cap:,} pages")
        kids = kids.get_object()
        if len(kids) > cap:
            raise Unreadable(f"more than {cap:,} pages")
        stack.extend((k, depth + 1) for k in kids)
    return pages
