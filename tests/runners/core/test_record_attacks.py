"""Issue 25 (2-4) and what it had not tried: the record's copy of what the agent made, attacked through
the real entry point (`python -m runners.job`, the scripted model driving bash under bubblewrap).

Whatever the agent writes, the job ends scored, the score reflects the task, and the host and other
jobs are untouched: a sparse file and links, a setuid file, names that are not UTF-8, more files or
bytes than the record keeps, a thousand nested folders, a full disk, and the modes records get.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from envs.sandbox import bwrap_problem
from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from tests.conftest import write_native, write_script

pytestmark = [pytest.mark.skipif(bwrap_problem() is not None, reason=f"bubblewrap unusable: {bwrap_problem()}"),
              pytest.mark.usefixtures("own_ray")]  # their sweeps start their own local Ray
REPO = Path(__file__).resolve().parents[3]
BAD = os.fsdecode(b"bad\xff\xfe.md")  # a name that is not UTF-8, as Python holds it


def _rubric(text: str, check: dict) -> dict:
    return {"text": text, "check": check}


TASKS = [
    {"id": "t", "prompt": "Write output/report.md.", "workspace": "w", "output": "output/",
     "rubrics": [_rubric("report", {"type": "contains", "file": "output/report.md", "values": ["hello"]})]},
    {"id": "caps", "prompt": "Update data/in.csv and write output/.", "workspace": "w", "output": "output/",
     "rubrics": [_rubric("the original value is still there", {"type": "contains", "file": "data/in.csv", "values": ["original"]}),
                 _rubric("f5 exists", {"type": "exists", "path": "output/f5.md"}),
                 _rubric("f1 exists", {"type": "exists", "path": "output/f1.md"})]},
]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    root = write_native(tmp_path_factory.mktemp("bench"), TASKS, {"w/data/in.csv": "id,value\n1,original\n"})
    (root / "workspaces" / "w" / "data" / BAD).write_text("source\n")  # a task's own name that is not UTF-8
    return root


def run_job(bench: Path, out: Path, turns: list, *overrides: str, task: str = "t", umask: int = 0o022,
            env: dict | None = None) -> subprocess.CompletedProcess:
    script = write_script(out.parent / f"{out.name}-{task}.jsonl", turns)
    cmd = [sys.executable, "-m", "runners.job", "benchmark=native", f"benchmark.path={bench}", f"task={task}",
           "method=runningtab", "model=scripted", f"model.script={script}", "env.sandbox=bwrap", f"out={out}", *overrides]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.umask(umask),
                          env={**os.environ, **(env or {})})


def bash(command: str) -> list:
    return [{"tool_calls": [{"name": "bash", "arguments": {"command": command, "timeout": 600}}]},
            {"content": "<FINAL_ANSWER>done</FINAL_ANSWER>"}]


def job_dir(r: subprocess.CompletedProcess) -> Path:
    assert r.returncode == 0, r.stderr[-3000:]
    return Path(r.stdout.strip().splitlines()[-1])


def disk_bytes(root: Path) -> int:
    return sum(os.lstat(os.path.join(d, n)).st_blocks * 512 for d, _, names in os.walk(root) for n in names)


@pytest.mark.slow
def test_a_sparse_file_and_its_links_cost_their_size_once(bench: Path, tmp_path: Path) -> None:
    links = "; ".join(f"ln -s big.bin output/l{i}.bin" for i in range(1, 10))
    make = "mkdir -p output && echo hello > output/report.md && truncate -s {size} output/big.bin && echo data | dd of=output/big.bin conv=notrunc 2>/dev/null"  # noqa: E501
    small = job_dir(run_job(bench, tmp_path / "small", bash(f"{make.format(size='20M')}; {links}; ln output/big.bin output/hard.bin")))
    res = JobRecord(small).result
    d = small / "deliverable" / "output"
    assert res.left_out == [] and res.limits_hit == [] and len(res.deliverable) == 12, res
    assert [os.readlink(d / f"l{i}.bin") for i in range(1, 10)] == ["big.bin"] * 9 and os.readlink(d / "hard.bin") == "big.bin"
    assert os.path.getsize(d / "l9.bin") == 20 * 2**20 and (d / "l9.bin").read_bytes()[:5] == b"data\n"
    assert disk_bytes(small / "deliverable") < 64 * 1024  # was 10 x 20 MB: the holes and the links are kept

    # the case: 200 MB sparse and nine links (2.0 GB in the record before): links over the byte cap stay out
    big = job_dir(run_job(bench, tmp_path / "big", bash(f"{make.format(size='200M')}; {links}")))
    res = JobRecord(big).result
    assert res.deliverable == ["output/big.bin", "output/report.md"] and res.limits_hit == ["deliverable_bytes"]
    assert res.left_out == [f"output/l{i}.bin" for i in range(1, 10)] and not res.left_out_rest
    assert disk_bytes(big / "deliverable") < 64 * 1024 and JobRecord(big).scores["metrics"]["pass_rate"] == 1.0


def test_files_past_the_caps_are_left_out_and_judged_missing(bench: Path, tmp_path: Path) -> None:
    command = ("mkdir -p output && echo hello > output/report.md && for i in 1 2 3 4 5; do echo x > output/f$i.md; done"
               " && head -c 3000 /dev/zero | tr '\\0' y >> data/in.csv")
    job = job_dir(run_job(bench, tmp_path / "o", bash(command), "env.deliverable_max_files=4",
                          "env.deliverable_max_bytes=2000", task="caps"))
    res = JobRecord(job).result
    assert res.deliverable == [f"output/f{i}.md" for i in range(1, 5)]
    assert res.left_out == ["data/in.csv", "output/f5.md", "output/report.md"] and not res.left_out_rest
    assert res.limits_hit == ["deliverable_bytes", "deliverable_files"]
    # the changed data/in.csv is missing, not its original (which holds "original"); f5 is missing; f1 is there
    assert [i["passed"] for i in JobRecord(job).scores["items"]] == [False, False, True]


@pytest.mark.skipif(os.getuid() != 0, reason="runs the record's file as user nobody: needs root")
def test_setuid_bits_never_reach_the_record_and_others_can_read_it(bench: Path) -> None:
    top = Path(tempfile.mkdtemp(prefix="record-setuid-"))  # traversable by `nobody`, unlike pytest's tmp_path
    try:
        top.chmod(0o755)
        job = job_dir(run_job(bench, top / "o", bash("mkdir -p output && echo hello > output/report.md"
                                                    " && cp /usr/bin/id output/tool && chmod 6755 output/tool")))
        tool = job / "deliverable" / "output" / "tool"
        assert oct(tool.stat().st_mode & 0o7777) == oct(0o744)  # the owner's execute bit only (issue 41)
        probe = f"test -u {tool} && echo setuid; {tool} -u; cat {job}/result.json {job}/trajectory.jsonl >/dev/null && echo readable"
        r = subprocess.run(["sh", "-c", probe], user=65534, group=65534, capture_output=True, text=True, timeout=30)
        # before: the record's copy was -rwsr-sr-x root (nobody ran it as euid 0) and result.json 0600
        assert r.stdout.split() == ["readable"], (r.stdout, r.stderr)
    finally:
        shutil.rmtree(top)


def test_a_name_that_is_not_utf8_is_recorded_losslessly_scored_and_shown_escaped(bench: Path, tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p output && echo hello > output/report.md"
                                                            " && printf hello > \"output/bad$(printf '\\377\\376').md\""}}]},
             {"tool_calls": [{"name": "read", "arguments": {"path": f"output/{BAD}"}}]},  # the model's own \udcff escapes
             {"tool_calls": [{"name": "read", "arguments": {"path": f"data/{BAD}"}}]},
             {"content": "<FINAL_ANSWER>done</FINAL_ANSWER>"}]
    job = job_dir(run_job(bench, tmp_path / "o", turns))
    rec = JobRecord(job)
    assert f"output/{BAD}" in rec.result.deliverable and f"output/{BAD}" in rec.deliverable_files()
    assert (job / "deliverable" / "output" / BAD).read_bytes() == b"hello"  # at its own bytes' name
    assert b"bad\xff\xfe.md" in os.listdir(os.fsencode(job / "deliverable" / "output"))
    assert rec.scores["metrics"]["pass_rate"] == 1.0
    read = [m for m in rec.trajectory() if m.get("name") == "read"]
    assert [m["content"].split("\n")[0] for m in read] == ["hello", "source"] and not any(m["is_error"] for m in read)
    assert [e["path"] for e in rec.plugin("tab")["read_log"]] == [f"data/{BAD}"]  # tab.json holds it too
    for name in ("result.json", "tab.json", "evaluator_view.json", "trajectory.jsonl"):
        (job / name).read_bytes().decode("utf-8")  # valid UTF-8, the name as \udcff escapes
    r = subprocess.run([sys.executable, "-m", "eval.report", str(tmp_path / "o")], cwd=REPO, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    page = (tmp_path / "o" / "report" / "jobs" / f"{job.name}.html").read_text(encoding="utf-8")
    assert "bad\\xff\\xfe.md</a>" in page and "/deliverable/output/bad%FF%FE.md" in page


@pytest.mark.slow
def test_a_million_files_and_a_thousand_nested_folders_stay_bounded(bench: Path, tmp_path: Path) -> None:
    """5,000 files and 1,000 nested folders in the workspace and in the agent's /tmp (the 10^6 case
    is bench/bench_deliverable.py): the walk stops at its budget, the rest is judged missing, the
    job is scored and its scratch removed (before: RecursionError, no result, the scratch left)."""
    make = """import os
ws = os.getcwd()
for top in ("output/deep", "/tmp/deep"):
    os.chdir(ws)
    os.makedirs(top)
    os.chdir(top)
    for i in range(1000):
        os.mkdir("d")
        os.chdir("d")
    open("x.txt", "w").write("x")
os.chdir(ws)
os.makedirs("output/many")
for i in range(5000):
    open("output/many/f%04d" % i, "w").close()
print("made")"""
    scratch, tmp = tmp_path / "scratch", tmp_path / "tmp"
    tmp.mkdir()
    turns = bash(f"mkdir -p output && echo hello > output/report.md && python3 - <<'EOF'\n{make}\nEOF")
    job = job_dir(run_job(bench, tmp_path / "o", turns, "env.deliverable_max_files=50", f"agent.work_dir={scratch}",
                          env={"TMPDIR": str(tmp)}))
    rec = JobRecord(job)
    assert [m for m in rec.trajectory() if m.get("role") == "tool"][0]["content"].startswith("made")
    res = rec.result
    assert res.left_out_rest and {"deliverable_entries", "deliverable_paths"} <= set(res.limits_hit), res.limits_hit
    assert len(res.deliverable) <= 50 and len(rec.deliverable_files()) == len(res.deliverable)
    assert any(r.startswith("output/deep/d/") and r.endswith("/") for r in res.left_out)
    assert rec.scores is not None and os.listdir(scratch) == [] and os.listdir(tmp) == []


def test_the_models_own_lone_surrogate_never_stops_the_job(bench: Path, tmp_path: Path, monkeypatch) -> None:
    from runners.job.identity import job_id
    from runners.job.run import run_and_score
    from tests.conftest import compose_root
    from tests.helpers.http_stub import Reply, StubServer, completion, tool_call

    monkeypatch.setenv("RT_TEST_KEY", "k")
    with StubServer() as stub:
        stub.push(Reply(body=completion("see \udcff", [tool_call("c1", "bash", json.dumps({"command": "echo hello > r.md"}))])),
                  *[Reply(body=completion("<FINAL_ANSWER>done</FINAL_ANSWER>"))] * 2)
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "method=dci", "model=openai",
                            f"model.base_url={stub.url}", "model.name=stub", "model.api_key_env=RT_TEST_KEY"])
        jid = job_id(cfg, "t")
        out = run_and_score(cfg, "t", tmp_path / jid, jid, None)
    assert out.result.stop_reason == "finished", out.result.error  # before: UnicodeEncodeError, env_error, retried
    assert stub.requests[1]["body"]["messages"][2]["content"] == "see \udcff"  # sent as its JSON escape
    assert JobRecord(tmp_path / jid).trajectory()[2]["content"] == "see \udcff"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_records_take_the_users_umask_and_never_more_than_0644(bench: Path, tmp_path: Path, umask: int) -> None:
    command = "mkdir -p output/sub && echo hello > output/report.md && echo x > output/sub/x.md && chmod 6777 output/sub/x.md"
    job = job_dir(run_job(bench, tmp_path / "o", bash(command), umask=umask))
    want = {"file": 0o644 & ~umask, "dir": 0o755 & ~umask}
    executable = {"deliverable/output/sub/x.md": 0o744 & ~umask}  # chmod 6777: the owner's execute bit is kept, no more
    got = {}
    for d, dirs, files in os.walk(job):
        for name in dirs + files:
            st = os.lstat(os.path.join(d, name))
            kind = "dir" if os.path.isdir(os.path.join(d, name)) else "file"
            got[os.path.relpath(os.path.join(d, name), job)] = (kind, oct(st.st_mode & 0o7777))
    assert {"result.json", "scores.json", "tab.json", "trajectory.jsonl", "deliverable/output/sub/x.md"} <= set(got)
    assert {rel: v for rel, v in got.items() if v[1] != oct(executable.get(rel, want[v[0]]))} == {}  # before: JSON files 0600, x.md 06777
    assert oct(os.stat(job).st_mode & 0o777) == oct(want["dir"])


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MB tmpfs (root only), grown by `grow(size)`."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.getuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk, lambda size: subprocess.run(["mount", "-o", f"remount,size={size}", str(disk)], check=True)
    finally:
        subprocess.run(["umount", "-l", str(disk)])


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def _unfinished(bench: Path, out: Path, turns: list, where: str, *overrides: str) -> Path:
    """Runs a job that meets the full disk writing `where`: a one-line error, no result, nothing
    torn or half-copied."""
    earlier = set(out.iterdir())
    r = run_job(bench, out, turns, *overrides)
    line = r.stderr.strip().splitlines()[-1]
    assert r.returncode != 0 and line.startswith("error: cannot write the job record"), r.stderr[-3000:]
    assert f"/{where}: No space left on device" in line and "runs again on resume" in line, line
    (job,) = set(out.iterdir()) - earlier
    assert not (job / "result.json").exists() and not [p for p in job.rglob("*") if p.name.endswith(".tmp")]
    lines = (job / "trajectory.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1])  # no torn line
    return job


@pytest.mark.slow
def test_a_full_disk_leaves_the_job_unfinished_and_a_resume_runs_it(bench: Path, small_disk) -> None:
    disk, grow = small_disk
    out = disk / "o"
    done = job_dir(run_job(bench, out, bash("mkdir -p output && echo hello > output/report.md")))
    before = _files(done)
    big = bash("mkdir -p output && echo hello > output/report.md && head -c 3000000 /dev/urandom > output/big.bin")
    job = _unfinished(bench, out, big, "deliverable", "seed=1")
    assert not (job / "deliverable" / "output" / "big.bin").exists()  # the half-copied file is removed

    filler = disk / "filler"  # now the trajectory's own append finds the disk full (a 50 KB tool result)
    filler.write_bytes(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - 16 * 1024))
    torn = _unfinished(bench, out, bash("seq 1 20000"), "trajectory.jsonl", "seed=2")
    assert [m["role"] for m in JobRecord(torn).trajectory()][:2] == ["system", "user"]
    filler.unlink()
    assert _files(done) == before  # the other job's record is untouched

    grow("16m")
    assert job_dir(run_job(bench, out, big, "seed=1")) == job  # the resume runs it again, whole this time
    assert read_json(job / "result.json")["stop_reason"] == "finished"
    assert (job / "deliverable" / "output" / "big.bin").stat().st_size == 3000000


def test_an_s3_upload_takes_a_name_that_is_not_utf8(tmp_path: Path, monkeypatch) -> None:
    from moto.server import ThreadedMotoServer

    from runners.core.storage import S3Storage, S3StorageConfig

    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    job = tmp_path / "j1"
    (job / "deliverable" / "output").mkdir(parents=True)
    (job / "deliverable" / "output" / BAD).write_text("hello")
    (job / "result.json").write_text("{}")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        store = S3Storage(S3StorageConfig(bucket="runs", endpoint_url=f"http://{host}:{port}", retries=0))
        store.client.create_bucket(Bucket="runs")
        assert store.upload("s", job) is None  # before: UnicodeEncodeError, the record never stored
        keys = {o["Key"] for o in store.client.list_objects_v2(Bucket="runs")["Contents"]}
        assert "runningtab/s/j1/deliverable/output/bad\\xff\\xfe.md" in keys
    finally:
        server.stop()


@pytest.mark.slow
def test_a_full_disk_in_a_sweep_fails_that_job_with_its_line_and_a_resume_runs_it(tmp_path: Path, small_disk) -> None:
    disk, grow = small_disk
    task = {"prompt": "x", "rubrics": [_rubric("r", {"type": "exists", "path": "output/report.md"})]}
    # one job at a time, the small one first: run side by side, the big one's bytes may fill the disk
    # before the small one's record is written, and both fail (seen in a full run)
    bench = write_native(tmp_path / "b", [{"id": "small", "workspace": "w", **task}, {"id": "big", "workspace": "wb", **task}],
                         {"wb/big": "a", "w/in.txt": "a"})
    script = write_script(tmp_path / "s.jsonl", bash("mkdir -p output && echo hello > output/report.md"
                                                     " && if [ -f big ]; then head -c 3000000 /dev/urandom > output/big.bin; fi"))
    cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "grid.method=[dci]",
           "model=scripted", f"model.script={script}", f"out={disk}", "sweep=full", "tracker=none", "cluster.max_in_flight=1"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    ledger = [json.loads(line) for line in (disk / "full" / "jobs.jsonl").read_text().splitlines()]
    status = {e["job_id"].split("__")[1]: e for e in ledger}
    assert status["small"]["status"] == "ok" and status["big"]["status"] == "failed", r.stderr[-3000:]
    assert status["big"]["error"].startswith("cannot write the job record (") and "No space left" in status["big"]["error"]
    grow("16m")
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    again = [json.loads(line) for line in (disk / "full" / "jobs.jsonl").read_text().splitlines()][len(ledger):]
    assert [(e["job_id"].split("__")[1], e["status"]) for e in again] == [("big", "ok")], r.stderr[-3000:]
