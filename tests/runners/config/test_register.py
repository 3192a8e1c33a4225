"""`register` stores each schema once per process (runners/config/schema.py), and again when the store lost it."""

from __future__ import annotations

from hydra.core.config_store import ConfigStore

from runners.config.schema import RootConfig, register
from tests.conftest import compose_root


def test_a_schema_the_store_lost_is_stored_again() -> None:
    register()
    store = ConfigStore.instance()
    del store.repo["root_schema.yaml"], store.repo["model"]["scripted_schema.yaml"]
    register()
    assert "root_schema.yaml" in store.repo and "scripted_schema.yaml" in store.repo["model"]
    assert isinstance(compose_root(["model=scripted", "model.script=x.jsonl"]), RootConfig)


def test_repeated_registers_compose_the_same_config() -> None:
    first = compose_root(["benchmark=builtin", "model=smollm2"])
    register()
    assert compose_root(["benchmark=builtin", "model=smollm2"]) == first
