"""The sweep's own last build skips stamping the jobs its driver vouches for (issue 15, item 3).

The driver knows which jobs had finished (their records final) when its last live refresh began;
that refresh stamped them after they settled, so the last build takes their kept stamps instead of
taking 20,000 folders' lstat again. The vouch holds only for the manifest that refresh wrote (its
build id): after any other build, or with no manifest, every folder is stamped as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.report import build, write_report
from eval.report.manifest import MANIFEST, Settled
from tests.test_report_incremental import CHANGED, _from_scratch, _rescore, _tree, sweep  # noqa: F401 (fixture)


@pytest.fixture()
def stamped(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders the build stamps, by name."""
    seen: list[str] = []
    real = build.stamp
    monkeypatch.setattr(build, "stamp", lambda d: seen.append(d.name) or real(d))
    return seen


def _same(a: dict[str, bytes], b: dict[str, bytes]) -> bool:
    """The same report, but for the manifest's build id (named builds here, none from scratch)."""

    def unnamed(tree: dict[str, bytes]) -> dict[str, bytes]:
        first, rest = tree[MANIFEST].split(b"\n", 1)
        return {**tree, MANIFEST: json.dumps({**json.loads(first), "build": None}).encode() + b"\n" + rest}

    return unnamed(a) == unnamed(b)


def _jobs(sdir: Path) -> set[str]:
    return {d.name for d in sdir.iterdir() if (d / "job.json").is_file()}


def test_a_build_records_its_id_in_the_manifest(sweep: Path) -> None:  # noqa: F811
    out = write_report(sweep, build_id="refresh-1")
    assert json.loads((out / MANIFEST).read_text().split("\n", 1)[0])["build"] == "refresh-1"
    write_report(sweep)  # a build by hand: no id, so no vouch for refresh-1 holds after it
    assert json.loads((out / MANIFEST).read_text().split("\n", 1)[0])["build"] is None


def test_vouched_jobs_are_not_stamped_again(sweep: Path, tmp_path: Path, stamped: list[str]) -> None:  # noqa: F811
    write_report(sweep, build_id="refresh-1")
    _rescore(sweep, CHANGED)  # finished after the refresh began: not vouched for
    settled = Settled("refresh-1", frozenset(_jobs(sweep) - {CHANGED}))
    stamped.clear()
    out = write_report(sweep, settled=settled)
    assert CHANGED in stamped and not set(stamped) & settled.names
    assert _same(_tree(out), _from_scratch(sweep, tmp_path))


def test_a_vouch_for_another_build_is_not_taken(sweep: Path, tmp_path: Path, stamped: list[str]) -> None:  # noqa: F811
    write_report(sweep, build_id="refresh-1")
    _rescore(sweep, CHANGED)
    write_report(sweep)  # by hand, in between: the manifest is no longer refresh-1's
    _rescore(sweep, CHANGED)
    stamped.clear()
    out = write_report(sweep, settled=Settled("refresh-1", frozenset(_jobs(sweep))))
    assert set(stamped) >= _jobs(sweep)
    assert _same(_tree(out), _from_scratch(sweep, tmp_path))


def test_a_vouched_job_new_to_the_manifest_is_read(sweep: Path, tmp_path: Path) -> None:  # noqa: F811
    import shutil

    aside = tmp_path / "aside"
    shutil.move(sweep / CHANGED, aside)
    write_report(sweep, build_id="refresh-1")
    shutil.move(aside, sweep / CHANGED)
    out = write_report(sweep, settled=Settled("refresh-1", frozenset(_jobs(sweep))))
    assert (out / "jobs" / f"{CHANGED}.html").is_file()
    assert _same(_tree(out), _from_scratch(sweep, tmp_path))
