"""The shape of the code, measured from its own imports and definitions (run by hand; no timing):

    python bench/bench_layout.py [REPO]

modules per folder, folders that import each other, import cycles between modules, files over 300
lines and functions over 60 lines, for the product packages (tests, benchmarks and the benchmark's own
vendored helpers left out). REPO defaults to this checkout, so an older one can be measured beside it.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.test_layers import cycles, imports, modules  # noqa: E402 - the layer test's own reader of imports

SKIP = ("eval/tac/compat",)  # TheAgentCompany's evaluator-side helpers, shaped as the benchmark has them


def measure(repo: Path) -> dict[str, object]:
    known = modules(repo, SKIP)
    graph = {m: imports(p, known) - {m} for m, p in known.items()}
    rel = {m: p.relative_to(repo) for m, p in known.items()}
    per_folder = Counter(r.parent.as_posix() for r in rel.values())
    folder_graph: dict[str, set[str]] = {}
    for m, deps in graph.items():
        a = rel[m].parent.as_posix()
        folder_graph.setdefault(a, set()).update(rel[d].parent.as_posix() for d in deps if rel[d].parent.as_posix() != a)
    mutual = sorted({tuple(sorted((a, b))) for a, bs in folder_graph.items() for b in bs if a in folder_graph.get(b, set())})
    long_files, long_functions = [], []
    for m, p in known.items():
        text = p.read_text(encoding="utf-8")
        if text.count("\n") > 300:
            long_files.append((rel[m].as_posix(), text.count("\n")))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 60:
                long_functions.append((f"{rel[m].as_posix()}:{node.name}", node.end_lineno - node.lineno + 1))
    return {
        "modules": len(known),
        "folders": len(per_folder),
        "modules per folder": dict(sorted(per_folder.items())),
        "folder pairs importing each other": mutual,
        "module import cycles (imports that run, function level included)": cycles(graph),
        "files over 300 lines": sorted(long_files),
        "functions over 60 lines": sorted(long_functions),
    }


def main() -> None:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
    for key, value in measure(repo).items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k:<34} {v}")
        elif isinstance(value, list):
            print(f"{key}: {len(value)}")
            for item in value:
                print(f"  {item}")
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
