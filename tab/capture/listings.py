"""Reading file names out of listing output (ls, ls -l, ls -R, find, du, tree, grep -l, echo *.md ...).

A name counts only when it resolves to an existing workspace file, tried against the folders the
listing is relative to (an `ls -R` header, the listed folders, the working directory), so folders,
totals and sizes never become candidates.
"""

from __future__ import annotations

import os
import re

from tab.capture.command_output import Stream
from tab.capture.workspace_files import Workspace

_PERMS = re.compile(r"(?:^|\s)[-dlcbpsDn][rwxsStT-]{9}[.+@]?\s+")
_TREE = re.compile(r"^((?:[│|]\s{3}|\s{4})*)(?:[├└|`][─-]{2}\s)(.*)$")
MAX_LINE = 1000
MAX_NAME_WORDS = 6


def parse_listing(lines: list[str], skip: set[int], streams: list[Stream], ws: Workspace) -> tuple[list[str], set[int]]:
    """Files named by listing lines (in order), and the indices of the lines that named them."""
    found: dict[str, None] = {}
    used: set[int] = set()
    trees = [s for s in streams if s.kind == "listing" and s.tree]
    flat = [s for s in streams if s.kind == "listing" and not s.tree]
    if trees:
        _tree(lines, skip, trees, ws, found, used)
    if flat:
        bases = list(dict.fromkeys(b for s in flat for b in [*s.bases, s.cwd] if b is not None))
        _flat(lines, skip | used, bases, ws, found, used)
    return list(found), used


def _flat(lines, skip, bases, ws, found, used) -> None:
    header: str | None = None
    for idx, line in enumerate(lines):
        text = line.strip()
        if idx in skip or not text or len(text) > MAX_LINE:
            continue
        if text.endswith(":"):  # `ls -R` / `ls a b` section header
            d = next((d for b in bases if (d := ws.dir(text[:-1], b)) is not None), None)
            if d is not None:
                header = d
                used.add(idx)
                continue
        hits = _names(text, ([header] if header is not None else []) + bases, ws)
        if hits:
            used.add(idx)
            found.update(dict.fromkeys(hits))


def _names(text: str, bases: list[str], ws: Workspace) -> list[str]:
    for base in bases:  # the common case: the line is a path (find, grep -l, ls -1, du's name)
        rel = ws.file(text, base)
        if rel:
            return [rel]
    forms = []
    if " -> " in text:
        forms.append(text.split(" -> ", 1)[0])
    m = _PERMS.search(text)
    if m:
        rest = text[m.end() :]
        for k in (6, 5, 7, 4):  # links owner group size date... then the name
            parts = rest.split(None, k)
            if len(parts) > k:
                forms.append(parts[k].split(" -> ", 1)[0])
    if "\t" in text:
        forms.append(text.rsplit("\t", 1)[1])
    for form in forms:
        form = form.rstrip("*@|=")
        if form.endswith("/"):
            continue
        for base in bases:
            rel = ws.file(form, base)
            if rel:
                return [rel]
    tokens = text.split()
    if len(tokens) < 2:
        return []
    hits, i = [], 0
    while i < len(tokens):  # names side by side (`echo *.md`, `ls -C`); a name may hold spaces
        for j in range(i + 1, min(len(tokens), i + MAX_NAME_WORDS) + 1):
            name = " ".join(tokens[i:j]).rstrip("*@|=")
            rel = next((r for b in bases if (r := ws.file(name, b))), None)
            if rel:
                hits.append(rel)
                i = j
                break
        else:
            i += 1
    return hits


def _tree(lines, skip, trees, ws, found, used) -> None:
    roots = [b for s in trees for b in s.bases]
    cwds = [s.cwd for s in trees if s.cwd is not None]
    stack: list[str] = [roots[0] if roots else ""]
    for idx, line in enumerate(lines):
        if idx in skip or not line.strip() or len(line) > MAX_LINE:
            continue
        m = _TREE.match(line)
        if not m:
            text = line.strip()
            d = next((d for c in cwds if (d := ws.dir(text, c)) is not None), None)
            if d is not None:
                stack = [d]
                used.add(idx)
            continue
        depth = len(m.group(1)) // 4
        name = _unescape(m.group(2).split(" -> ", 1)[0].strip())
        stack = stack[: depth + 1] or [""]
        path = os.path.join(stack[-1], name) if stack[-1] else name
        rel = ws.file(path) or next((r for c in cwds if (r := ws.file(name, c))), None)
        if rel:
            found[rel] = None
            used.add(idx)
        stack.append(path)


_ESCAPE = re.compile(r"\\([0-7]{3}|.)")


def _unescape(name: str) -> str:
    """tree in the C locale writes `with\\ space.md` and non-ASCII bytes as `\\345`."""
    if "\\" not in name:
        return name
    raw = _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)) if len(m.group(1)) == 3 else m.group(1), name)
    try:
        return raw.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return raw
