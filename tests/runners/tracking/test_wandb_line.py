"""How the closing line counts offline runs: by W&B id, whatever the folder's name says."""

from __future__ import annotations

from pathlib import Path

from runners.tracking.wandb_line import closing_line, run_ids


def folder(wandb_dir: Path, name: str, run_id: str) -> None:
    d = wandb_dir / name
    (d / "files").mkdir(parents=True)
    (d / f"run-{run_id}.wandb").write_bytes(b"")


def test_a_run_written_twice_in_one_second_is_one_run(tmp_path: Path) -> None:
    """W&B names the second folder of a run written again within the same second `…-<id>-1`
    (seen in CI: the line said 4 runs, `1 other`, for 3)."""
    folder(tmp_path, "offline-run-20261205_134850-37ab63e06bf3caf5", "37ab63e06bf3caf5")
    folder(tmp_path, "offline-run-20261205_134850-37ab63e06bf3caf5-1", "37ab63e06bf3caf5")
    folder(tmp_path, "offline-run-20261205_134851-743de13eaa884e86", "743de13eaa884e86")
    (tmp_path / "latest-run").symlink_to(tmp_path / "offline-run-20261205_134851-743de13eaa884e86")
    assert run_ids(tmp_path) == {"37ab63e06bf3caf5": 2, "743de13eaa884e86": 1}
    line = closing_line(tmp_path, "offline", "p", None, {"37ab63e06bf3caf5": "cell", "743de13eaa884e86": "summary"})
    assert line is not None and line.startswith("W&B: 2 runs (1 cell, summary) in 3 folders")


def test_an_id_with_a_dash_is_read_from_the_run_file(tmp_path: Path) -> None:
    """A run id the user chose may hold a dash; the folder's `run-<id>.wandb` names it whole."""
    folder(tmp_path, "offline-run-20261205_134850-my-run", "my-run")
    assert run_ids(tmp_path) == {"my-run": 1}


def test_no_folder_no_line(tmp_path: Path) -> None:
    assert run_ids(tmp_path / "absent") == {} and closing_line(tmp_path, "offline", "p", None, {}) is None
