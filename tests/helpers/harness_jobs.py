"""A production harness's job on a small travel-policy task, through `runners.job`'s own code path
(the real binary in the job's bubblewrap sandbox, the scripted model behind the job's endpoint), the
mark of a test that drives a harness's program (`installed`: skipped where it is not
installed, failed under CI's RUNNINGTAB_AGENTS_REQUIRED), and the bait a hostile agent's
command goes for outside the sandbox (`host_bait`), and another job's endpoint a kept token is tried
at (`status_at_another_job`)."""

from __future__ import annotations

import asyncio
import http.server
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from envs.sandbox import bwrap_problem
from runners.agent.harnesses import HARNESSES
from runners.core.job_record import JobRecord
from runners.core.messages import AssistantMessage
from runners.harnesses.bridge.server import ModelBridge, plain
from runners.job.identity import job_id
from runners.job.run import run_and_score
from tests.conftest import compose_root, write_native, write_script

PREFIX = os.environ.get("RUNNINGTAB_AGENTS_PREFIX", "")
REQUIRED = "RUNNINGTAB_AGENTS_REQUIRED"  # set by .ci/run: a harness test never skips there
POLICY = """# Business travel policy
Chapter 2 Reimbursement
Article 7 Travel expenses are reimbursed at 450 yuan per night for hotels.
Article 8 Taxi fares need receipts.
"""
WRITE = "mkdir -p output && grep -i 'article 7' policies/travel.md > output/guide.md"


def installed(*harnesses: str, sandbox: bool = True) -> pytest.MarkDecorator:
    """The mark of a test that drives these harnesses' programs (in the job's sandbox unless
    `sandbox=False`). Where one is not installed where RUNNINGTAB_AGENTS_PREFIX says (.ci/agents-up.sh)
    or bubblewrap is unusable, the test skips saying why; under RUNNINGTAB_AGENTS_REQUIRED (CI, .ci/run)
    it fails saying why instead (`absent`, read by tests/conftest.py), so CI never passes without them."""
    missing = [h for h in harnesses if not (PREFIX and Path(PREFIX, HARNESSES.get(h).binary).exists())]
    why = (f"RUNNINGTAB_AGENTS_PREFIX={PREFIX or '(unset)'} does not hold {', '.join(missing)} (.ci/agents-up.sh)" if missing
           else f"production harnesses run only inside bubblewrap: {bwrap_problem()}" if sandbox and bwrap_problem() is not None
           else "")
    if why and os.environ.get(REQUIRED):
        return pytest.mark.absent(why)
    return pytest.mark.skipif(bool(why), reason=why)


def guide_bench(root: Path) -> Path:
    files = {"travel/policies/travel.md": POLICY, "travel/policies/other.md": "Article 1 Other things.\n"}
    task = {"id": "guide", "prompt": "Write a travel guide.", "workspace": "travel", "output": "output/guide.md",
            "rubrics": [{"text": "Mentions 450 yuan per night"}]}
    return write_native(root, [task], files)


def run_guide(bench: Path, tmp: Path, harness: str, method: str, turns: list[dict[str, Any]], *overrides: str) -> JobRecord:
    """The guide task's job under `harness` and `method`, its model answering `turns` in order."""
    script = write_script(tmp / "script.jsonl", [{**t, "usage": {"input_tokens": 100, "output_tokens": 10, "cost": 0.001}}
                                                 for t in turns])
    cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", f"method={method}", "model=scripted",
                        f"model.script={script}", "judge=none", f"out={tmp}", f"agent.harness={harness}",
                        "env.sandbox=bwrap", "model.cache=off", *overrides])
    jid = job_id(cfg, "guide")
    run_and_score(cfg, "guide", tmp / jid, jid, None)
    return JobRecord(tmp / jid)


@contextmanager
def host_bait(tmp: Path) -> Iterator[str]:
    """A server on the host's loopback and a host file outside the workspace; yields the shell command
    that goes for both, writing what it got to output/net.txt and output/secret.txt (`missed` reads them)."""
    secret = tmp / "host-secret.txt"
    secret.write_text("HOST-SECRET\n")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield (f"mkdir -p output; curl -s -m 3 http://127.0.0.1:{server.server_address[1]}/ > output/net.txt; "
               f"echo net=$? >> output/net.txt; cat {secret} > output/secret.txt 2>&1; echo cat=$? >> output/secret.txt; ")
    finally:
        server.shutdown()


def missed(out: Path) -> bool:
    """The bait's command got nothing: curl could not connect (the sandbox has no such address, exit 7)
    and the host file was not there to read."""
    secret = (out / "secret.txt").read_text()
    return "net=7" in (out / "net.txt").read_text() and "HOST-SECRET" not in secret and "cat=1" in secret


class _Answers:
    name = "answers"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        return AssistantMessage(content="answered")


def status_at_another_job(token: str, wire: str, path: str) -> int:
    """The HTTP status another job's endpoint (of the same wire) gives a request carrying `token`,
    a job token an agent kept from its own job: 401 when the token died with that job."""
    header = import_module(f"runners.harnesses.bridge.{wire}").KEY_HEADERS[0]

    async def post() -> int:
        bridge = ModelBridge(plain(_Answers()), wire=wire)
        url = await bridge.start()
        try:
            async with aiohttp.ClientSession() as s, s.post(f"{url}{path}", data="{}", headers={header: token}) as r:
                return r.status
        finally:
            await bridge.close()

    return asyncio.run(post())
