"""`python -m eval.prepare` over local sources laid out as each benchmark publishes its data: each
writes the folder its loader reads, with a manifest, and prints the override that points sweeps at it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eval.benchmarks.agentcompany import Config as TACConfig
from eval.benchmarks.agentcompany import dependencies
from eval.benchmarks.agentcompany import load as load_tac
from eval.benchmarks.officeqa import Config as OQAConfig
from eval.benchmarks.officeqa import load as load_oqa
from eval.benchmarks.workspace_bench import Config as WBConfig
from eval.benchmarks.workspace_bench import load as load_wb
from eval.config import DataConfig
from eval.prepare import PREPARERS, ManifestError, check_data
from eval.prepare import agentcompany as tac
from eval.prepare import officeqa as oqa
from eval.prepare import workspace_bench as wb
from tests.helpers import prepare_sources as src
from tests.helpers.eval_records import SAMPLES

REPO = Path(__file__).resolve().parents[3]


def prepare(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eval.prepare", *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", **(env or {})})


def override(r: subprocess.CompletedProcess[str], name: str) -> Path:
    assert r.returncode == 0, r.stderr[-3000:]
    key, _, value = r.stdout.strip().splitlines()[-1].partition("=")
    assert key == f"data.{name}", r.stdout
    return Path(value)


def test_every_preparer_has_its_data_entry() -> None:
    assert sorted(PREPARERS) == sorted(f.name for f in DataConfig.__dataclass_fields__.values())


@pytest.mark.parametrize("layout", ["card", "task_folders"])
@pytest.mark.slow
def test_workspace_bench(tmp_path: Path, layout: str) -> None:
    tasks = (src.workspace_bench_card if layout == "card" else src.workspace_bench_task_folders)(tmp_path / "lite")
    zipped = src.workspaces_zip(tmp_path / "workspaces")
    r = prepare("workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(zipped / wb.ARCHIVE))
    root = override(r, "workspace_bench")
    assert root == tmp_path / "DATA" / "workspace_bench"
    records = [json.loads(line) for line in (root / "tasks.jsonl").read_text().splitlines()]
    assert [r["absolute_id"] for r in records] == [7, 12]
    assert records[0]["rubrics"] == src.wb_records()[0]["rubrics"]  # the table's JSON text decoded to lists
    assert (root / "filesys/backend_developer_raw/meetings/2024/2024-12-project-kickoff-meeting-minutes.md").is_file()
    assert (root / "filesys/ai_product_manager_raw/prd/roadmap.md").is_file()
    doc = check_data("workspace_bench", str(root), full=True)
    assert doc["files"] == len(src.ROLE_FILES) + 3 + 1 + 1  # role files, inputs, tasks.jsonl
    assert doc["sources"][0]["dataset"] == "Workspace-Bench/Workspace-Bench-Lite" and doc["variant"] == "lite"
    tasks_loaded = load_wb(WBConfig(**wb.configure(root)))
    assert tasks_loaded[0].stage["project_requirements_document.md"] == root / "data/62cad48b93630f53_project_requirements_document.md"
    assert tasks_loaded[1].workspace == root / "filesys/ai_product_manager_raw"
    again = prepare("workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(zipped))
    assert check_data("workspace_bench", str(override(again, "workspace_bench")))["digest"] == doc["digest"]  # the same bytes


@pytest.mark.slow
def test_workspace_bench_names_an_unknown_role(tmp_path: Path) -> None:
    tasks = src.workspace_bench_card(tmp_path / "lite")
    csv_path = tasks / "task_lite_clean_en_metadata_table.csv"
    csv_path.write_text(csv_path.read_text().replace("AI Product Manager", "Chief Druid"))
    r = prepare("workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(src.workspaces_zip(tmp_path / "w")))
    assert r.returncode == 1 and "no role folder for persona 'Chief Druid'" in r.stderr and "--role" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "DATA" / "workspace_bench").exists()
    r = prepare("workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(tmp_path / "w"),
                "--role", "Chief Druid=ProductManager_Workdir")
    assert (override(r, "workspace_bench") / "filesys/chief_druid_raw/prd/roadmap.md").is_file()


def test_workspace_bench_refuses_a_missing_input(tmp_path: Path) -> None:
    tasks = src.workspace_bench_card(tmp_path / "lite")
    (tasks / "data/0123456789abcdef_roadmap_notes.md").unlink()
    r = prepare("workspace_bench", "--out", str(tmp_path / "DATA"), "--tasks-from", str(tasks), "--workspaces-from", str(src.workspaces_zip(tmp_path / "w")))
    assert r.returncode == 1 and "12:data/0123456789abcdef_roadmap_notes.md" in r.stderr, r.stderr


def test_a_hub_that_cannot_be_reached_says_how_to_bring_the_data(tmp_path: Path) -> None:
    r = prepare("officeqa", "--out", str(tmp_path / "DATA"))
    assert r.returncode == 1 and "databricks/officeqa" in r.stderr and "--from DIR" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def file_server_tasks() -> set[str]:
    return {p.name for p in (SAMPLES / "theagentcompany").iterdir() if dependencies(p) == ["owncloud"]}


def test_agentcompany_from_the_repository_and_a_tarball(tmp_path: Path) -> None:
    repo, commit = src.tac_repository(tmp_path / "TheAgentCompany")
    tar = src.owncloud_tarball(tmp_path / "owncloud-files.tar.gz")
    r = prepare("agentcompany", "--out", str(tmp_path / "DATA"), "--repo", str(repo), "--commit", commit, "--owncloud-tar", str(tar))
    root = override(r, "agentcompany")
    assert (root / "files/Documents/Financials/payments.xlsx").read_text() == "not really xlsx"
    assert {t.id for t in load_tac(TACConfig(**tac.configure(root)))} == file_server_tasks()
    doc = check_data("agentcompany", str(root), full=True)
    assert doc["sources"][0] == {"repository": str(repo), "commit": commit, "path": "workspaces/tasks"}


def test_agentcompany_from_a_local_checkout(tmp_path: Path) -> None:
    """Issue 50 (5): `--from DIR` takes a checkout as it is (the benchmark's repository is not fetched):
    its tasks copied (an edit of the checkout later leaves the data alone), its commit and edits recorded."""
    repo, commit = src.tac_repository(tmp_path / "TheAgentCompany")
    (repo / tac.TASKS / "ds-sql-exercise" / "task.md").write_text("edited\n")
    tar = src.owncloud_tarball(tmp_path / "owncloud-files.tar.gz")
    (tmp_path / "elsewhere").mkdir()
    r = subprocess.run([sys.executable, "-m", "eval.prepare", "agentcompany", "--out", "DATA", "--from", "../TheAgentCompany",
                        "--owncloud-tar", str(tar)], cwd=tmp_path / "elsewhere", capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    root = override(r, "agentcompany")
    assert root == tmp_path / "elsewhere" / "DATA" / "agentcompany"
    assert {t.id for t in load_tac(TACConfig(**tac.configure(root)))} == file_server_tasks()
    source = check_data("agentcompany", str(root), full=True)["sources"][0]
    assert source == {"checkout": str(repo), "path": tac.TASKS, "commit": f"{commit} (not the pinned {tac.COMMIT})", "changed": 1}
    prepared, original = root / "tasks" / "ds-sql-exercise" / "init.sql", repo / tac.TASKS / "ds-sql-exercise" / "init.sql"
    assert prepared.read_bytes() == original.read_bytes() and prepared.stat().st_ino != original.stat().st_ino
    for args, words in ((["--from", str(tmp_path)], "no workspaces/tasks/ folder there"),
                        (["--from", str(repo), "--commit", commit], "give --from, or --repo/--commit to fetch, not both")):
        bad = prepare("agentcompany", "--out", str(tmp_path / "DATA2"), *args, "--owncloud-tar", str(tar))
        assert bad.returncode == 1 and words in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_agentcompany_without_a_container_engine_gives_the_tarball_command(tmp_path: Path) -> None:
    repo, commit = src.tac_repository(tmp_path / "TheAgentCompany")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip(), bin_dir / "git")
    r = prepare("agentcompany", "--out", str(tmp_path / "DATA"), "--repo", str(repo), "--commit", commit, env={"PATH": str(bin_dir)})
    assert r.returncode == 1 and tac.OWNCLOUD_TARBALL in r.stderr and "--owncloud-tar" in r.stderr, r.stderr


STAND_IN_ENGINE = """#!{python}
# A stand-in for docker's command line (no Docker engine here): create, cp to stdout, rm, image inspect.
import sys
log = open({log!r}, "a")
log.write(" ".join(sys.argv[1:]) + "\\n")
cmd = sys.argv[1]
if cmd == "info":
    sys.exit(0)
if cmd == "create":
    print("c0ffee")
elif cmd == "cp":
    if {fail}:
        sys.stderr.write("Error: no such file")
        sys.exit(1)
    sys.stdout.buffer.write(open({tar!r}, "rb").read())
elif cmd == "image":
    print("ghcr.io/theagentcompany/servers-owncloud@{digest}")
"""


@pytest.mark.parametrize("fail", [False, True])
def test_agentcompany_copies_the_files_out_of_the_image(tmp_path: Path, fail: bool) -> None:
    """The engine's create, cp and rm, run through a stand-in of its command line (no engine runs
    here): the data folder streams out as a tar, and the container is removed even when the copy fails."""
    repo, commit = src.tac_repository(tmp_path / "TheAgentCompany")
    tar = tmp_path / "files.tar"
    src.owncloud_tarball(tmp_path / "files.tar.gz")
    subprocess.run(["sh", "-c", f"gzip -dc {tmp_path / 'files.tar.gz'} > {tar}"], check=True)
    bin_dir, log = tmp_path / "bin", tmp_path / "calls"
    bin_dir.mkdir()
    engine = bin_dir / "docker"
    engine.write_text(STAND_IN_ENGINE.format(python=sys.executable, log=str(log), tar=str(tar), fail=fail, digest=tac.IMAGE_DIGEST))
    engine.chmod(engine.stat().st_mode | stat.S_IEXEC)
    r = prepare("agentcompany", "--out", str(tmp_path / "DATA"), "--repo", str(repo), "--commit", commit, "--engine", "docker",
                env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    calls = log.read_text().splitlines()
    assert calls[:3] == [f"create {tac.IMAGE}", f"cp c0ffee:{tac.DATA_IN_IMAGE} -", "rm -f c0ffee"]
    if fail:
        assert r.returncode == 1 and "no such file" in r.stderr, r.stderr
        return
    root = override(r, "agentcompany")
    assert (root / "files/Documents/Human Resources Team/Attendance/april-attendance-data.csv").is_file()
    assert check_data("agentcompany", str(root))["sources"][1]["digest"].endswith(tac.IMAGE_DIGEST)


def test_officeqa_from_the_dataset(tmp_path: Path) -> None:
    dataset = src.officeqa_dataset(tmp_path / "officeqa")
    r = prepare("officeqa", "--out", str(tmp_path / "DATA"), "--from", str(dataset), "--corpus", "txt,json")
    root = override(r, "officeqa")
    assert sorted(p.name for p in (root / "corpus").iterdir()) == [f"treasury_bulletin_{d}.{f}" for d in ("1939_01", "1941_01", "1950_02", "1954_02")
                                                                    for f in ("json", "txt")]
    tasks = load_oqa(OQAConfig(**oqa.configure(root)))
    assert [t.id for t in tasks][:2] == ["UID0001", "UID0003"] and tasks[2].extra["source_files"] == ["treasury_bulletin_1941_01.txt",
                                                                                                        "treasury_bulletin_1954_02.txt"]
    (dataset / oqa.FORMATS["txt"] / "treasury_bulletin_1950_02.txt").unlink()
    r = prepare("officeqa", "--out", str(tmp_path / "DATA2"), "--from", str(dataset))
    assert r.returncode == 1 and "treasury_bulletin_1950_02.txt" in r.stderr, r.stderr


def test_the_manifest_finds_what_changed(tmp_path: Path) -> None:
    root = override(prepare("officeqa", "--out", str(tmp_path / "DATA"), "--from", str(src.officeqa_dataset(tmp_path / "o"))), "officeqa")
    check_data("officeqa", str(root), full=True)
    doc = json.loads((root / "manifest.json").read_text())
    assert doc["files"] == 5 and doc["digest"].startswith("sha256:") and doc["parts"] == ["questions.csv", "corpus"]
    txt = root / "corpus/treasury_bulletin_1941_01.txt"
    data = txt.read_bytes()
    txt.unlink()
    txt.write_bytes(data.replace(b"2,602", b"2,603"))  # same size, other bytes
    check_data("officeqa", str(root))  # the stat check cannot see it ...
    with pytest.raises(ManifestError, match="1 changed"):
        check_data("officeqa", str(root), full=True)  # ... the full check can
    r = prepare("check", str(root))
    assert r.returncode == 1 and "1 changed" in r.stderr
    txt.unlink()
    (root / "corpus/extra.txt").write_text("x")
    with pytest.raises(ManifestError, match=r"1 missing \(corpus/treasury_bulletin_1941_01.txt\); 1 not in the manifest"):
        check_data("officeqa", str(root))
    with pytest.raises(ManifestError, match="does not exist"):
        check_data("officeqa", str(tmp_path / "nowhere"))


@pytest.mark.slow
def test_data_roots_fill_each_benchmarks_paths(tmp_path: Path) -> None:
    """One override per benchmark works in a grid of several: each cell reads its own entry."""
    from hydra import initialize_config_dir

    from runners.config.schema import CONF_DIR
    from runners.sweep.grid import cells
    from tests.conftest import compose_root

    data = [f"data.workspace_bench={tmp_path}/wb", f"data.agentcompany={tmp_path}/tac", f"data.officeqa={tmp_path}/oqa"]
    root = compose_root(["experiment=paper_main", *data])
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        configs = cells(root, data, "paper_main")
    by_name = {c.benchmark.name: c.benchmark for c in configs}
    assert by_name["workspace_bench"].workspaces == f"{tmp_path}/wb" and by_name["agentcompany"].export_dir == f"{tmp_path}/tac/files"
    assert by_name["officeqa"].questions == f"{tmp_path}/oqa/questions.csv" and by_name["officeqa"].selection == "officeqa_paper"
    # the paper's wording: file-server-only tasks, less the two that need another website or model (31)
    assert by_name["agentcompany"].exclude == ["ml-generate-gradcam", "sde-run-rising-wave-locally"]


def test_paper_data_stays_out_of_job_ids(tmp_path: Path) -> None:
    from runners.config.schema import job_record_config
    from runners.job.identity import config_identity
    from tests.conftest import compose_root

    plain = compose_root(["benchmark=officeqa", f"benchmark.questions={tmp_path}/q.csv", f"benchmark.corpus={tmp_path}/c"])
    via_data = compose_root(["benchmark=officeqa", f"data.officeqa={tmp_path}/elsewhere"])
    assert "data" not in job_record_config(via_data)
    assert config_identity(plain) == config_identity(via_data)


def sweep_env(tmp_path: Path, **unset: bool) -> dict[str, str]:
    keys = {k: "sk-dummy" for k in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GEMINI_API_KEY")}
    env = {**os.environ, **keys, "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"}
    for k in unset:
        env.pop(k, None)
    return env


def run(env: dict[str, str], module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_paper_main_over_prepared_data(tmp_path: Path) -> None:
    """From the published layouts to the paper's grid: prepared, shown by `--cfg job` with the preflight
    passing; then a missing file or an unset judge key is refused before any job runs, by the sweep
    and by `slurm.launch --dry-run`."""
    out = tmp_path / "DATA"
    tasks = src.workspace_bench_card(tmp_path / "lite")
    repo, commit = src.tac_repository(tmp_path / "tac")
    roots = {
        "workspace_bench": override(prepare("workspace_bench", "--out", str(out), "--tasks-from", str(tasks),
                                            "--workspaces-from", str(src.workspaces_zip(tmp_path / "w"))), "workspace_bench"),
        "agentcompany": override(prepare("agentcompany", "--out", str(out), "--repo", str(repo), "--commit", commit,
                                         "--owncloud-tar", str(src.owncloud_tarball(tmp_path / "oc.tar.gz"))), "agentcompany"),
        "officeqa": override(prepare("officeqa", "--out", str(out), "--from", str(src.officeqa_dataset(tmp_path / "oqa", all_uids=True))), "officeqa"),
    }
    # the shipped prices are placeholders, which a paper preset refuses unless told (tests/runners/sweep/test_budget.py)
    data = [*(f"data.{k}={v}" for k, v in roots.items()), "budget.allow_unpriced=true"]
    env = sweep_env(tmp_path)
    shown = run(env, "runners.sweep", "experiment=paper_main", *data, "--cfg", "job")
    assert shown.returncode == 0, shown.stderr[-3000:]
    printed = yaml.safe_load(shown.stdout)
    assert list(printed["model"]) == ["gpt54_nano", "deepseek_v4_flash", "gemini38_flash"]
    assert list(printed["benchmark"]) == ["workspace_bench", "agentcompany_paper", "officeqa_paper"]
    assert printed["benchmark"]["agentcompany_paper"]["tasks_dir"] == str(roots["agentcompany"] / "tasks")
    assert printed["benchmark"]["officeqa_paper"]["corpus"] == str(roots["officeqa"] / "corpus")
    assert printed["seed"] == [0, 1, 2] and printed["data"] == {k: str(v) for k, v in roots.items()}
    assert shown.stdout.splitlines()[-1].startswith("# preflight: passed"), shown.stdout[-500:]
    dry = run(env, "slurm.launch", "--dry-run", "experiment=paper_main", "cluster=slurm", *data)
    assert dry.returncode == 0 and "runners.sweep experiment=paper_main" in dry.stdout, dry.stderr[-3000:]

    no_judge_key = sweep_env(tmp_path, OPENAI_API_KEY=True)  # the judge's (GPT-5.4 mini); the model's is DeepSeek's
    for module, extra in (("runners.sweep", [f"out={tmp_path / 'o'}"]), ("slurm.launch", ["--dry-run", "cluster=slurm"])):
        r = run(no_judge_key, module, *extra, "experiment=paper_main", "model=deepseek_v4_flash", *data)
        assert r.returncode != 0 and "judge llm_rubric" in r.stderr and "$OPENAI_API_KEY" in r.stderr, r.stderr[-3000:]
        assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()

    (roots["officeqa"] / "corpus" / "treasury_bulletin_1941_01.txt").unlink()
    for module, extra in (("runners.sweep", [f"out={tmp_path / 'o'}"]), ("slurm.launch", ["--dry-run", "cluster=slurm"])):
        r = run(env, module, *extra, "experiment=paper_main", *data)
        assert r.returncode != 0 and "data.officeqa" in r.stderr and "1 missing (corpus/treasury_bulletin_1941_01.txt)" in r.stderr, r.stderr[-3000:]
        assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()
    shown = run(env, "runners.sweep", "experiment=paper_main", *data, "--cfg", "job")
    assert shown.stdout.splitlines()[-1].startswith("# preflight: would refuse to start: data.officeqa"), shown.stdout[-500:]
