"""A fault inside the app answers like every other error: JSON with a message, the security headers and
`no-store` (the middlewares outside this one add them), and one line in the log, not a traceback.

Starlette answers an exception no handler takes in its outermost layer, outside every middleware, so
that answer would lack the headers the rest of the site sends; this layer, inside them all, answers first."""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("anatomy")
BODY = b'{"detail":{"message":"internal error"}}'


class InternalErrors:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:  # any fault: the one answer below
            where = f"{scope.get('method', '')} {scope.get('path', '')[:200]}"
            log.error("500 %s: %s: %s", where, type(exc).__name__, str(exc)[:300])
            if started:  # the answer is under way: only closing it is left
                return
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
            await send({"type": "http.response.start", "status": 500, "headers": headers})
            await send({"type": "http.response.body", "body": BODY})
