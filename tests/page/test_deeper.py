"""Go deeper pages that compute: every topic page draws figures for the reader's input,
and every number in them is recomputed here on its own, from the torch model run forward (its attention
weights, its LayerNorm's input, its logits), the formulas, the training log, /api/model and /api/beam;
the page's cells must say the same, to the last printed digit. The article's links carry the input; a bad
input gets the API's own message, beside the figures for the default input, as on the article.

The tables read off one input's trace are the page's (static/compute/topic_tables.js): for the default input
they are checked as the server renders them for a reader without JavaScript (computed ahead by the same
module, app/startup/prerender.py), for the other inputs as the module computes them under Node from the API's trace
and recipe (tests/topic_tables.mjs), each cell formatted as the page formats it. tests/page/test_deeper_page.py
checks the page's script in a browser."""

from __future__ import annotations

import html
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from article.topic_figures import PAGE_TOPICS
from model import train
from model.train import ARTIFACTS, learning_rate
from model.vocab import VOCAB
from tests.deeper_pages import check, figures_of, forward, module_tables, shown, shown_tables, softmax
from tests.scene.test_worked import KINDS, kind

ROOT = Path(__file__).resolve().parents[2]
TOPICS = sorted(p.stem for p in (ROOT / "content" / "topics").glob("*.md"))
DEFAULT = 42  # the page's default input: its tables are rendered by the server
INPUTS = (7, DEFAULT, 305, 731015)


@pytest.fixture(scope="module")
def computed(client, tmp_path_factory) -> dict:
    if shutil.which("node") is None:
        pytest.fail("needs Node to run static/compute/topic_tables.js: `bash scripts/setup.sh` installs it")
    return module_tables(client, tmp_path_factory.mktemp("topics"), INPUTS)


@pytest.fixture(scope="module")
def pages(client, computed) -> dict:
    """Every topic page for every input, once: (slug, number) → its figures, as the server renders them, except
    a page's own tables for an input other than the default, which are the module's."""
    out = {}
    for n in INPUTS:
        for slug in TOPICS:
            r = client.get(f"/topics/{slug}?input={n}")
            assert r.status_code == 200, (slug, n)
            mine = slug in PAGE_TOPICS and n != DEFAULT
            out[slug, n] = shown_tables(computed[n][slug]) if mine else figures_of(r.text)
    return out


@pytest.fixture(scope="module")
def model(client):
    return client.app.state.service.translator.model


@pytest.fixture(scope="module")
def runs(client, model) -> dict:
    """Per input: the API's trace header and the torch model run forward on the same rows, with what it kept."""
    return {n: forward(model, client.get(f"/api/trace?input={n}").json()) for n in INPUTS}


# ---- the pages, their links and their input -------------------------------------------------------


def test_every_topic_page_has_a_figure_for_each_input_with_a_title_and_a_caption(pages):
    for (slug, n), figs in pages.items():
        assert figs, (slug, n)
        for key, f in figs.items():
            assert f["title"].strip() and len(f["caption"].split()) >= 12 and f["rows"], (slug, n, key)


def test_the_articles_go_deeper_links_carry_the_input(client):
    html = client.get("/?input=305").text
    links = re.findall(r'<p class="go-deeper"><a href="(/topics/[a-z0-9-]+)\?input=(\d+)">', html)
    assert links and {n for _, n in links} == {"305"} and {p.split("/")[-1] for p, _ in links} <= set(TOPICS)
    assert 'href="/topics/attention?input=42"' in client.get("/").text  # the default without an input


def test_each_go_deeper_link_says_its_topics_title(client):
    """ "Go deeper: Recurrent networks and their limits →", not the page's slug ("Go deeper: rnns")."""
    from app.main import app

    topics = app.state.content.topics
    said = re.findall(
        r'<p class="go-deeper"><a href="/topics/([a-z0-9-]+)\?input=\d+">Go deeper: ([^<]*) →</a>', client.get("/").text
    )
    assert len(said) >= 10
    for slug, text in said:
        assert html.unescape(text) == topics[slug].title, slug


@pytest.mark.parametrize("bad", ["-3", "forty banana", "1000000", " "])
def test_a_bad_input_says_the_apis_message_and_shows_the_default(client, bad):
    api = client.get("/api/trace", params={"input": bad})
    assert api.status_code == 422
    r = client.get("/topics/attention", params={"input": bad})
    assert r.status_code == 200  # as the article: the page, with the message beside the field
    said = re.search(r'<output id="deeper-error" role="alert" for="deeper-number">([^<]*)</output>', r.text)
    assert said and html.unescape(said.group(1)) == api.json()["detail"]["message"]
    assert 'aria-invalid="true"' in r.text and 'data-input="42"' in r.text


def test_a_typed_input_in_words_is_the_same_page_as_its_digits(client):
    words, digits = (client.get("/topics/flops", params={"input": i}).text for i in ("three hundred five", "305"))
    assert figures_of(words) == figures_of(digits)


def test_the_default_inputs_tables_are_rendered_for_a_reader_without_javascript(client):
    from app.startup.prerender import prerendered

    ahead = prerendered("topics", client.app.state.service)["topics"]  # the page's module, run under Node
    for slug in PAGE_TOPICS:
        for url in (f"/topics/{slug}", f"/topics/{slug}?input={DEFAULT}"):
            text = client.get(url).text
            assert f'data-topic-tables="{slug}" data-state="rendered"' in text and "data-needs-js" not in text, url
            figs = figures_of(text)
            assert figs and figs == shown_tables(ahead[slug]), url
            assert any(re.fullmatch(r"-?\d[\d.\u2009]*", c) for f in figs.values() for row in f["rows"] for c in row)


def test_another_inputs_tables_are_left_to_the_page_script_and_the_page_says_so(client):
    for slug in PAGE_TOPICS:
        text = client.get(f"/topics/{slug}?input=731015").text
        assert f'data-topic-tables="{slug}" data-state="pending"' in text and not figures_of(text), slug
        said = re.search(r"<p class=\"deeper-needs-js\" data-needs-js>([^<]*)<a href=\"([^\"]+)\"", text)
        assert said and "731\u2009015" in said.group(1) and "need JavaScript" in said.group(1), slug
        assert said.group(2) == f"/topics/{slug}" and '<script type="module" src="/bundle/js/deeper.js">' in text
    model_page = client.get("/topics/flops?input=731015").text  # the model's tables: the server's, for any input
    assert figures_of(model_page) and "data-topic-tables" not in model_page and "deeper.js" not in model_page


def test_the_page_topics_are_the_modules_and_every_topic_has_its_tables_somewhere(computed):
    from app.routes import pages
    from app.startup import prerender
    from article import topic_figures

    assert set(computed[DEFAULT]) == set(PAGE_TOPICS)
    assert set(PAGE_TOPICS) | set(topic_figures.TOPICS) == set(TOPICS) and not set(PAGE_TOPICS) & set(
        topic_figures.TOPICS
    )
    assert prerender.DEFAULT_INPUT == int(pages.DEFAULT_INPUT) == DEFAULT


# ---- each topic's figures, recomputed ------------------------------------------------------------


@pytest.mark.parametrize("n", INPUTS)
def test_tokens_and_ids(pages, runs, n):
    r = runs[n]
    want = [
        [f"{side} row {i + 1}", t, i_]
        for side, toks in (("encoder", r["src"]), ("decoder", r["tgt"]))
        for i, (t, i_) in enumerate(zip(toks, VOCAB.ids(toks), strict=True))
    ]
    assert r["src"] == VOCAB.source_tokens(n)
    check(pages["tokenisation", n]["tokens"], want, ["text", "text", "int"])


@pytest.mark.parametrize("n", INPUTS)
def test_embedding_rows_and_the_tied_output(pages, runs, model, n):
    r, e = runs[n], model.embedding.detach().double().numpy()
    toks = list(dict.fromkeys(r["src"] + r["tgt"]))
    rows = [
        [
            t,
            VOCAB.ids([t])[0],
            np.linalg.norm(e[VOCAB.ids([t])[0]]),
            math.sqrt(model.cfg.d_model) * np.linalg.norm(e[VOCAB.ids([t])[0]]),
        ]
        for t in toks
    ]
    figs = pages["embeddings-and-tying", n]
    assert f"√d_model = {math.sqrt(model.cfg.d_model):.3f}" in figs["embedding-rows"]["title"]
    check(figs["embedding-rows"], rows, ["text", "int", "fixed3", "fixed3"])
    written = r["logits"].argmax(-1)
    assert VOCAB.tokens_of(written.tolist()) == r["doc"]["output_tokens"]
    node = {x["id"]: x for x in r["doc"]["nodes"]}
    z, h = (
        np.array(node[i]["data"], np.float32).astype(np.float64).reshape(node[i]["shape"])
        for i in ("out.logits", node["out.logits"]["inputs"][0])
    )  # the trace's own float32 numbers
    tied = [
        [f"row {i + 1}", VOCAB.tokens[k], r["logits"][i, k], r["h"][i] @ e[k], abs(z[i, k] - h[i] @ e[k])]
        for i, k in enumerate(written)
    ]
    # the difference is float32's rounding, of whichever engine computed the page's trace (the server's, the
    # page's own for the default input's tables, rendered ahead): its size is checked, not its digits
    check(
        {**figs["tied-output"], "rows": [row[:-1] for row in figs["tied-output"]["rows"]]},
        [row[:-1] for row in tied],
        ["text", "text", "fixed3", "fixed3"],
    )
    assert max(row[-1] for row in tied) < 1e-4
    assert all(float(row[-1].replace("·10^", "e")) < 1e-4 for row in figs["tied-output"]["rows"])


@pytest.mark.parametrize("n", INPUTS)
def test_positional_encoding_rows(pages, runs, model, n):
    r, d = runs[n], model.cfg.d_model
    count = max(len(r["src"]), len(r["tgt"]))
    pos, i = np.arange(count)[:, None], np.arange(d)[None, :]
    angle = pos / 10000 ** ((i - i % 2) / d)
    pe = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))  # the paper's §3.5, written out
    cols = [0, 1, 2, 3, d - 2, d - 1]
    want = [
        [
            f"position {p}",
            r["src"][p] if p < len(r["src"]) else "",
            r["tgt"][p] if p < len(r["tgt"]) else "",
            *pe[p, cols],
            math.sqrt(d / 2),
        ]
        for p in range(count)
    ]
    check(pages["positional-encoding", n]["pe-rows"], want, ["text"] * 3 + ["fixed3"] * 7)


def worked(w: np.ndarray, src: list[str]) -> tuple[int, int]:
    """The article's worked row (steps 6–9), by its rule (tests/scene/test_worked.py `kind`): of all heads' rows
    of encoder 1's self-attention, the best kind of row the input has, and of those the largest weight."""
    rows = [(h, i, int(row.argmax()), float(row.max())) for h, hw in enumerate(w) for i, row in enumerate(hw)]
    best = min(rows, key=lambda x: (KINDS.index(kind(src, x[1], x[2], x[3])), -x[3]))
    return best[0], best[1]


@pytest.mark.parametrize("n", INPUTS)
def test_the_worked_attention_row_and_its_heads(pages, runs, model, n):
    r = runs[n]
    (h, row), dk = worked(r["enc_w"], r["src"]), model.cfg.d_k
    dots = r["q"][h, row] @ r["k"][h].T
    w = r["enc_w"][h, row]
    assert np.allclose(w, softmax(dots / math.sqrt(dk)))
    plain = softmax(dots)
    want = [[t, dots[j], dots[j] / math.sqrt(dk), w[j], plain[j]] for j, t in enumerate(r["src"])]
    fig = pages["attention", n]["attention-row"]
    check(fig, [*want, ["sum", None, None, 1.0, 1.0]], ["text"] + ["fixed3"] * 4)
    assert plain.max() > w.max()  # the caption: without the division the largest weight grows
    assert f"head {h + 1}" in fig["title"] and f"(row {row + 1})" in fig["title"]
    heads = [
        [f"head {i + 1}", *r["enc_w"][i, row], r["src"][int(r["enc_w"][i, row].argmax())]]
        for i in range(model.cfg.n_heads)
    ]
    check(pages["multi-head-attention", n]["heads-of-row"], heads, ["text"] + ["fixed3"] * len(r["src"]) + ["text"])


@pytest.mark.parametrize("n", INPUTS)
def test_the_decoder_mask(pages, runs, n):
    r = runs[n]
    w, m = r["dec_self_w"][0], len(r["tgt"])
    want = [
        [f"row {i + 1}: {t}", *(w[i, j] if j <= i else "masked" for j in range(m)), 1.0] for i, t in enumerate(r["tgt"])
    ]
    assert np.abs(np.triu(w, 1)).max() == 0
    check(pages["causal-masking", n]["decoder-mask"], want, ["text"] + ["fixed3"] * (m + 1))


@pytest.mark.parametrize("n", INPUTS)
def test_logits_at_three_temperatures(pages, runs, n):
    z = runs[n]["logits"]
    row = int(np.array([softmax(x).max() for x in z]).argmin())
    top = np.argsort(-z[row])[:5]
    want = [[VOCAB.tokens[k], z[row, k], *(softmax(z[row] / t)[k] for t in (0.5, 1, 2))] for k in top]
    fig = pages["softmax-and-logits", n]["temperatures"]
    check(fig, want, ["text"] + ["fixed3"] * 4)
    assert fig["title"].startswith(f"Decoder row {row + 1} ")


@pytest.mark.parametrize("n", INPUTS)
def test_layernorm_rows(pages, runs, n):
    s, out = runs[n]["sum"], runs[n]["ln"]
    normed = (s - s.mean(-1, keepdims=True)) / np.sqrt(s.var(-1, keepdims=True) + 1e-5)
    want = [
        [t, s[i].mean(), s[i].std(), normed[i].mean(), normed[i].std(), out[i].mean(), out[i].std()]
        for i, t in enumerate(runs[n]["src"])
    ]
    check(pages["layernorm-and-residuals", n]["layernorm-rows"], want, ["text"] + ["fixed3"] * 6)


@pytest.mark.parametrize("n", INPUTS)
def test_loss_per_position(pages, runs, n):
    r = runs[n]
    p = np.array([softmax(x) for x in r["logits"]])
    reference, out, eps, v = VOCAB.target_tokens(n), r["doc"]["output_tokens"], 0.1, p.shape[1]
    want = []
    for i, reads in enumerate(r["tgt"]):
        if i < len(reference) and out[:i] == reference[:i]:
            y = VOCAB.ids([reference[i]])[0]
            q = np.full(v, eps / v)
            q[y] += 1 - eps
            want.append([f"row {i + 1}", reads, reference[i], p[i, y], -math.log(p[i, y]), -(q * np.log(p[i])).sum()])
        else:
            want.append([f"row {i + 1}", reads, "–", None, None, None])
    q = np.full(v, eps / v)
    q[0] += 1 - eps
    want.append(["floor H(q)", "", "", None, None, -(q * np.log(q)).sum()])
    check(pages["cross-entropy", n]["position-losses"], want, ["text"] * 3 + ["fixed3"] * 3)


@pytest.mark.parametrize("n", INPUTS)
def test_path_lengths_and_sequential_steps(pages, runs, model, n):
    r, layers = runs[n], model.cfg.n_layers
    cross = r["cross_w"].mean(0)  # the last decoder layer's heads, averaged
    want = [[f"{i + 1}: {t}", len(r["src"]) - i, 1, cross[0, i]] for i, t in enumerate(r["src"])]
    figs = pages["rnns", n]
    check(figs["path-lengths"], want, ["text", "int", "int", "fixed3"])
    check(
        figs["sequential-steps"],
        [["encoding", len(r["src"]), layers], ["decoding", len(r["tgt"]), len(r["tgt"])]],
        ["text", "int", "int"],
    )


SUBLAYERS = {
    "encoder": ["self-attention", "feed-forward"],
    "decoder": ["masked self-attention", "cross-attention", "feed-forward"],
}
MODULES = {"self_attn": 0, "src_attn": 1, "feed_forward": -1}


def torch_block(model, name: str) -> str:
    """A torch parameter's block, from its module path: encoder_layers.0.sublayer.1.norm.weight → encoder 1 · …"""
    if name == "embedding":
        return "E"
    stack, layer, module, *rest = name.split(".")
    kind = stack.split("_")[0]
    at = int(rest[0]) if module == "sublayer" else MODULES[module]
    return f"{kind} {int(layer) + 1} · {SUBLAYERS[kind][at]}"


@pytest.mark.parametrize("n", INPUTS)
def test_parameters_by_block_add_up_to_the_model_card(client, pages, model, n):
    blocks: dict[str, list[int]] = {}
    for name, p in model.named_parameters():
        b = blocks.setdefault(torch_block(model, name), [0, 0])
        b[0], b[1] = b[0] + 1, b[1] + p.numel()
    total = client.get("/api/model").json()["parameter_count"]
    assert sum(c for _, c in blocks.values()) == total == model.get_num_params()
    want = [[k, t, c, c / total] for k, (t, c) in blocks.items()] + [["total", len(list(model.parameters())), total, 1]]
    figs = pages["counting-parameters", n]
    check(figs["parameters-by-block"], want, ["text", "int", "int", "pct1"])
    src, tgt = set(VOCAB.ids(VOCAB.source_tokens(n))), set(VOCAB.ids(runs_target(client, n)))
    d, v = model.cfg.d_model, model.cfg.vocab_size
    read = [
        [label, len(s), len(s) * d, len(s) / v]
        for label, s in (("the encoder's lookups", src), ("the decoder's lookups", tgt), ("both", src | tgt))
    ]
    check(figs["rows-of-e-read"], read, ["text", "int", "int", "pct1"])


def runs_target(client, n: int) -> list[str]:
    return client.get(f"/api/trace?input={n}").json()["target_tokens"]


@pytest.mark.parametrize("n", INPUTS)
def test_flops_add_up_to_the_traces_matrix_products(pages, runs, n):
    """2·a·b·c for every Gemm and MatMul the trace ran (the logit lens aside), summed by part."""
    nodes = [x for x in runs[n]["doc"]["nodes"] if not x["id"].startswith("lens.")]
    shape = {x["id"]: x["shape"] for x in nodes}
    cost = {
        x["id"]: 2 * math.prod(shape[x["inputs"][0]]) * x["shape"][-1] for x in nodes if x["op"] in ("Gemm", "MatMul")
    }
    fig = pages["flops", n]["forward-flops"]
    counts = {row[0]: int(row[2].replace("\u2009", "")) for row in fig["rows"]}
    assert counts["total"] == sum(cost.values())
    heads = re.compile(r"\.h\d+\.(scores|out)$")
    for stack, word in (("enc.", "encoder"), ("dec.", "decoder")):
        ours = sum(c for k, c in counts.items() if k.startswith(word))
        assert ours == sum(c for i, c in cost.items() if i.startswith(stack)), stack
        mixing = sum(c for k, c in counts.items() if k.startswith(word) and "scores and mixing" in k)
        assert mixing == sum(c for i, c in cost.items() if i.startswith(stack) and heads.search(i)), stack
        assert mixing < ours / 4  # the caption: at these lengths the products with weights cost most
    assert counts["output layer h·Eᵀ"] == cost["out.logits"]
    for row in fig["rows"]:
        assert shown(row[3], int(row[2].replace("\u2009", "")) / counts["total"], "pct1")


@pytest.mark.parametrize("n", INPUTS)
def test_one_dropout_draw(pages, runs, model, n):
    x, p = runs[n]["x0"], model.cfg.dropout
    keep = np.random.default_rng(n).random(x.shape) >= p
    after = np.where(keep, x / (1 - p), 0)
    want = [[f"{i + 1}: {t}", int((~keep[i]).sum()), x[i].sum(), after[i].sum()] for i, t in enumerate(runs[n]["src"])]
    want.append(["all rows", int((~keep).sum()), x.sum(), after.sum()])
    fig = pages["dropout", n]["dropout-draw"]
    check(fig, want, ["text", "int", "fixed3", "fixed3"])
    assert f"p = {p:g}" in fig["title"]


def test_the_schedule_beside_the_training_log(pages):
    log = json.loads((ARTIFACTS / "training_log.json").read_text())
    cfg, d = log["train_config"], 32
    records = {r["step"]: r for r in log["log"] if "loss" in r}
    assert train.ADAM_BETAS == (0.9, 0.98)  # the paper's §5.3, which the columns below recompute with
    w, s = cfg["warmup"], cfg["steps"]
    marks = sorted({1, 10, w // 4, w // 2, w, 2 * w, s // 2, s})
    want = [
        [
            m,
            d**-0.5 * min(m**-0.5, m * w**-1.5),
            records.get(m, {}).get("lr"),
            records.get(m, {}).get("loss"),
            1 / (1 - 0.9**m),
            1 / (1 - 0.98**m),
        ]
        for m in marks
    ]
    assert all(math.isclose(learning_rate(m, d, w), row[1]) for m, row in zip(marks, want, strict=True))
    for n in INPUTS:  # the same for every input
        check(pages["adam", n]["adam-schedule"], want, ["int", "sig3", "sig3", "fixed3", "fixed3", "fixed3"])


@pytest.mark.parametrize("n", INPUTS)
def test_the_beam_table(client, pages, n):
    b = client.get(f"/api/beam?input={n}").json()
    alive = [
        [f"step {s['step']}", i + 1, " ".join(h["tokens"]), h["log_prob"]]
        for s in b["steps"]
        for i, h in enumerate(s["alive"])
    ]
    figs = pages["autoregressive-generation-and-beam-search", n]
    check(figs["beam-steps"], alive, ["text", "int", "text", "fixed3"])
    done = [
        [
            " ".join(h["tokens"]),
            h["log_prob"],
            h["length_penalty"],
            h["score"],
            "yes" if h["tokens"] == b["best"]["tokens"] else "no",
        ]
        for h in b["finished"]
    ]
    check(figs["beam-finished"], done, ["text", "fixed3", "fixed3", "fixed3", "text"])
    assert max(b["finished"], key=lambda h: h["score"])["tokens"] == b["best"]["tokens"]
