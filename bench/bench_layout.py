"""The shape of the code, measured from its own imports, folders and documents (run by hand; no timing):

    python bench/bench_layout.py [REPO] [--against OTHER_REPO]

The figures of issue 37's "Done when", grouped by top folder, then the general shape: test modules at
the `tests/` root; the `eval/judges/` picture (boxes: its files, `__init__.py` included, and subfolders, a subfolder one box;
floors: the longest chain of imports between boxes; arrows: distinct box → box imports, and those that
point up, to a box on a higher floor, which only a cycle makes); top folders that import each other;
the stale names the documents use (`tests/test_docs.py`'s own reader); then modules per folder, folder
pairs and module cycles, long files and functions, for the product packages (the benchmark's vendored
helpers left out). REPO defaults to this checkout; `--against` prints another checkout's figures
beside it (before | after), e.g. one made with `git worktree add /tmp/before COMMIT`. The readers are
this checkout's, so both sides are measured alike.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.test_docs import stale_references  # noqa: E402 - the docs test's own reader of names
from tests.test_layers import PACKAGES, cycles, imports, modules, root_test_modules  # noqa: E402 - the layer test's own readers

SKIP = ("eval/tac/compat",)  # TheAgentCompany's evaluator-side helpers, shaped as the benchmark has them
JUDGES = "eval.judges"


Known = dict[str, Path]  # the product's modules by dotted name
Graph = dict[str, set[str]]  # each module's imports of the others


def _graph(repo: Path) -> tuple[Known, Graph]:
    """Read once per checkout: every figure below is drawn from these imports."""
    known = modules(repo, SKIP)
    return known, {m: imports(p, known) - {m} for m, p in known.items()}


def floors(boxes: dict[str, set[str]]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Each box's floor (1: imports no other box; else one above the highest box it imports) and the
    arrows that point up: those a depth-first walk meets as back edges, closing a cycle."""
    floor: dict[str, int] = {}
    up: list[tuple[str, str]] = []
    state: dict[str, int] = {}  # 1: on the walk's path, 2: done
    for root in sorted(boxes):
        if root in state:
            continue
        work = [(root, iter(sorted(boxes[root])))]
        state[root] = 1
        while work:
            box, it = work[-1]
            nxt = next(it, None)
            if nxt is None:
                work.pop()
                state[box] = 2
                below = [floor[d] for d in boxes[box] if (box, d) not in up and d in floor]
                floor[box] = 1 + max(below, default=0)
            elif state.get(nxt) == 1:
                up.append((box, nxt))
            elif nxt not in state:
                state[nxt] = 1
                work.append((nxt, iter(sorted(boxes[nxt]))))
    return floor, sorted(up)


def judges_picture(known: Known, graph: Graph) -> dict[str, object]:
    """`eval/judges/` as boxes: each file directly in it (its `__init__.py`, the registry of judges, too)
    and each subfolder, whose modules count as one box."""

    def box(module: str) -> str | None:
        if module == JUDGES:
            return "__init__.py"
        if not module.startswith(JUDGES + "."):
            return None
        name = module.split(".")[2]
        return f"{name}/" if (known[module].parent.name == name or module.count(".") > 2) else f"{name}.py"

    boxes: dict[str, set[str]] = {}
    for m, deps in graph.items():
        b = box(m)
        if b is None:
            continue
        boxes.setdefault(b, set()).update(d for d in map(box, deps) if d is not None and d != b)
    floor, up = floors(boxes)
    arrows = sum(len(v) for v in boxes.values())
    return {"boxes": len(boxes), "floors": max(floor.values(), default=0), "arrows": arrows, "arrows up": len(up),
            "_up": [f"{a} -> {b}" for a, b in up]}


def mutual_top_folders(graph: Graph) -> list[str]:
    """Top folders that import each other, each with its imports each way (how many; the first, by name)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for m, deps in sorted(graph.items()):
        for d in sorted(deps):
            a, b = m.split(".")[0], d.split(".")[0]
            if a != b:
                edges.setdefault((a, b), []).append(f"{m} -> {d}")
    out = []
    for (a, b), there in sorted(edges.items()):
        back = edges.get((b, a))
        if a < b and back:
            out.append(f"{a} <-> {b}: {len(there)} imports, e.g. {there[0]}; {len(back)} back, e.g. {back[0]}")
    return out


def general(repo: Path, known: Known, graph: Graph) -> dict[str, object]:
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
            long_files.append(f"{rel[m].as_posix()} ({text.count(chr(10))})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > 60:
                long_functions.append(f"{rel[m].as_posix()}:{node.name} ({node.end_lineno - node.lineno + 1})")
    return {"modules": len(known), "folders": len(per_folder),
            "folder pairs importing each other": [f"{a} <-> {b}" for a, b in mutual],
            "module import cycles": [" ".join(c) for c in cycles(graph)],
            "files over 300 lines": sorted(long_files), "functions over 60 lines": sorted(long_functions),
            **{f"modules in {top}/": sum(n for f, n in per_folder.items() if f.split("/")[0] == top) for top in PACKAGES}}


def measure(repo: Path) -> dict[str, dict[str, object]]:
    """The figures by group: a number, or a list (shown as its length, its items below)."""
    known, graph = _graph(repo)
    picture = judges_picture(known, graph)
    return {
        "tests/": {"test modules at the tests/ root (target <= 3)": root_test_modules(repo)},
        "eval/judges/": {"boxes": picture["boxes"], "floors": picture["floors"], "arrows": picture["arrows"],
                         "arrows up (target 0)": picture["_up"]},
        "top folders": {"pairs importing each other (target: runners <-> eval)": mutual_top_folders(graph)},
        "docs": {"stale references (target 0)": stale_references(repo)},
        "shape": general(repo, known, graph),
    }


def _key(item: str) -> str:
    """What an item is, without its counts (`eval <-> runners: 106 imports …` is `eval <-> runners`)."""
    return item.partition(":")[0] if " <-> " in item else item


def _cell(value: object) -> str:
    return str(len(value)) if isinstance(value, list) else str(value)


def show(after: dict[str, dict[str, object]], before: dict[str, dict[str, object]] | None, names: tuple[str, str]) -> None:
    """The figures, REPO's on the right; a list's items below it, marked when only one side has them (a
    side's own items shown only when it has at most 20)."""
    width = max(len(k) for group in after.values() for k in group) + 2
    col = max(12, len(names[0]))
    if before is not None:
        print(f"{'':<{width + 2}}{names[0]:>{col}} | {names[1]}")
    for group, figures in after.items():
        print(group)
        for key, value in figures.items():
            was = before.get(group, {}).get(key, "-") if before is not None else None
            print(f"  {key:<{width}}" + ("" if before is None else f"{_cell(was):>{col}} | ") + _cell(value))
            if isinstance(value, list):
                old = was if isinstance(was, list) else []
                old_keys, keys = {_key(i) for i in old}, {_key(i) for i in value}
                for item in value:
                    print(f"      {item}" + ("   (new)" if before is not None and _key(item) not in old_keys else ""))
                if len(old) <= 20:
                    for item in old:
                        if _key(item) not in keys:
                            print(f"      {item}   (before only)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", nargs="?", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--against", type=Path, help="another checkout, shown beside REPO as 'before'")
    args = ap.parse_args(argv)
    repo = args.repo.resolve()
    before = measure(args.against.resolve()) if args.against else None
    show(measure(repo), before, (str(args.against), str(repo)) if args.against else ("", str(repo)))


if __name__ == "__main__":
    main()
