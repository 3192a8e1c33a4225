"""Where a run writes, checked before it writes: inside `out`, and never into a task's workspace.

A job's workspace is a copy of its task's folder made when the job starts (`cp -L`: links are
followed). Records, the model-call cache or the scratch copies kept inside that folder, or reached
from it by a link, are in every later job's copy: a seed-1 job read the seed-0 job's answer and
its verdict. And a sweep's name is one folder under `out`: `sweep=../x`, `..`, `.` or an absolute
path would put the sweep's records, ledger and report elsewhere. Each is refused in one line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from runners.config.schema import ConfigError, RootConfig
from runners.core.task import Task


def sweep_name_problem(name: str) -> str | None:
    """Why `name` is not one plain folder name under `out`, None when it is."""
    if not name.strip():
        return "is empty"
    if "/" in name or "\0" in name:
        return "is a path, not a name"
    if name.startswith("."):  # `.`, `..`, and `.cache`, where the model-call cache lives
        return "starts with '.'"
    return None


def check_sweep_name(cfg: RootConfig) -> None:
    if cfg.sweep is None:
        return
    why = sweep_name_problem(cfg.sweep)
    if why:
        raise ConfigError(f"sweep={cfg.sweep} {why}: a sweep's name is one folder under out={cfg.out}, where its records, "
                          "ledger and report go; give a plain name such as sweep=mine (out=DIR says where)")


def check_records_place(cfg: RootConfig, tasks: list[Task]) -> None:
    """Refuse a run whose records, call cache or scratch copies would be inside (or linked from) a
    task's workspace folder. Each distinct workspace is walked once for its links."""
    writes = [(setting, os.path.realpath(path)) for setting, path in _written(cfg)]
    for ws in dict.fromkeys(os.path.realpath(t.workspace) for t in tasks if t.workspace is not None):
        for setting, place in writes:
            if _within(place, ws):
                raise ConfigError(f"{setting} is inside the benchmark's workspace folder {ws}: every job copies that folder, "
                                  "so later jobs would read earlier jobs' answers and verdicts; give it a folder outside the benchmark")
        for link, target in _links(ws):
            for setting, place in writes:
                if _within(place, target) or _within(target, place):
                    raise ConfigError(f"{setting}: the benchmark's workspace folder links to it ({link} -> {target}) and every job "
                                      "copies that folder with what its links reach, so later jobs would read earlier jobs' answers "
                                      "and verdicts; remove the link, or give the setting a folder the link does not reach")


def _written(cfg: RootConfig) -> Iterator[tuple[str, str]]:
    """Each setting naming where this run writes (as the user reads it) and its folder."""
    yield f"out={cfg.out}", cfg.out
    if cfg.sweep and not sweep_name_problem(cfg.sweep):
        yield f"sweep={cfg.sweep} (under out={cfg.out})", os.path.join(cfg.out, cfg.sweep)
    for key, value in (("model.cache_dir", cfg.model.cache_dir), ("judge.cache_dir", cfg.judge.cache_dir),
                       ("agent.work_dir", cfg.agent.work_dir)):
        if value:
            yield f"{key}={value}", value


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _links(folder: str) -> Iterator[tuple[str, str]]:
    """Each link under `folder` (not followed) with where it leads."""
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for e in entries:
            if e.is_symlink():
                yield e.path, os.path.realpath(e.path)
            elif e.is_dir(follow_symlinks=False):
                stack.append(e.path)
