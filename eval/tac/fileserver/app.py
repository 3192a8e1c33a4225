"""The server's WSGI application: ownCloud's URL space routed to WebDAV, the share API and public pages."""

from __future__ import annotations

import base64
import io
import json
import os
import posixpath
import re
import stat
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from .dav import dav_app
from .shares import ShareStore, clean_path, ocs_body, share_data

Start = Callable[..., Any]
MAX_FORM_BYTES = 1024 * 1024
MAX_ZIP_FILES = 2000
MAX_ZIP_BYTES = 64 * 1024 * 1024  # what a folder's zip holds at most (in memory); files past it are left out
CHUNK = 64 * 1024
_OCS = re.compile(r"^/ocs/v([12])\.php/apps/files_sharing/api/v1/shares(?:/(\d{1,15}))?/?$")
_SHARE = re.compile(r"^(?:/index\.php)?/s/([A-Za-z0-9]+)(/download)?/?$")
STATUS = {"installed": True, "maintenance": False, "needsDbUpgrade": False, "version": "10.13.4.2",
          "versionstring": "10.13.4", "edition": "Community", "productname": "ownCloud"}


@dataclass(frozen=True)
class Settings:
    root: str  # the folder served
    state: str  # where the shares are kept (outside `root`)
    user: str
    password: str
    hidden: frozenset[str]  # top-level names of `root` never served
    report: Callable[[str], None] | None = None  # told the path of each file served


class FileServer:
    """The WSGI callable."""

    def __init__(self, s: Settings) -> None:
        self.s = s
        self.real_root = os.path.realpath(s.root)
        self.shares = ShareStore(s.state)
        self.dav = dav_app(s.root, s.user, s.password, s.hidden)
        self.dav_prefixes = ("/remote.php/webdav", f"/remote.php/dav/files/{s.user}")

    def __call__(self, environ: dict[str, Any], start: Start) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path.startswith("/remote.php/"):
            self._note_read(environ, path)
            return self.dav(environ, start)
        if path in ("/status.php", "/index.php/status.php"):
            return _send(start, "200 OK", "application/json", json.dumps(STATUS).encode())
        m = _OCS.match(path)
        if m:
            return self._ocs(environ, start, int(m.group(1)), int(m.group(2)) if m.group(2) else None)
        m = _SHARE.match(path)
        if m:
            return self._public(environ, start, m.group(1), bool(m.group(2)))
        if path.rstrip("/") == "/index.php/apps/files":
            return self._files_page(environ, start)
        return _send(start, "404 Not Found", "text/plain", b"Not Found\n")

    # --- what the evaluator reads through the server --------------------------------------------
    def _note_read(self, environ: dict[str, Any], path: str) -> None:
        if self.s.report is None or environ.get("REQUEST_METHOD") != "GET":
            return
        for prefix in self.dav_prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                local = self._resolve(unquote(path[len(prefix) :]))
                if local is not None and os.path.isfile(local):
                    self.s.report(local)

    def _local(self, rel: str) -> str:
        return os.path.join(self.s.root, rel.lstrip("/"))

    def _resolve(self, path: object) -> str | None:
        """Where a path of the served folder (a share's, a request's) is on disk, or None: a clean
        path (shares.clean_path), not under a hidden name, that exists and resolves inside the root
        with no link on the way (the realpath is the path itself), as WsgiDAV's own paths do."""
        rel = clean_path(path)
        if rel is None or rel.strip("/").split("/", 1)[0] in self.s.hidden:
            return None
        local = self._local(rel)
        inside = os.path.normpath(os.path.join(self.real_root, rel.lstrip("/")))
        try:
            real = os.path.realpath(local, strict=True)
        except (OSError, ValueError):
            return None
        return local if real == inside else None

    def _authorized(self, environ: dict[str, Any]) -> bool:
        header = environ.get("HTTP_AUTHORIZATION", "")
        if not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:].strip()).decode("utf-8").partition(":")
        except ValueError:
            return False
        return user == self.s.user and password == self.s.password

    # --- the share API ---------------------------------------------------------------------------
    def _ocs(self, environ: dict[str, Any], start: Start, version: int, share_id: int | None) -> Iterable[bytes]:
        query = parse_qs(environ.get("QUERY_STRING", ""))
        as_json = query.get("format", [""])[0] == "json"

        def answer(status: int, message: str, data: Any = None) -> Iterable[bytes]:
            http = status if (version == 2 or status == 401) else 200  # v1 answers errors with HTTP 200
            ctype, body = ocs_body(version, status, message, data if data is not None else [], as_json)
            return _send(start, f"{http} {_REASONS.get(http, 'Error')}", ctype, body)

        if not self._authorized(environ):
            return answer(401, "Unauthorised")
        method = environ.get("REQUEST_METHOD", "GET")
        base = _base(environ)
        if share_id is not None:
            share = self.shares.by_id(share_id)
            if share is None:
                return answer(404, "Wrong share ID, share doesn't exist")
            if method == "DELETE":
                self.shares.delete(share_id)
                return answer(200, "")
            return answer(200, "", [share_data(share, base, self.s.user)])
        if method == "GET":
            wanted = clean_path(query.get("path", [""])[0]) if query.get("path") else None
            found = [share_data(s, base, self.s.user) for s in self.shares.shares
                     if (wanted is None or s["path"] == wanted) and self._resolve(s["path"]) is not None]
            return answer(200, "", found)
        if method != "POST":
            return answer(405, "Method not allowed")
        form = _form(environ)
        rel = clean_path(form.get("path", ""))
        local = self._resolve(rel) if form.get("path") else None
        if rel is None or local is None:
            return answer(404, "Wrong path, file/folder doesn't exist")
        if str(form.get("shareType", "")) != "3":
            return answer(400, "Only public link shares (shareType=3) are available on this server")
        item = "folder" if os.path.isdir(local) else "file"
        given = str(form.get("permissions", ""))
        permissions = int(given) if given.isascii() and given.isdigit() and len(given) <= 9 else 1
        share = self.shares.create(rel, item, permissions, str(form.get("password") or ""))
        return answer(200, "", share_data(share, base, self.s.user))

    # --- public pages ----------------------------------------------------------------------------
    def _public(self, environ: dict[str, Any], start: Start, token: str, download: bool) -> Iterable[bytes]:
        share = self.shares.by_token(token)
        local = self._resolve(share["path"]) if share is not None else None
        if share is None or local is None:
            return _send(start, "404 Not Found", "text/html; charset=utf-8", _page("Not found", "<p>File not found</p>"))
        name = posixpath.basename(share["path"]) or "Shared"
        if share.get("password"):
            form = '<form method="post"><input type="password" name="password" placeholder="Password"></form>'
            return _send(start, "200 OK", "text/html; charset=utf-8", _page(name, "<p>This share is password-protected</p>" + form))
        if download:
            if not os.path.isdir(local):
                return self._file(start, local, name)
            return _send(start, "200 OK", "application/zip", self._zip(local, name),
                         [("Content-Disposition", f"attachment; filename*=UTF-8''{quote(name)}.zip")])
        link = f"{_base(environ)}/index.php/s/{token}/download"
        body = (f'<h1 class="name">{escape(name)}</h1>\n<input type="hidden" name="downloadURL" value="{escape(link)}" id="downloadURL">\n'
                f'<a href="{escape(link)}" id="downloadFile" class="button">Download</a>')
        return _send(start, "200 OK", "text/html; charset=utf-8", _page(name, body))

    def _file(self, start: Start, local: str, name: str) -> Iterable[bytes]:
        """A shared file's download, streamed: a regular file only (opened without following a link
        or waiting on a FIFO), whatever its size."""
        try:
            fd = os.open(local, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return _send(start, "404 Not Found", "text/html; charset=utf-8", _page("Not found", "<p>File not found</p>"))
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return _send(start, "404 Not Found", "text/html; charset=utf-8", _page("Not found", "<p>File not found</p>"))
        if self.s.report is not None:
            self.s.report(local)
        start("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(st.st_size)),
                         ("Content-Disposition", f"attachment; filename*=UTF-8''{quote(name)}")])
        return _Chunks(os.fdopen(fd, "rb"), st.st_size)

    def _zip(self, folder: str, name: str) -> bytes:
        """A shared folder as a zip of its regular files (no link followed), at most MAX_ZIP_FILES
        files and MAX_ZIP_BYTES bytes of them."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            count = size = 0
            for dirpath, dirs, files in os.walk(folder):
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(dirpath, d))]
                for f in files:
                    full = os.path.join(dirpath, f)
                    st = os.lstat(full)
                    if stat.S_ISREG(st.st_mode) and count < MAX_ZIP_FILES and size + st.st_size <= MAX_ZIP_BYTES:
                        z.write(full, os.path.join(name, os.path.relpath(full, folder)))
                        count += 1
                        size += st.st_size
        return buf.getvalue()

    def _files_page(self, environ: dict[str, Any], start: Start) -> Iterable[bytes]:
        """The web interface's folder page (`?dir=/Documents`), as a plain listing with links."""
        if not self._authorized(environ):
            return _send(start, "401 Unauthorized", "text/html; charset=utf-8", _page("Login", "<p>Please log in</p>"),
                         [("WWW-Authenticate", 'Basic realm="ownCloud", charset="UTF-8"')])
        rel = clean_path(parse_qs(environ.get("QUERY_STRING", "")).get("dir", ["/"])[0]) or "/"
        local = self._resolve(rel)
        if local is None or not os.path.isdir(local):
            return _send(start, "404 Not Found", "text/html; charset=utf-8", _page("Not found", "<p>Folder not found</p>"))
        names = sorted(n for n in os.listdir(local) if self._resolve(posixpath.join(rel, n)) is not None)
        rows = "\n".join(f'<li><a href="{escape(_base(environ))}/remote.php/webdav{quote(posixpath.join(rel, n))}">{escape(n)}</a></li>'
                         for n in names)
        return _send(start, "200 OK", "text/html; charset=utf-8", _page(rel, f"<ul>\n{rows}\n</ul>"))


class _Chunks:
    """A file's bytes as a WSGI body, read a chunk at a time, at most `size` of them; closed by the server."""

    def __init__(self, f: Any, size: int) -> None:
        self.f, self.left = f, size

    def __iter__(self) -> Iterator[bytes]:
        while self.left > 0 and (data := self.f.read(min(CHUNK, self.left))):
            self.left -= len(data)
            yield data

    def close(self) -> None:
        self.f.close()


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed"}


def _base(environ: dict[str, Any]) -> str:
    """The server's address as the client named it (ownCloud builds its links from the request)."""
    host = environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME', 'localhost')}:{environ.get('SERVER_PORT', '80')}"
    return f"http://{host}"


def _form(environ: dict[str, Any]) -> dict[str, str]:
    """POST parameters: form-encoded or JSON, bounded."""
    try:
        length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_FORM_BYTES)
    except ValueError:
        length = 0
    raw = environ["wsgi.input"].read(length) if length > 0 else b""
    if "json" in environ.get("CONTENT_TYPE", ""):
        try:
            doc = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in doc.items()} if isinstance(doc, dict) else {}
    return {k: v[0] for k, v in parse_qs(raw.decode("utf-8", errors="replace")).items()}


def _page(title: str, body: str) -> bytes:
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(title)} - ownCloud</title></head>\n'
            f"<body>\n{body}\n</body></html>\n").encode()


def _send(start: Start, status: str, ctype: str, body: bytes, headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    start(status, [("Content-Type", ctype), ("Content-Length", str(len(body))), *(headers or [])])
    return [body]
