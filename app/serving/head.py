"""HEAD answered wherever GET is, as a pure ASGI middleware (it never buffers a stream).

A HEAD request runs as the GET it stands for, so its status and headers (ETag, Content-Type,
Content-Length, Content-Encoding, the security headers) are exactly the GET's; the body is dropped on
the way out. Routes declare GET only; uptime checks that use HEAD see the same answer as a browser.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        finished = False

        async def send_headers_only(message: Message) -> None:
            nonlocal finished
            if message["type"] == "http.response.body":
                if finished:
                    return
                if message.get("more_body", False):
                    return  # the body goes nowhere; only its end is told
                finished = True
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
