"""What TheAgentCompany's file-server archive must be before its files become the agent's workspace.

`--owncloud-tar` is a file made elsewhere, and the engine's `cp` stream could be anything an image
holds: both are checked for what can be checked without the image. The format (a tar, compressed
or not; `check_archive` reads its headers before anything is unpacked), the layout `docker cp` writes
for ownCloud's data folder (every member under `files/`, only folders and regular files: no links,
no devices), a `files/Documents/` holding files, and bounds on members and bytes unpacked (a bomb
is refused at its first member past them). A refusal says what was wrong and how to make the archive.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from eval.prepare.fetch import PrepareError

TOP = "files"  # `docker cp <container>:.../theagentcompany/files -` writes this folder
DOCUMENTS = f"{TOP}/Documents/"
MAX_MEMBERS = 1_000_000  # the image's data folder holds a few thousand
MAX_BYTES = 64 << 30  # and a few GB
HOW = ("The file server's files are ownCloud's {path} as `docker cp` writes it (a tar whose top folder is files/): make it where "
       "an engine runs and pass it as --owncloud-tar:\n  {command}")


class MemberRules:
    """The checks of each member as it is read (fetch.MemberCheck), and of the whole at the end."""

    def __init__(self, what: str, how: str, max_members: int = MAX_MEMBERS, max_bytes: int = MAX_BYTES) -> None:
        self.what, self.how, self.max_members, self.max_bytes = what, how, max_members, max_bytes
        self.members = self.bytes = self.documents = 0

    def refuse(self, problem: str) -> PrepareError:
        return PrepareError(f"{self.what}: {problem}. {self.how}")

    def __call__(self, m: tarfile.TarInfo) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise self.refuse(f"more than {self.max_members:,} members")
        name = m.name.removeprefix("./").rstrip("/")
        if name.split("/")[0] != TOP:
            raise self.refuse(f"member {m.name!r:.100} is not under {TOP}/")
        if not (m.isdir() or m.isreg()):
            raise self.refuse(f"member {m.name!r:.100} is a link or a special file (an ownCloud data folder holds folders and files)")
        self.bytes += m.size
        if self.bytes > self.max_bytes:
            raise self.refuse(f"more than {self.max_bytes:,} bytes unpacked")
        if m.isreg() and name.startswith(DOCUMENTS):
            self.documents += 1

    def finish(self) -> None:
        if not self.documents:
            raise self.refuse(f"no file under {DOCUMENTS}")


def check_archive(tar: Path, how: str = "", max_members: int = MAX_MEMBERS, max_bytes: int = MAX_BYTES) -> MemberRules:
    """Refuse (PrepareError) a file that is not a tar archive of the expected layout within the bounds,
    reading only its headers; returns the rules to unpack it with (the same checks, again, as it is written)."""
    rules = MemberRules(str(tar), how, max_members, max_bytes)
    if not tar.is_file():
        raise rules.refuse("not a file")
    if tar.stat().st_size == 0:
        raise rules.refuse("empty")
    if not tarfile.is_tarfile(tar):
        raise rules.refuse("not a tar archive (plain, gzip, bzip2 or xz)")
    try:
        with tarfile.open(tar, mode="r:*") as t:
            for member in t:
                rules(member)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise rules.refuse(f"cannot be read ({e})") from None
    rules.finish()
    return MemberRules(str(tar), how, max_members, max_bytes)
