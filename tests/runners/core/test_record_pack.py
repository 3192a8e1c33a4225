"""Records packed per grid cell (runners/core/record_pack.py): every reader reads a packed record as
it read its folder; what the agent made is never followed or trusted by the packer; an append cut
short is cut off; a folder with a result wins over the pack; writers get the folder back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from bench.bench_viewer import write_scripted_job
from envs.safeio import Walk
from eval.report.load import load_sweep
from runners.core.job_record import (
    JobRecord,
    has_file,
    packed_record,
    read_result,
    read_scores_of,
    record_ids,
    record_mtime,
    unpacked,
)
from runners.core.record_pack import MAX_MEMBERS, PACKS, pack_record
from runners.job.resume import Logged, Reruns, fresh_job_dir, is_final

BAD = os.fsdecode(b"bad\xff.md")


def record(sdir: Path, task: str = "t1", method: str = "runningtab") -> Path:
    d = write_scripted_job(sdir, method, 4, 3, task=task)
    out = d / "deliverable" / "output"
    (out / "run.sh").write_text("echo hi\n")
    (out / "run.sh").chmod(0o744)
    os.symlink("report.md", out / "latest.md")  # a record's links are relative, inside it
    (out / BAD).write_bytes(b"named in bytes\n")
    (d / "extracted.json").write_text(json.dumps({"files": [{"path": "output/report.md", "text": "# Report"}], "left_out": 0}))
    return d


def seen(job_dir: Path) -> dict[str, object]:
    """Everything a reader takes from a record."""
    r = JobRecord(job_dir)
    return {"meta": r.meta, "result": r.result, "scores": r.scores, "tab": r.plugin("tab"), "shown": r.plugin("shown"),
            "view": r.view, "trajectory": r.trajectory(), "extracted": r.extracted, "files": r.deliverable_files(),
            "finished": r.finished, "scored": r.scored, "names": r.names()}


def tree(root: Path) -> dict[str, tuple[int, bytes | str | None]]:
    out: dict[str, tuple[int, bytes | str | None]] = {}
    for rel, st in Walk(root):
        if os.path.islink(root / rel):
            out[rel] = (0, os.readlink(root / rel))
        elif os.path.isdir(root / rel):
            out[rel] = (0, None)
        else:
            out[rel] = (st.st_mode & 0o777, (root / rel).read_bytes())
    return out


def test_a_packed_record_reads_as_its_folder_did_and_unpacks_to_it(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    d = record(sdir)
    before, files = seen(d), tree(d)
    assert pack_record(sdir, d.name, "wb__runningtab__m1__s0")
    assert not d.exists() and packed_record(d) is not None
    assert seen(d) == before
    assert record_ids(sdir) == [d.name] and has_file(d, "scores.json") and not has_file(d, "nothing.json")
    assert [j.job_id for j in load_sweep(sdir).jobs] == [d.name]
    listed = subprocess.run(["tar", "-tf", str(sdir / PACKS / "wb__runningtab__m1__s0.tar")], capture_output=True, text=True, check=True)
    assert f"{d.name}/result.json" in listed.stdout.splitlines()  # a plain tar: the user's own tools read it
    assert unpacked(d) == d and tree(d) == files  # bytes, modes (0744 kept), the link as a link, the name's own bytes


def test_the_packer_follows_no_link_and_packs_only_within_bounds(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    escaping = record(sdir, "t1")
    os.symlink(str(secret), escaping / "deliverable" / "output" / "out.md")  # a link to the host's file
    fifo = record(sdir, "t2")
    os.mkfifo(fifo / "deliverable" / "pipe")
    many = record(sdir, "t3")
    for i in range(MAX_MEMBERS):
        (many / "deliverable" / f"f{i}").write_text("x")
    sparse = record(sdir, "t4")
    with open(sparse / "deliverable" / "holes.bin", "wb") as f:
        f.truncate(1 << 30)
    for d in (escaping, fifo, many, sparse):
        assert not pack_record(sdir, d.name, "cell")
        assert d.is_dir() and packed_record(d) is None and JobRecord(d).finished  # still read as a folder
    assert not (sdir / PACKS / "cell.tar").exists() or b"host secret" not in (sdir / PACKS / "cell.tar").read_bytes()
    assert not pack_record(sdir, "no-such-job", "cell")


def test_an_append_cut_short_is_cut_off_and_a_torn_index_line_skipped(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    first, second, third = (record(sdir, t) for t in ("t1", "t2", "t3"))
    expected = {d.name: seen(d) for d in (first, second, third)}
    assert pack_record(sdir, first.name, "cell")
    with open(sdir / PACKS / "cell.tar", "ab") as f:  # a killed packer's bytes, never committed
        f.write(b"\0" * 777)
    with open(sdir / PACKS / "cell.idx", "ab") as f:  # and its index line, cut short
        f.write(b'{"job":"' + second.name.encode() + b'","end":99')
    assert packed_record(second) is None  # the torn line commits nothing
    assert pack_record(sdir, second.name, "cell") and pack_record(sdir, third.name, "cell")
    for d in (first, second, third):
        assert seen(d) == expected[d.name]


def test_a_folder_with_a_result_wins_and_an_unfinished_one_does_not(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    d = record(sdir)
    assert pack_record(sdir, d.name, "cell")
    unpacked(d)
    (d / "scores.json").write_text(json.dumps({"judge": "rule", "metrics": {"pass_rate": 1.0}, "items": []}))
    assert read_scores_of(d)["metrics"]["pass_rate"] == 1.0  # re-scored since it was packed: the folder
    (d / "result.json").unlink()  # a rerun under way: its folder has no result yet
    assert read_result(d) is not None and read_scores_of(d)["metrics"]["pass_rate"] == 0.25  # the packed record, whole


def test_resume_and_a_rerun_see_packed_records(tmp_path: Path) -> None:
    sdir = tmp_path / "s"
    ok, errored = record(sdir, "t1"), record(sdir, "t2")
    result = json.loads((errored / "result.json").read_text())
    (errored / "result.json").write_text(json.dumps({**result, "stop_reason": "env_error", "errored": True, "attempt": 1,
                                                     "error": "no sandbox"}))
    line = Logged("ok", 1, os.stat(ok / "result.json").st_mtime + 1)
    for d in (ok, errored):
        assert pack_record(sdir, d.name, "cell")
    assert record_mtime(ok, "result.json") is not None
    assert is_final(ok, True, Reruns(2), line) and is_final(ok, True, Reruns(2))  # vouched by the ledger, or read
    assert not is_final(errored, True, Reruns(2))  # retries left: it runs again
    earlier = fresh_job_dir(errored)  # the rerun starts in a fresh folder; the packed attempt's error is kept
    assert [e["error"] for e in earlier] == ["no sandbox"] and errored.is_dir() and not any(errored.iterdir())


def test_a_record_scored_again_is_packed_again(tmp_path: Path) -> None:
    """`runningtab score` on a packed record: its judge reads the record as a folder, and the new
    scores are packed with it again (no folder is left)."""
    from eval.score.records import score_job
    from runners.job.identity import job_id
    from runners.job.run import run_and_score
    from tests.conftest import compose_root, write_native, write_script

    bench = write_native(tmp_path / "bench", [{"id": "count", "prompt": "How many rows?", "workspace": "w", "answer": "3"}],
                         {"w/data.csv": "a\n1\n2\n3\n"})
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "mkdir -p out && wc -l data.csv > out/n.txt"}}]},
                                                 {"content": "<FINAL_ANSWER>3</FINAL_ANSWER>"}])
    cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "model=scripted", f"model.script={script}"])
    sdir = tmp_path / "sweep"
    jid = job_id(cfg, "count")
    run_and_score(cfg, "count", sdir / jid, jid, None)
    d = sdir / jid
    first = JobRecord(d).scores
    assert first is not None and JobRecord(d).deliverable_files() == ["out/n.txt"]
    assert pack_record(sdir, jid, "cell")
    again = score_job(d)
    assert again is not None and again["metrics"] == first["metrics"]
    assert not d.exists() and JobRecord(d).packed  # packed again, with its new scores
    assert JobRecord(d).scores == again and record_mtime(d, "scores.json") >= record_mtime(d, "result.json")


def test_a_reader_of_a_packed_deliverable_writes_nothing_into_the_sweep(tmp_path: Path) -> None:
    """The report's deliverable texts (a record without extracted.json) read the files from a
    temporary copy: the record stays packed, the sweep folder unchanged."""
    from eval.judges.extract.session import deliverable_texts

    sdir = tmp_path / "s"
    d = record(sdir)
    (d / "extracted.json").unlink()
    assert pack_record(sdir, d.name, "cell")
    before = sorted(p.name for p in sdir.iterdir())
    r = JobRecord(d)
    assert (r.deliverable_dir / "output" / "run.sh").read_text() == "echo hi\n"
    assert any("echo hi" in t for t in deliverable_texts(JobRecord(d)))
    assert sorted(p.name for p in sdir.iterdir()) == before and packed_record(d) is not None
    copy = r.deliverable_dir
    del r
    assert not copy.exists()  # the copy goes with its reader
