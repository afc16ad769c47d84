"""How much of the service one client may hold, and the answer when it asks for more.

One client address may hold at most `settings.connections_per_client` connections (counted by the run
command's protocol, app/startup/serve.py) and as many requests in flight (counted here, after a trusted
proxy has named the client behind it). The default, 400, is above what a class of 60 behind one school
address opens at once: Chromium keeps at most six connections to a host, 60 × 6 = 360. The whole process
serves at most `MAX_CONNECTIONS`.

A refused request is answered here, inside the security headers, as every other refusal is: 503 JSON with
`Retry-After`, `no-store` and `Connection: close`; the page then computes in the browser and says that the
server is busy (static/js/api.js).
"""

from __future__ import annotations

import functools
import ipaddress
from collections import Counter

from starlette.types import ASGIApp, Receive, Scope, Send

from app.settings import settings

MAX_CONNECTIONS = 1024  # a process's open connections, all clients together
REFUSED = "anatomy.refused"  # the scope extension the protocol sets on a connection over a limit
RETRY_AFTER_S = 5
TOO_MANY = "too many connections from your address; try again in a few seconds"
FULL = "the server is serving as many connections as it can; try again in a few seconds"
BUSY_BODY = b'{"detail":{"message":"%s"}}'


class TrustedProxies:
    """The addresses (or networks, `10.0.0.0/8`; `*` for any) whose X-Forwarded-For names the client:
    `settings.trusted_proxies`, comma-separated; empty trusts none."""

    def __init__(self, spec: str):
        items = [s.strip() for s in spec.split(",") if s.strip()]
        self.any = "*" in items
        self.networks = [ipaddress.ip_network(s, strict=False) for s in items if s != "*"]

    def __contains__(self, host: str) -> bool:
        if self.any:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in n for n in self.networks)

    def __bool__(self) -> bool:
        return self.any or bool(self.networks)


@functools.lru_cache(maxsize=4)
def _parsed(spec: str) -> TrustedProxies:
    return TrustedProxies(spec)


def trusted_proxies() -> TrustedProxies:
    """The setting as it is now, parsed once per value (the protocol asks at every connection)."""
    return _parsed(settings.trusted_proxies)


def refused_with(app: ASGIApp, reason: str) -> ASGIApp:
    """`app` with every request marked as refused for `reason` (ClientLimits answers it)."""

    async def refused(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, "extensions": {**(scope.get("extensions") or {}), REFUSED: reason}}, receive, send)

    return refused


async def busy(send: Send, message: str) -> None:
    body = BUSY_BODY % message.encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER_S).encode()),
        (b"cache-control", b"no-store"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ClientLimits:
    """Answers a request the protocol refused, and refuses one more request in flight from a client that
    has `settings.connections_per_client` already (behind a trusted proxy, the protocol cannot count them)."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.in_flight: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = (scope.get("extensions") or {}).get(REFUSED)
        if reason:
            await busy(send, reason)
            return
        client = (scope.get("client") or ("", 0))[0]
        if self.in_flight[client] >= settings.connections_per_client:
            await busy(send, TOO_MANY)
            return
        self.in_flight[client] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight[client] -= 1
            if not self.in_flight[client]:
                del self.in_flight[client]
