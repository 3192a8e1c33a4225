"""vLLM servers as Ray actors, replicas and load spreading, with the llama.cpp server standing in for
vLLM: a `vllm` executable on PATH that logs the command line it was given and serves the embedded
SmolLM2 with llama.cpp on the host and port vLLM was asked for. Ray declares two (logical) GPUs, so
the GPU bookkeeping is real even though no GPU is used. vLLM itself is not run here."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
from pathlib import Path

import httpx
import pytest
import ray

from runners.models import ServedModelConfig, ServerConfig, build_model
from runners.models.embedded import embedded_gguf
from runners.models.server import ServerError
from runners.sweep.model_servers import ReplicaPool, start_replicas, stop_replicas
from tests.helpers import shared_ray

SHIM = """#!{python}
# Stands in for `vllm serve --model MODEL --host H --port P --served-model-name N ...`.
import json, os, sys
args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": args, "cuda": os.environ.get("CUDA_VISIBLE_DEVICES")}}) + "\\n")
assert args[0] == "serve", args
opt = lambda name: args[args.index(name) + 1]
if opt("--served-model-name") == "flaky" and open({log!r}).read().count('"flaky"') > 1:
    sys.exit(3)  # the second replica of "flaky" fails to start
os.execv(sys.executable, [sys.executable, "-m", "llama_cpp.server", "--model", opt("--model"),
         "--model_alias", opt("--served-model-name"), "--host", opt("--host"), "--port", opt("--port"),
         "--n_ctx", opt("--max-model-len"), "--chat_format", "chatml-function-calling", "--n_threads", "1"])
"""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("vllm-shim")
    exe = d / "vllm"
    exe.write_text(SHIM.format(python=sys.executable, log=str(d / "calls.jsonl")))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return d


@pytest.fixture(scope="module")
def gpu_ray(shim):
    """A local Ray with 2 logical GPUs whose workers find the shim as `vllm`."""
    path = f"{shim}{os.pathsep}{os.environ['PATH']}"
    with shared_ray.apart():  # a Ray with GPUs, not the session's
        ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PATH": path, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}})
        yield
        ray.shutdown()


def vllm_cfg(tp: int = 1) -> ServedModelConfig:
    return ServedModelConfig(kind="vllm", name="smol-vllm", max_tokens=16, temperature=0.0, seed=0, max_retries=0, timeout_s=60,
                       server=ServerConfig(model_path=embedded_gguf(), tool_call_parser="hermes", tensor_parallel_size=tp,
                                           ctx_size=1024, startup_timeout_s=90, stop_grace_s=5))


def port_open(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, int(port))) == 0


def gpus_free(expected: float, timeout_s: float = 15.0) -> bool:
    """Ray frees a killed actor's resources asynchronously."""
    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("GPU", 0) != expected:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@ray.remote(num_cpus=0)
def probe(url: str) -> int:
    """From another Ray worker, as an agent on another node would."""
    return httpx.get(f"{url}/models", timeout=10).status_code


def test_vllm_replicas_on_gpus_reachable_spread_and_stopped(gpu_ray, shim):
    replicas = start_replicas(vllm_cfg(), count=2, server_gpus=1.0, public=True)
    try:
        urls = [r.url for r in replicas]
        node_ip = ray.util.get_node_ip_address()
        assert all(u.startswith(f"http://{node_ip}:") and u.endswith("/v1") for u in urls)
        assert len(set(urls)) == 2
        assert ray.get([probe.remote(u) for u in urls]) == [200, 200]  # healthy when start() returned
        assert ray.available_resources().get("GPU", 0) == 0  # each replica holds its GPU

        calls = [json.loads(line) for line in (shim / "calls.jsonl").read_text().splitlines()]
        assert len(calls) == 2
        assert sorted(c["cuda"] for c in calls) == ["0", "1"]  # one GPU each, from Ray
        argv = calls[0]["argv"]
        assert argv[:3] == ["serve", "--model", embedded_gguf()]
        for flag, value in [("--host", "0.0.0.0"), ("--served-model-name", "smol-vllm"),
                            ("--tool-call-parser", "hermes"), ("--tensor-parallel-size", "1"), ("--max-model-len", "1024")]:
            assert argv[argv.index(flag) + 1] == value
        assert "--enable-auto-tool-choice" in argv

        pool = ReplicaPool({"smol-vllm": urls, "gpt": None})
        got = [pool.acquire("smol-vllm") for _ in range(4)]
        assert sorted(got) == sorted(urls * 2)
        reply = build_model(vllm_cfg(), got[0]).complete([{"role": "user", "content": "Say hi."}], [])
        assert reply.usage.output_tokens > 0

        pids = [ray.get(r.actor.pid.remote()) for r in replicas]
        assert all(pids) and all(Path(f"/proc/{p}").exists() for p in pids)
    finally:
        stop_replicas(replicas)
    assert not any(port_open(u) for u in urls)
    assert not any(Path(f"/proc/{p}").exists() for p in pids)
    assert gpus_free(2)


def test_too_few_gpus_fails_at_once(gpu_ray):
    with pytest.raises(
        ServerError, match=r"needs 2 replica\(s\) × 2 GPU\(s\), but the Ray cluster has 2 GPU"
    ):
        start_replicas(vllm_cfg(tp=2), count=2, server_gpus=1.0, public=True)


def test_failed_replica_stops_the_others(gpu_ray, shim):
    flaky = vllm_cfg()
    flaky.name = "flaky"
    with pytest.raises(ServerError, match="exited with code 3"):
        start_replicas(flaky, count=2, server_gpus=1.0, public=True)
    assert gpus_free(2)  # both actors gone
    calls = [json.loads(line)["argv"] for line in (shim / "calls.jsonl").read_text().splitlines()]
    ports = [a[a.index("--port") + 1] for a in calls if a[a.index("--served-model-name") + 1] == "flaky"]
    assert len(ports) == 2
    assert not any(port_open(f"http://127.0.0.1:{p}/v1") for p in ports)  # the healthy one was stopped too


def test_pool_prefers_the_least_busy_replica():
    pool = ReplicaPool({"m": ["a", "b", "c"], "api": "https://api.example/v1", "scripted": None})
    first = [pool.acquire("m") for _ in range(3)]
    assert sorted(first) == ["a", "b", "c"]
    pool.release("m", "b")
    assert pool.acquire("m") == "b"
    pool.release("m", "a")
    pool.release("m", "a")  # releasing twice never goes below zero
    assert pool.in_flight("m") == {"a": 0, "b": 1, "c": 1}
    assert pool.acquire("api") == "https://api.example/v1" and pool.acquire("scripted") is None
    with pytest.raises(ValueError, match="no replica URL"):
        ReplicaPool({"m": []})
