"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1 (tests/helpers/http_stub.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import traceback

import pytest

from runners.core.messages import ContextLengthError, ModelError
from runners.models import ApiModelConfig, ServedModelConfig, build_model
from runners.models.openai_compat import OpenAICompatModel
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call

KEY_ENV = "RUNNINGTAB_TEST_KEY"
SECRET = "sk-test-0123456789abcdef-SECRET"
TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]


@pytest.fixture
def stub():
    with StubServer() as s:
        yield s


@pytest.fixture(autouse=True, params=["complete", "acomplete"])
def transport(request, monkeypatch):
    """Every test runs on both paths: `complete` (sync) and `acomplete` (a sweep's episodes)."""
    if request.param == "acomplete":
        if request.node.get_closest_marker("sync_only"):
            pytest.skip("the sync path's own behaviour")
        monkeypatch.setattr(OpenAICompatModel, "complete", lambda self, m, t: asyncio.run(_acomplete_once(self, m, t)))
    return request.param


async def _acomplete_once(model: OpenAICompatModel, messages, tools):
    """One awaited call on a loop of its own, its connections closed before the loop ends."""
    try:
        return await model.acomplete(messages, tools)
    finally:
        if model._ahttp is not None:
            await model._ahttp[1].aclose()


def make(stub: StubServer, **kw) -> OpenAICompatModel:
    fields = {"kind": "openai", "name": "test-model", "base_url": stub.url, "backoff_base_s": 0.05,
              "backoff_max_s": 0.2, "timeout_s": 5.0, "max_retries": 3, **kw}
    model = build_model(ApiModelConfig(**fields))
    assert isinstance(model, OpenAICompatModel)
    return model


def test_content_usage_cost_and_request_body(stub):
    stub.push(Reply(body=completion("hello", usage=(1000, 200))))
    model = make(stub, temperature=0.0, seed=7, max_tokens=64, extra_body={"reasoning_effort": "low"},
                 price_in_per_mtok=2.0, price_out_per_mtok=10.0)
    reply = model.complete(MESSAGES, TOOLS)
    assert reply.content == "hello" and reply.tool_calls == []
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (1000, 200)
    assert reply.usage.cost == pytest.approx(1000 * 2.0 / 1e6 + 200 * 10.0 / 1e6)
    assert reply.latency_s > 0
    [req] = stub.requests
    assert req["path"] == "/v1/chat/completions"
    body = req["body"]
    assert body["model"] == "test-model" and body["messages"] == MESSAGES and body["tools"] == TOOLS
    assert (body["temperature"], body["seed"], body["max_tokens"], body["reasoning_effort"]) == (0.0, 7, 64, "low")
    assert body["tool_choice"] == "auto"
    assert "top_p" not in body  # unset fields are not sent


def test_a_negative_token_count_from_the_server_counts_zero(stub):
    """A count the record's reader refuses (result.json `tokens_in` >= 0) never reaches the record."""
    stub.push(Reply(body=completion("hello", usage=(-1000, -5))))
    reply = make(stub, price_in_per_mtok=2.0, price_out_per_mtok=10.0).complete(MESSAGES, TOOLS)
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cost) == (0, 0, 0.0)


def test_no_tools_sends_no_tool_fields(stub):
    stub.push(Reply(body=completion("plain")))
    make(stub).complete(MESSAGES, [])
    assert "tools" not in stub.requests[0]["body"] and "tool_choice" not in stub.requests[0]["body"]


def test_parallel_tool_calls_keep_raw_arguments(stub):
    calls = [tool_call("c1", "bash", '{"command": "ls"}'), tool_call("c2", "read", '{"path": "a.txt"}')]
    stub.push(Reply(body=completion(None, calls)))
    reply = make(stub).complete(MESSAGES, TOOLS)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("c1", "bash", '{"command": "ls"}'), ("c2", "read", '{"path": "a.txt"}')]
    assert reply.content is None
    assert reply.to_message()["tool_calls"][1]["function"]["arguments"] == '{"path": "a.txt"}'


def test_malformed_tool_json_is_kept_raw(stub):
    bad = '{"command": "ls -la", oops'
    stub.push(Reply(body=completion(None, [tool_call("c1", "bash", bad)])))
    [call] = make(stub).complete(MESSAGES, TOOLS).tool_calls
    assert call.arguments == bad and call.name == "bash"


def test_missing_ids_and_object_arguments_are_normalised(stub):
    calls = [{"type": "function", "function": {"name": "bash", "arguments": {"command": "pwd"}}}] * 2
    stub.push(Reply(body=completion(None, calls)))
    reply = make(stub).complete(MESSAGES, TOOLS)
    assert [c.id for c in reply.tool_calls] == ["call_1", "call_2"]
    assert json.loads(reply.tool_calls[0].arguments) == {"command": "pwd"}


def test_provider_extras_kept_and_echoed_back(stub):
    sig = {"google": {"thought_signature": "abc"}}
    call = {**tool_call("c1", "bash", "{}"), "extra_content": sig}
    stub.push(Reply(body=completion("x", [call], reasoning_content="thinking...")),
              Reply(body=completion("done")))
    model = make(stub, echo_extra=["reasoning_content"])
    reply = model.complete(MESSAGES, TOOLS)
    assert reply.extra["reasoning_content"] == "thinking..."
    assert reply.extra["tool_call_extra"] == {"c1": {"extra_content": sig}}
    history = [*MESSAGES, {**reply.to_message(), "extra": reply.extra},
               {"role": "tool", "tool_call_id": "c1", "content": "out"}]
    model.complete(history, TOOLS)
    sent = stub.requests[1]["body"]["messages"][2]
    assert sent["reasoning_content"] == "thinking..." and "extra" not in sent
    assert sent["tool_calls"][0]["extra_content"] == sig


def test_retry_after_is_honoured(stub):
    stub.push(Reply(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "1"}),
              Reply(body=completion("after wait")))
    start = time.monotonic()
    reply = make(stub, backoff_base_s=0.01).complete(MESSAGES, TOOLS)
    assert reply.content == "after wait"
    assert len(stub.requests) == 2
    assert stub.requests[1]["time"] - stub.requests[0]["time"] >= 1.0
    assert reply.latency_s >= 1.0 and time.monotonic() - start >= 1.0


def test_server_error_then_success(stub):
    stub.push(Reply(500, {"error": {"message": "boom"}}), Reply(503, "upstream down"), Reply(body=completion("ok")))
    assert make(stub).complete(MESSAGES, TOOLS).content == "ok"
    assert len(stub.requests) == 3


def test_gives_up_after_max_retries(stub):
    stub.push(*[Reply(502, "bad gateway")] * 3)
    with pytest.raises(ModelError, match=r"gave up after 3 attempts.*502"):
        make(stub, max_retries=2).complete(MESSAGES, TOOLS)
    assert len(stub.requests) == 3


def test_hung_reply_times_out_and_retries(stub):
    stub.push(Reply(body=completion("late"), delay_s=3.0), Reply(body=completion("prompt")))
    reply = make(stub, timeout_s=0.5).complete(MESSAGES, TOOLS)
    assert reply.content == "prompt" and len(stub.requests) == 2


def test_hung_replies_end_in_model_error(stub):
    stub.push(*[Reply(body=completion("late"), delay_s=2.0)] * 2)
    with pytest.raises(ModelError, match="no reply within 0.3s"):
        make(stub, timeout_s=0.3, max_retries=1).complete(MESSAGES, TOOLS)


def test_connection_refused_is_retried_then_model_error():
    with StubServer() as s:
        url = s.url
    model = build_model(ApiModelConfig(kind="openai", name="m", base_url=url, max_retries=1, backoff_base_s=0.01))
    with pytest.raises(ModelError, match="connection error"):
        model.complete(MESSAGES, TOOLS)


@pytest.mark.parametrize("status,body", [
    (400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9000",
                     "code": "context_length_exceeded"}}),
    (400, {"error": {"message": "The input token count (1200000) exceeds the maximum number of tokens allowed"}}),
    (200, {"error": {"message": "prompt is too long", "code": 400}}),
])
def test_context_length_is_not_retried(stub, status, body):
    stub.push(Reply(status, body), Reply(body=completion("must not be reached")))
    with pytest.raises(ContextLengthError):
        make(stub).complete(MESSAGES, TOOLS)
    assert len(stub.requests) == 1


def test_other_client_errors_are_not_retried(stub):
    stub.push(Reply(404, {"error": {"message": "model not found"}}))
    with pytest.raises(ModelError, match="HTTP 404.*model not found") as e:
        make(stub).complete(MESSAGES, TOOLS)
    assert not isinstance(e.value, ContextLengthError) and len(stub.requests) == 1


def test_redirects_are_not_followed(stub):
    stub.push(Reply(307, {"error": {"message": "moved"}}, headers={"Location": stub.url + "/chat/completions"}),
              Reply(body=completion("followed")))
    with pytest.raises(ModelError, match="HTTP 307"):
        make(stub).complete(MESSAGES, TOOLS)
    assert len(stub.requests) == 1


def test_proxy_from_the_environment_is_used(stub, monkeypatch):
    """HTTP_PROXY reaches both transports: the request goes to the proxy with the absolute URL."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = stub.url.removesuffix("/v1")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)
    stub.push(Reply(body=completion("via proxy")))
    model = make(stub, base_url="http://api.example.invalid/v1")
    assert model.complete(MESSAGES, TOOLS).content == "via proxy"
    assert stub.requests[0]["path"] == "http://api.example.invalid/v1/chat/completions"


def test_malformed_200_is_retried(stub):
    stub.push(Reply(body="<html>gateway</html>"), Reply(body={"choices": []}), Reply(body={"choices": ["x"]}),
              Reply(body=completion("fine")))
    assert make(stub).complete(MESSAGES, TOOLS).content == "fine"
    assert len(stub.requests) == 4


def test_api_key_sent_in_header_but_never_in_errors(stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    echo = {"error": {"message": f"Incorrect API key provided: Bearer {SECRET}"}}
    stub.push(Reply(body=completion("ok")), Reply(401, echo), *[Reply(500, {"error": {"message": SECRET}})] * 2)
    model = make(stub, api_key_env=KEY_ENV, max_retries=1)
    model.complete(MESSAGES, TOOLS)
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    for _ in range(2):
        with pytest.raises(ModelError) as e:
            model.complete(MESSAGES, TOOLS)
        assert SECRET not in str(e.value) and SECRET not in repr(e.value)
        assert "[REDACTED]" in str(e.value)
        assert e.value.__cause__ is None
        ours = e.value.__traceback__.tb_next  # skip this test's own frame (it holds SECRET)
        shown = "".join(traceback.TracebackException(type(e.value), e.value, ours, capture_locals=True).format())
        assert "openai_compat.py" in shown and SECRET not in shown  # not even in the client's frames' locals
    assert SECRET not in repr(model) and SECRET not in repr(model.cfg) and SECRET not in str(vars(model))


def test_missing_key_env_names_the_variable(stub, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ModelError, match=f"set the environment variable {KEY_ENV}"):
        make(stub, api_key_env=KEY_ENV).complete(MESSAGES, TOOLS)
    assert stub.requests == []


def test_invalid_key_value_is_refused_without_echoing_it(stub, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET + "\u2019x")
    with pytest.raises(ModelError, match=f"value of {KEY_ENV} is not a valid API key") as e:
        make(stub, api_key_env=KEY_ENV).complete(MESSAGES, TOOLS)
    assert SECRET not in repr(e.value) and stub.requests == []


def test_base_url_without_scheme_is_rejected():
    with pytest.raises(ValueError, match="must start with http"):
        build_model(ApiModelConfig(kind="openai", name="m", base_url="api.openai.com/v1"))


def test_no_key_env_sends_no_authorization(stub):
    stub.push(Reply(body=completion("ok")))
    make(stub).complete(MESSAGES, TOOLS)
    assert "Authorization" not in stub.requests[0]["headers"]


@pytest.mark.sync_only
def test_concurrency_cap_per_endpoint_is_shared_by_clients():
    with StubServer(default=Reply(body=completion("ok"), delay_s=0.3)) as stub:
        models = [make(stub, concurrency=2) for _ in range(3)]  # separate clients, one endpoint
        errors: list[BaseException] = []

        def run(m):
            try:
                m.complete(MESSAGES, TOOLS)
            except BaseException as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(models[i % 3],)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(stub.requests) == 6
        assert stub.max_in_flight == 2


@pytest.mark.sync_only
def test_concurrency_cap_is_shared_by_the_episodes_of_one_loop():
    """Episodes of one actor are tasks of one loop: the cap holds across their clients."""
    with StubServer(default=Reply(body=completion("ok"), delay_s=0.3)) as stub:
        models = [make(stub, concurrency=2) for _ in range(3)]

        async def main() -> list[str | None]:
            replies = await asyncio.gather(*(models[i % 3].acomplete(MESSAGES, TOOLS) for i in range(6)))
            for m in models:
                await m.aclose()
            return [r.content for r in replies]

        started = time.monotonic()
        assert asyncio.run(main()) == ["ok"] * 6
        assert len(stub.requests) == 6
        assert stub.max_in_flight == 2
        assert time.monotonic() - started >= 0.9  # three rounds of two: the cap, not a serial loop


@pytest.mark.sync_only
def test_async_calls_run_concurrently_on_one_loop():
    """Without a cap, 8 awaited calls of 0.3 s overlap instead of taking 8 × 0.3 s."""
    with StubServer(default=Reply(body=completion("ok"), delay_s=0.3)) as stub:
        model = make(stub)

        async def main() -> None:
            await asyncio.gather(*(model.acomplete(MESSAGES, TOOLS) for _ in range(8)))
            await model.aclose()

        asyncio.run(main())
        assert stub.max_in_flight >= 6  # serial calls would give 1 (the stub may accept the last late)


def test_build_model_errors():
    with pytest.raises(ValueError, match="unknown model kind 'nope'; valid model kinds: openai, llamacpp, vllm, scripted"):
        build_model(ApiModelConfig(kind="nope"))
    with pytest.raises(ValueError, match="served"):
        build_model(ServedModelConfig(kind="vllm", name="m"))
    with pytest.raises(ValueError, match="model.base_url"):
        build_model(ApiModelConfig(kind="openai", name="m"))


def test_retry_after_forms_and_backoff_bounds():
    from email.utils import formatdate

    from runners.models.retry import backoff_s, is_context_length, retry_after_s

    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert 9.0 <= retry_after_s({"retry-after": formatdate(1_000_010, usegmt=True)}, now=1_000_000) <= 10.0
    assert retry_after_s({"retry-after": "soon"}) is None and retry_after_s({}) is None
    assert all(0.5 <= backoff_s(0, 1.0, 60.0) <= 1.0 for _ in range(50))
    assert all(30.0 <= backoff_s(10, 1.0, 60.0) <= 60.0 for _ in range(50))
    assert not is_context_length(429, '{"error": {"message": "Rate limit reached for tokens per min"}}')
    assert not is_context_length(200, "maximum context length")


def test_each_call_sends_the_whole_body_as_json_dumps_gives_it(stub):
    """The body is assembled from kept pieces (the messages' JSON, the rest around them while the
    tools list is the same): every call of a growing history, with the tools changed between calls,
    sends what `request_body` gives, in its key order."""
    from runners.models.wire import request_body

    model = make(stub, temperature=0.5, max_tokens=32, extra_body={"reasoning": {"effort": "low"}, "top_k": 3})
    history = [{"role": "system", "content": "sys é"}, {"role": "user", "content": "hi \ud800 (a lone surrogate)"}]
    for tools in (TOOLS, TOOLS, [], [*TOOLS, {"type": "function", "function": {"name": "read"}}]):
        stub.push(Reply(body=completion("ok")))
        reply = model.complete(history, tools)
        want = request_body(model.cfg, history, tools)
        got = stub.requests[-1]["body"]
        assert got == json.loads(json.dumps(want)) and list(got) == list(want)
        history = [*history, reply.to_message(), {"role": "user", "content": f"again {len(history)}"}]
