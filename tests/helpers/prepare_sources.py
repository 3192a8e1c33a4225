"""Local sources laid out exactly as each benchmark publishes its data (no tests here), for
`eval.prepare` to read instead of the hub: the real samples in `shared/samples`, placed where the
published datasets, repository and image hold them."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from eval.benchmarks.selection import SHIPPED, read_selection
from eval.prepare import agentcompany as tac
from eval.prepare import officeqa as oqa
from eval.prepare import workspace_bench as wb
from tests.helpers.eval_records import SAMPLES

# Task 7 of Workspace-Bench-Lite (the real record) works in the Backend Developer's role folder.
ROLE_FILES = {
    "BackendDeveloper_Workdir/meetings/2024/2024-12-project-kickoff-meeting-minutes.md": "# Kickoff\nowner: API team\n",
    "BackendDeveloper_Workdir/meetings/2025/2025-01-technical-review-meeting-minutes.md": "# Review\nlatency budget 120 ms\n",
    "BackendDeveloper_Workdir/docs/project/project_requirements_document.md": "# Requirements\n",
    "ProductManager_Workdir/prd/roadmap.md": "# Roadmap\nQ3: search\n",
}
SECOND = {"absolute_id": 12, "persona": "AI Product Manager", "task": "Summarise the roadmap in summary.md.", "task_diff": "easy",
          "output_files": ["summary.md"], "rubrics": ["Does summary.md name Q3 search?"], "rubric_types": ["Outcome Evaluation"],
          "file_dep_graph": [{"from": "roadmap_notes.md", "to": "summary.md"}],
          "data_manifest": [{"filename": "roadmap_notes.md", "stored_relpath": "data/0123456789abcdef_roadmap_notes.md"}],
          "tested_capabilities": [], "collaboration_type": [], "file_count": 1}
CARD = """---
configs:
- config_name: default
  data_files:
  - split: lite
    path: "task_lite_clean_en_metadata_table.csv"
---
# Workspace-Bench-Lite
"""


def wb_records() -> list[dict[str, Any]]:
    return [*json.loads((SAMPLES / "workspace-bench" / "lite_task_7.json").read_text()), SECOND]


def wb_input_files(records: list[dict[str, Any]]) -> dict[str, str]:
    return {e["stored_relpath"]: f"input {e['filename']}\n" for r in records for e in r["data_manifest"]}


def workspace_bench_card(root: Path) -> Path:
    """The tasks dataset as its card publishes it: the split's table (list cells as JSON text) and the
    inputs under data/ at the top."""
    records = wb_records()
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(CARD)
    with open(root / "task_lite_clean_en_metadata_table.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        for r in records:
            w.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v for k, v in r.items()})
    for rel, text in wb_input_files(records).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def workspace_bench_task_folders(root: Path) -> Path:
    """The tasks as one folder each (`tasks_lite/<id>/metadata.json` and its `data/`)."""
    for rec in wb_records():
        folder = root / "tasks_lite" / str(rec["absolute_id"])
        folder.mkdir(parents=True)
        (folder / "metadata.json").write_text(json.dumps(rec))
        for e in rec["data_manifest"]:
            (folder / e["stored_relpath"]).parent.mkdir(parents=True, exist_ok=True)
            (folder / e["stored_relpath"]).write_text(f"input {e['filename']}\n")
    return root


def workspaces_zip(root: Path) -> Path:
    """Workspace-Bench-Workspaces as published: filesys_en.zip holding the role folders."""
    root.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(root / wb.ARCHIVE, "w") as z:
        for rel, text in ROLE_FILES.items():
            z.writestr(rel, text)
    return root


def tac_repository(root: Path) -> tuple[Path, str]:
    """TheAgentCompany's repository with the sample tasks at `workspaces/tasks/`, committed; its commit."""
    tasks = root / tac.TASKS
    shutil.copytree(SAMPLES / "theagentcompany", tasks)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "tasks"], check=True)
    return root, subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


OWNCLOUD_FILES = {
    "files/Documents/Human Resources Team/Attendance/april-attendance-data.csv": "Name, Date, Clock-in\nSarah, 2024-04-01, 08:52\n",
    "files/Documents/Financials/payments.xlsx": "not really xlsx",
    "files/Downloads/readme.txt": "downloads\n",
}


def owncloud_tarball(path: Path) -> Path:
    """What `docker cp <container>:/var/www/html/data/theagentcompany/files - | gzip` writes: a tar
    whose top folder is `files/`."""
    with tarfile.open(path, "w:gz") as t:
        for rel, text in OWNCLOUD_FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def officeqa_dataset(root: Path, all_uids: bool = False) -> Path:
    """databricks/officeqa as published: officeqa_pro.csv (the real sample's rows; with `all_uids`,
    one row for each other uid the shipped paper selection decides, its text made up) and the corpus
    folders."""
    root.mkdir(parents=True, exist_ok=True)
    sample = (SAMPLES / "officeqa" / "officeqa_pro_head5.csv").read_bytes()  # CRLF rows, CRLF inside quoted cells
    rows = list(csv.DictReader(io.StringIO(sample.decode("utf-8"), newline="")))
    extra = []
    if all_uids:
        have = {r["uid"] for r in rows}
        extra = [{"uid": uid, "question": f"Made-up question {uid} about receipts in 1941?", "answer": "1",
                  "source_docs": "https://fraser.stlouisfed.org/title/treasury-bulletin-407/january-1941-6529",
                  "source_files": "treasury_bulletin_1941_01.txt", "difficulty": "hard"}
                 for uid in read_selection(SHIPPED / "officeqa_paper.csv") if uid not in have]
    out = io.StringIO(newline="")
    csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\r\n").writerows(extra)
    (root / oqa.QUESTIONS["lite"]).write_bytes(sample + out.getvalue().encode("utf-8"))
    rows += extra
    cited = {line.strip() for r in rows for line in r["source_files"].splitlines() if line.strip()}
    for name in sorted(cited | {"treasury_bulletin_1939_01.txt"}):
        stem = Path(name).stem
        for fmt in ("txt", "json"):
            p = root / oqa.FORMATS[fmt] / f"{stem}.{fmt}"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"{stem} national defense 2,602\n" if fmt == "txt" else json.dumps({"doc": stem}))
    return root
