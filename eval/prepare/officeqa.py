"""OfficeQA Pro: the questions and the parsed Treasury Bulletin corpus from the benchmark's Hugging
Face dataset (`databricks/officeqa`, gated: request access, then set HF_TOKEN).

Published layout: `officeqa_pro.csv` (133 questions) and `officeqa_full.csv` (246) at the top;
the corpus as `treasury_bulletins_parsed/transformed/treasury_bulletin_YYYY_MM.txt` (the parsed
text the benchmark recommends for agents), `treasury_bulletins_parsed/jsons/*.json` and
`treasury_bulletin_pdfs/*.pdf`.

Prepared layout, what `eval/benchmarks/officeqa.py` reads: `questions.csv` and `corpus/` (one
flat folder of `treasury_bulletin_YYYY_MM.<ext>`, the agent's workspace).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any

from eval.prepare.fetch import (
    PrepareError,
    building,
    check_loads,
    hub_download,
    link_file,
    local_source,
)
from eval.prepare.manifest import Manifest

NAME = "officeqa"
REPO = "databricks/officeqa"
# Not pinned to a commit: no Hugging Face commit id of the dataset could be read where this was
# written (no hub here). The manifest records the commit each run resolved; pass it as --revision.
REVISION = "main"
QUESTIONS = {"lite": "officeqa_pro.csv", "full": "officeqa_full.csv"}
FORMATS = {"txt": "treasury_bulletins_parsed/transformed", "json": "treasury_bulletins_parsed/jsons", "pdf": "treasury_bulletin_pdfs"}
PARTS = ["questions.csv", "corpus"]
FROM_THE_HUB = True
PREFIX = "treasury_bulletin_"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", metavar="DIR", help="a local copy of the dataset (laid out as on the Hub) instead of downloading it")
    p.add_argument("--corpus", default="txt", metavar="FORMATS",
                   help="the corpus formats, comma-separated: txt (default, ~460 MB), json (~730 MB), pdf (~4 GB)")


def prepare(args: argparse.Namespace, out: Path) -> Path:
    variant = "full" if args.full else "lite"
    formats = [f.strip() for f in args.corpus.split(",") if f.strip()]
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise PrepareError(f"--corpus {args.corpus!r}: choose from {', '.join(FORMATS)}")
    csv_name = QUESTIONS[variant]
    if args.source:
        src = local_source(args.source, "--from")
        source: dict[str, Any] = {"dataset": REPO, "from": str(src)}
    else:
        revision = args.revision or REVISION
        allow = [csv_name, *(f"{FORMATS[f]}/*.{f}" for f in formats)]
        src, commit = hub_download(REPO, revision, out / ".sources" / REPO.replace("/", "__"), "--from", allow=allow)
        source = {"dataset": REPO, "revision": revision, "commit": commit}
    questions = src / csv_name
    if not questions.is_file():
        raise PrepareError(f"{src} has no {csv_name} (the dataset's questions)")
    corpus = {f: sorted(p for p in (src / FORMATS[f]).glob(f"{PREFIX}*.{f}") if p.is_file()) for f in formats}
    empty = [FORMATS[f] for f, files in corpus.items() if not files]
    if empty:
        raise PrepareError(f"{src} has no {PREFIX}*.* files in {', '.join(empty)}")
    _check_sources(questions, {p.name for files in corpus.values() for p in files}, formats)
    source.update(questions=csv_name, corpus={f: len(files) for f, files in corpus.items()})
    manifest = Manifest(NAME, variant, PARTS, [source], command=f"python -m eval.prepare {NAME} --{variant} --corpus {','.join(formats)} --out {out}")
    with building(out, manifest) as root:
        link_file(questions, root / "questions.csv")
        for files in corpus.values():
            for p in files:
                link_file(p, root / "corpus" / p.name)
        check_loads(NAME, configure(root))
    return out / NAME


def _check_sources(questions: Path, names: set[str], formats: list[str]) -> None:
    """Every bulletin a question cites is in the corpus, in every format asked for."""
    with open(questions, encoding="utf-8-sig", newline="") as f:
        cited = {line.strip() for row in csv.DictReader(f) for line in (row.get("source_files") or "").splitlines() if line.strip()}
    missing = sorted(f"{Path(c).stem}.{fmt}" for c in cited for fmt in formats if f"{Path(c).stem}.{fmt}" not in names)
    if missing:
        raise PrepareError(f"{len(missing)} bulletin(s) the questions cite are not in the corpus: {', '.join(missing[:5])}"
                           f"{' …' if len(missing) > 5 else ''}")


def configure(root: Path) -> dict[str, str]:
    """The loader's settings that point it at a prepared folder."""
    return {"questions": str(root / "questions.csv"), "corpus": str(root / "corpus")}
