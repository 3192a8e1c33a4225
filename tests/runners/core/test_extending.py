"""docs/extending.md, done from outside the project: a plugin package written to a temporary folder,
put on PYTHONPATH and named by dotted path in the config, run through the real `python -m runners.job`.
Also the registry convention itself (runners/core/registry.py): names, dotted paths, errors, laziness."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runners.core.record_files import read_json
from runners.core.registry import Registry, UnknownName, import_dotted

REPO = Path(__file__).resolve().parents[3]

# A benchmark (a module with `load` and `default_judge`), a judge, a model and a storage backend,
# exactly as a user would write them in their own package.
PLUGIN = {
    "myplug/__init__.py": "",
    "myplug/bench.py": '''
        """One task: write the word in words.txt to output/word.txt."""
        from pathlib import Path
        from runners.core import Task

        default_judge = "myplug.judge.WordJudge"   # what judge=auto runs (a dotted path or a built-in name)

        def load(cfg):
            root = Path(cfg.path)
            (root / "ws").mkdir(parents=True, exist_ok=True)
            (root / "ws" / "words.txt").write_text("pelican\\n")
            return [Task(id="word", prompt="Copy the word in words.txt to output/word.txt.", workspace=root / "ws",
                         extra={"word": "pelican"})]
    ''',
    "myplug/judge.py": '''
        from runners.core import scores_doc, scoring_session

        class WordJudge:
            name = "word"

            def __init__(self, cfg, model):
                self.cfg = cfg

            def score(self, task, job_dir):
                read = scoring_session().get(job_dir / "deliverable", "output/word.txt")
                got = "" if read.error else read.text.strip()
                want = task.extra.get("word") or (task.workspace / "words.txt").read_text().strip()
                ok = float(got == want)
                return scores_doc(self.name, task, {"correct": ok}, [{"text": "the word", "score": ok, "got": got}])
    ''',
    "myplug/model.py": '''
        import json
        from runners.core import AssistantMessage, ToolCall

        class EchoModel:
            """Copies words.txt with one bash call, then finishes."""

            def __init__(self, cfg, base_url):
                self.name, self.turn = cfg.name, 0

            def complete(self, messages, tools):
                self.turn += 1
                if self.turn == 1:
                    cmd = "mkdir -p output && cp words.txt output/word.txt"
                    return AssistantMessage(None, [ToolCall("c1", "bash", json.dumps({"command": cmd}))])
                return AssistantMessage("Copied.")
    ''',
    "myplug/store.py": '''
        class MemStorage:
            remote = False

            def __init__(self, cfg):
                self.bucket = cfg.bucket

            def final_jobs(self, sweep, scored):
                return {"j1"}

            def upload(self, sweep, job_dir):
                return None
    ''',
    "myplug/track.py": '''
        class ListTracker:
            """Keeps what it is told (a tracker is a factory of (cfg, sweep, sweep_dir, specs))."""

            def __init__(self, cfg, sweep, sweep_dir, specs):
                self.sweep, self.jobs = sweep, []

            def log_job(self, job, scores, stats):
                self.jobs.append(job.job_id)

            def logged(self):
                return set(self.jobs)

            def log_summary(self, tables, images=None):
                pass

            def flush(self):
                pass
    ''',
    "myplug/broken.py": "import a_module_that_does_not_exist_anywhere\n",
    "myplug/hooks.py": '''
        from runners.core import PromptBlock

        def make(method, ctx):
            """A new kind of hook: a reminder in the system prompt."""
            return PromptBlock("reminder", "Re-read words.txt before you finish (myplug).")
    ''',
}


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plugin")
    for rel, text in PLUGIN.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def _job(plugin: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "runners.job", *overrides]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_plugin_benchmark_judge_and_model_run_through_the_entry_point(plugin: Path, tmp_path: Path) -> None:
    # dotted names are field values on top of existing groups (benchmark=builtin, judge=auto, model=scripted)
    r = _job(plugin, "benchmark.name=myplug.bench", f"benchmark.path={tmp_path / 'data'}", "task=word",
             "model=scripted", "model.kind=myplug.model:EchoModel", "model.id=echo", f"out={tmp_path / 'o'}")
    assert r.returncode == 0, r.stderr[-3000:]
    job = Path(r.stdout.strip().splitlines()[-1])
    result, scores, meta = read_json(job / "result.json"), read_json(job / "scores.json"), read_json(job / "job.json")
    assert result["stop_reason"] == "finished" and result["turns"] == 2
    assert (job / "deliverable" / "output" / "word.txt").read_text() == "pelican\n"
    # judge=auto ran the benchmark's own default judge, itself a plugin named by dotted path
    assert scores["judge"] == "word" and scores["metrics"] == {"correct": 1.0}
    assert meta["benchmark"] == "myplug.bench" and meta["model"] == "echo"
    assert meta["config"]["model"]["kind"] == "myplug.model:EchoModel"


def test_plugin_judge_by_dotted_path_scores_a_builtin_benchmark(plugin: Path, tmp_path: Path) -> None:
    # the built-in native benchmark and the scripted model, scored by the plugin's judge (judge=auto's default
    # for native is `rule`, which this task's answer would have scored instead)
    bench = tmp_path / "native"
    (bench / "workspaces" / "w").mkdir(parents=True)
    (bench / "workspaces" / "w" / "words.txt").write_text("heron\n")
    (bench / "tasks.jsonl").write_text(json.dumps({"id": "t", "prompt": "p", "workspace": "w", "answer": "x"}) + "\n")
    script = tmp_path / "s.jsonl"
    cp = {"name": "bash", "arguments": {"command": "mkdir -p output && cp words.txt output/word.txt"}}
    script.write_text(json.dumps({"tool_calls": [cp]}) + "\n" + json.dumps({"content": "<FINAL_ANSWER>x</FINAL_ANSWER>"}) + "\n")
    r = _job(plugin, "benchmark=native", f"benchmark.path={bench}", "task=t", "model=scripted", f"model.script={script}",
             "judge.name=myplug.judge:WordJudge", f"out={tmp_path / 'o'}")
    assert r.returncode == 0, r.stderr[-3000:]
    scores = read_json(Path(r.stdout.strip().splitlines()[-1]) / "scores.json")
    assert scores["judge"] == "word" and scores["metrics"] == {"correct": 1.0} and scores["items"][0]["got"] == "heron"


@pytest.mark.parametrize(
    ("override", "listed"),
    [
        ("benchmark.name=nope", "unknown benchmark 'nope'; valid benchmarks: builtin, native, workspace_bench"),
        ("model.kind=nope", "unknown model kind 'nope'; valid model kinds: openai, llamacpp, vllm, scripted"),
        ("judge.name=nope", "unknown judge 'nope'; valid judges: auto, none, rule, llm_rubric"),
        ("judge.name=myplug.nothere:X", "cannot import 'myplug.nothere'"),
        ("model.kind=myplug.model:Nope", "module 'myplug.model' has no attribute 'Nope'"),
        ("storage.kind=nope", "unknown storage kind 'nope'; valid storage kinds: local, s3"),
        ("tracker.kind=nope", "unknown tracker kind 'nope'; valid tracker kinds: wandb, jsonl, none"),
        ("method.plugins=[nope]", "unknown method plugin kind 'nope'"),
    ],
)
def test_unknown_name_fails_before_the_job_listing_the_names(plugin: Path, tmp_path: Path, override: str, listed: str) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text("{}\n")
    r = _job(plugin, "benchmark=builtin", "task=ws-01-resource-saving-manual", "model=scripted", f"model.script={script}",
             override, f"out={tmp_path / 'o'}")
    assert r.returncode != 0
    assert listed in r.stderr and "dotted path" in r.stderr, r.stderr[-2000:]
    assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr  # one message, no traceback
    assert not (tmp_path / "o").exists()  # failed before any record was written


def test_plugin_storage_and_judge_in_process(plugin: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(plugin))
    from eval.config import JudgeConfig
    from eval.judges import make_judge
    from runners.core.storage import S3StorageConfig, StorageConfig, build_storage

    storage = build_storage(S3StorageConfig(kind="myplug.store:MemStorage", bucket="b"))
    assert type(storage).__name__ == "MemStorage" and storage.bucket == "b" and storage.final_jobs("s", True) == {"j1"}
    assert type(make_judge(JudgeConfig(name="myplug.judge.WordJudge"), "rule")).__name__ == "WordJudge"
    with pytest.raises(ValueError, match="unknown storage kind 'nope'; valid storage kinds: local, s3"):
        build_storage(StorageConfig(kind="nope"))


def test_plugin_tracker_by_dotted_path(plugin: Path, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.syspath_prepend(str(plugin))
    from runners.config.runner import TrackerConfig
    from runners.core.record_types import JobMeta
    from runners.tracking.tracker import build_tracker

    tracker = build_tracker(TrackerConfig(kind="myplug.track:ListTracker"), "s", tmp_path)
    tracker.log_job(JobMeta("j1", "b", "t", "dci", "m", 0), None, {})
    assert type(tracker).__name__ == "ListTracker" and tracker.logged() == {"j1"}


def test_registry_names_dotted_paths_and_errors(plugin: Path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(plugin))
    reg: Registry[object] = Registry("widget", reserved=("auto",))
    reg.add("lazy", "myplug.store:MemStorage")

    @reg.register("here")
    class Here:
        pass

    assert reg.names() == ["lazy", "here"] and "lazy" in reg and "myplug.store:MemStorage" not in reg
    assert reg.get("here") is Here
    assert reg.get("lazy") is reg.get("myplug.store:MemStorage") is reg.get("myplug.store.MemStorage")
    assert import_dotted("myplug.store") is sys.modules["myplug.store"]  # a module is a dotted path too
    with pytest.raises(UnknownName, match=r"unknown widget 'nope'; valid widgets: auto, lazy, here; or the dotted path"):
        reg.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        reg.add("here", Here)
    with pytest.raises(ValueError, match="has no '.' or ':'"):
        reg.add("a.b", Here)
    # a bug inside the user's module is not reported as "not found": its own error propagates
    with pytest.raises(ModuleNotFoundError, match="a_module_that_does_not_exist_anywhere"):
        reg.get("myplug.broken:X")


def test_registries_import_nothing_heavy() -> None:
    """Registering the built-ins stores dotted paths: importing the registries loads no backend (the model
    kinds' config classes are plain dataclasses, but their clients and HTTP stacks load on first use)."""
    code = textwrap.dedent("""
        import sys
        import eval.benchmarks, eval.judges, runners.models.registry, runners.core.storage, runners.agent.methods
        heavy = ["runners.models.openai_compat", "aiohttp", "eval.judges.workspace_bench.rubric_judge",
                 "eval.judges.agentcompany.judge", "eval.benchmarks.workspace_bench", "eval.benchmarks.agentcompany",
                 "boto3"]  # (not tab.tab: tab/__init__.py imports it, and runners.config.runner imports tab.config)
        print(",".join(m for m in heavy if m in sys.modules))
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ""


def test_plugin_hook_by_dotted_path_plugs_into_a_method(plugin: Path, tmp_path: Path) -> None:
    """A new kind of hook from outside: `method.plugins=[pkg.module:factory]` on an existing method."""
    r = _job(plugin, "benchmark.name=myplug.bench", f"benchmark.path={tmp_path / 'b'}", "task=word", "method=dci",
             "method.plugins=[myplug.hooks:make]", "model=scripted", "model.kind=myplug.model.EchoModel",
             "model.name=echo", f"out={tmp_path / 'o'}")
    assert r.returncode == 0, r.stderr[-3000:]
    job = Path(r.stdout.strip().splitlines()[-1])
    system = next(json.loads(line) for line in (job / "trajectory.jsonl").read_text().splitlines() if '"system"' in line)
    assert "Re-read words.txt before you finish (myplug)." in system["content"]
    assert read_json(job / "job.json")["config"]["method"]["plugins"] == ["myplug.hooks:make"]


DOCS = REPO / "docs" / "extending.md"
PROJECT_PACKAGES = ("runners", "eval", "envs", "tab", "slurm")


def _project_imports(code: str) -> list[str]:
    import ast

    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PROJECT_PACKAGES:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in PROJECT_PACKAGES]
    return found


def test_extensions_import_from_one_surface() -> None:
    """docs/extending.md's examples and this file's plugin import the project only from `runners.core`,
    and every name of that surface resolves."""
    import re

    import runners.core

    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S) + [textwrap.dedent(c) for c in PLUGIN.values()]
    assert len(blocks) >= 8
    elsewhere = [m for code in blocks for m in _project_imports(code) if m != "runners.core"]
    assert elsewhere == []
    assert all(getattr(runners.core, name) is not None for name in runners.core.__all__)
    with pytest.raises(AttributeError, match="the extension surface is"):
        _ = runners.core.NotOnTheSurface


def _table_rows() -> dict[str, str]:
    rows = {}
    for line in DOCS.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] and not set(cells[0]) <= {"-"} and cells[0] != "extension":
            rows[cells[0]] = cells[2]
    return rows


# Existing instances of each extension (any one fits `<name>`), to check that the places the table names exist.
EXAMPLE = {"benchmark": ("officeqa",), "judge": ("rule",), "model backend": ("scripted",),
           "model backend, served by a server of ours": ("vllm", "openai_compat"), "storage backend": ("s3",),
           "tracker": ("wandb",), "method (existing hooks)": ("dci",), "method (a new kind of hook)": ("runningtab",)}


def test_the_file_counts_of_extending_are_the_files_it_lists() -> None:
    """Each row of the table: its count is the number of places it lists, and each place exists."""
    import re

    rows = _table_rows()
    assert set(EXAMPLE) <= set(rows), sorted(rows)
    for kind, example in EXAMPLE.items():
        text = rows[kind]
        count = int(re.match(r"(\d+)", text).group(1))
        listed = re.findall(r"`((?:runners|eval|conf|tab|envs)/[^`]*)`", text)
        distinct = list(dict.fromkeys(listed))
        assert len(distinct) == count, f"{kind}: says {count}, lists {distinct}"
        for place in distinct:
            assert any((REPO / place.replace("<name>", name)).exists() for name in example), f"{kind}: no {place}"
