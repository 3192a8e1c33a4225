"""Workspace-Bench: the task records and their input files from the benchmark's Hugging Face
dataset (Lite or full), and the role workspaces from its workspaces dataset.

Published layout (docs/benchmarks.md#workspace-bench):
  Workspace-Bench/Workspace-Bench-Lite (split `lite`) or Workspace-Bench/Workspace-Bench (split
  `full`): the records as the dataset card's split (a table whose list cells are JSON text), or one
  `metadata.json` per task folder; each input at the record's `stored_relpath` (`data/<16-hex>_<name>`),
  at the top of the dataset or in the task's folder.
  Workspace-Bench/Workspace-Bench-Workspaces: `filesys_en.zip`, five role folders
  (`BackendDeveloper_Workdir`, …; older releases `kaifa_raw`, …).

Prepared layout, what `eval/benchmarks/workspace_bench.py` reads: `tasks.jsonl` (the records, list
fields decoded), `data/<16-hex>_<name>` (the inputs), `filesys/<persona_snake_case>_raw/` (each
persona's role workspace).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path
from typing import Any

from eval.prepare.fetch import (
    PrepareError,
    building,
    check_loads,
    hub_download,
    link_file,
    link_tree,
    local_source,
    unpack_zip,
)
from eval.prepare.manifest import Manifest

NAME = "workspace_bench"
DATASETS = {"lite": ("Workspace-Bench/Workspace-Bench-Lite", "lite"), "full": ("Workspace-Bench/Workspace-Bench", "full")}
WORKSPACES = "Workspace-Bench/Workspace-Bench-Workspaces"
ARCHIVE = "filesys_en.zip"
# Not pinned to a commit: no Hugging Face commit id of these datasets could be read where this was
# written (no hub here). The manifest records the commit each run resolved; pass it as --revision.
REVISION = "main"
PARTS = ["tasks.jsonl", "data", "filesys"]
FROM_THE_HUB = True
LIST_FIELDS = ("output_files", "rubrics", "rubric_types", "file_dep_graph", "data_manifest", "tested_capabilities",
               "collaboration_type")
# The role folders the releases name for each persona (the first found is used).
ROLE_FOLDERS = {
    "Backend Developer": ("BackendDeveloper_Workdir", "kaifa_raw"),
    "Logistics Manager": ("LogisticsManager_Workdir", "houqin_raw"),
    "Operations Manager": ("OperationsManager_Workdir", "yunying_raw"),
    "AI Product Manager": ("ProductManager_Workdir", "chanpin_raw"),
    "Product Manager": ("ProductManager_Workdir", "chanpin_raw"),
    "Researcher": ("Research_Workdir", "research_raw"),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tasks-from", metavar="DIR", help="a local copy of the tasks dataset (laid out as on the Hub) instead of downloading it")
    p.add_argument("--workspaces-from", metavar="PATH",
                   help=f"a local {ARCHIVE}, or a folder holding it or its unpacked role folders, instead of downloading it")
    p.add_argument("--workspaces-revision", metavar="REV", help=f"the revision of {WORKSPACES} (--revision is the tasks dataset's)")
    p.add_argument("--role", action="append", default=[], metavar="PERSONA=FOLDER",
                   help="the role folder of a persona the known names do not cover")


def role_dir(persona: str) -> str:
    """The folder name the loader looks for by default."""
    return re.sub(r"[^a-z0-9]+", "_", persona.lower()).strip("_") + "_raw"


def prepare(args: argparse.Namespace, out: Path) -> Path:
    variant = "full" if args.full else "lite"
    repo, split = DATASETS[variant]
    revision = args.revision or REVISION
    sources: list[dict[str, Any]] = []
    if args.tasks_from:
        tasks_src = local_source(args.tasks_from, "--tasks-from")
        sources.append({"dataset": repo, "split": split, "from": str(tasks_src)})
    else:
        tasks_src, commit = hub_download(repo, revision, out / ".sources" / repo.replace("/", "__"), "--tasks-from")
        sources.append({"dataset": repo, "split": split, "revision": revision, "commit": commit})
    records = read_records(tasks_src, split)
    roles_root, ws_source = _workspaces(args, out, args.workspaces_revision or REVISION)
    sources.append(ws_source)
    roles = _role_folders(records, roles_root, dict(r.split("=", 1) for r in args.role))
    manifest = Manifest(NAME, variant, PARTS, sources, command=f"python -m eval.prepare {NAME} --{variant} --out {out}")
    with building(out, manifest) as root:
        for persona, folder in roles.items():
            link_tree(folder, root / "filesys" / role_dir(persona))
        for rel, src in _inputs(records, tasks_src).items():
            link_file(src, root / rel)
        (root / "tasks.jsonl").write_text("".join(json.dumps(_plain(r), ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        check_loads(NAME, configure(root))
    return out / NAME


def read_records(src: Path, split: str) -> list[dict[str, Any]]:
    """The task records: one `metadata.json` per task folder, else the dataset card's split."""
    metas = sorted(src.rglob("metadata.json"))
    if metas:
        records = []
        for m in metas:
            rec = json.loads(m.read_text(encoding="utf-8"))
            records.append({**rec, "__folder": str(m.parent)})
    else:
        records = _split_records(src, split)
    if not records:
        raise PrepareError(f"no task records in {src} (expected the dataset card's split {split!r} or task folders with metadata.json)")
    return sorted((_decoded(r) for r in records), key=lambda r: _id_key(r.get("absolute_id")))


def _split_records(src: Path, split: str) -> list[dict[str, Any]]:
    """The split as the dataset card declares it, read by `datasets` into a fresh cache (its shared
    cache may hold an older table of the same folder)."""
    import tempfile

    import datasets

    datasets.disable_progress_bars()
    try:
        with tempfile.TemporaryDirectory(prefix="rt-wb-split-") as cache:
            return [dict(r) for r in datasets.load_dataset(str(src), split=split, cache_dir=cache)]
    except Exception as e:  # noqa: BLE001 - any failure means the folder is not the dataset
        raise PrepareError(f"{src} is not the Workspace-Bench dataset with split {split!r} ({type(e).__name__}: {e})") from None


def _decoded(rec: dict[str, Any]) -> dict[str, Any]:
    """List fields as lists: a table (CSV) holds them as JSON (or Python literal) text."""
    out = dict(rec)
    for key in LIST_FIELDS:
        value = out.get(key)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                try:
                    value = ast.literal_eval(value)
                except (ValueError, SyntaxError):
                    raise PrepareError(f"task {rec.get('absolute_id')}: field {key} is neither a JSON nor a literal list: {value[:80]!r}") from None
        if value is not None and not isinstance(value, list):
            raise PrepareError(f"task {rec.get('absolute_id')}: field {key} is {type(value).__name__}, expected a list")
        out[key] = value
    return out


def _id_key(value: Any) -> tuple[int, Any]:
    return (0, int(value)) if str(value).isdigit() else (1, str(value))


def _plain(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if not k.startswith("__")}


def _inputs(records: list[dict[str, Any]], src: Path) -> dict[str, Path]:
    """Each input's place in the prepared folder (its `stored_relpath`) and the file it comes from:
    the record's own task folder first, then the top of the dataset, then any task folder."""
    anywhere: dict[str, list[Path]] = {}
    for p in src.rglob("*"):
        if p.is_file() and not p.is_symlink() and len(p.parts) >= 2:
            anywhere.setdefault(f"{p.parent.name}/{p.name}", []).append(p)
    out: dict[str, Path] = {}
    missing = []
    for rec in records:
        for entry in rec.get("data_manifest") or []:
            rel = str(entry.get("stored_relpath") or "")
            parts = Path(rel).parts
            if not rel or Path(rel).is_absolute() or ".." in parts or len(parts) != 2:
                raise PrepareError(f"task {rec.get('absolute_id')}: stored_relpath {rel!r} is not of the form data/<file>")
            folder = Path(rec["__folder"]) if "__folder" in rec else None
            found = [c for c in ((folder / rel) if folder else None, src / rel) if c is not None and c.is_file()]
            found = found or anywhere.get(rel, [])
            if not found:
                missing.append(f"{rec.get('absolute_id')}:{rel}")
            elif rel in out and out[rel].read_bytes() != found[0].read_bytes():
                raise PrepareError(f"two different files are stored as {rel}: {out[rel]} and {found[0]}")
            else:
                out[rel] = found[0]
    if missing:
        raise PrepareError(f"{len(missing)} task input(s) are not in {src}: {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
    return out


def _workspaces(args: argparse.Namespace, out: Path, revision: str) -> tuple[Path, dict[str, Any]]:
    """The folder holding the role folders (unpacked from the archive), and how it was obtained."""
    if args.workspaces_from:
        src = local_source(args.workspaces_from, "--workspaces-from")
        archive = src / ARCHIVE if src.is_dir() else src
        info: dict[str, Any] = {"dataset": WORKSPACES, "file": ARCHIVE, "from": str(src)}
        if not archive.is_file():
            return src, info  # already unpacked
    else:
        folder, commit = hub_download(WORKSPACES, revision, out / ".sources" / WORKSPACES.replace("/", "__"), "--workspaces-from",
                                      allow=[ARCHIVE])
        archive = folder / ARCHIVE
        info = {"dataset": WORKSPACES, "file": ARCHIVE, "revision": revision, "commit": commit}
    return unpack_zip(archive, out / ".sources" / "workspaces_en"), info


def _role_folders(records: list[dict[str, Any]], root: Path, given: dict[str, str]) -> dict[str, Path]:
    """Each persona's role folder among the unpacked ones (searched three levels deep)."""
    found: dict[str, Path] = {}
    for depth in ("*", "*/*", "*/*/*"):
        for p in sorted(root.glob(depth)):
            if p.is_dir() and not p.is_symlink():
                found.setdefault(p.name, p)
    out = {}
    for rec in records:
        persona = str(rec.get("persona") or "")
        if persona in out:
            continue
        camel = re.sub(r"[^A-Za-z0-9]", "", persona.title())
        names = [given.get(persona), rec.get("file_system"), *ROLE_FOLDERS.get(persona, ()), role_dir(persona), f"{camel}_Workdir"]
        folder = next((found[n] for n in names if n and n in found), None)
        if folder is None:
            have = sorted(n for n in found if n.endswith(("_Workdir", "_raw")))
            raise PrepareError(f"no role folder for persona {persona!r} in {root} (looked for {', '.join(n for n in names if n)}; "
                               f"role folders there: {', '.join(have) or 'none'}); name it with --role '{persona}=FOLDER'")
        out[persona] = folder
    return out


def configure(root: Path) -> dict[str, str]:
    """The loader's settings that point it at a prepared folder."""
    return {"path": str(root / "tasks.jsonl"), "workspaces": str(root)}
