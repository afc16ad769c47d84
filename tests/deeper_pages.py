"""What the go-deeper pages' tests share (tests/page/test_deeper.py, tests/page/test_deeper_page.py): the figures read
off a page's HTML or DOM text, the page module's tables run under Node and formatted as the page formats them,
the torch model run forward on an input's rows, and a cell's check to its last printed digit."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import torch

from article.format import format_number
from model.vocab import VOCAB
from tests.in_page import node_script

ROOT = Path(__file__).resolve().parents[1]


class Figures(HTMLParser):
    """The page's go-deeper figures: per data-deeper key, its title, caption, column labels and cells' text."""

    def __init__(self):
        super().__init__()
        self.figs, self.cur, self.cell, self.where, self.svg = {}, None, None, None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "data-deeper" in a:
            self.cur = self.figs[a["data-deeper"]] = {"title": "", "caption": "", "head": [], "rows": []}
        elif self.cur is not None and tag in ("h3", "figcaption"):
            self.where = "title" if tag == "h3" else "caption"
        elif self.cur is not None and tag == "tr":
            self.cur["rows"].append([])
        elif self.cur is not None and tag in ("th", "td"):
            self.cell = []
        self.svg += tag == "svg"

    def handle_endtag(self, tag):
        if self.cur is None:
            return
        if tag in ("th", "td") and self.cell is not None:
            self.cur["rows"][-1].append(re.sub(r"[ \t\r\n]+", " ", "".join(self.cell)).strip())  # not the thin space
            self.cell = None
        elif tag in ("h3", "figcaption"):
            self.where = None
        elif tag == "figure":
            self.cur["head"] = self.cur["rows"].pop(0)
            self.cur = None
        self.svg -= tag == "svg"

    def handle_data(self, data):
        if self.cell is not None and not self.svg:
            self.cell.append(data)
        elif self.where:
            self.cur[self.where] += data


def figures_of(html: str) -> dict:
    p = Figures()
    p.feed(html)
    return p.figs


def shown_tables(tables: list[dict]) -> dict:
    """The module's tables as the page shows them: figures_of's form, each cell formatted by its column."""
    return {
        t["id"]: {
            "title": t["title"],
            "caption": t["caption"],
            "head": [c["name"] for c in t["columns"]],
            "rows": [
                [format_number(v, c["format"]) for v, c in zip(row, t["columns"], strict=True)] for row in t["rows"]
            ],
        }
        for t in tables
    }


def module_tables(client, folder: Path, numbers) -> dict:
    """static/compute/topic_tables.js run under Node over the API's traces and recipe: number → {slug: tables}."""
    (folder / "recipe-2017.json").write_bytes(client.get("/api/live").content)
    cases = [{"name": str(n), "model": "2017", "trace": client.get(f"/api/trace?input={n}").json()} for n in numbers]
    (folder / "cases.json").write_text(json.dumps(cases))
    return {int(k): v for k, v in node_script("topic_tables.mjs", folder).items()}


@torch.no_grad()
def forward(model, doc: dict) -> dict:
    src = torch.tensor([VOCAB.ids(doc["source_tokens"])])
    tgt = torch.tensor([VOCAB.ids(doc["target_tokens"])])
    seen = {}
    enc0 = model.encoder_layers[0]
    hooks = [
        enc0.sublayer[0].norm.register_forward_hook(lambda m, i, o: seen.update(sum=i[0][0], ln=o[0])),
        enc0.self_attn.register_forward_pre_hook(lambda m, i: seen.update(x0=i[0])),
        model.decoder_layers[-1].register_forward_hook(lambda m, i, o: seen.update(h=o[0])),
    ]
    model.eval()
    logits = model(src, tgt)[0].double()
    for h in hooks:
        h.remove()
    a = enc0.self_attn
    q, k = (a.split_heads(lin(seen["x0"]))[0].double() for lin in (a.w_q, a.w_k))
    return {
        "doc": doc,
        "src": doc["source_tokens"],
        "tgt": doc["target_tokens"],
        "logits": logits.numpy(),
        "enc_w": enc0.self_attn.weights[0].double().numpy(),
        "q": q.numpy(),
        "k": k.numpy(),
        "dec_self_w": model.decoder_layers[0].self_attn.weights[0].double().numpy(),
        "cross_w": model.decoder_layers[-1].src_attn.weights[0].double().numpy(),
        "x0": seen["x0"][0].double().numpy(),
        "sum": seen["sum"].double().numpy(),
        "ln": seen["ln"].double().numpy(),
        "h": seen["h"].double().numpy(),
    }


def shown(text: str, value, fmt: str) -> bool:
    """The cell says `value` in `fmt`, to its last digit (a float's last digit may round either way)."""
    if value is None:
        return text == "–"
    if isinstance(value, str):
        return text == value
    if fmt in ("text", "int"):
        return text == (str(value) if fmt == "text" else f"{value:,}".replace(",", "\u2009"))
    m = re.fullmatch(r"(fixed|pct|sig)(\d)", fmt)
    digits = int(m.group(2))
    if m.group(1) == "sig":
        return math.isclose(float(text.replace("·10^", "e")), value, rel_tol=0.5 * 10 ** (1 - digits) + 1e-9)
    number, scale = (float(text.rstrip("%")), 100) if m.group(1) == "pct" else (float(text), 1)
    return abs(number - scale * value) <= 0.5 * 10**-digits + 1e-6


def check(fig: dict, expected: list[list], fmts: list[str]) -> None:
    assert len(fig["rows"]) == len(expected), fig["title"]
    for got, want in zip(fig["rows"], expected, strict=True):
        assert len(got) == len(want) == len(fmts)
        for text, value, fmt in zip(got, want, fmts, strict=True):
            assert shown(text, value, fmt), (fig["title"], got, want)


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()
