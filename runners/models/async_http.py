"""The HTTP transport of the OpenAI-compatible client: aiohttp, for awaited and blocking calls alike.

An episode actor holds hundreds of episodes on one event loop, so the client's own CPU per call is
the sweep's ceiling. With 64 episodes on one loop, a client per job, httpx's AsyncClient took
1.5 ms of CPU per call and aiohttp (a C HTTP parser) 0.5 ms (`python -m bench.http_clients`).
What the client relies on: no redirects followed, proxies from the environment (HTTP_PROXY,
HTTPS_PROXY, NO_PROXY), the shared TLS context, a connect timeout and a timeout between bytes of
the reply, and a cap on the reply's bytes (declared or read: a reply over it is never read
further). A failure is one of `Timeout` (retried), `Unreachable` (retried), `Failure` (not
retried) or `TooLarge` (a `Failure`). The whole call's deadline is the caller's (it cancels `post`).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

# what aiohttp's proxy lookup reads of the environment (its schemes, the bypass list, netrc, CGI's marker)
PROXY_ENV = tuple(n for s in ("http", "https", "ws", "wss", "no") for n in (f"{s}_proxy", f"{s.upper()}_PROXY")) + ("NETRC", "REQUEST_METHOD")
_proxies: dict[tuple[str, tuple[str | None, ...]], tuple[URL | None, aiohttp.BasicAuth | None]] = {}


class Timeout(Exception):
    """No connection or no reply bytes within the timeout."""


class Unreachable(Exception):
    """The connection failed or broke, or the reply was cut short: worth another attempt."""


class Failure(Exception):
    """A request that cannot be sent as it is (e.g. an invalid URL)."""


class TooLarge(Failure):
    """The reply is longer than the cap: what came is dropped, the rest never read."""


@dataclass
class HttpReply:
    """What the client reads of a reply (the fields of an httpx.Response it uses). Its repr, like
    httpx's, shows no body: a traceback printing locals must not show what the server echoed."""

    status_code: int
    text: str = field(repr=False)
    headers: Mapping[str, str] = field(repr=False)


class AsyncTransport:
    """One connection pool on the running event loop; `post` sends one request and reads its reply."""

    def __init__(self, timeout_s: float, connect_s: float, tls: ssl.SSLContext) -> None:
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_s, sock_read=timeout_s)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ssl=tls),  # no cap of its own: endpoint_slot caps
            timeout=self._timeout,
            trust_env=False,  # True would read ~/.netrc and the proxy settings in a thread per request
            cookie_jar=aiohttp.DummyCookieJar(),  # stateless, as every call of an episode is
        )
        self._proxies: dict[str, tuple[URL | None, aiohttp.BasicAuth | None]] = {}  # this transport's, by URL

    async def post(self, url: str, body: bytes, headers: dict[str, str], max_bytes: int) -> HttpReply:
        """The reply to one request, read only up to `max_bytes` (`TooLarge` past it)."""
        proxy, proxy_auth = self._proxies.get(url) or self._proxy(url)
        try:
            async with self._session.post(
                url, data=body, headers=headers, allow_redirects=False, proxy=proxy, proxy_auth=proxy_auth
            ) as resp:
                data = await _read_capped(resp, max_bytes)
                return HttpReply(resp.status, data.decode(resp.charset or "utf-8", errors="replace"), resp.headers)
        except TimeoutError as e:  # aiohttp's timeouts are TimeoutErrors (before their base classes)
            raise Timeout(str(e)) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as e:
            raise Unreachable(f"{type(e).__name__}: {e}") from None
        except (aiohttp.ClientError, ValueError, LookupError) as e:  # bad URL, unknown charset
            raise Failure(f"{type(e).__name__}: {e}") from None

    def _proxy(self, url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
        """The proxy the environment names for `url` (None: direct), looked up once per process for
        each URL and proxy setting (the lookup reads the whole environment and ~/.netrc: a job's first
        call paid it, with a client per job)."""
        key = (url, tuple(os.environ.get(n) for n in PROXY_ENV))
        if key not in _proxies:
            try:
                _proxies[key] = get_env_proxy_for_url(URL(url))
            except LookupError:  # no proxy set, or NO_PROXY names the host
                _proxies[key] = (None, None)
        self._proxies[url] = _proxies[key]  # the settings of its first call: the environment is read once per transport (a job's)
        return _proxies[key]

    async def aclose(self) -> None:
        await self._session.close()


async def _read_capped(resp: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The body, or `TooLarge` as soon as its declared length or the bytes read pass `max_bytes`
    (closing the connection: the rest is never read)."""
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        resp.close()
        raise TooLarge(f"it declares {declared} bytes")
    if declared is not None:  # the parser reads no further than the declared length: one read, not a loop
        return await resp.read()
    data = bytearray()
    async for piece in resp.content.iter_any():
        data += piece
        if len(data) > max_bytes:
            resp.close()
            raise TooLarge(f"{len(data)} bytes read, and more to come")
    return bytes(data)
