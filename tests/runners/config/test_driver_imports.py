"""A sweep's driver imports what it needs before Ray's start, not what only a job needs (issue
38.5): the config schema and the preflight do not pull in the tab's engine or the served models'
HTTP client, which the episode actors import when they run a job. Measured in a fresh interpreter
that composes a sweep's config, expands its grid (the preflight included) as the driver does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ONLY_A_JOB_NEEDS = ("tab.tab", "httpx", "runners.job.run")
DRIVER_START = f"""
import json, sys
from hydra import compose, initialize_config_dir
from runners.config.schema import CONF_DIR, register, to_root
from runners.sweep.grid import expand
overrides = ["model=scripted", "model.script=" + sys.argv[1], "grid.benchmark=[builtin]", "benchmark.limit=1", "grid.method=[dci,runningtab]", "judge=rule"]
register()
with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
    specs = expand(to_root(compose("config", overrides=overrides)), overrides, None)
print(json.dumps({{"jobs": len(specs), "loaded": [m for m in {ONLY_A_JOB_NEEDS!r} if m in sys.modules]}}))
"""


def test_the_driver_start_does_not_import_what_only_a_job_needs(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"content": "Done."}) + "\n")
    r = subprocess.run([sys.executable, "-c", DRIVER_START, str(script)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["jobs"] == 2
    assert out["loaded"] == []


def test_the_packages_still_export_their_names() -> None:
    import runners.models
    import tab

    for package in (tab, runners.models):
        for name in package.__all__:
            assert getattr(package, name) is not None
