"""Issue 36 (2): the shares the agent can write into the file server's state (`.image/fileserver/
shares.json`) are hostile data. A share resolves inside the served folder, through no link, or is
refused; a store that is huge, nested, a link or a FIFO is an empty one, and the server always
starts; a shared file is streamed, whatever its size. The server as a real process driven over
HTTP, and once end to end: the agent writes the store, the task's evaluator follows its link."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from eval.judges import JudgeError
from eval.tac.image_state import FILESERVER, STATE_DIR
from eval.tac.scripted_agent import SERVER, RuleJudge, _bash, _write
from runners.core.messages import AssistantMessage
from tests.eval.tac.test_doors import run_agent

REPO = Path(__file__).resolve().parents[3]
GOOD = "Good00000000000"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the agentcompany judge needs bubblewrap (CI installs it)")


class Server:
    """`python -m eval.tac.fileserver` over `root`; refuses to wait more than `timeout` s for it to listen."""

    def __init__(self, root: Path, state: Path, timeout: float = 30) -> None:
        argv = [sys.executable, "-m", "eval.tac.fileserver", "--root", str(root), "--state", str(state), "--port", "0", "--hide", ".image"]
        self.proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            raise AssertionError(f"the server did not start: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = "http://" + line.split()[-1]

    def share(self, token: str) -> requests.Response:
        return requests.get(f"{self.url}/index.php/s/{token}/download", timeout=30)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The served folder, with the grader's secret beside it (as /utils is beside /workspace)."""
    root = tmp_path / "srv" / "files"
    (root / "Documents" / "Research").mkdir(parents=True)
    (root / "Documents" / "report.md").write_text("the agent's report\n")
    (root / ".image" / "data").mkdir(parents=True)
    (root / ".image" / "data" / "secret.db").write_text("not the server's\n")
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "scoring.py").write_text("class Checkpoint: GRADER\n")
    (root / "Documents" / "linked").symlink_to(tmp_path / "utils")
    (root / "Documents" / "scoring.py").symlink_to(tmp_path / "utils" / "scoring.py")
    return root


def store(state: Path, paths: list[object], **fields: object) -> list[str]:
    """shares.json with one share per path; their tokens."""
    state.mkdir(parents=True, exist_ok=True)
    tokens = [f"T{i:014d}" for i in range(len(paths))]
    shares = [{"id": i + 1, "token": t, "path": p, "item_type": "file", "permissions": 1, "stime": 0, "password": False, **fields}
              for i, (t, p) in enumerate(zip(tokens, paths, strict=True))]
    (state / "shares.json").write_text(json.dumps(shares))
    return tokens


ESCAPES = ["/../../utils/scoring.py", "../../utils/scoring.py", "/Documents/../../../utils/scoring.py", "/Documents/linked/scoring.py",
           "/Documents/scoring.py", "/.image/data/secret.db", "/Documents/report.md\x00", str(Path("/").resolve() / "etc" / "passwd")]


def test_a_share_resolves_inside_the_served_folder_or_is_refused(root: Path, tmp_path: Path) -> None:
    """Before: `/../../utils/scoring.py` (and a path through a link) was served as it was written."""
    *bad, good = store(tmp_path / "state", [*ESCAPES, "/Documents/report.md"])
    s = Server(root, tmp_path / "state")
    try:
        for token, path in zip(bad, ESCAPES, strict=True):
            got = s.share(token)
            assert got.status_code == 404 and b"GRADER" not in got.content and b"root:" not in got.content, path
        assert s.share(good).content == b"the agent's report\n"
        listed = requests.get(f"{s.url}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json", auth=("theagentcompany",) * 2, timeout=30)
        assert [x["path"] for x in listed.json()["ocs"]["data"]] == ["/Documents/report.md"]
        ocs = f"{s.url}/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json"
        for path in ("/Documents/linked/scoring.py", "/Documents/scoring.py", "/Documents/../../utils/scoring.py"):
            made = requests.post(ocs, auth=("theagentcompany",) * 2, data={"path": path, "shareType": 3}, timeout=30)
            assert made.status_code == 404, path
    finally:
        s.stop()


def test_fields_of_the_wrong_type_are_rebuilt_or_dropped(root: Path, tmp_path: Path) -> None:
    """Before: an entry without `stime` or `permissions` broke every listing of shares (a 500)."""
    state = tmp_path / "state"
    state.mkdir()
    entries = [{"id": 1, "token": GOOD, "path": "/Documents/report.md"},  # fields missing: defaults
               {"id": True, "token": "Bool00000000000", "path": "/Documents/report.md"},
               {"id": 3, "token": "../x", "path": "/Documents/report.md"},
               {"id": 4, "token": "Type00000000000", "path": ["/Documents/report.md"]},
               {"id": 5, "token": "Kind00000000000", "path": "/Documents/Research", "permissions": "all", "stime": "now", "item_type": 7}]
    (state / "shares.json").write_text(json.dumps(entries))
    s = Server(root, state)
    try:
        listed = requests.get(f"{s.url}/ocs/v1.php/apps/files_sharing/api/v1/shares?format=json", auth=("theagentcompany",) * 2, timeout=30)
        assert listed.status_code == 200
        assert [(x["id"], x["permissions"], x["stime"]) for x in listed.json()["ocs"]["data"]] == [(1, 1, 0), (5, 1, 0)]
        assert s.share(GOOD).content == b"the agent's report\n"
    finally:
        s.stop()


@pytest.mark.parametrize("kind", ["nested", "huge", "link", "fifo", "binary"])
def test_a_hostile_store_is_an_empty_one_and_the_server_starts(root: Path, tmp_path: Path, kind: str) -> None:
    """Before: a deeply nested store crashed the server at its start (the evaluator never ran), a
    FIFO hung it, and a link was followed."""
    state = tmp_path / "state"
    elsewhere = tmp_path / "elsewhere.json"
    store(tmp_path / "other", ["/Documents/report.md"])
    shutil.move(tmp_path / "other" / "shares.json", elsewhere)
    state.mkdir()
    target = state / "shares.json"
    if kind == "nested":
        target.write_text("[" * 200_000 + "]" * 200_000)
    elif kind == "huge":
        target.write_text(json.dumps([{"id": 1, "token": "T" + "0" * 14, "path": "/Documents/report.md", "pad": "x" * (5 << 20)}]))
    elif kind == "link":
        target.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_bytes(b"\xff\xfe\x00[{")
    s = Server(root, state)
    try:
        assert requests.get(f"{s.url}/status.php", timeout=30).json()["productname"] == "ownCloud"
        assert s.share("T" + "0" * 14).status_code == 404
    finally:
        s.stop()


def test_a_huge_shared_file_is_streamed(root: Path, tmp_path: Path) -> None:
    """Before: a shared file was read whole into the server's memory."""
    size = 256 << 20
    with open(root / "Documents" / "big.bin", "wb") as f:
        f.truncate(size)  # sparse: no disk used
    (token,) = store(tmp_path / "state", ["/Documents/big.bin"])
    s = Server(root, tmp_path / "state")
    try:
        got = 0
        with requests.get(f"{s.url}/index.php/s/{token}/download", stream=True, timeout=60) as r:
            assert r.status_code == 200 and int(r.headers["Content-Length"]) == size
            for chunk in r.iter_content(1 << 20):
                got += len(chunk)
        assert got == size
        peak = next(int(line.split()[1]) for line in Path(f"/proc/{s.proc.pid}/status").read_text().splitlines() if line.startswith("VmHWM:"))
        assert peak < 128 * 1024, f"the server's peak memory was {peak} kB for a {size >> 20} MiB file"
    finally:
        s.stop()


# --- end to end: the agent writes the store, the task's own evaluator follows the link -----------------

TOKEN = "Leak0000000000a"
SCORING = "class Checkpoint"  # in /utils/scoring.py, the grader's own helper


class Recording(RuleJudge):
    """The rule judge, keeping every text it was sent."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def complete(self, messages, tools) -> AssistantMessage:
        self.seen.append(json.dumps(messages))
        return super().complete(messages, tools)


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    from tests.helpers.tac_seven import write_export

    return write_export(tmp_path_factory.mktemp("export"))


@needs_bwrap
@pytest.mark.parametrize("mode", ["mounted", "served"])
def test_a_share_outside_the_served_folder_never_reaches_the_judge(tmp_path: Path, export: Path, mode: str) -> None:
    """Before: a share entry `/../../utils/scoring.py` written into .image/fileserver/shares.json was
    served as is, and the evaluator sent the grader's own scoring.py to the judge model."""
    from eval.score.records import score_job

    shares = [{"id": 1, "token": TOKEN, "path": "/../../utils/scoring.py", "item_type": "file", "permissions": 1, "stime": 0, "password": False}]
    turns = [_bash(_write(f"{STATE_DIR}/{FILESERVER}/shares.json", json.dumps(shares).encode())),
             _bash(f"echo '{SERVER}/index.php/s/{TOKEN}' > link.txt")]
    cfg, task, job_dir = run_agent(tmp_path, export, mode, turns)
    judge = Recording()
    try:
        scores = score_job(job_dir, cfg.judge, task=task, model=judge)
    except JudgeError as e:  # unscored is no better: the share must simply not be there
        raise AssertionError(f"the job was left unscored: {e}") from None
    assert not any(SCORING in text for text in judge.seen), "the grader's scoring.py reached the judge model"
    assert scores["final_score"]["result"] < 3
