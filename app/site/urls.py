"""Where the static site's pages point: every root-relative URL a page names made relative to the page's own
file, so that the built folder works at any path of a host."""

from __future__ import annotations

import re

# Every URL a page names is written relative to the page's own file, and the page says where the folder's
# root lies from it (<meta name="anatomy-root">, read by static/js/site.js siteUrl for what the scripts ask):
# the folder then works at any path of a host (a course site's /~name/anatomy/, a project page's /<repo>/).
SITE_TAG = '<meta name="anatomy-site" content="static">'
ROOT_TAG = '<meta name="anatomy-root" content="{}">'
LOCAL_URL = re.compile(r'(\s(?:href|src|action|data-url|poster)=")(/(?!/)[^"]*)"')
IMPORT_MAP = re.compile(r'<script type="importmap">.*?</script>', re.S)
MAPPED_URL = re.compile(r'"(/(?!/)[^"]*)"')


def page_root(url: str) -> str:
    """The folder's root as seen from the page at `url` (its file is <url>/index.html): ./, ../, ../../ …"""
    return "../" * len([part for part in url.split("/") if part]) or "./"


def relative_urls(page: bytes, url: str, pages: frozenset[str]) -> bytes:
    """The page at `url` with each root-relative URL it names made relative to its file (a page's own path
    with its closing slash, as its folder is answered), and the root's tag beside the site's."""
    root = page_root(url)

    def relative(address: str) -> str:
        cut = min((i for i in (address.find("?"), address.find("#")) if i >= 0), default=len(address))
        path, rest = address[:cut], address[cut:]
        return root + (path + "/" if path in pages and path != "/" else path).lstrip("/") + rest

    text = page.decode()
    text = LOCAL_URL.sub(lambda m: f'{m.group(1)}{relative(m.group(2))}"', text)
    text = IMPORT_MAP.sub(lambda m: MAPPED_URL.sub(lambda u: f'"{relative(u.group(1))}"', m.group(0)), text)
    return text.replace(SITE_TAG, SITE_TAG + ROOT_TAG.format(root), 1).encode()
