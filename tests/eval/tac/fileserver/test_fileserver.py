"""The ownCloud-compatible file server (eval/tac/fileserver) on its own, as a real process on
loopback, driven by real HTTP clients: curl and requests, as agents and evaluators drive it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from requests.auth import HTTPBasicAuth

REPO = Path(__file__).resolve().parents[4]
AUTH = HTTPBasicAuth("theagentcompany", "theagentcompany")
HR = "Documents/Human Resources Team"
# TheAgentCompany's own rule for finding the download link in a share page (common.py).
DOWNLOAD_LINK = re.compile(r'https?://[^\s]*\bdownload\b[^\s]*(?=")')
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")


class Server:
    def __init__(self, root: Path, state: Path) -> None:
        self.root, self.state = root, state
        argv = [sys.executable, "-m", "eval.tac.fileserver", "--root", str(root), "--state", str(state), "--port", "0", "--hide", ".image"]
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.url = "http://" + line.split()[-1]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / HR).mkdir(parents=True)
    (root / HR / "salary_increase.txt").write_text("Name,Salary\nJohn,100\n")
    (root / HR / "a b(1)&c.txt").write_text("odd name\n")
    (root / "Documents" / "Research").mkdir()
    (root / ".image" / "data").mkdir(parents=True)
    (root / ".image" / "data" / "secret.db").write_text("not the server's")
    (root / "Documents" / "link").symlink_to("/etc")
    return root


@pytest.fixture
def server(files: Path, tmp_path: Path) -> Iterator[Server]:
    s = Server(files, tmp_path / "state")
    yield s
    s.stop()


def _hrefs(text: str) -> list[str]:
    return [e.text for e in ET.fromstring(text).findall(".//{DAV:}response/{DAV:}href")]


def test_webdav_listing_as_the_evaluators_read_it(server: Server) -> None:
    url = f"{server.url}/remote.php/webdav/Documents/Human%20Resources%20Team"
    r = requests.request("PROPFIND", url, headers={"Depth": "1"}, auth=AUTH)
    assert r.status_code == 207
    assert sorted(_hrefs(r.text)) == [
        "/remote.php/webdav/Documents/Human%20Resources%20Team/",
        "/remote.php/webdav/Documents/Human%20Resources%20Team/a%20b(1)%26c.txt",  # sabre's encoding: ( ) kept
        "/remote.php/webdav/Documents/Human%20Resources%20Team/salary_increase.txt",
    ]
    assert len(_hrefs(requests.request("PROPFIND", url, headers={"Depth": "0"}, auth=AUTH).text)) == 1
    docs = requests.request("PROPFIND", f"{server.url}/remote.php/webdav/Documents/", headers={"Depth": "1"}, auth=AUTH)
    assert not any("link" in h for h in _hrefs(docs.text))  # links are not served
    assert requests.request("PROPFIND", f"{server.url}/remote.php/webdav/Nope", headers={"Depth": "1"}, auth=AUTH).status_code == 404
    assert requests.request("PROPFIND", url, headers={"Depth": "1"}).status_code == 401
    assert requests.request("PROPFIND", url, auth=HTTPBasicAuth("theagentcompany", "wrong")).status_code == 401
    root = requests.request("PROPFIND", f"{server.url}/remote.php/webdav/", headers={"Depth": "1"}, auth=AUTH)
    assert sorted(_hrefs(root.text)) == ["/remote.php/webdav/", "/remote.php/webdav/Documents/"]  # .image is not the server's
    assert requests.get(f"{server.url}/remote.php/webdav/.image/data/secret.db", auth=AUTH).status_code == 404


@needs_curl
def test_download_upload_and_folders_with_curl(server: Server, files: Path) -> None:
    base = f"{server.url}/remote.php/webdav"
    got = subprocess.run(["curl", "-s", "-u", "theagentcompany:theagentcompany", f"{base}/Documents/Human%20Resources%20Team/salary_increase.txt"],
                         capture_output=True, text=True, check=True)
    assert got.stdout == "Name,Salary\nJohn,100\n"
    anonymous = subprocess.run(["curl", "-s", "-w", "%{http_code}", f"{base}/Documents/download.md"], capture_output=True, text=True).stdout
    assert anonymous.endswith("401") and not DOWNLOAD_LINK.search(anonymous)
    dav = f"{server.url}/remote.php/dav/files/theagentcompany"
    subprocess.run(["curl", "-sf", "-u", "theagentcompany:theagentcompany", "-X", "MKCOL", f"{dav}/Documents/notices"], check=True)
    (files.parent / "memo.odt").write_bytes(b"PK odt")
    subprocess.run(["curl", "-sf", "-u", "theagentcompany:theagentcompany", "-T", str(files.parent / "memo.odt"),
                    f"{dav}/Documents/notices/memo%201.odt"], check=True)
    assert (files / "Documents" / "notices" / "memo 1.odt").read_bytes() == b"PK odt"
    listing = requests.request("PROPFIND", f"{base}/Documents/notices", headers={"Depth": "1"}, auth=AUTH)
    assert len(_hrefs(listing.text)) - 1 == 1
    assert requests.delete(f"{dav}/Documents/notices/memo%201.odt", auth=AUTH).status_code == 204
    assert not (files / "Documents" / "notices" / "memo 1.odt").exists()


@needs_curl
def test_a_public_share_link_downloads_as_the_benchmark_downloads_it(server: Server, files: Path, tmp_path: Path) -> None:
    ocs = f"{server.url}/ocs/v1.php/apps/files_sharing/api/v1/shares"
    made = subprocess.run(["curl", "-s", "-u", "theagentcompany:theagentcompany", "-H", "OCS-APIRequest: true", "-X", "POST",
                           "-d", f"path=/{HR}/salary_increase.txt&shareType=3", ocs], capture_output=True, text=True, check=True)
    data = ET.fromstring(made.stdout)
    assert data.findtext("meta/statuscode") == "100" and data.findtext("data/item_type") == "file"
    link = data.findtext("data/url")
    assert re.fullmatch(rf"{server.url}/index\.php/s/[A-Za-z0-9]{{15}}", link)
    page = subprocess.run(["curl", "-s", link], capture_output=True, text=True, check=True).stdout  # no credentials
    download = DOWNLOAD_LINK.findall(page)[0]
    assert download == f"{link}/download"
    assert subprocess.run(["curl", "-s", download], capture_output=True, text=True).stdout == "Name,Salary\nJohn,100\n"
    v2 = requests.post(f"{server.url}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", auth=AUTH,
                       data={"path": "Documents/Research", "shareType": 3})
    assert v2.status_code == 200 and v2.json()["ocs"]["data"]["item_type"] == "folder"
    listed = requests.get(f"{ocs}?format=json", auth=AUTH).json()["ocs"]["data"]
    assert [s["path"] for s in listed] == [f"/{HR}/salary_increase.txt", "/Documents/Research"]
    missing = requests.post(f"{server.url}/ocs/v2.php/apps/files_sharing/api/v1/shares", auth=AUTH, data={"path": "/Nope", "shareType": 3})
    assert missing.status_code == 404
    assert requests.post(ocs, data={"path": f"/{HR}/salary_increase.txt", "shareType": 3}).status_code == 401
    hidden = requests.post(ocs, auth=AUTH, data={"path": "/.image/data/secret.db", "shareType": 3, "format": "json"})
    assert "<statuscode>404</statuscode>" in hidden.text
    # a second server over the same state (the evaluator's) serves the agent's link
    server.stop()
    again = Server(files, server.state)
    try:
        assert requests.get(download.replace(server.url, again.url)).text == "Name,Salary\nJohn,100\n"
        assert requests.get(f"{again.url}/index.php/s/NotAToken123456/download").status_code == 404
    finally:
        again.stop()


def test_a_broken_share_store_is_an_empty_one(files: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "shares.json").write_text(json.dumps([{"id": "x"}, 3, {"id": 1, "token": "T" * 15, "path": "/Documents/Research"}]))
    s = Server(files, state)
    try:
        assert requests.get(f"{s.url}/index.php/s/{'T' * 15}").status_code == 200
        (state / "shares.json").write_text("{not json")
    finally:
        s.stop()
    s = Server(files, state)
    try:
        assert requests.get(f"{s.url}/status.php").json()["productname"] == "ownCloud"
        assert requests.get(f"{s.url}/index.php/s/{'T' * 15}").status_code == 404
    finally:
        s.stop()


@needs_curl
def test_the_tab_records_a_file_fetched_from_the_server_as_a_read_of_it(tmp_path: Path) -> None:
    """A `curl` of a file the sandbox's server serves is a read of that workspace file (the capture
    never runs anything: it maps the URL to the file and checks the output against its content)."""
    from envs.protocol import Observation
    from tab.capture.observe import Capture
    from tab.capture.workspace_files import Workspace

    ws = tmp_path / "ws"
    files = ws / ".image" / "owncloud"
    (files / HR).mkdir(parents=True)
    (files / HR / "salary_increase.txt").write_text("Name,Salary\nJohn,100\nMary,200\n")
    s = Server(files, tmp_path / "state")
    try:
        dav = f"{s.url}/remote.php/webdav/"
        capture = Capture(Workspace(ws, urls=[(dav, ".image/owncloud")]))
        url = f"{dav}Documents/Human%20Resources%20Team/salary_increase.txt"

        def run(command: str):
            p = subprocess.run(command, shell=True, cwd=ws, capture_output=True, text=True, executable="/bin/bash")
            return capture(Observation("bash", {"command": command}, p.stdout, p.returncode != 0, 1))

        got = run(f"curl -s -u theagentcompany:theagentcompany '{url}'")
        assert [path for path, _ in got.reads] == [f".image/owncloud/{HR}/salary_increase.txt"]
        assert "Mary,200" in got.reads[0][1]
        assert run(f"curl -s -u theagentcompany:theagentcompany '{url}' | head -2").reads[0][1].strip() == "Name,Salary\nJohn,100"
        assert run(f"curl -s -u theagentcompany:theagentcompany -o copy.txt '{url}'").reads == []  # saved, not shown
        assert run(f"curl -s -u theagentcompany:theagentcompany -X PROPFIND '{dav}Documents/'").reads == []
        if shutil.which("wget"):
            w = run(f"wget -q --user theagentcompany --password theagentcompany -O - '{url}'")
            assert [path for path, _ in w.reads] == [f".image/owncloud/{HR}/salary_increase.txt"]
        assert run("curl -s 'http://elsewhere.example/x.txt'").reads == []
    finally:
        s.stop()
