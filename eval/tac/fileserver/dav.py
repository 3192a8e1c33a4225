"""The WebDAV half: WsgiDAV over the served folder, answering as ownCloud's sabre/dav does.

Two mounts of one folder: `remote.php/webdav` and `remote.php/dav/files/<user>`. Hrefs are encoded
as sabre encodes them (only `A-Za-z0-9_-.~()/:@` kept, lower-case hex), since evaluators look for
file names as substrings of hrefs. The state folder and the harness's own folder are never served.
"""

from __future__ import annotations

import os
import re

from wsgidav.fs_dav_provider import FileResource, FilesystemProvider, FolderResource
from wsgidav.wsgidav_app import WsgiDAVApp

WEBDAV = "/remote.php/webdav"
_UNSAFE = re.compile(r"[^A-Za-z0-9_\-.~()/:@]")


def sabre_quote(path: str) -> str:
    """Percent-encode a path as sabre/http's encodePath does (bytes of UTF-8, lower-case hex)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02x}" for b in m.group(0).encode("utf-8")), path)


class _Href:
    def get_href(self) -> str:
        return sabre_quote(self.provider.mount_path + self.provider.share_path + self.get_preferred_path())


class OcFile(_Href, FileResource):
    pass


class OcFolder(_Href, FolderResource):
    def get_member_names(self) -> list[str]:
        names = super().get_member_names()
        return [n for n in names if not self.provider.hidden(f"{self.path.rstrip('/')}/{n}")]


class OcProvider(FilesystemProvider):
    """A folder, its `hidden` top-level names left out (404), symlinks not followed."""

    def __init__(self, root: str, hidden: frozenset[str]) -> None:
        super().__init__(root, readonly=False, fs_opts={"follow_symlinks": False})
        self._hidden = hidden

    def hidden(self, path: str) -> bool:
        first = path.strip("/").split("/", 1)[0]
        return first in self._hidden

    def get_resource_inst(self, path: str, environ: dict):  # noqa: ANN201 - WsgiDAV's signature
        if self.hidden(path):
            return None
        fp = self._loc_to_file_path(path, environ)
        if not os.path.lexists(fp):
            return None
        if os.path.islink(fp):
            return None  # as if absent: ownCloud serves no links out of its data folder
        return OcFolder(path, environ, fp) if os.path.isdir(fp) else OcFile(path, environ, fp)


def dav_app(root: str, user: str, password: str, hidden: frozenset[str]) -> WsgiDAVApp:
    """WsgiDAV serving `root` at both of ownCloud's WebDAV mounts, Basic authentication only."""
    mounts = (WEBDAV, f"/remote.php/dav/files/{user}")
    config = {
        "provider_mapping": {m: OcProvider(root, hidden) for m in mounts},
        "simple_dc": {"user_mapping": {"*": {user: {"password": password}}}},
        "http_authenticator": {"accept_basic": True, "accept_digest": False, "default_to_digest": False},
        "dir_browser": {"enable": False},
        "verbose": 0,
        "logging": {"enable": False},
        "lock_storage": True,
        "property_manager": None,
        "suppress_version_info": True,
        "add_header_MS_Author_Via": False,
    }
    return WsgiDAVApp(config)
