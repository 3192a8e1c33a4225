"""A job page's side-by-side links, marked so that a re-build can replace them in place.

A job's page changes in two ways: its record changes (the page is rendered again, which reads the
trajectory and replays every turn) or only its links change (a partner job finished or went away
since the last build). At the end of a sweep run cell by cell, each new job changes its DCI
partner's links, so a third of the pages a last build writes are relinks: `relinked` swaps the
marked links of the page as written, at a small fraction of a render's cost.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from pathlib import Path

from envs.safeio import read_regular

OPEN, CLOSE = "<!--side-by-side-->", "<!--/side-by-side-->"
SEP = ":"  # a job page's key: <digest of its record's version>:<digest of its links>


def side_by_side_html(compare: list[tuple[str, str]] | None) -> str:
    """The page's links to its side-by-side views, between the markers (empty without any)."""
    links = " · ".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for t, h in compare or [])
    return OPEN + (f"<p>Side by side: {links}</p>" if links else "") + CLOSE


def relinked(text: str, compare: list[tuple[str, str]] | None) -> str | None:
    """The page with its links replaced; None when it holds no markers (written otherwise or
    edited): the caller renders it again. The markers come before anything of the record's (which
    the page escapes), so the first pair is the page's own."""
    start = text.find(OPEN)
    end = text.find(CLOSE, start)
    if start < 0 or end < 0:
        return None
    return text[:start] + side_by_side_html(compare) + text[end + len(CLOSE):]


def relinked_page(path: Path, compare: list[tuple[str, str]] | None, render: Callable[[], str]) -> str:
    """The page at `path` with its links replaced, or `render()` when it cannot be (not a regular
    file, or not as this code writes it: edited)."""
    data = read_regular(path.parent, path.name)  # None for a link, a FIFO, anything but a file
    try:
        new = None if data is None else relinked(data.decode("utf-8"), compare)
    except UnicodeDecodeError:
        new = None
    return render() if new is None else new


def write_page(path: Path, text: str) -> None:
    """Written whole under a temporary name, then renamed over the page (a link in its place is
    replaced, never followed). Text the agent made that is not valid Unicode (a lone surrogate: a
    name that is not UTF-8) is written as its escape, `\\udcff`: a JSON escape inside the page's
    data, visible text elsewhere; names are shown as `\\xff` where the page shows them (`shown`)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(text)
    os.replace(tmp, path)
