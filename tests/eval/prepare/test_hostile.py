"""Issue 36 (9): `eval.prepare check` treats the manifest as data it verifies, never as the truth:
what is on disk is re-hashed against what the loader will read (the preparer's own parts), a
manifest that lies (a fake digest, `parts` narrowed after a file changed, counts that do not add
up) or is malformed is refused in one line. `eval.prepare agentcompany` checks the file server's
archive it is given (format, layout, member kinds, size bounds) before anything is prepared."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from eval.prepare import ManifestError, check_data
from eval.prepare.manifest import listing_digest
from tests.eval.prepare.test_prepare import override, prepare
from tests.helpers import prepare_sources as src


@pytest.fixture
def officeqa_root(tmp_path: Path) -> Path:
    return override(prepare("officeqa", "--out", str(tmp_path / "DATA"), "--from", str(src.officeqa_dataset(tmp_path / "o"))), "officeqa")


def _edit(root: Path, change: Any) -> dict[str, Any]:
    doc = json.loads((root / "manifest.json").read_text())
    change(doc)
    (root / "manifest.json").write_text(json.dumps(doc))
    return doc


def _refused(root: Path, match: str) -> None:
    with pytest.raises(ManifestError, match=match):
        check_data("officeqa", str(root), full=True)
    r = prepare("check", str(root))
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("eval.prepare: ") and "again" in r.stderr, r.stderr


def test_a_fake_digest_is_refused(officeqa_root: Path) -> None:
    _edit(officeqa_root, lambda d: d.update(digest="sha256:" + "0" * 64))
    _refused(officeqa_root, "digest")


def test_a_fake_count_is_refused(officeqa_root: Path) -> None:
    _edit(officeqa_root, lambda d: d.update(files=d["files"] + 1, bytes=d["bytes"] - 1))
    _refused(officeqa_root, "files")


def test_parts_narrowed_after_a_file_changed_is_refused(officeqa_root: Path) -> None:
    """The manifest says only questions.csv is data (its digest made to agree): the corpus, which the
    loader reads, changed under it."""
    txt = officeqa_root / "corpus/treasury_bulletin_1941_01.txt"
    txt.write_text(txt.read_text() + "forged\n")

    def narrow(d: dict[str, Any]) -> None:
        d["parts"] = ["questions.csv"]
        d["entries"] = [e for e in d["entries"] if e[0] == "questions.csv"]
        d["files"], d["bytes"], d["digest"] = len(d["entries"]), sum(e[1] for e in d["entries"]), listing_digest(d["entries"])

    _edit(officeqa_root, narrow)
    _refused(officeqa_root, "parts")


def test_an_entry_that_lies_about_a_changed_file_is_refused(officeqa_root: Path) -> None:
    """The file changed and its entry was rewritten (size and digest of the listing made to agree):
    the sha256 recorded is not the file's."""
    txt = officeqa_root / "corpus/treasury_bulletin_1941_01.txt"
    txt.write_text(txt.read_text() + "forged\n")

    def fake(d: dict[str, Any]) -> None:
        for e in d["entries"]:
            if e[0] == "corpus/treasury_bulletin_1941_01.txt":
                e[1] = txt.stat().st_size
        d["bytes"], d["digest"] = sum(e[1] for e in d["entries"]), listing_digest(d["entries"])

    _edit(officeqa_root, fake)
    _refused(officeqa_root, "1 changed")


@pytest.mark.parametrize("entries", [[["questions.csv"]], [[1, 2, 3]], ["questions.csv"], [["questions.csv", "12", "ab"]],
                                     [["../outside", 1, "0" * 64]], [["questions.csv", -1, "0" * 64]], [{"path": "x"}], None])
def test_a_malformed_entry_is_refused_in_one_line(officeqa_root: Path, entries: Any) -> None:
    _edit(officeqa_root, lambda d: d.update(entries=entries))
    _refused(officeqa_root, "manifest")


@pytest.mark.parametrize("doc", [[], {"schema": 1, "benchmark": ["officeqa"], "entries": []}, {"schema": 1, "benchmark": "officeqa", "entries": [], "parts": "corpus"}])
def test_a_malformed_manifest_is_refused_in_one_line(officeqa_root: Path, doc: Any) -> None:
    (officeqa_root / "manifest.json").write_text(json.dumps(doc))
    r = prepare("check", str(officeqa_root))
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def _tar(path: Path, members: dict[str, str | None], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for rel, text in members.items():
            info = tarfile.TarInfo(rel)
            if text is None:
                info.type = tarfile.DIRTYPE
                t.addfile(info)
                continue
            data = text.encode()
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
        for rel, target in (links or {}).items():
            info = tarfile.TarInfo(rel)
            info.type, info.linkname = tarfile.SYMTYPE, target
            t.addfile(info)
    return path


def stand_in(kind: str, tmp: Path) -> Path:
    files = dict(src.OWNCLOUD_FILES)
    if kind == "a zip":
        path = tmp / "owncloud-files.tar.gz"
        with zipfile.ZipFile(path, "w") as z:
            for rel, text in files.items():
                z.writestr(rel, text)
        return path
    if kind == "not an archive":
        path = tmp / "owncloud-files.tar.gz"
        path.write_text("<html>404 Not Found</html>\n")
        return path
    if kind == "empty":
        path = tmp / "owncloud-files.tar.gz"
        path.write_bytes(b"")
        return path
    if kind == "no files/ folder":
        return _tar(tmp / "o.tar.gz", {rel.removeprefix("files/"): text for rel, text in files.items()})
    if kind == "an empty Documents":
        return _tar(tmp / "o.tar.gz", {"files/Documents": None, "files/Downloads/readme.txt": "x"})
    if kind == "a link":
        return _tar(tmp / "o.tar.gz", files, {"files/Documents/Financials/secrets.txt": "../../Downloads/readme.txt"})
    if kind == "another top folder":
        return _tar(tmp / "o.tar.gz", {**files, "etc/cron.d/job": "* * * * * root sh\n"})
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["a zip", "not an archive", "empty", "no files/ folder", "an empty Documents", "a link", "another top folder"])
def test_agentcompany_refuses_a_stand_in_archive(tmp_path: Path, kind: str) -> None:
    repo, commit = src.tac_repository(tmp_path / "TheAgentCompany")
    r = prepare("agentcompany", "--out", str(tmp_path / "DATA"), "--repo", str(repo), "--commit", commit, "--owncloud-tar", str(stand_in(kind, tmp_path)))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--owncloud-tar" in r.stderr and "docker cp" in r.stderr and len(r.stderr.strip().splitlines()) <= 3, r.stderr
    assert not (tmp_path / "DATA" / "agentcompany").exists()


def test_the_archive_bounds(tmp_path: Path) -> None:
    """An archive past its bounds (bytes unpacked, members) is refused before it is unpacked."""
    from eval.prepare.agentcompany import check_archive
    from eval.prepare.fetch import PrepareError

    tar = src.owncloud_tarball(tmp_path / "o.tar.gz")
    check_archive(tar)  # the real layout passes
    with pytest.raises(PrepareError, match="members"):
        check_archive(tar, max_members=2)
    with pytest.raises(PrepareError, match="bytes"):
        check_archive(tar, max_bytes=20)
