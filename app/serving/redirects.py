"""The app's own redirects (a path with or without its trailing slash: /static → /static/) name only the path.
Starlette writes them as absolute URLs from the request's Host header, so `Host: evil.example` sent a reader's
browser, or a cache in front, to http://evil.example/static/."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class PathRedirects:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def relative(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                headers = [(k, _path_only(v) if k.lower() == b"location" else v) for k, v in message.get("headers", [])]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, relative)


def _path_only(location: bytes) -> bytes:
    """A Location as its path and query: "/static/" for "http://any.host/static/"."""
    parts = urlsplit(location.decode("latin-1"))
    path = "/" + parts.path.lstrip("/")  # one leading slash: "//host/x" would name another host
    return urlunsplit(("", "", path, parts.query, "")).encode("latin-1")
