"""The test stub's count of requests in flight (tests/helpers/http_stub.py), which the concurrency
caps' tests assert on: a request is out of the count by the time its client has the reply, so a
client that sends its next request at once is never counted twice."""

from __future__ import annotations

import http.client
from collections.abc import Callable

import pytest

from tests.helpers.http_stub import Reply, StubServer, trickle

REPLIES: dict[str, Callable[[], Reply]] = {
    "body": lambda: Reply(body={"ok": 1}),
    "streamed with a length": lambda: trickle({"ok": 1}, pause_s=0),
    "chunked": lambda: Reply(stream=iter([b"a", b"b"])),
}


@pytest.mark.parametrize("kind", list(REPLIES))
def test_a_request_is_out_of_the_count_once_its_reply_is_read(kind: str) -> None:
    with StubServer() as stub:
        host, port = stub.url.split("//")[1].split("/")[0].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        counted_after = 0
        for _ in range(300):
            stub.push(REPLIES[kind]())
            conn.request("POST", "/v1/chat/completions", body=b"{}", headers={"Content-Length": "2"})
            conn.getresponse().read()
            counted_after += stub.in_flight
        conn.close()
        assert (counted_after, len(stub.requests), stub.max_in_flight) == (0, 300, 1)
