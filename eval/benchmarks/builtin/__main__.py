"""CLI: python -m eval.benchmarks.builtin --out DIR --seed N [--suite NAME ...]"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from eval.benchmarks.builtin import SUITES, generate
from eval.benchmarks.builtin.loader import COMPLETE


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m eval.benchmarks.builtin", description=__doc__)
    ap.add_argument("--out", type=Path, required=True, help="output folder (one sub-folder per suite)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--suite", action="append", choices=SUITES, help="generate only these suites (repeatable)")
    args = ap.parse_args(argv)
    started = time.time()
    suites = tuple(args.suite or SUITES)
    generate(args.out, args.seed, suites)
    if set(suites) == set(SUITES):  # usable as benchmark.path=DIR
        (args.out / COMPLETE).write_text(f"seed {args.seed}\n")
    print(f"wrote {', '.join(suites)} to {args.out} in {time.time() - started:.1f}s")


if __name__ == "__main__":
    main()
