"""Splitting one bash output among the files it shows.

The rule, in order:
1. Markers. Where a stream's lines can say which file they come from (grep/rg `path:line:text`,
   `path-line-text`, `path:text`; `==> path <==` headers of head/tail; more's `::::` headers), a
   line whose prefix is a workspace file goes to that file, prefix removed.
2. Listings. Remaining lines that name workspace files become candidates (and are not content).
3. The rest goes to the files the command names for their content. One file takes it all. With
   several (`cat a b`, `cat a; grep x b`), a file whose whole text appears verbatim in the rest
   takes exactly that text, and each line left goes to the one named file that holds it.
4. Every credited line must be the file's own text (`own_text.py`); what no file is proven to hold
   (a computed value, a line several files hold, a transformed line) is returned unattributed. A
   document's lines are checked against its paragraphs and cells whatever printed them (a script, and
   a converter with anything around it: `| sed`, an `echo` beside it), and a binary that cannot be
   read so credits nothing. Only a converter's output alone, passed on by commands that keep lines
   unchanged (`pdftotext f - | grep -i x`), is the document's text by construction and kept as shown.
"""

from __future__ import annotations

import re

from tab.capture.command_output import Stream
from tab.capture.listings import parse_listing
from tab.capture.own_text import own_lines
from tab.capture.workspace_files import Workspace

_HEADER = re.compile(r"^==> (.+) <==$")
_MORE_RULE = "::::::::::::::"
_SEPARATOR = re.compile(r"[:\-]")
MAX_PREFIX = 400


def attribute(output: str, streams: list[Stream], ws: Workspace) -> tuple[list[tuple[str, str]], list[str], str]:
    """(path, excerpt) pairs in order of appearance, the files listed, and the text no file is proven to hold."""
    lines = output.split("\n")
    marked: dict[str, list[str]] = {}
    used: set[int] = set()
    if any(s.markers for s in streams):
        cwds = list(dict.fromkeys(s.cwd for s in streams if s.markers and s.cwd is not None))
        _markers(lines, cwds, ws, marked, used)
    listed: list[str] = []
    if any(s.kind == "listing" for s in streams):
        listed, named_lines = parse_listing(lines, used, streams, ws)
        used |= named_lines
    rest = "\n".join(line for i, line in enumerate(lines) if i not in used).strip("\n")
    named = list(dict.fromkeys(f for s in streams if s.kind in ("content", "search") for f in s.files))
    parts = {path: ["\n".join(block)] for path, block in marked.items()}
    distributed, unplaced = _distribute(rest, named, ws)
    for path, text in distributed.items():
        parts.setdefault(path, []).append(text)
    reads, dropped = [], [unplaced] if unplaced.strip() else []
    converted = streams[0].files if len(streams) == 1 and streams[0].verbatim else []
    for path, texts in parts.items():
        own = None if path in converted else ws.own(path)  # a converter's own lines, untouched: its text by construction
        kept, lost = own_lines("\n".join(p for p in texts if p.strip()).strip("\n"), own)
        if kept.strip():
            reads.append((path, kept))
        if lost.strip():
            dropped.append(lost)
    return reads, [f for f in listed if f not in parts], "\n".join(dropped)


def _markers(lines: list[str], cwds: list[str], ws: Workspace, marked: dict[str, list[str]], used: set[int]) -> None:
    current: str | None = None
    cache: dict[str, str | None] = {}

    def resolve(token: str) -> str | None:
        if token not in cache:
            cache[token] = next((r for c in cwds if (r := ws.file(token, c))), None)
        return cache[token]

    i = 0
    while i < len(lines):
        line = lines[i]
        header = _HEADER.match(line)
        if header:
            current = resolve(header.group(1))
            used.add(i)
        elif line == _MORE_RULE and i + 2 < len(lines) and lines[i + 2] == _MORE_RULE:
            current = resolve(lines[i + 1].strip())
            used.update((i, i + 1, i + 2))
            i += 2
        elif current is not None:
            marked.setdefault(current, []).append(line)
            used.add(i)
        elif line == "--":  # grep's context separator
            used.add(i)
        else:
            for m in _SEPARATOR.finditer(line, 0, MAX_PREFIX):
                path = resolve(line[: m.start()]) if m.start() else None
                if path:
                    marked.setdefault(path, []).append(line[m.end() :])
                    used.add(i)
                    break
        i += 1


def _distribute(rest: str, named: list[str], ws: Workspace) -> tuple[dict[str, str], str]:
    """One named file takes the rest. With several, a file whose whole text appears verbatim takes
    it; each remaining line goes to the one named file that holds it, or stays unplaced."""
    if not rest.strip() or not named:
        return {}, rest if not named else ""
    if len(named) == 1:
        return {named[0]: rest}, ""
    owns = {p: own for p in named if (own := ws.own(p)) is not None and own.text.strip()}
    found: dict[str, list[str]] = {}
    left = rest
    for path, own in owns.items():
        text = own.text.strip("\n")
        if not own.document and text in left:
            found[path] = [text]
            left = left.replace(text, "", 1)
    unplaced = []
    for line in left.strip("\n").split("\n"):
        if not line.strip():
            continue
        holders = [p for p, own in owns.items() if own.holds(line)]
        if len(holders) == 1:
            found.setdefault(holders[0], []).append(line)
        else:
            unplaced.append(line)
    return {p: "\n".join(found[p]) for p in named if p in found}, "\n".join(unplaced)
