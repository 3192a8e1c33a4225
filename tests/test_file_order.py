"""The suite's run order (tests/helpers/file_order.py): the files it ranks exist (a renamed file would
silently lose its place), a collection comes out longest first with each file's tests together, and
xdist hands the files out in that order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.file_order import LONGEST

REPO = Path(__file__).resolve().parents[1]


def test_every_ranked_file_exists() -> None:
    assert [p for p in LONGEST if not (REPO / p).is_file()] == []
    assert len(set(LONGEST)) == len(LONGEST)


def test_the_collection_runs_the_longest_files_first() -> None:
    """Three files collected in alphabetical order come out by rank: the vLLM tests (ranked first)
    before the Slurm tests (second), and an unranked file without a slow test last."""
    files = ["tests/runners/core/test_paths.py", "tests/slurm/test_e2e.py", "tests/runners/models/test_vllm.py"]
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    order = [line.split("::")[0] for line in r.stdout.splitlines() if "::" in line]
    runs = [f for i, f in enumerate(order) if i == 0 or order[i - 1] != f]  # each file once: its tests together
    assert runs == [files[2], files[1], files[0]], order


@pytest.mark.slow
def test_xdist_hands_out_the_files_in_that_order() -> None:
    """xdist's loadfile sorts files by their number of tests unless told not to: here the file of one
    test (collected first) runs before the file of three."""
    r = subprocess.run([sys.executable, "-m", "pytest", "-n", "1", "--dist", "loadfile", "-v", "-p", "no:cacheprovider",
                        "tests/test_docs.py", "tests/test_layers.py", "-k", "a_moved_module_is_caught or planted"],
                       cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    ran = [line.split()[-1].split("::")[0] for line in r.stdout.splitlines() if " PASSED " in line]
    assert ran == ["tests/test_docs.py"] + ["tests/test_layers.py"] * 3, r.stdout[-3000:]
