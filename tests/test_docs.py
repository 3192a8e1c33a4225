"""Every path of the project that the README and docs/ name exists: a move that forgets a document fails
here, not in a reader's hands. Paths that are examples of the reader's own files are listed below."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", REPO / "slurm" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PATH = re.compile(r"(?<![\w./-])((?:runners|eval|tab|envs|slurm|bench|tests|conf)/[\w./-]*[\w/])")
# Not paths of this repository: a reader's own files in the examples, a Harbor task folder's layout,
# an example data folder, and name prefixes of a family of files.
EXAMPLES = ("eval/benchmarks/mine.py", "eval/judges/mine/judge.py", "runners/models/mine.py", "conf/benchmark/mine.yaml",
            "conf/judge/mine.yaml", "conf/model/mine.yaml", "conf/benchmark/myplug.bench.yaml",
            "conf/method/todo_refine_tab.yaml", "conf/model/qwen3_32b.yaml", "conf/pricing/example.yaml",
            "tests/test.sh", "tests/spec/workspace", "bench/workspace", "bench/workspace/solutions",
            "eval/benchmarks/selections/NAME.csv")


def named_paths(text: str) -> list[str]:
    out = []
    for m in PATH.finditer(text):
        path = m.group(1).rstrip("/.")
        if "<" in text[m.end() : m.end() + 1] or path.endswith(("_", "/slurm", "/runningtab")) or "*" in path:
            continue  # a prefix: `tests/test_env_*`, `conf/method/runningtab_no_<switch>.yaml`
        out.append(path)
    return out


def test_the_documents_name_only_paths_that_exist() -> None:
    missing = [f"{doc.relative_to(REPO)}: {path}" for doc in DOCUMENTS for path in named_paths(doc.read_text())
               if path not in EXAMPLES and not (REPO / path).exists()]
    assert missing == []


def test_a_moved_module_is_caught() -> None:
    assert named_paths("see `runners/sweep.py` and `tests/test_env_*.py`") == ["runners/sweep.py"]
    assert not (REPO / "runners/sweep.py").exists()
