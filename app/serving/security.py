"""Security headers on every response, as a pure ASGI middleware (it never buffers a stream).

The Content-Security-Policy allows only the site's own scripts and styles; the one inline script,
the import map, is allowed by the sha256 of its exact text. Responses that set their own policy
keep it. No page may be framed by another site (`frame-ancestors 'none'`, `X-Frame-Options: DENY`: a
clickjacking page could lay the article's controls under its own), except the routes in FRAMABLE: the
embed view (app/routes/embed.py), a read-only picture of one state made to sit in a slide or a course page, may be
framed by any site, since it has nothing a hidden frame could be tricked into doing. A Permissions-Policy
switches off the browser features the site never uses, and an error
response (status 400 and above) that says nothing of caching is marked `Cache-Control: no-store`, so no
cache keeps a refusal or an outage.
"""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import urlsplit, urlunsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def csp_hash(inline_script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(inline_script.encode()).digest()).decode() + "'"


# The routes another site may frame: the embed view only (see the module's docstring).
FRAMABLE = frozenset({"/embed"})
NO_FRAMING, ANY_FRAMING = "frame-ancestors 'none'", "frame-ancestors *"


def content_security_policy(*script_hashes: str) -> str:
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self' " + " ".join(script_hashes),
            "style-src 'self'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            NO_FRAMING,
        ]
    )


# Every powerful feature off for the site and anything it could embed: it reads no sensor, camera or place.
PERMISSIONS_POLICY = ", ".join(
    f"{f}=()"
    for f in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "encrypted-media",
        "geolocation",
        "gyroscope",
        "hid",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "serial",
        "usb",
        "xr-spatial-tracking",
        "browsing-topics",
    )
)


class SecurityHeaders:
    def __init__(self, app: ASGIApp, csp: str, framable: frozenset[str] = FRAMABLE):
        self.app = app
        self.framable = framable
        self.headers = [
            (b"content-security-policy", csp.encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"no-referrer"),
            (b"x-frame-options", b"DENY"),
            (b"cross-origin-opener-policy", b"same-origin"),
            (b"permissions-policy", PERMISSIONS_POLICY.encode()),
        ]
        # a framable route's: the same policy with any ancestor allowed, and no X-Frame-Options
        self.framable_headers = [
            (k, v.replace(NO_FRAMING.encode(), ANY_FRAMING.encode()))
            for k, v in self.headers
            if k != b"x-frame-options"
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        headers = self.framable_headers if scope["path"] in self.framable else self.headers

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                if 300 <= message["status"] < 400:  # Starlette writes its redirects from the Host header
                    message = {**message, "headers": [
                        (k, path_only(v) if k.lower() == b"location" else v) for k, v in message.get("headers", [])
                    ]}  # fmt: skip
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in headers if k not in present]
                if message["status"] >= 400 and b"cache-control" not in present:
                    extra.append((b"cache-control", b"no-store"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def path_only(location: bytes) -> bytes:
    """A redirect's Location as its path and query ("/static/" for "http://any.host/static/"): the app's own
    redirects (a trailing slash added or dropped) are written from the request's Host header, so that
    `Host: evil.example` sent the reader, or a cache in front, to http://evil.example/static/."""
    parts = urlsplit(location.decode("latin-1"))
    path = "/" + parts.path.lstrip("/")  # one leading slash: "//host/x" would name another host
    return urlunsplit(("", "", path, parts.query, "")).encode("latin-1")
