"""A real two-node Ray cluster on this machine: a head and a worker started with `ray start` on
loopback, each with its own custom resources. Model-server replicas land on the nodes that hold the
resources they ask for; a sweep through the real entry point (`cluster=ray`, scripted model) spreads
its jobs over both nodes, and when the worker node is killed mid-sweep its jobs run again on the
head: every job reaches the ledger exactly once, nothing is lost.

Every process of the cluster carries a marker in its environment (workers inherit it from their
raylet), so the test finds and kills exactly its own Ray processes, also when it fails."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import ray

from runners.config.runner import ClusterConfig
from runners.core.record_files import read_json
from runners.core.record_types import Result
from runners.job.identity import JobSpec
from runners.job.run import JobDone
from runners.models import ServedModelConfig, ServerConfig
from runners.models.server import ServerError
from runners.sweep.actors import EpisodeActor
from runners.sweep.ledger import Ledger
from runners.sweep.model_servers import start_replicas, stop_replicas
from runners.sweep.scheduler import Outcome, run_all
from slurm.node import node_command
from tests.conftest import compose_root, write_script

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
MARKER = "RT_TEST_RAY_NODE"
TASKS = ["ws-01-resource-saving-manual", "ws-02-purchase-order-summary", "ws-03-business-travel-guide",
         "ws-04-atlas-action-items"]

# Stands in for `vllm serve --model MODEL --host H --port P --served-model-name N ...`: answers
# /v1/models and the readiness check's one-token chat completion.
SHIM = """#!{python}
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
opt = lambda name: args[args.index(name) + 1]
class Models(BaseHTTPRequestHandler):
    def do_GET(self):
        self.reply(self.path == "/v1/models", {{"object": "list", "data": [{{"id": opt("--served-model-name"), "object": "model"}}]}})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply(self.path == "/v1/chat/completions", {{"object": "chat.completion", "choices": [
            {{"index": 0, "message": {{"role": "assistant", "content": "H"}}, "finish_reason": "length"}}]}})
    def reply(self, found, payload):
        body = json.dumps(payload).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
HTTPServer((opt("--host"), int(opt("--port"))), Models).serve_forever()
"""


@dataclass
class Cluster:
    """A head and a worker node; `env` is what a driver needs to join (the cluster's auth token)."""

    tag: str
    root: Path
    env: dict[str, str]
    address: str = ""
    nodes: dict[str, str] = field(default_factory=dict)  # "head"/"worker" -> Ray node id
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, name: str, resources: dict[str, float]) -> None:
        cmd = node_command(name == "head", self.address or None, str(self.root / name), 1, 0,
                           ["--node-ip-address=127.0.0.1", f"--resources={json.dumps(resources)}"])
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - kept open for the node's life
        env = {**self.env, MARKER: f"{self.tag}-{name}"}
        self.procs.append(
            subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )

    def wait_head(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        log = self.root / "head.log"
        while not (found := re.search(r"--address='([^']+)'", log.read_text(errors="replace"))):
            assert self.procs[0].poll() is None, "ray start --head exited:\n" + log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the head did not start:\n" + log.read_text()[-3000:]
            time.sleep(0.2)
        self.address = found.group(1)

    def pids(self, name: str = "") -> list[int]:
        """Live processes of this cluster (of one node when `name` is given), by their marker."""
        want = f"{MARKER}={self.tag}-{name}".encode()
        found = []
        for p in Path("/proc").iterdir():
            if not p.name.isdigit():
                continue
            try:
                env = (p / "environ").read_bytes()
                state = (p / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and any(v.startswith(want) for v in env.split(b"\0")):
                found.append(int(p.name))
        return found

    def kill(self, name: str = "", timeout_s: float = 30) -> None:
        """SIGKILL every process of the node (or of the cluster) until none is left."""
        deadline = time.monotonic() + timeout_s
        while pids := self.pids(name):
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for proc in self.procs:
                proc.poll()  # reap our own children
            assert time.monotonic() < deadline, f"processes outlived SIGKILL: {pids}"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster(own_ray: None) -> Iterator[Cluster]:
    # a short path: Ray's socket paths have a length limit
    root = Path(tempfile.mkdtemp(prefix="rt-mn-", dir="/tmp"))
    shim = root / "bin"
    shim.mkdir()
    (shim / "vllm").write_text(SHIM.format(python=sys.executable))
    (shim / "vllm").chmod((shim / "vllm").stat().st_mode | stat.S_IEXEC)
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # never ~/.ray/auth_token
    env = {
        **os.environ, **auth,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
        # a dead node is declared dead within seconds, not the default ~30 s
        "RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
        "RAY_health_check_failure_threshold": "5",
    }
    c = Cluster(secrets.token_hex(6), root, env)
    saved = {k: os.environ.get(k) for k in auth}
    try:
        c.start("head", {"head": 1, "model_slot": 1})
        c.wait_head()
        c.start("worker", {"worker": 1, "model_slot": 1})
        _use_auth(auth)
        ray.init(address=c.address, log_to_driver=False, logging_level="WARNING")
        deadline, starts = time.monotonic() + 120, 1
        while len(alive := [n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.monotonic() < deadline, (
                "the worker did not join:\n" + (root / "worker.log").read_text()[-3000:]
            )
            if c.procs[-1].poll() is not None and starts < 3:  # `ray start` gave up (its fixed 30 s, under load): again
                c.kill("worker")
                c.start("worker", {"worker": 1, "model_slot": 1})
                deadline, starts = time.monotonic() + 120, starts + 1
            time.sleep(0.3)
        for n in alive:
            c.nodes["head" if "head" in n["Resources"] else "worker"] = n["NodeID"]
        yield c
    finally:
        ray.shutdown()
        _use_auth(saved)
        c.kill()
        shutil.rmtree(root, ignore_errors=True)


def _use_auth(values: dict[str, str | None]) -> None:
    """Set (None: unset) Ray's auth variables for this process and make Ray re-read them: Ray caches
    its auth mode and token at the first `ray.init`, which another test module may have done."""
    from ray._raylet import AuthenticationTokenLoader, Config

    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def served(resources: dict[str, float]) -> ServedModelConfig:
    return ServedModelConfig(kind="vllm", name="stub", server=ServerConfig(model_path="stub", resources=resources,
                                                                     startup_timeout_s=60, stop_grace_s=2))


def test_replicas_are_placed_on_the_nodes_with_their_resources(cluster: Cluster) -> None:
    both = start_replicas(served({"model_slot": 1}), count=2, server_gpus=0.0, public=True)
    try:  # one model_slot per node: one replica on each, whatever the spreading policy does
        assert sorted(ray.get([r.actor.node_id.remote() for r in both])) == sorted(cluster.nodes.values())
        assert all(httpx.get(f"{r.url}/models", timeout=10).status_code == 200 for r in both)
    finally:
        stop_replicas(both)
    only = start_replicas(served({"worker": 1}), count=1, server_gpus=0.0, public=True)
    try:
        assert ray.get(only[0].actor.node_id.remote()) == cluster.nodes["worker"]
    finally:
        stop_replicas(only)


@pytest.mark.parametrize(
    ("count", "resources", "message"),
    [
        (3, {"model_slot": 1}, r"needs 3 replica\(s\) × 1 'model_slot', but the Ray cluster has 2"),
        (1, {"model_slot": 1.5}, r"no node of the Ray cluster has 1.5 'model_slot'"),
        (1, {"tpu": 1}, r"needs 1 replica\(s\) × 1 'tpu', but the Ray cluster has 0"),
    ],
)
def test_replicas_that_cannot_be_placed_fail_at_once(cluster: Cluster, count: int, resources: dict[str, float],
                                                     message: str) -> None:
    started = time.monotonic()
    with pytest.raises(ServerError, match=message):
        start_replicas(served(resources), count=count, server_gpus=0.0, public=True)
    assert time.monotonic() - started < 20  # not a scheduling hang until the start-up timeout


class Quick(EpisodeActor):
    """A job that only leaves a record behind (the scheduler's part, without an agent)."""

    async def run(self, spec: JobSpec, job_dir: str, model_url: str | None, limit_s: float) -> JobDone:
        Path(job_dir).mkdir(parents=True, exist_ok=True)
        await asyncio.sleep(3.0)  # longer than a loaded machine takes to start the other node's actor
        return JobDone(Result(spec.job_id, "finished"), None)


def test_jobs_spread_over_one_episode_actor_per_cpu(cluster: Cluster, tmp_path: Path) -> None:
    """By default one episode actor per free CPU: one on each 1-CPU node, 12 jobs in flight over
    the two, and every job once."""
    deadline = time.monotonic() + 30  # the replicas of the tests before release their CPUs asynchronously
    while ray.available_resources().get("CPU", 0) < 2:
        assert time.monotonic() < deadline, f"the two nodes' CPUs are not free: {ray.available_resources()}"
        time.sleep(0.2)
    cfg = compose_root(["model=scripted", "judge=none"])
    specs = [JobSpec(f"job-{i}", cfg, f"t{i}") for i in range(14)]
    outcomes: list[Outcome] = []
    sched = ClusterConfig(max_in_flight=12, retries=0)
    run = threading.Thread(target=run_all, args=(specs, tmp_path, sched, {}, lambda s: None, outcomes.append),
                           kwargs={"actor_cls": Quick}, daemon=True)
    run.start()
    run.join(timeout=90)
    assert not run.is_alive(), (
        f"the scheduler stalled with {len(specs) - len(outcomes)} job(s) waiting for an actor"
    )
    assert sorted(o.spec.job_id for o in outcomes) == sorted(s.job_id for s in specs)
    assert {o.status for o in outcomes} == {"ok"}
    assert {o.node for o in outcomes} == set(cluster.nodes.values())


def test_sweep_spreads_over_nodes_and_survives_losing_one(cluster: Cluster, tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 3"}}]},
                                                  {"content": "done"}])
    out = tmp_path / "out"
    cmd = [
        sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
        "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[dci,runningtab]", "grid.seed=[0,1]",
        f"grid.tasks=[{','.join(TASKS)}]", "tracker=none", f"out={out}", "sweep=mn",
        "cluster=ray", f"cluster.address={cluster.address}",
        "cluster.max_in_flight=8",  # one episode actor per 1-CPU node, 4 jobs in flight in each
    ]
    log = tmp_path / "sweep.log"
    env = {**cluster.env, MARKER: f"{cluster.tag}-driver"}
    with open(log, "wb") as f:
        proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True
        )
    sdir = out / "mn"
    worker = cluster.nodes["worker"]
    deadline = time.monotonic() + 150
    while not any(e.get("node") == worker for e in Ledger(sdir).entries()):
        assert proc.poll() is None, (
            "the sweep ended before a job finished on the worker:\n" + log.read_text()[-4000:]
        )
        assert time.monotonic() < deadline, "no job finished on the worker node:\n" + log.read_text()[-4000:]
        time.sleep(0.1)
    before = len(Ledger(sdir).entries())
    cluster.kill("worker")  # raylet, its job actors, everything of that node
    assert before < 16, "the sweep finished before the worker node could be killed"
    try:
        rc = proc.wait(timeout=150)
    finally:
        if proc.poll() is None:
            cluster.kill("driver")
    text = log.read_text(errors="replace")
    assert rc == 0, text[-4000:]

    entries = Ledger(sdir).entries()
    jobs = sorted(d.name for d in sdir.iterdir() if (d / "job.json").exists())
    assert len(jobs) == 16
    assert sorted(e["job_id"] for e in entries) == jobs  # each job exactly once
    assert {e["status"] for e in entries} == {"ok"}, [e for e in entries if e["status"] != "ok"]
    assert {e["node"] for e in entries} == {cluster.nodes["head"], worker}  # both nodes ran jobs
    retried = {e["job_id"]: e for e in entries if e["attempts"] > 1}
    assert retried, "no job was in flight on the worker when it was killed"
    assert {e["node"] for e in retried.values()} == {cluster.nodes["head"]}  # run again elsewhere
    lost = re.findall(r"job (\S+): actor on node (\S+) lost", text)
    assert {job for job, _ in lost} == set(retried)  # every loss was retried, and only losses were
    lost_on = {node for _, node in lost}
    assert worker in lost_on <= {worker, "(starting)"}  # lost on the killed node, never on the head
    for name in jobs:
        assert read_json(sdir / name / "result.json")["stop_reason"] == "finished"
        assert (sdir / name / "scores.json").is_file()
    assert cluster.pids("worker") == [] and cluster.pids("driver") == []
