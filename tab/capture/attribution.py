"""Splitting one bash output among the files it shows.

The rule, in order:
1. Markers. Where a stream's lines can say which file they come from (grep/rg `path:line:text`,
   `path-line-text`, `path:text`; `==> path <==` headers of head/tail; more's `::::` headers), a
   line whose prefix is a workspace file goes to that file, prefix removed.
2. Listings. Remaining lines that name workspace files become candidates (and are not content).
3. The rest goes to the files the command names for their content. One file takes it all. With
   several (`cat a b`, `cat a; grep x b`), a file whose whole text appears verbatim in the rest
   takes exactly that text, and each line left goes to the one named file that holds it.
4. Every credited line must be the file's own text (`own_line`); what no file is proven to hold
   (a computed value, a line several files hold, a transformed line) is returned unattributed.
"""

from __future__ import annotations

import re

from tab.capture.command_output import Stream
from tab.capture.listings import parse_listing
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
    for path, texts in parts.items():
        kept, lost = own_lines("\n".join(p for p in texts if p.strip()).strip("\n"), ws.text(path))
        if kept.strip():
            reads.append((path, kept))
        if lost.strip():
            dropped.append(lost)
    return reads, [f for f in listed if f not in parts], "\n".join(dropped)


_NUMBERED = re.compile(r"^\s*\d+(?::|-|\t| {2,})")
MIN_FRAGMENT = 8  # a shorter piece of a line (a count, a sum) proves nothing about the file


def own_line(line: str, text: str, lines: frozenset[str]) -> bool:
    """Whether an output line is the file's own text: one of its lines (a line-number prefix aside),
    or a fragment of it long enough to say so; a computed value ('30', '2') is not."""
    for form in (line.strip(), _NUMBERED.sub("", line, count=1).strip()):
        if form in lines or (len(form) >= MIN_FRAGMENT and any(c.isalpha() for c in form) and form in text):
            return True
    return False


def own_lines(excerpt: str, text: str | None) -> tuple[str, str]:
    """The excerpt split into lines the file holds and lines it does not. A file whose text cannot
    be read cheaply (binary, over 2 MB: its extracted text shows) keeps every line."""
    if text is None:
        return excerpt, ""
    lines = frozenset(t.strip() for t in text.split("\n"))
    kept, lost = [], []
    for line in excerpt.split("\n"):
        (kept if not line.strip() or own_line(line, text, lines) else lost).append(line)
    return "\n".join(kept).strip("\n"), "\n".join(lost).strip("\n")


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
    texts = {p: (ws.text(p) or "").strip("\n") for p in named}
    found: dict[str, list[str]] = {}
    left = rest
    for path, text in texts.items():
        if text.strip() and text in left:
            found[path] = [text]
            left = left.replace(text, "", 1)
    known = {p: (t, frozenset(x.strip() for x in t.split("\n"))) for p, t in texts.items() if t}
    unplaced = []
    for line in left.strip("\n").split("\n"):
        if not line.strip():
            continue
        holders = [p for p, (t, ls) in known.items() if own_line(line, t, ls)]
        if len(holders) == 1:
            found.setdefault(holders[0], []).append(line)
        else:
            unplaced.append(line)
    return {p: "\n".join(found[p]) for p in named if p in found}, "\n".join(unplaced)
