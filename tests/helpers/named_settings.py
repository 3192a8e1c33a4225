"""The flags and settings a user-facing message names, checked against the real parsers: argparse's
option strings for `--flag`s, Hydra's composed config for `key=value` overrides, so that a message
can never send a user to a flag or key that does not exist (issue 38).

A flag belongs to the command before it in its clause: `python -m eval.prepare workspace_bench
--out DATA` is checked against that subcommand's parser; a flag after another program (`hf`,
`docker`, `git`, …) is that program's and not checked; a flag with no command before it is the
message's own module's (`default`). Overrides are checked when their key is lower case (an
environment variable, `export OPENAI_API_KEY=...`, is not one).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Mapping
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

HOLE = "\x00"  # where an f-string's value goes, in a message read from source
FOREIGN = ("hf", "docker", "podman", "git", "gzip", "pip", "apt-get", "wandb", "ray", "tar", "curl", "uv")
_COMMAND = re.compile(r"python3? -m ([\w.]+)(?: ([a-z_]+|\x00|NAME))?|(?<![\w-])(" + "|".join(map(re.escape, FOREIGN)) + r") ")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(\x00)?")
_OVERRIDE = re.compile(r"(?<![\w.$/<>\x00?&{-])([+~]?[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*)=(\S*)")
_CLAUSE = re.compile(r"[;`()\n]|&&| then | or ")


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()}


def named_flags(text: str, default: str, parsers: Mapping[str, argparse.ArgumentParser]) -> list[tuple[str, str]]:
    """Each `--flag` in `text` with the parser it is checked against (a key of `parsers`: a module,
    or `module sub` for a subcommand); foreign programs' flags and flags built by a placeholder are left out."""
    out = []
    for clause in _CLAUSE.split(text):
        owner: str | None = default
        marks = [(m.start(), m) for m in _COMMAND.finditer(clause)]
        for flag in _FLAG.finditer(clause):
            if flag.group(2):
                continue  # `--{name}`: built from a value
            before = [m for start, m in marks if start < flag.start()]
            if before:
                m = before[-1]
                owner = None if m.group(3) else _owner(m.group(1), m.group(2), parsers)
            if owner is not None:
                out.append((owner, flag.group(1)))
    return out


def _owner(module: str, word: str | None, parsers: Mapping[str, argparse.ArgumentParser]) -> str:
    """`module word` when that is a subcommand, `module *` (any of its subcommands) for a
    placeholder (`NAME`, a value), else the module."""
    if word and f"{module} {word}" in parsers:
        return f"{module} {word}"
    if word in (HOLE, "NAME") and any(k.startswith(f"{module} ") for k in parsers):
        return f"{module} *"
    return module


def unknown_flags(text: str, default: str, parsers: Mapping[str, argparse.ArgumentParser]) -> list[str]:
    """The flags `text` names that their parser does not have (`owner: --flag`)."""
    bad = []
    for owner, flag in named_flags(text, default, parsers):
        if owner.endswith(" *"):  # `eval.prepare NAME --out`: a flag of any of its subcommands
            known = set().union(*(option_strings(p) for k, p in parsers.items() if k.startswith(owner[:-1])))
            if flag not in known:
                bad.append(f"{owner}: {flag}")
        elif owner in parsers and flag not in option_strings(parsers[owner]):
            bad.append(f"{owner}: {flag}")
    return bad


def named_keys(text: str) -> list[tuple[str, str]]:
    """Each `key=value` override in `text` (lower-case keys; `+`/`~` dropped), with its value."""
    return [(m.group(1).lstrip("+~"), m.group(2)) for m in _OVERRIDE.finditer(text)]


def key_paths(cfg: Any, prefix: str = "") -> set[str]:
    """Every key path of a composed config (`model.server.slots`), at every depth."""
    out: set[str] = set()
    if isinstance(cfg, DictConfig):
        for k in cfg.keys():
            path = f"{prefix}{k}"
            out.add(path)
            node = cfg._get_node(k)
            if isinstance(node, DictConfig | ListConfig) and not node._is_none() and not node._is_missing():
                out |= key_paths(node, f"{path}.") if isinstance(node, DictConfig) else set()
    return out


def unknown_keys(text: str, configs: Iterable[DictConfig], groups: Mapping[str, list[str]]) -> list[str]:
    """The overrides `text` names whose key no composed config in `configs` has; a config group's
    choice (`judge=none`) must be one of its options (a placeholder value, upper case or `…`, passes)."""
    known = set().union(*(key_paths(c) for c in configs))
    bad = []
    for key, value in named_keys(text):
        if HOLE in key:
            continue
        if key in groups:
            v = value.strip("`'\".,;:)")
            if v and HOLE not in v and not v.isupper() and v not in groups[key] and v not in ("null", "..."):
                bad.append(f"{key}={v} (no such {key})")
        elif key not in known:
            bad.append(key)
    return bad


def compose(overrides: list[str]) -> DictConfig:
    """The root config Hydra composes for `overrides` (the one a pasted override lands in)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from runners.config.schema import CONF_DIR, register

    register()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        cfg = hydra_compose("config", overrides=overrides, return_hydra_config=True)  # `hydra.mode` is a key too
    OmegaConf.set_readonly(cfg, True)
    return cfg


def config_groups() -> dict[str, list[str]]:
    from runners.config.schema import CONF_DIR, group_options

    return {p.name: list(group_options(p.name)) for p in CONF_DIR.iterdir() if p.is_dir()}
