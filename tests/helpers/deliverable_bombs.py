"""Hostile deliverables for the judging side's tests (no tests here): small files that make a naive
extractor build gigabytes or run for hours. Each is a few KB to a few hundred KB on disk.

  xlsx_dimension_bomb   1.5 KB: `<dimension ref="A1:XFD1048576"/>` and two real cells (A1:B1) plus one
                        at XFD1048576: an extractor that pads to the claimed size builds 1M rows x 16,384
  docx/pptx/xlsx_zip_bomb  one part inflated to `part_bytes` of repeated elements (ratio ~700:1)
  pdf_page_bomb         ~1 KB: a page tree whose nodes share their children, fanout**depth pages
  redos_markdown        a heading line that made the old heading regex run for O(n^3) steps
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from eval.benchmarks.builtin import office

_CT = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
       '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
       '<Default Extension="xml" ContentType="application/xml"/>'
       '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
       '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>')
_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
         '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_WB = ('<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
       'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>')
_WB_RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>')
_SHEET = ('<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
          '<dimension ref="A1:XFD1048576"/><sheetData>'
          '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1"><v>42</v></c></row>'
          '<row r="1048576"><c r="XFD1048576"><v>7</v></c></row></sheetData></worksheet>')


def xlsx_dimension_bomb() -> bytes:
    """The issue's spreadsheet: a claimed size of A1:XFD1048576, three real cells."""
    return minimal_xlsx(_SHEET)


def minimal_xlsx(sheet_xml: str) -> bytes:
    """The smallest workbook a reader opens: one sheet of the given XML."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in [("[Content_Types].xml", _CT), ("_rels/.rels", _RELS), ("xl/workbook.xml", _WB),
                           ("xl/_rels/workbook.xml.rels", _WB_RELS), ("xl/worksheets/sheet1.xml", sheet_xml)]:
            z.writestr(name, body)
    return buf.getvalue()


def _inflate(data: bytes, part: str, before: bytes, unit: bytes, part_bytes: int, drop: bytes = b"") -> bytes:
    """`data` (an OOXML zip) with `unit` repeated to ~`part_bytes` inserted into `part` before `before`
    (and `drop` removed from it)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if drop:
                body = body.replace(drop, b"")
            if info.filename != part:
                dst.writestr(info.filename, body)
                continue
            head, sep, tail = body.rpartition(before)
            assert sep, f"{before!r} not in {part}"
            chunk = unit * max(1, (1 << 20) // len(unit))
            with dst.open(part, "w", force_zip64=True) as f:
                f.write(head)
                for _ in range(max(1, part_bytes // len(chunk))):
                    f.write(chunk)
                f.write(sep + tail)
    return out.getvalue()


def _made(write: Callable[[Path], None], suffix: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"f{suffix}"
        write(path)
        return path.read_bytes()


def docx_zip_bomb(part_bytes: int = 256 << 20) -> bytes:
    """A real docx whose word/document.xml holds `part_bytes` of empty paragraphs."""
    data = _made(lambda p: office.write_docx(p, [("title", "Summary"), ("para", "Quarterly notes.")]), ".docx")
    return _inflate(data, "word/document.xml", b"<w:sectPr", b"<w:p/>", part_bytes)


def pptx_zip_bomb(part_bytes: int = 256 << 20) -> bytes:
    """A real pptx whose first slide holds `part_bytes` of empty shapes."""
    data = _made(lambda p: office.write_pptx(p, [("Deck", ["Point one"])]), ".pptx")
    shape = b'<p:sp><p:nvSpPr><p:cNvPr id="99" name="x"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/></p:sp>'
    return _inflate(data, "ppt/slides/slide1.xml", b"</p:spTree>", shape, part_bytes)


def xlsx_zip_bomb(part_bytes: int = 256 << 20) -> bytes:
    """A real xlsx whose sheet holds `part_bytes` of one-cell rows (its `<dimension>` left out, so that
    every row is read)."""
    data = _made(lambda p: office.write_xlsx(p, [("S", [["Name", "Hours"], ["Atlas", 41]])]), ".xlsx")
    row = b'<row><c t="inlineStr"><is><t>x</t></is></c></row>'
    return _inflate(data, "xl/worksheets/sheet1.xml", b"</sheetData>", row, part_bytes, drop=b'<dimension ref="A1:B2"/>')


def pdf_page_bomb(fanout: int = 100, depth: int = 3) -> bytes:
    """A PDF of fanout**depth pages in ~1 KB: each level of the page tree is one node listed `fanout`
    times by its parent (a page tree may share nodes in no reader's favour), every page the same."""
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(depth):  # objects 2 .. depth+1: the Pages nodes, the root first
        kid = level + 3
        kids = b" ".join([f"{kid} 0 R".encode()] * fanout)
        parent = b"" if level == 0 else f" /Parent {level + 1} 0 R".encode()
        objs.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(fanout ** (depth - level)).encode() + parent + b" >>")
    font, content = depth + 3, depth + 4
    objs.append(f"<< /Type /Page /Parent {depth + 1} 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 {font} 0 R >> >> "
                f"/Contents {content} 0 R >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    stream = b"BT /F1 12 Tf 20 100 Td (Page text) Tj ET"
    objs.append(b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def redos_markdown(n: int = 20_000) -> str:
    """A proper heading, then a heading line of `n` blanks that the old pattern backtracked over in O(n^3)."""
    return "# Title\n\nSome text.\n\n# a" + " \t" * (n // 2) + "x\n"
