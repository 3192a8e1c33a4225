"""The config fields that job ids and judge keys hashed when they were frozen, and the rule for every
field added since: hashed only when it differs from its default.

Ids and keys name records on disk: a resume finds finished jobs by id and re-scores a record whose
judge key changed. A field added to any config class (a new model kind's, a new tab switch, a new
environment limit) must therefore leave every earlier id and key as it was while it keeps its
default, and make a different job only when it is set. The sets below are literals on purpose:
computed from today's classes, they would grow with them, which is the defect they prevent.
"""

from __future__ import annotations

import dataclasses
from typing import Any

_SERVER = {"model_path", "tool_call_parser", "tensor_parallel_size", "ctx_size", "chat_format", "extra_args"}
_MODEL = {"kind", "id", "name", "script", "base_url", "api_key_env", "temperature", "top_p", "max_tokens", "seed",
          "extra_body", "echo_extra", "server"}
_TAB = {"capture", "review", "evidence_check", "finish_check", "review_lines", "review_candidates", "line_chars",
        "status_paths", "texts"}
_ENV = {"bash_timeout", "bash_timeout_max", "sandbox", "write_tool", "read_max_lines", "read_max_bytes",
        "bash_max_lines", "bash_max_bytes", "bash_output_max_bytes", "saved_output_max_bytes", "max_memory_bytes",
        "max_processes", "max_file_bytes", "materialize", "env_passthrough", "env_set", "agent_python",
        "extra_ro_binds"}

Frozen = dict[str, "Frozen | None"]


def _leaves(names: set[str], **nested: Frozen) -> Frozen:
    return {**dict.fromkeys(names), **nested}


# What `runners.job.identity.config_identity` hashed at record schema 2 (main at 3747862); `None` marks a
# value hashed whole, a mapping a config whose own fields follow the rule.
FROZEN_JOB: Frozen = {
    "benchmark": {"name": None},
    "method": _leaves({"name", "todo", "self_refine", "texts"}, tab=_leaves(_TAB)),
    "model": _leaves(_MODEL, server=_leaves(_SERVER)),
    "env": _leaves(_ENV),
    "agent": _leaves({"max_turns", "time_limit_s", "context_level"}),
    "task": None,
    "seed": None,
}
# What `eval.score.judge_key` hashed then: the judge's settings and its model's, as the flat model.
FROZEN_JUDGE: Frozen = _leaves(
    {"name", "cache_dir", "max_retries", "max_file_chars", "max_total_chars", "max_trajectory_chars",
     "evaluator_timeout_s"},
    model=_leaves(_MODEL, server=_leaves(_SERVER)),
)


class Defaults(dict):
    """The defaults of one config's fields by name; a nested config's own `Defaults` under its name."""


def defaults_of(obj: Any) -> Defaults:
    """The declared default of every field of the dataclass `obj`, in `asdict` form; for a field that
    holds a config (a dataclass) in `obj`, that config's own defaults, to compare field by field."""
    out = Defaults()
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out[f.name] = defaults_of(value)
        else:
            out[f.name] = _declared(f)
    return out


def _declared(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return _NO_DEFAULT
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) and not isinstance(value, type) else value


_NO_DEFAULT = object()


def drop_new_defaults(d: dict[str, Any], defaults: Defaults, frozen: Frozen) -> dict[str, Any]:
    """`d` (a config as ids hash it) without the fields `frozen` does not name whose value is their
    default: those came later, and at their default they must not move an id. Works in place."""
    for key in list(d):
        if key in frozen:
            sub, below = frozen[key], defaults.get(key)
            if sub is not None and isinstance(d[key], dict) and isinstance(below, Defaults):
                drop_new_defaults(d[key], below, sub)
        elif key in defaults and _equal(d[key], defaults[key]):
            del d[key]
    return d


def _equal(value: Any, default: Any) -> bool:
    if isinstance(default, Defaults):  # a config that did not exist: at its default in every field
        return isinstance(value, dict) and all(_equal(value.get(k), v) for k, v in default.items())
    return value == default
