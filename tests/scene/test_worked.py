"""The worked attention row of steps 6–9 is chosen from the trace by one rule (the page's choice, from
tests/in_page.py, checked against a brute-force search), step 9's sentence about it is true for every input
tried (recomputed), and
the card the stage draws for it prints the trace's own numbers (read from its DOM in Chromium, recomputed
here from the served trace's Q, K, V, scores, weights and output)."""

import json
import math
import random
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.in_page import page_parts
from tests.onnx_numpy import as_array
from tests.page.test_prose_claims import traced_many

EOS = "</s>"
ROOT = Path(__file__).resolve().parents[2]


TENS = {"twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
UNITS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
KINDS = ["tens", "word", "end", "any"]  # best first


def kind(toks: list[str], r: int, j: int, peak: float) -> str:
    """The rule's kinds of row, said again from the article's own words: a tens word whose largest weight
    (over a half) is on the unit right after it; a word whose largest weight is on another word; the end
    token resting on a word; any other row."""
    on_word = j != r and toks[j] != EOS
    if on_word and j == r + 1 and peak > 0.5 and toks[r] in TENS and toks[j] in UNITS:
        return "tens"
    if on_word:
        return "end" if toks[r] == EOS else "word"
    return "any"


def brute_force(t) -> tuple[int, int, str]:
    """The rule said in plain loops: over heads, then rows, the first row of the best kind the input has whose
    largest weight (its first largest) is larger than every earlier such row's."""
    toks = list(t.source_tokens)
    best = None
    for h in range(4):
        for r, row in enumerate(t.node(f"enc.0.self.h{h}.weights").value.tolist()):
            peak = max(row)
            k = kind(toks, r, row.index(peak), peak)
            if best is None or KINDS.index(k) < KINDS.index(best[0]) or (k == best[0] and peak > best[1]):
                best = (k, peak, h, r)
    return best[2], best[3], best[0]


REASONS = {"tens": "is a tens word", "word": "no tens word here", "end": "the end token's row", "any": "no row of"}


def test_the_chosen_row_is_the_rules_for_many_inputs(client):
    rng = random.Random(21)
    numbers = [0, 7, 42, 86, 305, 713, 40_019, 100_000, 482_917, 777_777] + [rng.randint(0, 999_999) for _ in range(24)]
    kinds = set()
    for number, (t, d) in zip(numbers, traced_many(client, numbers), strict=True):
        h, r, k = brute_force(t)
        kinds.add(k)
        assert (d["worked_head"], d["worked_row"]) == (h + 1, r + 1), number  # both counted from 1
        assert d["worked_token"] == t.source_tokens[r]
        w = t.node(f"enc.0.self.h{h}.weights").value[r]
        assert d["worked_key_token"] == d["worked_top_token"] == t.source_tokens[int(w.argmax())]
        assert f"puts {w.max():.3f} on {d['worked_top_token']}".replace("-", "\u2212") in d["worked_reason"]
        assert REASONS[k] in d["worked_reason"], (number, k)
    assert {"tens", "word"} <= kinds  # 42 and 86: forty and eighty ask about their units


CHOOSE_MANY = """
import { chooseWorked } from "./static/compute/worked.js";
import { readFileSync } from "node:fs";
const { words, cases } = JSON.parse(readFileSync(0, "utf8"));
const heads = (ws) => ws.map((w) => ({ data: Float32Array.from(w.flat()), shape: [w.length, w[0].length] }));
console.log(JSON.stringify(cases.map(({ tokens, weights }) => chooseWorked(tokens, heads(weights), words))));
"""


def test_the_end_token_is_the_worked_row_of_at_most_one_input_in_ten():
    """The rule prefers a word asking about another word: over 200 random inputs, the page's chooseWorked makes
    `</s>` the worked row only where no word row rests on another word (the old rule chose it for 34 of these
    200). The weights are the shipped model's, recorded here; the page's own function chooses."""
    import torch

    from article.live_nodes import WORKED_WORDS
    from model.train import load
    from recorder import trace

    torch.set_num_threads(1)
    model, rng = load(), random.Random(200)
    numbers = [rng.randint(0, 999_999) for _ in range(200)]
    cases = []
    for n in numbers:
        t = trace(model, n, lens=False)
        weights = [t.node(f"enc.0.self.h{h}.weights").value.tolist() for h in range(model.cfg.n_heads)]
        cases.append({"tokens": list(t.source_tokens), "weights": weights})
    run = subprocess.run(
        ["node", "--input-type=module", "-e", CHOOSE_MANY],
        cwd=ROOT,
        input=json.dumps({"words": WORKED_WORDS, "cases": cases}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    chosen = json.loads(run.stdout)
    ends = [n for n, case, c in zip(numbers, cases, chosen, strict=True) if case["tokens"][c["row"]] == EOS]
    assert len(ends) <= 20, ends  # measured: 0


def test_each_kind_of_row_is_chosen_by_its_case():
    """The rule's cases on planted weights (one head, each row's weights), run in the page's own chooseWorked."""
    script = """
import { chooseWorked } from "./static/compute/worked.js";
const words = { eos: "</s>", tens: ["forty"], units: ["two"] };
const head = (rows) => ({ data: Float32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });
const toks = ["forty", "two", "</s>"];
const cases = {
  tens: [[0.1, 0.8, 0.1], [0.1, 0.2, 0.7], [0.1, 0.9, 0.0]],
  weak_tens_is_a_word: [[0.3, 0.4, 0.3], [0.1, 0.2, 0.7], [0.05, 0.9, 0.05]],
  word: [[0.9, 0.05, 0.05], [0.6, 0.3, 0.1], [0.1, 0.9, 0.0]],
  end: [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.1, 0.9, 0.0]],
  any: [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]],
};
const out = {};
for (const [name, rows] of Object.entries(cases)) {
  const c = chooseWorked(toks, [head(rows)], words);
  out[name] = [c.rule, c.row, c.key];
}
// a row the reader chose: followed where the input has it; else the rule's, with the row asked for
const chosen = chooseWorked(toks, [head(cases.tens)], words, { head: 0, row: 2 });
const absent = chooseWorked(toks, [head(cases.tens)], words, { head: 1, row: 0 });
out.chosen = [chosen.rule, chosen.row, chosen.key, chosen.missing ?? null];
out.absent = [absent.rule, absent.row, absent.key, absent.missing];
console.log(JSON.stringify(out));
"""
    run = subprocess.run(
        ["node", "--input-type=module", "-e", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "tens": ["tens", 0, 1],
        "weak_tens_is_a_word": ["word", 0, 1],
        "word": ["word", 1, 0],
        "end": ["end", 2, 1],
        "any": ["any", 0, 0],
        "chosen": ["chosen", 2, 1, None],
        "absent": ["tens", 0, 1, {"head": 1, "row": 0}],
    }


def test_step_9s_claim_is_true_for_30_inputs(client):
    rng = random.Random(9)
    numbers = [305, 482_917] + [rng.randint(0, 999_999) for _ in range(28)]
    for number, (t, d) in zip(numbers, traced_many(client, numbers), strict=True):
        h, r, toks = d["worked_head"] - 1, d["worked_row"] - 1, list(t.source_tokens)
        q, k, v = (t.node(f"enc.0.self.{m}.h{h}").value.astype(np.float64) for m in "qkv")
        weights = np.exp(q[r] @ k.T / math.sqrt(q.shape[1]) - (q[r] @ k.T / math.sqrt(q.shape[1])).max())
        weights /= weights.sum()
        out = weights @ v
        dist = np.linalg.norm(v - out, axis=-1)
        top, near = int(weights.argmax()), int(dist.argmin())
        claim = d["worked_claim"]
        assert claim.startswith(f"{toks[top]} took the most weight, {weights[top]:.3f}"), number
        if near == top:
            assert f"nearer to V[{toks[top]}] than to any other value row: {dist[top]:.2f} away" in claim, number
        else:
            assert f"nearer to V[{toks[near]}], {dist[near]:.2f} away" in claim and "yet not enough" in claim, number
        shown = [x.rsplit(" ", 1) for x in d["worked_distances"].split(", ")]
        assert [tok for tok, _ in shown] == toks
        assert [float(x.replace("\u2212", "-")) for _, x in shown] == pytest.approx(dist, abs=6e-3)
    # the sentence found false for 305 ("lies close to" a V it is not closest to) is gone
    assert not re.search(
        r"lies close to it because",
        (__import__("pathlib").Path(__file__).parents[2] / "content/steps/09-weighted-sum.md").read_text(),
    )


# ---- in Chromium: the card's numbers are the trace's ------------------------------------------------

CARD = """() => { const c = document.querySelector('#stage .stage-worked');
  return { hidden: c.hidden, phase: c.dataset.phase, row: +c.dataset.row, key: +c.dataset.key,
    title: c.querySelector('.wk-title')?.textContent,
    nums: [...c.querySelectorAll('[data-name]')].map(e => [e.dataset.name, +e.dataset.i,
      e.dataset.j ? +e.dataset.j : null, Number(e.textContent.replace('\\u2212', '-'))]) }; }"""


def expected(t: dict) -> dict:
    """The worked row's numbers recomputed from the served trace's own tensors."""
    w = t["scene"]["worked"]
    nodes = {n["id"]: n for n in t["nodes"]}
    q, k = (as_array(nodes[w[m]]).astype(np.float64) for m in ("q", "k"))
    scores = as_array(nodes[w["scores"]]).astype(np.float64)[w["row"]]
    weights = as_array(nodes[w["weights"]]).astype(np.float64)[w["row"]]
    out = as_array(nodes[w["out"]]).astype(np.float64)[w["row"]]
    raw = q[w["row"]] @ k.T
    assert scores == pytest.approx(raw / math.sqrt(q.shape[1]), abs=1e-5)  # q·k/√8, as the trace has it
    plain = np.exp(raw - raw.max())
    return {
        "q": q[w["row"]],
        "k": k[w["key"]],
        "qk": q[w["row"]] * k[w["key"]],
        "dot": raw,
        "raw": raw,
        "score": scores,
        "weight": weights,
        "plain": plain / plain.sum(),
        "out": out,
    }


def check_card(card: dict, want: dict, phase: str) -> set[str]:
    assert not card["hidden"] and card["phase"] == phase
    for name, i, j, shown in card["nums"]:
        truth = want[name][i]
        assert shown == pytest.approx(truth, abs=6e-4), (phase, name, i, j)
    return {n for n, *_ in card["nums"]}


@pytest.mark.parametrize("number", [305, 482_917, 42])
def test_the_card_prints_the_traces_numbers_at_steps_6_to_9(browser, live_server, client, number):
    from tests.browser import has_chromium, open_stage_page

    if not has_chromium():
        pytest.skip("Debian's chromium is not installed")
    (parts,) = page_parts(client, [str(number)])
    t = {**parts["trace"], "scene": parts["scene"]}  # the worked row as the page's scene chose it
    want, w = expected(t), t["scene"]["worked"]
    page = open_stage_page(
        browser, f"{live_server}/?input={number}", {"width": 1440, "height": 900}, reduced_motion="reduce"
    )
    try:
        names = {}
        for step, phase in ((6, "qk"), (7, "scores"), (8, "scale"), (9, "sum")):
            page.evaluate(f"anatomyStage.step({step})")
            page.evaluate("anatomyStage.idle()")
            card = page.evaluate(CARD)
            assert (card["row"], card["key"]) == (w["row"], w["key"])
            assert f"head {w['head']} · row {w['row'] + 1} (" in card["title"]  # rows counted from 1 on the card
            names[step] = check_card(card, want, phase)
        assert names[6] == {"q", "k"} and names[7] == {"q", "k", "qk", "dot", "score", "weight"}
        assert names[8] == {"raw", "score", "weight", "plain"} and names[9] == {"weight", "out"}
        # step 9's view holds V: the card lights each key's value row in the head's columns of V as it walks
        # the keys (the rows themselves are read on the stage), and the sweep's end lights all of them
        off, dk = w["v_cols"]
        walked = page.evaluate(
            """([w, n]) => Array.from({length: n}, (_, j) => { const s = anatomyStage.stage;
          s.worked.light(w, 'sum', j, false); return s.cells.focusRects(w.v_full); })""",
            [w, len(t["source_tokens"])],
        )
        assert walked == [[[j, j, off, off + dk - 1]] for j in range(len(t["source_tokens"]))]
        # step 7 lights the row's query, its keys, its scores and its weights in their blocks
        page.evaluate("anatomyStage.step(7)")
        page.evaluate("anatomyStage.idle()")
        lit = page.evaluate(
            "ids => Object.fromEntries(ids.map(id => [id, anatomyStage.stage.cells.focusRects(id)]))",
            [w["scores"], w["weights"]],
        )
        n = len(t["source_tokens"])
        assert lit == {w["scores"]: [[w["row"], w["row"], 0, n - 1]], w["weights"]: [[w["row"], w["row"], 0, n - 1]]}
        # a step without a worked row hides the card
        page.evaluate("anatomyStage.step(10)")
        assert page.evaluate("document.querySelector('#stage .stage-worked').hidden")
        assert page.errors == []
    finally:
        page.context.close()


def test_r_replays_the_card_and_a_phone_folds_it(browser, live_server):
    """R walks the keys again (each key's column hidden, then shown one by one); on a phone's short stage the
    card starts folded to its title, inside the stage, and its title opens it."""
    from tests.browser import has_chromium, open_stage_page

    if not has_chromium():
        pytest.skip("Debian's chromium is not installed")
    page = open_stage_page(browser, f"{live_server}/?input=305#step-7", {"width": 390, "height": 844})
    try:
        page.evaluate("anatomyStage.idle()")
        state = """() => { const s = document.querySelector('#stage'), c = s.querySelector('.stage-worked');
          const t = c.querySelector('.wk-title').getBoundingClientRect(), b = s.getBoundingClientRect();
          return { closed: c.classList.contains('wk-closed'), hidden: c.querySelectorAll('.wk-step.wk-hidden').length,
                   rows: c.querySelectorAll('.wk-step').length,
                   shown: getComputedStyle(c.querySelector('.wk-cols')).display,
                   inside: t.left >= b.left && t.right <= b.right && t.top >= b.top && t.bottom <= b.bottom,
                   font: parseFloat(getComputedStyle(c.querySelector('.wk-n')).fontSize) }; }"""
        s = page.evaluate(state)
        assert s["closed"] and s["shown"] == "none" and s["inside"] and s["rows"] == 4 and s["hidden"] == 0
        page.click("#stage .stage-worked .wk-title")
        s = page.evaluate(state)
        assert not s["closed"] and s["shown"] != "none" and s["font"] >= 9
        page.keyboard.press("r")
        assert page.evaluate(state)["hidden"] > 0  # the keys start over
        page.evaluate("anatomyStage.idle()")
        assert page.evaluate(state)["hidden"] == 0
        assert page.errors == []
    finally:
        page.context.close()


def test_a_teacher_chooses_the_row_on_the_card_and_the_address_keeps_it(browser, live_server):
    """The card's head and row choosers: the page runs the input again on the chosen row (its figures, its card,
    its address worked=head:row); a link with that address opens on it; an input without that row shows the
    rule's row, and step 6 says so."""
    from tests.browser import has_chromium, open_stage_page, until

    if not has_chromium():
        pytest.skip("Debian's chromium is not installed")
    page = open_stage_page(
        browser, f"{live_server}/?input=713#step-7", {"width": 1440, "height": 900}, reduced_motion="reduce"
    )
    try:
        rule = page.evaluate("[anatomy.trace.derived.worked_head, anatomy.trace.derived.worked_row]")
        page.evaluate("anatomyStage.idle()")
        page.select_option("#stage .stage-worked select[data-choose=head]", "1")
        until(page, "anatomy.trace.worked_asked?.head === 1")
        page.select_option("#stage .stage-worked select[data-choose=row]", "2")
        until(page, "anatomy.trace.worked_asked?.row === 2 && anatomy.stores.shownTrace.get().scene.worked.row === 2")
        d = page.evaluate("anatomy.trace.derived")
        assert (d["worked_head"], d["worked_row"], d["worked_token"]) == (2, 3, "thirteen")  # counted from 1
        assert [2, 3] != rule  # not the rule's row
        assert "chosen on the stage" in d["worked_reason"]
        assert "worked=1%3A2" in page.url or "worked=1:2" in page.url
        page.evaluate("anatomyStage.idle()")
        assert page.evaluate(CARD)["row"] == 2
        # the link reproduces it; the rule's row is one press away
        page.goto(f"{live_server}/?input=713&worked=1:2#step-7")
        until(page, "window.anatomyStage?.ready && anatomy.trace?.worked_asked?.row === 2")
        assert page.evaluate("[anatomy.trace.derived.worked_head, anatomy.trace.derived.worked_row]") == [2, 3]
        page.evaluate("anatomyStage.idle()")
        page.click("#stage .stage-worked .wk-rule")
        until(page, "anatomy.trace.worked_asked === null && !location.search.includes('worked')")
        assert page.evaluate("[anatomy.trace.derived.worked_head, anatomy.trace.derived.worked_row]") == rule
        # an input of two tokens has no third row: the rule's row, said
        page.goto(f"{live_server}/?input=7&worked=1:2#step-7")
        until(page, "window.anatomyStage?.ready && anatomy.trace?.input.number === 7")
        reason = page.evaluate("anatomy.trace.derived.worked_reason")
        assert reason.startswith("this input has no row 3 in head 2, the row chosen on the stage"), reason
        assert page.evaluate("anatomy.trace.derived.worked_row") <= 2
        assert page.errors == []
    finally:
        page.context.close()
