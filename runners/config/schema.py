"""The root config schema, registered in Hydra's ConfigStore, and its one conversion to dataclasses.

`conf/config.yaml` starts from `root_schema`, so every YAML group is validated against the typed
dataclasses of its part (`envs.config`, `tab.config`, `runners.models.config`, `eval.config`,
`runners.config.runner`). Entry points call `to_root()` once and pass typed objects on from there.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from envs.config import EnvConfig
from eval.config import BenchmarkConfig, DataConfig, JudgeConfig
from runners.config.runner import (
    AgentConfig,
    BudgetConfig,
    ClusterConfig,
    GridConfig,
    MethodConfig,
    PlanConfig,
    ReportConfig,
    TrackerConfig,
)
from runners.core.config_fields import Enters, setting
from runners.core.paths import PATH, launch_dir, resolve_paths
from runners.core.storage import StorageConfig
from runners.models.config import ModelConfig

CONF_DIR = Path(__file__).resolve().parents[2] / "conf"
AXES = ("benchmark", "agent", "method", "model")  # `agent`: the harness (conf/agent/, docs/harnesses.md)


class ConfigError(ValueError):
    """A config that cannot run; the message names the setting and the fix (entry points print it
    as one line, no traceback)."""


class ConfigErrors(ConfigError):
    """Several refusals; `messages` are their lines. One reads as that one line, as before."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = list(dict.fromkeys(messages))
        if len(self.messages) == 1:
            text = self.messages[0]
        else:
            text = (f"{len(self.messages)} problems stop this before it starts (nothing was started or written); fix each:\n"
                    + "\n".join(f"  - {m}" for m in self.messages))
        super().__init__(text)


class UnknownKeys(ConfigErrors):
    """Keys the schema does not have (`+agent.max_turn=5`), each with its message: the entry point
    drops them and runs its preflight on the rest, so that one run names every refusal
    (`runners.preflight.command_line.every_refusal`)."""

    def __init__(self, found: dict[str, str]) -> None:
        super().__init__(list(found.values()))
        self.keys = list(found)


_WHERE = Enters.NOTHING  # where records, data and scratch go, how they are tracked and run, what may be spent


@dataclass
class RootConfig:
    """Each part declares what it changes (runners/core/config_fields.py): a part declared `whole`
    changes the same with every field; the others' classes declare field by field."""

    benchmark: BenchmarkConfig = setting(Enters.JOB_ID | Enters.JUDGE_KEY | Enters.SWEEP_NAME, default_factory=BenchmarkConfig)
    method: MethodConfig = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default_factory=MethodConfig, whole=True)
    model: ModelConfig = setting(Enters.JOB_ID | Enters.CACHE_KEY | Enters.SWEEP_NAME, default_factory=ModelConfig)
    judge: JudgeConfig = setting(Enters.JUDGE_KEY | Enters.SWEEP_NAME, default_factory=JudgeConfig)
    # (`env.shell_session`, how bash calls are launched, is left out of ids by runners/job/identity.py)
    env: EnvConfig = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default_factory=EnvConfig, whole=True)
    agent: AgentConfig = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default_factory=AgentConfig)
    grid: GridConfig = setting(Enters.SWEEP_NAME, default_factory=GridConfig)
    storage: StorageConfig = setting(_WHERE, default_factory=StorageConfig, whole=True)
    tracker: TrackerConfig = setting(_WHERE, default_factory=TrackerConfig, whole=True)
    cluster: ClusterConfig = setting(_WHERE, default_factory=ClusterConfig, whole=True)
    report: ReportConfig = setting(Enters.SWEEP_NAME, default_factory=ReportConfig)
    data: DataConfig = setting(_WHERE, default_factory=DataConfig, whole=True)  # the benchmark's paths, resolved from it, say it
    # a budget stop is not a result: a higher budget re-runs the same job
    budget: BudgetConfig = setting(_WHERE, default_factory=BudgetConfig, whole=True)
    # what the plan assumes (runningtab plan, --cfg job): never part of a job
    plan: PlanConfig = setting(_WHERE, default_factory=PlanConfig, whole=True)
    # which task (`runners.job`): the task's digest says it, so ids hash None here
    task: str | None = setting(Enters.JOB_ID | Enters.SWEEP_NAME, default=None)
    seed: int = setting(Enters.JOB_ID | Enters.CACHE_KEY | Enters.SWEEP_NAME, default=0)
    out: str = setting(_WHERE, default="outputs", path=PATH)
    sweep: str | None = setting(_WHERE, default=None)


def register() -> None:
    """Register the schemas (idempotent); called by the entry points, never at import. Each
    registered benchmark with a config class of its own has it registered as
    `benchmark/<name>_schema`, each model kind's as `model/<kind>_schema`
    (runners/models/registry.py) and each storage backend's as `storage/<name>_schema`, which their
    YAMLs name first, so a setting of another benchmark, model kind or backend is refused instead of
    carried along."""
    from eval.benchmarks import BENCHMARKS, config_class
    from runners.core.storage import STORAGES, storage_config_class
    from runners.models.registry import KINDS
    from runners.models.registry import config_class as model_config_class

    _store(None, "root_schema", RootConfig)
    if not OmegaConf.has_resolver(GROUPS_RESOLVER):  # `--help`'s list of groups (conf/config.yaml: hydra.help.template)
        OmegaConf.register_new_resolver(GROUPS_RESOLVER, lambda searchpath=None: groups_help(list(searchpath or [])))
    for name in BENCHMARKS.names():
        cls = config_class(name)
        if cls is not BenchmarkConfig:
            _store("benchmark", f"{name}_schema", cls)
    for name in KINDS.names():
        _store("model", f"{name}_schema", model_config_class(name))
    for name in STORAGES.names():
        storage_cls = storage_config_class(name)
        if storage_cls not in (None, StorageConfig):
            _store("storage", f"{name}_schema", storage_cls)


# What `register` stored, by (group, name): storing a schema converts its dataclass to an OmegaConf
# node (about 70 ms for all of them), so a process that composes many configs (a grid's cells, the
# tests) stores each one once; a class registered since, or a store that was emptied, stores again.
_STORED: dict[tuple[str | None, str], type] = {}


def _store(group: str | None, name: str, cls: type) -> None:
    store = ConfigStore.instance()
    where = store.repo.get(group, {}) if group else store.repo
    if _STORED.get((group, name)) is cls and f"{name}.yaml" in where:
        return
    store.store(group=group, name=name, node=cls)
    _STORED[(group, name)] = cls


def to_root(cfg: DictConfig, cache: str | None = None) -> RootConfig:
    """Resolve and convert the composed config to typed dataclasses, once, at the driver; every path
    field (`path_field` or `setting(..., path=...)`, runners/core/paths.py) made absolute against the folder the command was
    started in, and the model-call cache settled (`runners.models.call_cache.settled`; `cache`: the
    entry point's mode when `model.cache` is null: a sweep's read_write; None: a job's, off).

    Raises `UnknownKeys` for keys the schema does not have (`+agent.max_turn=5`): OmegaConf would
    keep them as stray attributes that nothing reads; and a `ConfigError` naming every setting that
    must be given and is not (`model=vllm` without `model.name`), where OmegaConf would raise at the first."""
    missing = OmegaConf.missing_keys(cfg)
    if missing:
        raise ConfigErrors([f"{key} has no value and this config needs one: give it, e.g. {key}=..." for key in sorted(missing)])
    obj = OmegaConf.to_object(cfg)
    assert isinstance(obj, RootConfig), type(obj)
    unknown = dict(unknown_keys(obj))
    if unknown:
        raise UnknownKeys(unknown)
    resolve_paths(obj, launch_dir())  # every later process sees absolute paths only
    from runners.models.call_cache import JOB_CACHE, settled

    try:
        obj.model = settled(obj.model, obj.out, cache or JOB_CACHE)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    from eval.prepare import DataError, with_data

    try:
        obj.benchmark = with_data(obj.benchmark, obj.data)
    except DataError as e:
        raise ConfigError(str(e)) from None
    return obj


def unknown_keys(obj: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """For each key of `obj` its schema does not declare: the key and a message naming it and the
    nearest known keys.

    Free-form mappings (`method.texts`, `cluster.extra`) take any key; their values are still walked."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        known = [f.name for f in dataclasses.fields(obj)]
        for key in vars(obj):
            if key not in known:
                yield f"{path}{key}", _unknown_message(f"{path}{key}", path, known)
        for name in known:
            yield from unknown_keys(getattr(obj, name), f"{path}{name}.")
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from unknown_keys(value, f"{path}{key}.")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from unknown_keys(value, f"{path}{i}.")


def unknown_key_message(key: str, cls: Any) -> str:
    """`_unknown_message` for `key` (a dotted path) on the config class `cls` that lacks its last part."""
    path = key.rpartition(".")[0]
    return _unknown_message(key, f"{path}." if path else "", [f.name for f in dataclasses.fields(cls)])


def _unknown_message(key: str, path: str, known: list[str]) -> str:
    near = difflib.get_close_matches(key.rsplit(".", 1)[-1], known, n=3, cutoff=0.6)
    names = ", ".join(path + k for k in near or known)
    where = f" of {path.rstrip('.')}" if path else ""
    found = f"nearest known keys: {names}" if near else f"the known keys{where}: {names}"
    return f"unknown config key {key!r} (the schema has no such setting); {found}"


def listed_axes(overrides: Sequence[str]) -> set[str]:
    """The axes the overrides give a `grid.` list for."""
    return {o.partition("=")[0].removeprefix("grid.") for o in overrides if o.startswith("grid.")} & {*AXES, "seed"}


def group_options(group: str, searchpath: Sequence[str] = ()) -> list[str]:
    """The names a config group offers (its YAML files in `conf/` and in the folders of
    `hydra.searchpath`, e.g. a model config kept outside the checkout), for messages and validation."""
    folders = [CONF_DIR / group, *(root / group for root in search_folders(searchpath))]
    return sorted({p.stem for folder in folders for p in folder.glob("*.yaml")})


GROUPS_RESOLVER = "runningtab_groups"


def groups_help(searchpath: Sequence[str] = ()) -> str:
    """`group: option, option…` for each group the root config chooses from (its defaults list), as
    `--help` lists them: Hydra's own list also names the typed schemas its YAMLs start from
    (`llamacpp_schema`, …), which are no choice, and the data files beside the groups (conf/pricing/)."""
    defaults = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "config.yaml")).get("defaults") or []  # type: ignore[union-attr]
    groups = [str(next(iter(d))) for d in defaults if isinstance(d, dict) and not str(next(iter(d))).startswith("override ")]
    return "\n".join(f"{g}: {', '.join(group_options(g, searchpath))}" for g in sorted(groups))


def search_folders(searchpath: Sequence[str]) -> list[Path]:
    """The folders of `hydra.searchpath` entries (`file://DIR`, relative to the folder the command
    started in, as Hydra reads them; `pkg://PACKAGE`)."""
    import importlib.resources

    out = []
    for entry in searchpath:
        kind, _, where = entry.partition("://")
        if kind == "file":
            out.append(Path(where).expanduser())
        elif kind == "pkg":
            try:
                out.append(Path(str(importlib.resources.files(where.replace("/", ".")))))
            except (ModuleNotFoundError, TypeError):
                continue  # Hydra says so when it composes
    return out


def searchpath_of(overrides: Sequence[str]) -> list[str]:
    """The `hydra.searchpath=[…]` of a command line's overrides (the last one given), [] without one."""
    given = [o for o in overrides if o.partition("=")[0].lstrip("+") == "hydra.searchpath"]
    if not given:
        return []
    from hydra.core.override_parser.overrides_parser import OverridesParser

    value = OverridesParser.create().parse_override(given[-1]).value()
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def check_choice(group: str, name: str, searchpath: Sequence[str] = ()) -> None:
    """Fail early, listing the valid names, when `name` is not an option of `group`."""
    options = group_options(group, searchpath)
    if name not in options:
        where = " (conf/ and hydra.searchpath)" if searchpath else ""
        raise ConfigError(f"unknown {group} {name!r}; valid {group} names{where}: {', '.join(options)}")


def job_record_config(cfg: RootConfig) -> dict[str, Any]:
    """The parts of the config that determine a job's result (what `job.json` keeps and ids hash).

    Where records go, how they are tracked, on which cluster they run and where the prepared data
    was (`data`: the benchmark's own paths, resolved from it, stay) do not change a result, so they
    are left out. Configs hold names of secret variables, never secrets.
    """
    return {name: _plain(getattr(cfg, name)) for name in _RECORDED}


_RECORDED = tuple(f.name for f in dataclasses.fields(RootConfig)
                  if f.name not in ("grid", "storage", "tracker", "cluster", "report", "data", "plan", "out", "sweep"))
_ATOMS = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(obj: Any) -> Any:
    """`dataclasses.asdict`'s result, value for value and type for type, without its deep copy of
    each string and number (immutable: shared) or its walk of the parts a record leaves out: each
    job's episode actor makes one (its job.json), and asdict of the whole config was ~5 times the
    cost (~0.13 ms a model call at 64 in flight)."""
    kind = type(obj)
    if kind in _ATOMS:
        return obj
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(obj))
    if names is not None:
        return {name: _plain(getattr(obj, name)) for name in names}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return kind(*[_plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return kind(_plain(v) for v in obj)
    if isinstance(obj, dict):
        if hasattr(kind, "default_factory"):  # a defaultdict
            out = kind(obj.default_factory)
            for k, v in obj.items():
                out[_plain(k)] = _plain(v)
            return out
        return kind((_plain(k), _plain(v)) for k, v in obj.items())
    return copy.deepcopy(obj)


def recorded_config(config: dict[str, Any]) -> RootConfig:
    """A record's job config (`job.json` `config`) as the typed config again, each part as its own
    class (the benchmark's, the model kind's); what it leaves out (where records went, tracking, the
    cluster) takes the schema's defaults."""
    from eval.benchmarks import benchmark_config
    from eval.config import judge_config
    from runners.models.registry import model_config

    rest: dict[str, Any] = {k: v for k, v in config.items() if k not in ("benchmark", "model", "judge")}
    rest["benchmark"] = OmegaConf.structured(benchmark_config(config.get("benchmark") or {}))
    if "model" in config:
        rest["model"] = OmegaConf.structured(model_config(config["model"], recorded=True))
    if "judge" in config:
        rest["judge"] = OmegaConf.structured(judge_config(config["judge"]))
    obj = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(RootConfig), rest))
    assert isinstance(obj, RootConfig), type(obj)
    return obj
