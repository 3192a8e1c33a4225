"""`python -m eval.harbor.verify --spec DIR --workspace DIR [--record DIR] --out DIR`: the verifier of an
exported task, run by its `tests/test.sh` in the verifier's container.

It writes a job record of the trial into `OUT/runningtab/` (job.json, result.json, deliverable/,
evaluator_view.json, tab.json when the tab ran, scores.json) exactly as a job of ours would hold it,
judges it with our own judge for the task (`eval.score.records.score_job`), and writes `OUT/reward.json`
(rewards.py) and `OUT/scores.json`. Harbor keeps OUT as the trial's `verifier/` folder, which is what
`python -m eval.import atif` reads back.

What the agent left is hostile: the final workspace is read through `envs.workspace` (links never
followed out, regular files only), the answer file and tab.json are read bounded, and a tab record
that is not a JSON object is left out with a note (it never moves a score: no judge reads it).
Harbor gives the agent's container the trial's log folders, so OUT may already hold what the agent
planted there (a solved `runningtab/deliverable/`, a `tab.json`): the record is built in a fresh
folder and replaces `OUT/runningtab/` whole, and only what the workspace holds is judged.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from envs.config import EnvConfig
from envs.deliverable import diff_workspace
from envs.safeio import read_regular
from eval.harbor import harbor_texts
from eval.harbor.rewards import rewards
from eval.harbor.spec import Spec, read_spec
from eval.harbor.whole import whole_folder
from runners.core.document_checks import check_tab
from runners.core.job_record import (
    deliverable_dir,
    write_deliverable,
    write_meta,
    write_plugin_record,
    write_result,
    write_view,
)
from runners.core.record_files import SCORES, TAB, parse_json, write_json
from runners.core.record_types import JobMeta, Result

log = logging.getLogger(__name__)
RECORD_DIR = "runningtab"  # the trial's job record, under the verifier's output folder
MAX_ANSWER_BYTES = 64_000
MAX_TAB_BYTES = 64_000_000
SANDBOX = "container"  # the agent ran in Harbor's container, not in our bubblewrap sandbox


def job_config(spec: Spec) -> dict:
    """The job config a record of this trial keeps: what `eval.score` and the report read."""
    return {"benchmark": spec.benchmark_config, "judge": spec.judge,
            "method": {"name": spec.method, "tab": {} if spec.tab else None}, "harbor": {"tab_method": spec.tab_method}}


def read_tab(record: Path | None) -> dict | None:
    """The tab's record the MCP server kept, or None (no tab, none written, or not a tab's record)."""
    if record is None:
        return None
    try:
        data = read_regular(record, TAB, limit=MAX_TAB_BYTES)
    except OSError as e:
        log.warning("tab.json not read: %s", e)
        return None
    if data is None:
        return None
    try:
        return check_tab(parse_json(data))  # the record's one reader of tab.json
    except ValueError as e:  # not JSON, nested too deep, or of another shape (a RecordError)
        log.warning("tab.json left out: %s", e)
        return None


def write_record(spec: Spec, workspace: Path, record: Path | None, job_dir: Path) -> None:
    """The trial as a finished job record (no trajectory: Harbor keeps the agent's own logs)."""
    job_dir.mkdir(parents=True, exist_ok=True)
    task = spec.task
    write_meta(job_dir, JobMeta("harbor-trial", spec.benchmark, task.id, spec.method, "harbor", 0, job_config(spec), SANDBOX))
    caps = EnvConfig()  # the deliverable's caps, as a job's record has them
    diff = diff_workspace(task.workspace, {}, workspace, caps.deliverable_max_files)
    got = write_deliverable(job_dir, workspace, diff, caps.deliverable_max_files, caps.deliverable_max_bytes)
    delivered, deleted = got.files, diff.deleted
    answer = ""
    if task.kind == "answer" and harbor_texts.ANSWER_FILE in delivered:
        answer = (read_regular(deliverable_dir(job_dir), harbor_texts.ANSWER_FILE, limit=MAX_ANSWER_BYTES) or b"").decode("utf-8", "replace")
    tab = read_tab(record) if spec.tab else None
    if tab is not None:
        write_plugin_record(job_dir, "tab", tab)
    write_view(job_dir, {"task": task.prompt, "messages": [], "final_answer": answer})
    write_result(job_dir, Result("harbor-trial", "finished", final_answer=answer, sandbox=SANDBOX, deliverable=delivered, deleted=deleted,
                                 left_out=got.left_out, left_out_rest=got.rest, limits_hit=got.limits_hit or None))


def verify(spec_dir: Path, workspace: Path, record: Path | None, out: Path) -> dict[str, float]:
    from eval.config import judge_config
    from eval.score.records import score_job

    spec = read_spec(spec_dir)
    with whole_folder(out / RECORD_DIR) as job_dir:  # never what was planted there before
        write_record(spec, workspace, record, job_dir)
        scores = score_job(job_dir, judge_config(dict(spec.judge)), task=spec.task)
    if scores is None:
        raise SystemExit("the task's judge is `none`: nothing to verify")
    reward = rewards(scores)
    write_json(out / SCORES, scores)
    write_json(out / "reward.json", reward)  # last: Harbor reads it as the verdict
    return reward


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.harbor.verify", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", type=Path, required=True, help="the exported spec folder (task.json, workspace/)")
    ap.add_argument("--workspace", type=Path, required=True, help="the workspace as the agent left it")
    ap.add_argument("--record", type=Path, default=None, help="where the tab's MCP server kept tab.json")
    ap.add_argument("--out", type=Path, required=True, help="the verifier's output folder (/logs/verifier)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.workspace.is_dir():
        print(f"verify: --workspace {args.workspace} is not a folder: the agent's files did not reach the verifier "
              "(task.toml's artifacts list /workspace)", file=sys.stderr)
        return 2
    reward = verify(args.spec, args.workspace, args.record if args.record and args.record.is_dir() else None, args.out)
    print(json.dumps(reward))
    return 0


if __name__ == "__main__":
    sys.exit(main())
