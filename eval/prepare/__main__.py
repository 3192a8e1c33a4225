"""`python -m eval.prepare workspace_bench|agentcompany|officeqa --out DATA [options]` (`--lite|--full`: the Hub's two)
prepares a benchmark's data into `DATA/<name>/` and prints the override that points sweeps at it;
`python -m eval.prepare check DATA/<name>` re-hashes a prepared folder against its manifest."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eval.prepare import PREPARERS, DataError, check_data, module
from eval.prepare.fetch import PrepareError
from eval.prepare.manifest import ManifestError, read


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m eval.prepare", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="{" + ",".join([*PREPARERS, "check"]) + "}")
    for name in PREPARERS:
        mod = module(name)
        s = sub.add_parser(name, help=mod.__doc__.split("\n\n")[0], description=mod.__doc__)
        s.add_argument("--out", required=True, metavar="DATA", help=f"where to write {name}/ (and keep the downloads, in .sources/)")
        if mod.FROM_THE_HUB:  # a Hugging Face dataset, published in two sizes; not TheAgentCompany's one task set
            size = s.add_mutually_exclusive_group()
            size.add_argument("--lite", action="store_true", help="the benchmark's smaller set (the default; OfficeQA: Pro, 133 questions)")
            size.add_argument("--full", action="store_true", help="the full set (Workspace-Bench: 388 tasks; OfficeQA: Full, 246 questions)")
            s.add_argument("--revision", help="the dataset revision (a commit id pins it)")
        mod.add_arguments(s)
    c = sub.add_parser("check", help="re-hash a prepared folder against its manifest")
    c.add_argument("folder", help="DATA/<name>, a folder eval.prepare wrote")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "check":
            folder = Path(args.folder)
            doc = check_data(str(read(folder).get("benchmark")), str(folder), full=True)
            print(f"{folder}: {doc['files']} files, {doc['bytes']:,} bytes, {doc['digest']}: matches its manifest")
            return 0
        out = Path(args.out).expanduser().resolve()
        out.mkdir(parents=True, exist_ok=True)
        root = module(args.command).prepare(args, out)
    except (PrepareError, ManifestError, DataError) as e:
        print(f"eval.prepare: {e}", file=sys.stderr)
        return 1
    doc = read(root)
    print(f"{root}: {doc['files']} files, {doc['bytes']:,} bytes, {doc['digest']}", file=sys.stderr)
    print(f"data.{args.command}={root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
