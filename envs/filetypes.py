"""Why `read` refuses a file: binary formats, each with advice on how to get at its text in bash.

`read` is Pi's plain text read. Office files and PDFs are not converted by it (the paper's agent
extracts them through bash, which is also what the tab's capture watches), so `read` answers with an
error that names the format and a command that works in the agent's shell.
"""

from __future__ import annotations

import shlex

HEAD_BYTES = 8192

_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
_OFFICE_ADVICE = {
    ".docx": (
        "a Word document (.docx)",
        "python -c \"import docx; print('\\n'.join(p.text for p in docx.Document({q}).paragraphs))\"",
    ),
    ".xlsx": (
        "an Excel workbook (.xlsx)",
        "python -c \"import openpyxl; wb = openpyxl.load_workbook({q}, data_only=True); "
        "[print(ws.title, row) for ws in wb for row in ws.iter_rows(values_only=True)]\"",
    ),
    ".xlsm": (
        "an Excel workbook (.xlsm)",
        "python -c \"import openpyxl; wb = openpyxl.load_workbook({q}, data_only=True); "
        "[print(ws.title, row) for ws in wb for row in ws.iter_rows(values_only=True)]\"",
    ),
    ".pptx": (
        "a PowerPoint presentation (.pptx)",
        "python -c \"from pptx import Presentation; [print(sh.text_frame.text) for s in "
        "Presentation({q}).slides for sh in s.shapes if sh.has_text_frame]\"",
    ),
}
_NOT_TEXT = "read shows only text files"


def why_not_text(path: str, suffix: str, head: bytes) -> str | None:
    """An error message if the file is not plain text (judged from its first bytes), else None.

    `path` is how the agent named the file (used in the advice), `suffix` its lowercased extension.
    """
    q = shlex.quote(path)
    if head.startswith(b"%PDF") or suffix == ".pdf":
        return f"{path} is a PDF file; {_NOT_TEXT}. Extract its text with bash, e.g. pdftotext -layout {q} - | head -n 200"
    image = _image_kind(head) or ("BMP" if suffix == ".bmp" and head.startswith(b"BM") else None)
    if image:
        return (
            f"{path} is an image ({image}); {_NOT_TEXT} and this harness does not show images to the model. "
            f"Inspect it with bash if needed, e.g. file {q}"
        )
    if head.startswith(b"PK\x03\x04"):
        if suffix in _OFFICE_ADVICE:
            kind, cmd = _OFFICE_ADVICE[suffix]
            return f"{path} is {kind}; {_NOT_TEXT}. Extract its text with bash, e.g. {cmd.format(q=q)}"
        return f"{path} is a ZIP archive; {_NOT_TEXT}. List it with bash, e.g. unzip -l {q}"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return (
            f"{path} is a legacy Microsoft Office file (OLE2, e.g. .doc/.xls/.ppt); {_NOT_TEXT}. "
            f"Look for text in it with bash, e.g. strings {q} | head -n 200"
        )
    if _looks_binary(head):
        return f"{path} is a binary file; {_NOT_TEXT}. Inspect it with bash, e.g. file {q}; xxd {q} | head"
    return None


def _image_kind(head: bytes) -> str | None:
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    for magic, kind in _IMAGES:
        if head.startswith(magic):
            return kind
    return None


def _looks_binary(head: bytes) -> bool:
    """NUL bytes, or mostly invalid UTF-8 (a little is tolerated: latin-1 text is still text)."""
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    return len(head) > 0 and bad / len(head) > 0.1
