"""`python -m eval.probe outputs/<sweep> [--methods runningtab] [--limit N] [--base-url URL] ...`

Runs the recovery probe on the sweep's tab jobs (it calls each job's own model; answers are
cached beside the records, under `<out>/.cache/probe`), writes `outputs/<sweep>/probe/probe.jsonl`, then rebuilds the
report so that Figure 4 (right) shows the results.
"""

from __future__ import annotations

import argparse
import logging
import sys

from runners.core.paths import user_path


def main(argv: list[str] | None = None) -> int:
    from eval.probe.run import ProbeConfig, run_probe

    d = ProbeConfig()
    ap = argparse.ArgumentParser(prog="python -m eval.probe", description="The recovery probe of Figure 4 (right).")
    ap.add_argument("sweep_dir", type=user_path)
    ap.add_argument("--methods", nargs="+", default=d.methods, help="tab methods whose jobs are probed (default: runningtab)")
    ap.add_argument("--limit", type=int, default=None, help="probe only the first N requirements")
    ap.add_argument("--base-url", default=None, help="send every call here instead of the job's model endpoint")
    ap.add_argument("--max-show", type=int, default=d.max_show, help="tab_show calls allowed in the review condition")
    ap.add_argument("--max-log-chars", type=int, default=d.max_log_chars, help="cut the whole read log at this many characters")
    ap.add_argument("--workers", type=int, default=d.workers, help="calls in flight")
    ap.add_argument("--cache-dir", type=user_path, default=None, help="where answers are cached (default <out>/.cache/probe, beside the records)")
    ap.add_argument("--no-report", action="store_true", help="do not rebuild the report afterwards")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not args.sweep_dir.is_dir():
        print(f"error: {args.sweep_dir} is not a directory (give a sweep directory such as outputs/demo)", file=sys.stderr)
        return 2
    cfg = ProbeConfig(methods=list(args.methods), max_show=args.max_show, max_log_chars=args.max_log_chars,
                      cache_dir=args.cache_dir, base_url=args.base_url, workers=args.workers, limit=args.limit)
    path = run_probe(args.sweep_dir, cfg)
    print(path)
    if not args.no_report:
        from eval.report import write_report

        print(write_report(args.sweep_dir) / "index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
