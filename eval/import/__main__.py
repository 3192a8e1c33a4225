"""Import Harbor trial results as job records (docs/harbor.md).

    python -m eval.import atif DIR... [--out OUT]

DIR: a `harbor run` jobs folder (or one job's, or one trial's), or a folder `python -m eval.export atif`
wrote. Each trial becomes a job record under OUT (default: outputs/<name of the first DIR>); then
`python -m eval.report OUT` gives Table 1 and the rest, with our intervals. A trial that cannot be
imported (not an exported task's, or a file that fails its checks) is refused in one line; the
others are imported whole, and the exit code is 1 when any trial was refused.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from runners.core.paths import user_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.import", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("atif", help="Harbor trial directories (ATIF trajectories, rewards, tab.json) as job records")
    a.add_argument("dirs", nargs="+", type=user_path)
    a.add_argument("--out", type=user_path, default=None, help="where the records go (default: outputs/<name of the first DIR>)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    from eval.harbor.importer import import_trials

    missing = [d for d in args.dirs if not d.is_dir()]
    if missing:
        ap.error(f"not a folder: {', '.join(map(str, missing))}")
    out = args.out or Path("outputs") / args.dirs[0].resolve().name
    try:
        written, skipped = import_trials(args.dirs, out)
    except ValueError as e:
        ap.error(str(e))
    for line in skipped:
        print(f"refused: {line}")
    print(f"{out}: {len(written)} job record(s) from Harbor trials" + (f"; {len(skipped)} refused (listed above)" if skipped else ""))
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
