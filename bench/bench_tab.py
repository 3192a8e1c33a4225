"""Hand-run benchmark of the tab's per-observation cost and of tab_review (numbers go in docs/tab.md).

    .venv/bin/python bench/bench_tab.py            # 50 / 200 / 800 read-log entries
    .venv/bin/python bench/bench_tab.py --entries 50

A tab holding 300 candidates, N read-log entries of 800 characters each (50 → 40,000 characters) and
20 requirements; then: the median cost of capture + status line per observation (target < 1 ms),
per kind of observation, and the median of tab_review (target < 20 ms; the first call also indexes
the excerpts). Outputs are what the tools print (file text, grep lines, listings); nothing runs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from envs.protocol import Observation
from tab.config import TabConfig
from tab.tab import Tab

VOCAB = ("travel hotel meal taxi invoice approval claim budget supplier order amount status policy "
         "article chapter water electricity saving manual standard grade night day limit report "
         "department manager employee receipt deadline contract payment project meeting minutes").split()
ENTRY_CHARS = 800
SYLLABLES = "ba co di fe gu ha ki lo mu ne pa ri so tu ve wa xi yo za".split()
# Office text: a few topical words (which requirements use) in a larger vocabulary.
FILLER = sorted({"".join(random.Random(i).choices(SYLLABLES, k=3)) for i in range(3000)})


def text(rng: random.Random, chars: int) -> str:
    lines, size = [], 0
    while size < chars:
        line = f"Article {rng.randint(1, 40)} " + " ".join(
            rng.choice(VOCAB) if rng.random() < 0.25 else rng.choice(FILLER) for _ in range(rng.randint(6, 14)))
        line += f" {rng.randint(1, 99999):,}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:chars]


def build(root: Path, entries: int, rng: random.Random) -> tuple[Tab, list[str]]:
    docs = []
    for i in range(entries):
        p = root / "docs" / f"dept_{i % 10}" / f"doc_{i:04d}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text(rng, ENTRY_CHARS) + "\n")
        docs.append(p.relative_to(root).as_posix())
    for i in range(300):
        p = root / "drive" / f"{rng.choice(VOCAB)}_{rng.choice(VOCAB)}_{i:03d}.md"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("unopened\n")
    tab = Tab(root, TabConfig())
    tab.call("tab_add", {"requirements": [
        f"{rng.choice(VOCAB)} {rng.choice(VOCAB)} {rng.choice(VOCAB)} {rng.randint(1, 40)}" for _ in range(20)]}, 1)
    listing = "\n".join(f"./{p.relative_to(root).as_posix()}" for p in sorted((root / "drive").iterdir()))
    tab.observe(Observation("bash", {"command": "find ./drive -type f"}, listing, False, 2))
    for k, rel in enumerate(docs):
        tab.observe(Observation("read", {"path": rel}, (root / rel).read_text().rstrip("\n"), False, 3 + k))
    return tab, docs


def observations(root: Path, docs: list[str]) -> dict[str, Observation]:
    """One observation of each common kind, with the output the tool would print."""
    d0, d1 = docs[0], docs[1]
    t0 = (root / d0).read_text().rstrip("\n")
    grep_lines = [f"./{rel}:{n}:{line}" for rel in docs[:10]
                  for n, line in enumerate((root / rel).read_text().split("\n")[:3], 1) if "hotel" in line]
    return {
        "read": Observation("read", {"path": d0}, t0, False, 900),
        "cat": Observation("bash", {"command": f"cat {d0}"}, t0, False, 900),
        "cat_two": Observation("bash", {"command": f"cat {d0} {d1}"}, t0 + "\n" + (root / d1).read_text(), False, 900),
        "head_pipe": Observation("bash", {"command": f"cat {d0} | head -n 3"}, "\n".join(t0.split("\n")[:3]), False, 900),
        "grep_r": Observation("bash", {"command": "grep -rn hotel docs | head -40"}, "\n".join(grep_lines), False, 900),
        "ls_dir": Observation("bash", {"command": "ls docs/dept_1"},
                              "\n".join(sorted(Path(r).name for r in docs if "dept_1/" in r)), False, 900),
        "find_300": Observation("bash", {"command": "find ./drive -type f"},
                                "\n".join(f"./{p.relative_to(root).as_posix()}"
                                          for p in sorted((root / "drive").iterdir())), False, 900),
        "python": Observation("bash", {"command": f"python3 -c \"print(open('{d0}').read()[:300])\""},
                              t0[:300], False, 900),
        "echo": Observation("bash", {"command": "echo done && wc -l docs/dept_1/*.md"}, "done\n 10 total", False, 900),
        "py_office": _office_read(root, t0),
    }


def _office_read(root: Path, text: str) -> Observation:
    """A script reading a docx and an xlsx named on its command line (the reference solutions' reader)."""
    import subprocess

    from eval.benchmarks.builtin.office import write_docx, write_xlsx
    from eval.benchmarks.builtin.solution import READER

    lines = text.split("\n")
    write_docx(root / "office" / "policy.docx", [("para", line) for line in lines if line.strip()])
    write_xlsx(root / "office" / "budget.xlsx", [("Budget", [["item", "amount"], *[[w, i * 10] for i, w in enumerate(VOCAB[:40])]])])
    command = f"python3 - office/policy.docx office/budget.xlsx <<'RT_PY'\n{READER}RT_PY"
    out = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, check=True).stdout
    return Observation("bash", {"command": command}, out.rstrip("\n"), False, 900)


def median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench(entries: int, repeat: int) -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tab, docs = build(root, entries, rng)
        chars = sum(e.chars for e in tab.state.entries.values())
        obs = observations(root, docs)
        per_kind = {k: median_ms(lambda o=o: tab.observe(o), repeat) for k, o in obs.items()}
        cold_start = time.perf_counter()
        tab.call("tab_review", {}, 1000)
        cold = (time.perf_counter() - cold_start) * 1000
        review = median_ms(lambda: tab.call("tab_review", {}, 1000), max(5, repeat // 10))
        print(f"\n{entries} entries ({chars:,} chars), {len(tab.state.candidates)} candidates, "
              f"{len(tab.state.requirements)} requirements")
        print("  capture + status line, median ms per observation:")
        for k, ms in per_kind.items():
            print(f"    {k:<10} {ms:7.3f}")
        print(f"    {'median':<10} {statistics.median(per_kind.values()):7.3f}")
        print(f"  tab_review: first call {cold:.2f} ms (indexes the excerpts), median {review:.2f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, nargs="*", default=[50, 200, 800])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    for n in args.entries:
        bench(n, args.repeat)


if __name__ == "__main__":
    main()
