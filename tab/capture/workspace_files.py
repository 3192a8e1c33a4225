"""Which tokens name workspace files: answered from the file system under the root, never by running anything."""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from posixpath import normpath
from urllib.parse import unquote

from envs.safeio import lstat_inside, read_regular
from envs.truncate import decode
from envs.workspace import BOOKKEEPING_DIR
from tab.capture.documents import document_text, is_document
from tab.capture.originals import Originals
from tab.capture.own_text import OwnText

GLOB_CHARS = frozenset("*?[")
# The harness keeps long bash outputs under here (envs/bash_tool.py); they are not workspace files.
HARNESS_DIR = BOOKKEEPING_DIR  # the harness's own folder in a workspace (envs/workspace.py)
MAX_TEXT_BYTES = 2 * 1024 * 1024  # larger text files are not compared against output
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024  # a larger document credits nothing (its text is bounded too: documents.py)
SCAN_AFTER = 8  # lookups in one folder before it is listed whole
MAX_DOCUMENTS = 16  # documents whose text is kept between observations
MAX_KEPT_CHARS = 1 << 20  # text files' own text kept between observations, at most this many characters a workspace


class Workspace:
    """Resolves paths as the agent's shell would (relative to a working directory inside the root).

    Paths come back workspace-relative in POSIX form ('' is the root); a URL under one of the `urls`
    prefixes names the file it serves. `exclude` holds workspace
    paths (files or folders, e.g. the deliverable's) that the tab never records. Lookups are cached
    until `refresh()`, which the capture calls once per observation (files appear as the agent works).
    """

    def __init__(
        self, root: str | Path, exclude: Iterable[str] = (), originals: Originals | None = None, aliases: Iterable[str] = (),
        urls: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.root = os.path.abspath(root)
        self.originals = originals
        self.urls = tuple(urls)  # (URL prefix, workspace folder): a server in the sandbox serving it
        self._roots = tuple(dict.fromkeys((self.root, os.path.realpath(self.root), *(normpath(a) for a in aliases))))
        self.exclude = tuple(dict.fromkeys(e.strip("/") for e in (*exclude, HARNESS_DIR) if e.strip("/")))
        self._under = tuple(e + "/" for e in self.exclude)
        self._kind: dict[str, str] = {}
        self._entries: dict[str, dict[str, str]] = {}  # folder → its names, once listed
        self._asked: dict[str, int] = {}
        self._own: dict[str, OwnText | None] = {}
        self._kept: dict[tuple[str, int, int, int, int], OwnText] = {}  # text files' own text, by file identity
        self._kept_chars = 0
        self._documents: dict[tuple[str, int, int, int, int], str] = {}  # a few documents' text, by file identity

    def refresh(self) -> None:
        self._kind.clear()
        self._entries.clear()
        self._asked.clear()
        self._own.clear()

    def rel(self, token: str, cwd: str | None = "") -> str | None:
        """The workspace-relative path a token names from `cwd` (None: a folder outside), or None
        when it points outside the workspace. Paths are POSIX (the agent's shell is bash)."""
        if not token or token[0] == "~" or "\0" in token:
            return None
        if "://" in token:
            return self._served(token)
        if token[0] == "/":
            full = normpath(token)
            for root in self._roots:
                if full == root:
                    return ""
                if full.startswith(root + "/"):
                    return full[len(root) + 1 :]
            return None
        if cwd is None:
            return None
        rel = normpath(f"{cwd}/{token}" if cwd else token)
        if rel == ".":
            return ""
        if rel[0] == "/" or rel == ".." or rel.startswith("../"):
            return None
        return rel

    def _served(self, url: str) -> str | None:
        """The workspace path a URL of a server in the sandbox serves (`urls`), or None."""
        for prefix, folder in self.urls:
            if url.startswith(prefix):
                rel = normpath(f"{folder}/{unquote(url[len(prefix):].split('?', 1)[0].split('#', 1)[0])}".strip("/"))
                return None if rel == ".." or rel.startswith(("../", "/")) else "" if rel == "." else rel
        return None

    def _kind_of(self, rel: str) -> str:
        """'f' (file), 'd' (folder) or '-'. A folder asked about often is listed once instead of
        stat-ing each name (a 300-line listing costs one scandir, not 300 stats)."""
        kind = self._kind.get(rel)
        if kind is None:
            parent, _, name = rel.rpartition("/")
            entries = self._entries.get(parent)
            if entries is None:
                asked = self._asked[parent] = self._asked.get(parent, 0) + 1
                if asked > SCAN_AFTER:
                    entries = self._entries[parent] = self._scan(parent)
            if entries is not None:
                kind = entries.get(name, "-")
            else:
                st = lstat_inside(self.root, rel)
                kind = "-" if st is None else "f" if stat.S_ISREG(st.st_mode) else "d" if stat.S_ISDIR(st.st_mode) else "-"
            self._kind[rel] = kind
        return kind

    def _scan(self, rel_dir: str) -> dict[str, str]:
        try:
            with os.scandir(os.path.join(self.root, rel_dir)) as it:
                return {e.name: "f" if e.is_file(follow_symlinks=False) else "d" if e.is_dir(follow_symlinks=False)
                        else "-" for e in it}
        except OSError:
            return {}

    def excluded(self, rel: str) -> bool:
        return rel in self.exclude or rel.startswith(self._under)

    def file(self, token: str, cwd: str | None = "") -> str | None:
        """The workspace file a token names (an existing regular file, not excluded), or None."""
        rel = self.rel(token, cwd)
        if not rel or self.excluded(rel) or self._kind_of(rel) != "f":
            return None
        return rel

    def dir(self, token: str, cwd: str | None = "") -> str | None:
        """The workspace folder a token names ('' for the root), or None."""
        rel = self.rel(token, cwd)
        if rel is None or (rel and self._kind_of(rel) != "d"):
            return None
        return rel

    def expand(self, token: str, cwd: str | None = "") -> list[str]:
        """A shell word as the shell would expand it: a glob becomes its sorted matches (or itself)."""
        if not GLOB_CHARS.intersection(token) or (cwd is None and not os.path.isabs(token)):
            return [token]
        base = os.path.join(self.root, cwd)
        matches = glob.glob(token) if os.path.isabs(token) else glob.glob(token, root_dir=base)
        return sorted(matches) or [token]

    def files(self, tokens: Iterable[str], cwd: str | None = "") -> list[str]:
        """The workspace files named by shell words (globs expanded), in order, without repeats."""
        out: dict[str, None] = {}
        for token in tokens:
            for word in self.expand(token, cwd):
                rel = self.file(word, cwd)
                if rel:
                    out[rel] = None
        return list(out)

    def under(self, folders: list[str], limit: int = 200) -> list[str]:
        """Files there at the start under these folders (what `find dir | xargs cat` may show)."""
        if self.originals is None:
            return []
        return [f for f in self.originals.under(folders, limit) if not self.excluded(f)]

    def text(self, rel: str) -> str | None:
        """A workspace file's text when it is small UTF-8 text, as the agent's tools show it (CRLF and
        control characters normalized like every observation), for verbatim comparison; else None."""
        return _text(self._bytes(rel))

    def own(self, rel: str) -> OwnText | None:
        """What output lines are checked against (`own_text.py`), read once per observation: a text
        file's text; a document's paragraphs and cells (docx, xlsx, pptx, pdf: up to
        `MAX_DOCUMENT_BYTES`), whatever printed them (a converter, a script, and whatever the command
        did around either); "" (nothing credited) for any other binary or a document past its cap. None
        only for a file over `MAX_TEXT_BYTES` that is not a document: too big to compare, kept as shown."""
        if rel not in self._own:
            st = lstat_inside(self.root, rel) if rel else None
            ident = (rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) if st and stat.S_ISREG(st.st_mode) else None
            kept = self._kept.get(ident) if ident else None
            if kept is not None:
                self._own[rel] = kept
                return kept
            data = self._bytes(rel)
            text = _text(data)
            if text is not None:
                self._own[rel] = self._keep(ident, OwnText(text))
            elif is_document(rel):
                self._own[rel] = OwnText(self._document(rel), document=True)
            else:
                self._own[rel] = None if data is None and st is not None and st.st_size > MAX_TEXT_BYTES \
                    else OwnText("", document=True)
        return self._own[rel]

    def _keep(self, ident: tuple[str, int, int, int, int] | None, own: OwnText) -> OwnText:
        """A text file's own text, kept for the next observations while the file is the same one (its
        size, times and inode unchanged, as `Originals` tells an unchanged file): the lines are indexed
        once, not at every read of the file. At most `MAX_KEPT_CHARS` are kept, the oldest dropped first."""
        if ident is None or len(own.text) > MAX_KEPT_CHARS:
            return own
        while self._kept and self._kept_chars + len(own.text) > MAX_KEPT_CHARS:
            self._kept_chars -= len(self._kept.pop(next(iter(self._kept))).text)
        self._kept[ident] = own
        self._kept_chars += len(own.text)
        return own

    def _document(self, rel: str) -> str:
        """A document's text, kept for the next observations while the file is the same one (its
        size, times and inode unchanged): agents read the same documents again and again."""
        st = lstat_inside(self.root, rel)
        key = (rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) if st is not None else None
        if key not in self._documents:
            data = self._bytes(rel, MAX_DOCUMENT_BYTES)
            text = document_text(rel, data) if data else ""
            if key is None:
                return text
            if len(self._documents) >= MAX_DOCUMENTS:
                del self._documents[next(iter(self._documents))]
            self._documents[key] = text
        return self._documents[key]

    def _bytes(self, rel: str, cap: int = MAX_TEXT_BYTES) -> bytes | None:
        data = read_regular(self.root, rel, cap + 1) if rel else None
        return None if data is None or len(data) > cap else data


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decode(data)
