"""Each model kind has its own config class: a setting of another kind is refused, and ids, judge keys
and records of sweeps written with the one flat `ModelConfig` (schema 2) stay as they were."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from eval.config import judge_config
from eval.score.records import judge_key
from runners.config.schema import ConfigError, recorded_config
from runners.job.identity import config_identity
from runners.models.config import ApiModelConfig, ModelConfig
from runners.models.registry import KINDS, ModelKind, model_config
from runners.models.scripted import ScriptedModelConfig
from runners.models.server import ServedModelConfig, ServerConfig
from runners.preflight.config_checks import check_config
from tests.conftest import compose_root

REPO = Path(__file__).resolve().parents[3]

# Computed by the flat ModelConfig of schema 2 (main at 853de7a) for `benchmark=builtin method=runningtab`
# and these model overrides: the ids of sweeps already on disk, which resume only if they stay the same.
IDS_BEFORE = {
    "scripted": (["model=scripted", "model.script=/no/such/turns.jsonl"],
                 "eebb0c37e9aa38ff51fc5ea6785bf80b9aaa0e9fdd3cc6b56a2b38922355eaac"),
    "openai": (["model=openai", "model.name=m-1", "model.base_url=http://127.0.0.1:9/v1", "model.temperature=0.3"],
               "bef09cfcb7e6ae0269a648f253966286c27e79cba22a7cc2c7cad2c14d28d5b5"),
    "smollm2": (["model=smollm2"], "c13fc780d84593d6fb773b7c73bc1c76d2eceff9314bf5bb7c159457b1edc725"),
    # conf/model/vllm.yaml's defaults then (issue 31 set max_tokens and left ctx_size to the model)
    "vllm": (["model=vllm", "model.name=q", "model.server.model_path=Qwen/Qwen3-32B", "model.max_tokens=null",
              "model.server.ctx_size=32768"], "956635c4387a516be3287a50cd2044ac76d64e303186ac0c63739f14f4306553"),
    "gpt54_nano": (["model=gpt54_nano"], "e41a03dc846621fd2a66d3759c2915cfca55eacf1ad728e4afdab04950f37f63"),
}
JUDGE_KEYS_BEFORE = {
    "llm_rubric": ([], "4e8f8b656fcc10bf"),
    "agentcompany": ([], "cb533ecf33a29bc1"),
    "rule": ([], "e18d9c87a8c80a67"),
    "llm_rubric-local": (["judge.model.kind=llamacpp", "judge.model.base_url=http://127.0.0.1:1/v1", "judge.model.name=smol"],
                         "d466abf8a334eff6"),
}
_SERVER_V2 = {"model_path": None, "host": "127.0.0.1", "port": 0, "tool_call_parser": "hermes", "tensor_parallel_size": 1,
              "gpus": [], "ctx_size": 8192, "chat_format": "chatml-function-calling", "startup_timeout_s": 900.0,
              "stop_grace_s": 15.0, "log_path": None, "extra_args": [], "replicas": 1, "resources": {}}
_API_V2 = {"base_url": None, "api_key_env": None, "temperature": None, "top_p": None, "max_tokens": None, "seed": None,
           "extra_body": {}, "echo_extra": [], "timeout_s": 120.0, "max_retries": 6, "backoff_base_s": 1.0,
           "backoff_max_s": 60.0}
# How a schema-2 job.json kept a scripted model: every kind's fields.
SCRIPTED_V2 = {"kind": "scripted", "id": "scripted", "name": "scripted", **_API_V2, "concurrency": 0, "price_in_per_mtok": 0.0,
               "price_out_per_mtok": 0.0, "script": "/x/turns.jsonl", "server": _SERVER_V2}
JUDGE_V2 = {"name": "llm_rubric", "cache_dir": None, "max_retries": 2, "max_file_chars": 40000, "max_total_chars": 160000,
            "max_trajectory_chars": 30000, "evaluator_timeout_s": 600.0,
            "model": {**SCRIPTED_V2, **_API_V2, "kind": "openai", "id": "model", "name": "gpt-5.4-mini",
                      "base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY", "seed": 0, "timeout_s": 300.0,
                      "concurrency": 16, "script": None}}


@pytest.mark.parametrize("name", IDS_BEFORE)
def test_job_ids_are_those_of_the_flat_config(name: str) -> None:
    overrides, before = IDS_BEFORE[name]
    d = config_identity(compose_root(["benchmark=builtin", "method=runningtab", *overrides]))
    assert hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest() == before


@pytest.mark.parametrize("name", JUDGE_KEYS_BEFORE)
def test_judge_keys_are_those_of_the_flat_config(name: str) -> None:
    overrides, before = JUDGE_KEYS_BEFORE[name]
    assert judge_key(compose_root([f"judge={name.split('-')[0]}", *overrides]).judge) == before


@pytest.mark.parametrize(
    ("overrides", "cls"),
    [(["model=scripted", "model.script=x.jsonl"], ScriptedModelConfig), (["model=openai", "model.name=m"], ApiModelConfig),
     (["model=gpt54_nano"], ApiModelConfig), (["model=smollm2"], ServedModelConfig),
     (["model=vllm", "model.name=q"], ServedModelConfig)],
)
def test_each_model_config_is_its_kinds_class(overrides: list[str], cls: type) -> None:
    assert type(compose_root(overrides).model) is cls


@pytest.mark.parametrize(
    ("overrides", "key"),
    [(["model=scripted", "model.script=x.jsonl", "model.base_url=http://h/v1"], "base_url"),
     (["model=scripted", "model.script=x.jsonl", "model.server.port=8000"], "server"),
     (["model=gpt54_nano", "model.script=x.jsonl"], "script"),
     (["model=gpt54_nano", "model.server.model_path=/m"], "server"),
     (["model=smollm2", "model.script=x.jsonl"], "script")],
)
def test_a_setting_of_another_kind_is_refused(overrides: list[str], key: str) -> None:
    with pytest.raises(Exception, match=key):
        compose_root(overrides)


def test_a_kind_on_another_kinds_config_names_the_config_to_start_from() -> None:
    cfg = compose_root(["model=openai", "model.name=m", "model.base_url=http://127.0.0.1:9/v1", "model.kind=vllm"])
    with pytest.raises(ConfigError, match=r"model.kind=vllm.*model=vllm"):
        check_config(cfg)


def test_the_judge_model_takes_api_settings_only() -> None:
    judge = compose_root(["judge=llm_rubric"]).judge
    assert type(judge.model) is ApiModelConfig
    with pytest.raises(Exception, match="script"):
        compose_root(["judge=llm_rubric", "judge.model.script=x.jsonl"])


def test_a_schema_2_record_reloads_as_its_kinds_class() -> None:
    cfg = recorded_config({"model": SCRIPTED_V2, "judge": JUDGE_V2, "benchmark": {"name": "builtin", "suite": "qa"}})
    assert type(cfg.model) is ScriptedModelConfig and cfg.model.script == "/x/turns.jsonl"
    assert type(cfg.judge.model) is ApiModelConfig and cfg.judge.model.name == "gpt-5.4-mini"
    assert judge_key(judge_config(JUDGE_V2)) == JUDGE_KEYS_BEFORE["llm_rubric"][1]


def test_model_config_picks_the_class_by_kind_and_refuses_foreign_keys() -> None:
    assert type(model_config({"kind": "llamacpp", "name": "s", "server": {"port": 1}})) is ServedModelConfig
    assert type(model_config({"kind": "scripted", "name": "s", "script": "t.jsonl"})) is ScriptedModelConfig
    with pytest.raises(Exception, match="server"):
        model_config({"kind": "openai", "name": "m", "server": {"port": 1}})
    with pytest.raises(Exception, match="temprature"):
        model_config({"kind": "openai", "name": "m", "temprature": 0.2})


def test_a_plugin_kind_takes_the_config_it_was_given() -> None:
    """A dotted-path kind with no config class of its own keeps whichever kind's settings its YAML gave."""
    mc = model_config({"kind": "myplug.model:EchoModel", "name": "echo", "script": None})
    assert type(mc) is ScriptedModelConfig
    assert isinstance(model_config({"kind": "myplug.model:Api", "name": "a", "base_url": "http://h/v1"}), ApiModelConfig)
    assert isinstance(mc, ModelConfig)


# --------------------------------------------------------------------------- storage backends
def test_storage_settings_belong_to_their_backend(tmp_path: Path) -> None:
    from runners.core.storage import S3StorageConfig

    (tmp_path / "t.jsonl").write_text('{"content": "done"}\n')

    s3 = compose_root(["storage=s3", "storage.bucket=b", "storage.endpoint_url=http://127.0.0.1:9"]).storage
    assert type(s3) is S3StorageConfig and s3.bucket == "b" and s3.retries == 3
    with pytest.raises(Exception, match="bucket"):
        compose_root(["storage=local", "storage.bucket=b"])  # was accepted and ignored
    cfg = compose_root(["model=scripted", f"model.script={tmp_path / 't.jsonl'}", "storage=local", "storage.kind=s3"])
    with pytest.raises(ConfigError, match=r"storage.kind=s3.*storage=s3"):
        check_config(cfg)


# --------------------------------------------------------------------------- a grid of model kinds
def _grid_common(tmp_path: Path) -> list[str]:
    script = tmp_path / "s.jsonl"
    script.write_text('{"content": "<FINAL_ANSWER>x</FINAL_ANSWER>"}\n')
    return ["grid.benchmark=[builtin]", "benchmark.suite=qa", "benchmark.limit=1", "grid.method=[dci]", "grid.seed=[0]",
            f"model.script={script}", "judge=rule", "tracker=none", f"out={tmp_path / 'o'}", "sweep=k"]


def test_a_grid_of_one_kind_takes_that_kinds_settings_and_a_mixed_grid_says_why_not(tmp_path: Path) -> None:
    """`grid.model=[scripted] model.script=…`: the root is composed as the grid's first cell (the default
    model, smollm2, has no `script`), as the sweep composes it; a grid of two kinds with a setting of one
    is one clear line from the entry point, before any job."""
    import subprocess
    import sys

    from runners.preflight.command_line import root_choices
    from runners.sweep.grid import compose_sweep

    common = _grid_common(tmp_path)
    overrides = ["grid.model=[scripted]", *common]
    root, _, cells = compose_sweep(overrides, root_choices(overrides))
    assert type(root.model) is ScriptedModelConfig and [type(c.model) for c in cells] == [ScriptedModelConfig]
    mixed = subprocess.run([sys.executable, "-m", "runners.sweep", "grid.model=[scripted,gpt54_nano]", *common[:-1], "sweep=m"],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
    assert mixed.returncode != 0 and "Traceback" not in mixed.stderr
    assert "grid cell" in mixed.stderr and "model=gpt54_nano" in mixed.stderr and "script" in mixed.stderr, mixed.stderr
    assert not (tmp_path / "o" / "m").exists()


@pytest.mark.slow
def test_a_grid_of_one_kind_runs_as_that_kind(tmp_path: Path) -> None:
    """The same grid of one kind run by the real sweep: its one job is the scripted model's."""
    import subprocess
    import sys

    ok = subprocess.run([sys.executable, "-m", "runners.sweep", "grid.model=[scripted]", *_grid_common(tmp_path)], cwd=REPO,
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert [p.name.split("__")[3] for p in (tmp_path / "o" / "k").iterdir() if p.is_dir() and "__" in p.name] == ["scripted"]


def test_the_root_is_composed_as_the_grids_first_cell() -> None:
    from runners.preflight.command_line import root_choices

    assert root_choices(["grid.model=[scripted]", "grid.model=[openai, gpt54_nano]", "grid.benchmark=native"]) == [
        "benchmark=native", "model=openai"]  # the last list wins, as in Hydra
    assert root_choices(["model=smollm2", "grid.model=[scripted]", "grid.seed=[0,1]"]) == []  # named: left as given


def test_a_dotted_path_kind_that_names_a_config_class_still_runs_on_the_yaml_it_started_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin's own `config` class cannot be named by a YAML from outside: the preflight does not ask for it."""
    pkg = tmp_path / "plugkind"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from runners.models.config import ApiModelConfig\n"
        "class Echo:\n    config = ApiModelConfig\n    def __init__(self, cfg, base_url):\n        self.name = cfg.name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "t.jsonl").write_text('{"content": "done"}\n')
    check_config(compose_root(["model=scripted", f"model.script={tmp_path / 't.jsonl'}", "model.kind=plugkind:Echo"]))


# --------------------------------------------------------------------------- fields added later
@dataclasses.dataclass
class _NewKindConfig(ApiModelConfig):
    """A backend registered as docs/extending.md says, with a setting no kind had."""

    new_knob: int = 7
    server: ServerConfig = dataclasses.field(default_factory=lambda: _NewServer())


@dataclasses.dataclass
class _NewServer(ServerConfig):
    new_server_knob: str = "x"


@pytest.fixture
def new_kind() -> Iterator[None]:
    KINDS.add("newkind", ModelKind("runners.models.openai_compat:OpenAICompatModel", _NewKindConfig))
    try:
        yield
    finally:
        KINDS._targets.pop("newkind")


@pytest.mark.usefixtures("new_kind")
def test_a_new_model_kind_with_new_fields_moves_no_id_and_no_judge_key() -> None:
    for overrides, before in IDS_BEFORE.values():
        d = config_identity(compose_root(["benchmark=builtin", "method=runningtab", *overrides]))
        assert "new_knob" not in d["model"] and hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest() == before
    for name, (overrides, before) in JUDGE_KEYS_BEFORE.items():
        assert judge_key(compose_root([f"judge={name.split('-')[0]}", *overrides]).judge) == before
    assert judge_key(judge_config(JUDGE_V2)) == JUDGE_KEYS_BEFORE["llm_rubric"][1]


@pytest.mark.usefixtures("new_kind")
def test_a_new_field_set_away_from_its_default_is_a_new_job() -> None:
    cfg = compose_root(["benchmark=builtin", "method=runningtab", "model=openai", "model.name=m-1"])
    cfg.model = _NewKindConfig(**{**dataclasses.asdict(cfg.model), "kind": "newkind", "new_knob": 8})
    assert config_identity(cfg)["model"]["new_knob"] == 8


def test_a_new_tab_switch_at_its_default_moves_no_id() -> None:
    from tab.config import TabConfig

    @dataclasses.dataclass
    class LaterTab(TabConfig):
        new_switch: bool = True

    for overrides, before in IDS_BEFORE.values():
        cfg = compose_root(["benchmark=builtin", "method=runningtab", *overrides])
        assert cfg.method.tab is not None
        cfg.method.tab = LaterTab(**dataclasses.asdict(cfg.method.tab))
        blob = json.dumps(config_identity(cfg), sort_keys=True, default=str)
        assert hashlib.sha256(blob.encode()).hexdigest() == before
        cfg.method.tab.new_switch = False
        assert config_identity(cfg)["method"]["tab"]["new_switch"] is False
