"""The text of an office document, to check what a script printed about it (never run, never imported).

A document has no text of its own to quote, only paragraphs and cells: `document_text` gives them
as lines (a paragraph, a slide's paragraph, a PDF text line; a table or sheet row as its cells joined
by tabs), from bytes the capture already read (docx, xlsx, pptx: their XML; pdf: the strings its text
operators draw). What cannot be read this way (an encrypted PDF, glyph-coded fonts, a legacy .doc)
gives text that matches nothing, so a script's lines about it are not credited: the capture errs
towards keeping a line unattributed, never towards inventing content. Bounded: at most
`MAX_INFLATED` bytes are decompressed per document, whatever its zip or streams claim.
"""

from __future__ import annotations

import base64
import html
import io
import re
import zipfile
import zlib
from collections.abc import Iterator

SUFFIXES = (".docx", ".xlsx", ".xlsm", ".pptx", ".pdf")
MAX_INFLATED = 16 * 1024 * 1024
MAX_PARTS = 500  # sheets or slides read
MAX_STEPS = 200_000  # elements or PDF tokens looked at: a document past this credits nothing (< 1 s)


class _Exhausted(Exception):
    pass


class _Budget:
    """Decompressed bytes left for one document."""

    def __init__(self) -> None:
        self.left = MAX_INFLATED
        self.steps = MAX_STEPS

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _Exhausted

    def zip_member(self, z: zipfile.ZipFile, name: str) -> str:
        if self.left <= 0:
            return ""
        with z.open(name) as f:
            data = f.read(self.left)
        self.left -= len(data)
        return data.decode("utf-8", errors="replace")

    def inflate(self, data: bytes) -> bytes:
        if self.left <= 0:
            return b""
        try:
            out = zlib.decompressobj().decompress(data, self.left)
        except zlib.error:
            return b""
        self.left -= len(out)
        return out


def is_document(rel: str) -> bool:
    return rel.lower().endswith(SUFFIXES)


def document_text(rel: str, data: bytes) -> str:
    """The document's paragraphs and rows, one per line ('' when nothing can be read)."""
    suffix = rel.lower().rsplit(".", 1)[-1]
    budget = _Budget()
    try:
        if suffix == "pdf":
            return _pdf(data, budget)
        z = zipfile.ZipFile(io.BytesIO(data))
        return {"docx": _docx, "xlsx": _xlsx, "xlsm": _xlsx, "pptx": _pptx}[suffix](z, budget)
    except (_Exhausted, zipfile.BadZipFile, KeyError, OSError, ValueError, RuntimeError, EOFError, NotImplementedError):
        return ""


def _elements(xml: str, tag: str, budget: _Budget) -> Iterator[tuple[str, str]]:
    return ((attrs, body) for _, _, attrs, body in _spans(xml, tag, budget))


def _spans(xml: str, tag: str, budget: _Budget) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, attributes, body) of each `<tag ...>body</tag>` or `<tag .../>`, in one forward
    pass (a regex with a lazy body rescans to the end for every unclosed tag: quadratic on hostile XML)."""
    opening, closing, pos = f"<{tag}", f"</{tag}>", 0
    while (start := xml.find(opening, pos)) >= 0:
        budget.step()
        after = start + len(opening)
        gt = xml.find(">", after)
        if gt < 0:
            return
        if xml[after : after + 1] not in (" ", ">", "/", "\t", "\n", "\r"):  # <w:pPr> is not <w:p>
            pos = after
            continue
        if xml[gt - 1] == "/":
            yield start, gt + 1, xml[after : gt - 1], ""
            pos = gt + 1
            continue
        end = xml.find(closing, gt)
        if end < 0:
            return
        pos = end + len(closing)
        yield start, pos, xml[after:gt], xml[gt + 1 : end]


_RUN = re.compile(r"<(w:t|a:t|t|T)(?:\s[^<>]*)?>([^<]*)</\1>")
_BREAK = re.compile(r"<(?:w:tab|a:tab|w:br|w:cr|a:br)\b[^<>]*/>")


def _runs(body: str) -> str:
    """The text of a paragraph's runs (`<w:t>`, `<a:t>`, a shared string's `<t>`), tabs and breaks kept."""
    body = _BREAK.sub(lambda m: "<T>\t</T>" if "tab" in m.group(0) else "<T>\n</T>", body)
    return html.unescape("".join(m.group(2) for m in _RUN.finditer(body)))


def _docx(z: zipfile.ZipFile, budget: _Budget) -> str:
    xml, out, pos = budget.zip_member(z, "word/document.xml"), [], 0
    for start, end, _, table in _spans(xml, "w:tbl", budget):  # tables: a row per line, cells joined by tabs
        out += [_runs(b) for _, b in _elements(xml[pos:start], "w:p", budget)]
        out += ["\t".join(" ".join(_runs(b) for _, b in _elements(cell, "w:p", budget)).strip() for _, cell in _elements(row, "w:tc", budget))
                for _, row in _elements(table, "w:tr", budget)]
        pos = end
    return "\n".join(out + [_runs(b) for _, b in _elements(xml[pos:], "w:p", budget)])


def _pptx(z: zipfile.ZipFile, budget: _Budget) -> str:
    names = sorted((n for n in z.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                   key=lambda n: int(re.findall(r"\d+", n)[-1]))[:MAX_PARTS]
    return "\n".join(_runs(b) for n in names for _, b in _elements(budget.zip_member(z, n), "a:p", budget))


def _xlsx(z: zipfile.ZipFile, budget: _Budget) -> str:
    names = z.namelist()
    shared = []
    if "xl/sharedStrings.xml" in names:
        shared = [_runs(si) for _, si in _elements(budget.zip_member(z, "xl/sharedStrings.xml"), "si", budget)]
    out = []
    for n in sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))[:MAX_PARTS]:
        for _, row in _elements(budget.zip_member(z, n), "row", budget):
            cells = []
            for attrs, body in _elements(row, "c", budget):
                v = re.search(r"<v>([^<]*)</v>", body)
                if 't="s"' in attrs and v and v.group(1).isdigit() and int(v.group(1)) < len(shared):
                    value = shared[int(v.group(1))]
                elif v:
                    value = html.unescape(v.group(1))
                else:
                    value = _runs(body)
                cells.append(value.strip())
            out.append("\t".join(cells))
    return "\n".join(out)


_PDF_STREAM = re.compile(rb"(?<!end)stream\r?\n")
_PDF_TOKEN = re.compile(rb"\(|<[0-9A-Fa-f\s]*>|-?\d*\.?\d+|[A-Za-z'\"*]+|\[|\]")
_PAREN = re.compile(rb"\\.|[()]", re.S)
_ESCAPE = re.compile(rb"\\([0-7]{1,3}|.)", re.S)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f", b"\n": b"", b"\r": b""}
_NEW_LINE = {b"Td", b"TD", b"T*", b"Tm", b"ET", b"'", b'"'}
_SHOW = {b"Tj", b"TJ", b"'", b'"'}


def _pdf(data: bytes, budget: _Budget) -> str:
    lines: list[str] = []
    pos = 0
    while m := _PDF_STREAM.search(data, pos):
        end = data.find(b"endstream", m.end())
        if end < 0:
            break
        head = data[max(pos, m.start() - 1000) : m.start()]
        body = _decoded(data[m.end() : end], head[head.rfind(b"obj") + 1 :], budget)
        if body and b"BT" in body:
            lines.extend(_text_lines(body, budget))
        pos = end + len(b"endstream")
    return "\n".join(line for line in lines if line.strip())


def _decoded(body: bytes, head: bytes, budget: _Budget) -> bytes | None:
    """A stream's bytes through its filters (Flate, ASCII85, ASCIIHex); None for any other filter."""
    filters: list[bytes] = []
    if b"/Filter" in head:
        spec = head.split(b"/Filter", 1)[1].lstrip()
        spec = spec[: spec.index(b"]") + 1] if spec.startswith(b"[") and b"]" in spec else spec.split(None, 1)[0] if spec else b""
        filters = re.findall(rb"/(\w+)", spec)
    for name in filters:
        if name == b"FlateDecode":
            body = budget.inflate(body)
        elif name == b"ASCII85Decode":
            try:
                body = base64.a85decode(body.strip().removeprefix(b"<~").removesuffix(b"~>"), ignorechars=b" \t\n\r\v")
            except ValueError:
                return None
        elif name == b"ASCIIHexDecode":
            hexed = re.sub(rb"[^0-9A-Fa-f]", b"", body.split(b">", 1)[0])
            body = bytes.fromhex((hexed + b"0" * (len(hexed) % 2)).decode())
        else:
            return None
    return body


def _text_lines(content: bytes, budget: _Budget) -> list[str]:
    """The strings a content stream's text operators draw, a line per text move (one forward pass)."""
    lines, line, pending, in_array, pos = [], [], [], False, 0
    while m := _PDF_TOKEN.search(content, pos):
        tok, pos = m.group(0), m.end()
        budget.step()
        c = tok[:1]
        if c == b"(":
            depth = 1
            while depth and (p := _PAREN.search(content, pos)):
                budget.step()
                pos = p.end()
                depth += {b"(": 1, b")": -1}.get(p.group(0), 0)
            if depth:  # an unclosed string: nothing after it is text
                break
            pending.append(_literal(content[m.end() : pos - 1]))
        elif c == b"<":
            hexed = re.sub(rb"\s", b"", tok[1:-1])
            pending.append(bytes.fromhex((hexed + b"0" * (len(hexed) % 2)).decode()).decode("latin-1"))
        elif tok == b"[":
            in_array = True
        elif tok == b"]":
            in_array = False
        elif c.isdigit() or c in b"-.":
            if in_array and float(tok) <= -200:  # a wide gap inside TJ reads as a space
                pending.append(" ")
        else:
            if tok in _NEW_LINE and line:
                lines.append("".join(line))
                line = []
            if tok in _SHOW:
                line.extend(pending)
            pending = []
    if line:
        lines.append("".join(line))
    return lines


def _literal(raw: bytes) -> str:
    def unescape(m: re.Match[bytes]) -> bytes:
        code = m.group(1)
        return bytes([int(code, 8) & 0xFF]) if code[:1].isdigit() and code[:1] < b"8" else _ESCAPES.get(code, code)

    return _ESCAPE.sub(unescape, raw).decode("latin-1")
