"""Each benchmark's settings live in its own config class beside its loader: composed from its YAML,
refused on another benchmark, and rebuilt from a record written before the classes were split."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from eval.benchmarks import benchmark_config
from eval.benchmarks.builtin.loader import Config as BuiltinConfig
from eval.benchmarks.officeqa import Config as OfficeQAConfig
from eval.config import BenchmarkConfig
from tests.conftest import compose_root

REPO = Path(__file__).resolve().parents[3]


def test_each_benchmark_composes_to_its_own_class() -> None:
    builtin = compose_root(["benchmark=builtin_qa"]).benchmark
    assert type(builtin) is BuiltinConfig and builtin.suite == "qa" and builtin.label == "builtin-qa"
    native = compose_root(["benchmark=native", "benchmark.path=/data"]).benchmark
    assert type(native) is BenchmarkConfig and not hasattr(native, "suite") and native.label == "native"
    officeqa = compose_root(["benchmark=officeqa", "benchmark.questions=/d/q.csv"]).benchmark
    assert type(officeqa) is OfficeQAConfig and officeqa.questions == "/d/q.csv" and officeqa.reward == "309dc01"


def test_a_setting_of_another_benchmark_is_refused() -> None:
    r = subprocess.run([sys.executable, "-m", "runners.job", "benchmark=native", "benchmark.suite=qa", "task=x"],
                       cwd=REPO, capture_output=True, text=True, timeout=120)
    said = [line for line in r.stderr.splitlines() if "benchmark.suite is not a setting of this benchmark" in line]
    assert r.returncode != 0 and len(said) == 1 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "start from benchmark=builtin" in said[0]  # the project's own one-line error, not Hydra's hint


def test_a_record_from_before_the_split_rebuilds_its_benchmark_config() -> None:
    """Version-1 records kept every loader's fields, most at their defaults."""
    old = {"name": "officeqa", "path": None, "suite": "workspace", "seed": 0, "questions": "q.csv", "corpus": "c",
           "dataset": None, "split": None, "workspaces": None, "roles": {}, "tasks_dir": None, "export_dir": None,
           "include": [], "exclude": [], "ids": ["UID1"], "limit": None, "reward": "460ad51", "cache_dir": None}
    cfg = benchmark_config(old)
    assert type(cfg) is OfficeQAConfig and (cfg.questions, cfg.reward, cfg.ids) == ("q.csv", "460ad51", ["UID1"])
    assert type(benchmark_config({**old, "name": "native"})) is BenchmarkConfig
