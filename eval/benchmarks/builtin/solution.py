"""Reference solutions as scripted-model turns (runners/models/scripted.py format).

Each solution reads the files its task needs through bash (the way an agent would: `head` for
text files, a stdlib-only Python reader for docx/xlsx/pptx/pdf, so that it runs with any
python3) and then writes the deliverable, ending with a turn without tool calls.
"""

from __future__ import annotations

import shlex
from typing import Any

Turn = dict[str, Any]
TEXT_SUFFIXES = (".md", ".txt", ".csv", ".json", ".tsv", ".log")

# Text of docx/pptx/xlsx/pdf files with the standard library only: one function per suffix.
OFFICE_TEXT = r"""import html, re, sys, zipfile, zlib
def txt(x, p):
    return html.unescape(re.sub(r'<[^>]+>', '', re.sub(r'</%s>' % p, '\n', x)))
def docx(f):
    row = lambda m: '\t'.join(txt(c, 'w:p').strip() for c in re.findall(r'<w:tc\b[^>]*>(.*?)</w:tc>', m.group(0), re.S)) + '</w:p>'
    return txt(re.sub(r'<w:tr\b.*?</w:tr>', row, zipfile.ZipFile(f).read('word/document.xml').decode(), flags=re.S), 'w:p')
def pptx(f):
    z = zipfile.ZipFile(f)
    ns = sorted((n for n in z.namelist() if re.match(r'ppt/slides/slide\d+\.xml$', n)), key=lambda n: int(re.findall(r'\d+', n)[-1]))
    return '\n'.join('[slide %d]\n%s' % (i + 1, txt(z.read(n).decode(), 'a:p')) for i, n in enumerate(ns))
def xlsx(f):
    z = zipfile.ZipFile(f)
    names = z.namelist()
    ss = [txt(s, 'si') for s in re.findall(r'<si>(.*?)</si>', z.read('xl/sharedStrings.xml').decode(), re.S)] if 'xl/sharedStrings.xml' in names else []
    out = []
    for n in sorted(n for n in names if re.match(r'xl/worksheets/sheet\d+\.xml$', n)):
        for row in re.findall(r'<row[^>]*>(.*?)</row>', z.read(n).decode(), re.S):
            cells = []
            for attrs, body in re.findall(r'<c([^>]*?)(?:/>|>(.*?)</c>)', row, re.S):
                v = re.search(r'<v>(.*?)</v>', body or '')
                val = v.group(1) if v else txt(body or '', 't')
                if 't="s"' in attrs and v:
                    val = ss[int(val)]
                cells.append(val.strip())
            out.append('\t'.join(cells))
    return '\n'.join(out)
def pdf(f):
    out = []
    for s in re.findall(rb'stream\r?\n(.*?)\r?\nendstream', open(f, 'rb').read(), re.S):
        try:
            s = zlib.decompress(s)
        except zlib.error:
            pass
        out += [t.decode('latin-1').replace('\\(', '(').replace('\\)', ')') for t in re.findall(rb'\((.*?)(?<!\\)\) Tj', s)]
    return '\n'.join(out)
"""
# Prints each file as `==> path <==` then its text, like `head` does for several files.
READER = OFFICE_TEXT + r"""for f in sys.argv[1:]:
    ext = f.rsplit('.', 1)[-1].lower()
    print('==> %s <==' % f)
    print(globals()[ext](f) if ext in ('docx', 'pptx', 'xlsx', 'pdf') else open(f, encoding='utf-8').read())
"""


def _bash(content: str, command: str) -> Turn:
    return {"content": content, "tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def read(paths: list[str], why: str = "Let me read the files I need.") -> Turn:
    """One turn that prints the text of `paths` (office files through the stdlib reader)."""
    quoted = " ".join(shlex.quote(p) for p in paths)
    if all(p.lower().endswith(TEXT_SUFFIXES) for p in paths):
        return _bash(why, f"head -n 2000 {quoted}" if len(paths) > 1 else f"cat {quoted}")
    return _bash(why, f"python3 - {quoted} <<'RT_PY'\n{READER}RT_PY")


def find(command: str, why: str = "Let me look for the relevant files.") -> Turn:
    return _bash(why, command)


def write(path: str, content: str, why: str = "Now I write the deliverable.") -> Turn:
    """One turn that writes `content` to `path` (a heredoc; parents created)."""
    if "\nRT_EOF\n" in f"\n{content}\n":
        raise ValueError("deliverable content must not contain the heredoc delimiter line RT_EOF")
    parent = path.rsplit("/", 1)[0] if "/" in path else "."
    body = content if content.endswith("\n") else content + "\n"
    return _bash(why, f"mkdir -p {shlex.quote(parent)} && cat > {shlex.quote(path)} <<'RT_EOF'\n{body}RT_EOF")


def copy(pairs: list[tuple[str, str]], why: str = "Now I copy the files into place.") -> Turn:
    cmds = [f"mkdir -p {shlex.quote(dst.rsplit('/', 1)[0])} && cp {shlex.quote(src)} {shlex.quote(dst)}" for src, dst in pairs]
    return _bash(why, " && ".join(cmds))


def finish(message: str) -> Turn:
    return {"content": message}
