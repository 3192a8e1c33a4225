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

SUFFIXES = (".docx", ".xlsx", ".xlsm", ".pptx", ".pdf")
MAX_INFLATED = 16 * 1024 * 1024
MAX_PARTS = 500  # sheets or slides read


class _Budget:
    """Decompressed bytes left for one document."""

    def __init__(self) -> None:
        self.left = MAX_INFLATED

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
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, RuntimeError, EOFError, NotImplementedError):
        return ""


_TAG = re.compile(r"<[^>]+>")


def _paragraphs(xml: str, p: str, t: str) -> list[str]:
    out = []
    for m in re.finditer(rf"<{p}\b[^>]*?(?:/>|>(.*?)</{p}>)", xml, re.S):
        body = m.group(1) or ""
        body = re.sub(r"<(?:w:tab|a:tab)\b[^>]*/>", "<T>\t</T>", body)
        body = re.sub(r"<(?:w:br|w:cr|a:br)\b[^>]*/>", "<T>\n</T>", body)
        out.append(html.unescape("".join(re.findall(rf"<(?:{t}|T)(?:\s[^>]*)?>([^<]*)</(?:{t}|T)>", body))))
    return out


def _docx(z: zipfile.ZipFile, budget: _Budget) -> str:
    xml = budget.zip_member(z, "word/document.xml")

    def row(m: re.Match[str]) -> str:
        cells = ["\n".join(_paragraphs(c, "w:p", "w:t")).strip()
                 for c in re.findall(r"<w:tc\b[^>]*>(.*?)</w:tc>", m.group(0), re.S)]
        text = "\t".join(c.replace("\n", " ") for c in cells)
        return "<w:p><w:t>" + html.escape(text, quote=False) + "</w:t></w:p>"

    xml = re.sub(r"<w:tr\b.*?</w:tr>", row, xml, flags=re.S)
    return "\n".join(_paragraphs(xml, "w:p", "w:t"))


def _pptx(z: zipfile.ZipFile, budget: _Budget) -> str:
    names = sorted((n for n in z.namelist() if re.fullmatch(r"ppt/slides/slide\d+\.xml", n)),
                   key=lambda n: int(re.findall(r"\d+", n)[-1]))[:MAX_PARTS]
    return "\n".join(line for n in names for line in _paragraphs(budget.zip_member(z, n), "a:p", "a:t"))


def _xlsx(z: zipfile.ZipFile, budget: _Budget) -> str:
    names = z.namelist()
    shared = []
    if "xl/sharedStrings.xml" in names:
        shared = ["".join(html.unescape(t) for t in re.findall(r"<t(?:\s[^>]*)?>([^<]*)</t>", si))
                  for si in re.findall(r"<si>(.*?)</si>", budget.zip_member(z, "xl/sharedStrings.xml"), re.S)]
    out = []
    for n in sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))[:MAX_PARTS]:
        for row in re.findall(r"<row\b[^>]*>(.*?)</row>", budget.zip_member(z, n), re.S):
            cells = []
            for attrs, body in re.findall(r"<c\b([^>]*?)(?:/>|>(.*?)</c>)", row, re.S):
                v = re.search(r"<v>([^<]*)</v>", body or "")
                if 't="s"' in attrs and v and v.group(1).isdigit() and int(v.group(1)) < len(shared):
                    value = shared[int(v.group(1))]
                elif v:
                    value = html.unescape(v.group(1))
                else:
                    value = html.unescape("".join(re.findall(r"<t(?:\s[^>]*)?>([^<]*)</t>", body or "")))
                cells.append(value.strip())
            out.append("\t".join(cells))
    return "\n".join(out)


_PDF_STREAM = re.compile(rb"(?<!end)stream\r?\n")
_PDF_TOKEN = re.compile(rb"\((?:\\.|[^\\()]|\((?:\\.|[^\\()])*\))*\)|<[0-9A-Fa-f\s]*>|-?\d*\.?\d+|[A-Za-z'\"*]+|\[|\]", re.S)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
_NEW_LINE = {b"Td", b"TD", b"T*", b"Tm", b"ET", b"'", b'"'}
_SHOW = {b"Tj", b"TJ", b"'", b'"'}


def _pdf(data: bytes, budget: _Budget) -> str:
    lines: list[str] = []
    for m in _PDF_STREAM.finditer(data):
        head = data[max(0, m.start() - 1000) : m.start()]
        head = head[head.rfind(b"obj") + 1 :]
        end = data.find(b"endstream", m.end())
        body = _decoded(data[m.end() : end if end >= 0 else len(data)], head, budget)
        if body and b"BT" in body:
            lines.extend(_text_lines(body))
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


def _text_lines(content: bytes) -> list[str]:
    lines, line, pending, in_array = [], [], [], False
    for tok in _PDF_TOKEN.findall(content):
        c = tok[:1]
        if c == b"(":
            pending.append(_literal(tok[1:-1]))
        elif c == b"<":
            hexed = re.sub(rb"\s", b"", tok[1:-1])
            pending.append(bytes.fromhex((hexed + b"0" * (len(hexed) % 2)).decode()).decode("latin-1"))
        elif tok == b"[":
            in_array = True
        elif tok == b"]":
            in_array = False
        elif c.isdigit() or c in b"-.":
            if in_array and float(tok) <= -200:
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
    out, i = bytearray(), 0
    while i < len(raw):
        ch = raw[i : i + 1]
        if ch == b"\\" and i + 1 < len(raw):
            nxt = raw[i + 1 : i + 2]
            octal = re.match(rb"[0-7]{1,3}", raw[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(0), 8) & 0xFF)
                i += 1 + len(octal.group(0))
                continue
            out += _ESCAPES.get(nxt, b"" if nxt in b"\r\n" else nxt)
            i += 2
            continue
        out += ch
        i += 1
    return out.decode("latin-1")
