"""Splitting one bash output among the files it shows.

The rule, in order:
1. Markers. Where a stream's lines can say which file they come from (grep/rg `path:line:text`,
   `path-line-text`, `path:text`; `==> path <==` headers of head/tail; more's `::::` headers), a
   line whose prefix is a workspace file goes to that file, prefix removed.
2. Listings. Remaining lines that name workspace files become candidates (and are not content).
3. The rest goes to the files the command names for their content. One file takes it all. With
   several (`cat a b`, `cat a; grep x b`), a file whose whole text appears verbatim in the rest
   takes exactly that text, and each file not found that way takes what is left once the found
   texts are removed: the output cannot say more, so each named file keeps all it may have shown.
"""

from __future__ import annotations

import re

from tab.listing import parse_listing
from tab.streams import Stream
from tab.workspace import Workspace

_HEADER = re.compile(r"^==> (.+) <==$")
_MORE_RULE = "::::::::::::::"
_SEPARATOR = re.compile(r"[:\-]")
MAX_PREFIX = 400


def attribute(output: str, streams: list[Stream], ws: Workspace) -> tuple[list[tuple[str, str]], list[str]]:
    """(path, excerpt) pairs in order of appearance, and the files listed."""
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
    for path, text in _distribute(rest, named, ws).items():
        parts.setdefault(path, []).append(text)
    reads = [(path, "\n".join(p for p in texts if p.strip()).strip("\n")) for path, texts in parts.items()]
    return [(p, t) for p, t in reads if t.strip()], [f for f in listed if f not in parts]


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


def _distribute(rest: str, named: list[str], ws: Workspace) -> dict[str, str]:
    if not rest.strip() or not named:
        return {}
    if len(named) == 1:
        return {named[0]: rest}
    found: dict[str, str] = {}
    left = rest
    for path in named:
        text = (ws.text(path) or "").strip("\n")
        if text.strip() and text in left:
            found[path] = text
            left = left.replace(text, "", 1)
    left = left.strip("\n")
    out = {}
    for path in named:
        if path in found:
            out[path] = found[path]
        elif left.strip():
            out[path] = left
    return out
