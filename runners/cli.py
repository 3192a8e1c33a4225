"""`runningtab VERB ARGS…`: one command line for the project's entry points, as `inspect eval` or
`harbor run` are for theirs. `runningtab VERB ARGS…` is `python -m MODULE ARGS…`, run the way `python -m`
runs it (runpy, the module as `__main__`, `sys.argv[0]` its file): Hydra's entry points see their own
command line (`--cfg job`, `hydra.*` overrides), each verb's `--help` is its module's, and exit codes
pass through. The `python -m` forms stay; this table only names them.

A verb is dispatched by module name, never imported here: this module stands at the bottom of
`runners/`, which may not import `slurm/` (tests/test_layers.py), and a verb's imports (Ray, Hydra,
the report) are paid by that verb alone. One difference from `python -m`, as for every console script
(`pytest` and `python -m pytest` differ the same way): the folder you run it from is not put on
`sys.path`; your own plugins come from `PYTHONPATH` (docs/extending.md), as Ray's workers need anyway.
"""

from __future__ import annotations

import difflib
import runpy
import sys
from collections.abc import Sequence

# verb: (the module `python -m` runs, what it does in one line). Read statically by tests/test_docs.py.
VERBS = {
    "demo": ("runners.sweep.demo", "the first ten minutes: the embedded model's sweep, the tab at work, what to look at next"),
    "sweep": ("runners.sweep", "a sweep: the grid's jobs on Ray actors, judged, tracked, reported; resumes where it stopped"),
    "plan": ("runners.plan", "a sweep's jobs, expected cost and wall time before it starts (its command line); runs nothing"),
    "job": ("runners.job", "one job in-process, no Ray (debugging); prints the job's directory"),
    "score": ("eval.score", "scores job records again (a new judge, a fixed rule) without re-running agents"),
    "report": ("eval.report", "the paper's tables and figures and the job pages, into SWEEP/report/"),
    "replay": ("eval.replay", "today's tab over a finished sweep's trajectories, no model call"),
    "probe": ("eval.probe", "the recovery probe (Figure 4, right): asks each tab job's own model"),
    "power": ("eval.report.analyses.power", "how many tasks x seeds make a gain detectable, from a pilot sweep"),
    "cache": ("runners.models.call_cache_cli", "the model-call cache: list what it holds, prune entries by age or model"),
    "prepare": ("eval.prepare", "the paper's data (workspace_bench, agentcompany, officeqa), prepared and checked"),
    "builtin": ("eval.benchmarks.builtin", "generates the built-in benchmark (sweeps do it themselves, cached)"),
    "check-bench": ("runners.job.check_bench", "your benchmark's references reach full marks, empty and stuffed deliverables do not"),
    "export": ("eval.export", "our benchmarks as Harbor tasks, or finished jobs' trajectories as ATIF"),
    "import": ("eval.import", "Harbor trials back as job records, for our report"),
    "mcp": ("tab.mcp", "the tab for an agent of another harness, as an MCP server"),
    "slurm": ("slurm.launch", "a sweep submitted to Slurm"),
}
PROG = "runningtab"


def usage() -> str:
    """The verbs, one line each: what `runningtab --help` prints."""
    width = max(map(len, VERBS))
    lines = [f"usage: {PROG} VERB [ARGS…]   ({PROG} VERB --help: the verb's own options)", "",
             "One command line for RunningTab; each verb is `python -m MODULE`, which works as well.", "", "verbs:"]
    lines += [f"  {verb:<{width}}  {what}  (python -m {module})" for verb, (module, what) in VERBS.items()]
    return "\n".join(lines)


def unknown_verb(verb: str) -> str:
    """One line: what was wrong, the nearest verb if any, and every verb."""
    near = difflib.get_close_matches(verb, VERBS, n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    return f"error: {PROG}: unknown verb {verb!r}; {hint}verbs: {', '.join(VERBS)} ({PROG} --help says what each does)"


def typed_command(module: str, orig_argv: Sequence[str] | None = None) -> list[str]:
    """The command the user typed to run `module` (before its arguments), to print back (the sweep's
    resume line): `runningtab sweep` for the installed script, `python -m runners sweep` for the
    package, `python -m runners.sweep` for the module, the interpreter as typed. Read from the
    interpreter's own command line (`sys.orig_argv`), which neither runpy nor Hydra rewrites."""
    argv = list(sys.orig_argv if orig_argv is None else orig_argv)
    verb = next((v for v, (m, _) in VERBS.items() if m == module), None)
    if len(argv) >= 3 and argv[1] == "-m":
        return [argv[0], "-m", argv[2], *([argv[3]] if argv[2] == "runners" and len(argv) > 3 else [])]
    if len(argv) >= 3 and verb is not None and argv[2] == verb and argv[1].rsplit("/", 1)[-1] in (PROG, f"{PROG}.exe"):
        return [PROG, verb]
    return ["python", "-m", module]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the verb's module as `python -m` would, with the rest of the command line as its own."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["help"] and len(args) == 2:
        args = [args[1], "--help"]  # `runningtab help sweep` is `runningtab sweep --help`
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        raise SystemExit(0 if args else 2)
    verb, rest = args[0], args[1:]
    if verb not in VERBS:
        print(unknown_verb(verb), file=sys.stderr)
        raise SystemExit(2)  # a usage error, as argparse's
    sys.argv = [sys.argv[0], *rest]  # runpy puts the module's file in sys.argv[0], as `python -m` does
    runpy.run_module(VERBS[verb][0], run_name="__main__", alter_sys=True)
