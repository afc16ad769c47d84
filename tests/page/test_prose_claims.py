"""Each claim of the article that was wider than its evidence, now stated for what was
measured, checked against its source (the model, the result files, model/data.py); and the sentences whose
truth depends on the input are live figures: the page's own (tests/in_page.py), recomputed here from the
served traces' nodes for 200 random inputs."""

import html as htmllib
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from article.tour import split_front_matter
from model import ids
from tests.in_page import PageRequest, page_parts
from tests.onnx_numpy import as_array

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "research" / "results"
TENS = {
    "zwanzig": "twenty",
    "dreißig": "thirty",
    "vierzig": "forty",
    "fünfzig": "fifty",
    "sechzig": "sixty",
    "siebzig": "seventy",
    "achtzig": "eighty",
    "neunzig": "ninety",
}
# the German units that can stand before "und" (einundzwanzig … neunundneunzig) and the English word each
# translates: step 16's "units on their word" counts the rows writing one of them that look at that word
UNITS_BEFORE_UND = {
    "eins": "one",
    "ein": "one",
    "zwei": "two",
    "drei": "three",
    "vier": "four",
    "fünf": "five",
    "sechs": "six",
    "sieben": "seven",
    "acht": "eight",
    "neun": "nine",
}
CODE_ID = re.compile(r"\b(enc|dec)\.(\d+)\.(self|cross|ffn)(?:\.h(\d+))?(?:\.[a-z_]+)*")


def step_text(n: int) -> str:
    (path,) = (ROOT / "content" / "steps").glob(f"{n:02d}-*.md")
    return re.sub(r"\s+", " ", split_front_matter(path.read_text(encoding="utf-8"))[1])


def results(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def model():
    """The shipped model and its parameters (loaded on one thread, the cheaper way on a shared machine)."""
    import torch

    from model.train import load
    from recorder import parameters

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    m = load()
    yield m, parameters(m)
    torch.set_num_threads(threads)


class Traced(SimpleNamespace):
    """A served trace, read as the recorder's Trace is: its token lists, and its nodes with float64 values."""

    def node(self, node_id: str) -> SimpleNamespace:
        return self.by_id[node_id]


def served(json_trace: dict) -> Traced:
    nodes = [SimpleNamespace(id=n["id"], value=as_array(n).astype(np.float64)) for n in json_trace["nodes"]]
    return Traced(
        source_tokens=json_trace["source_tokens"],
        target_tokens=json_trace["target_tokens"],
        output_tokens=json_trace["output_tokens"],
        nodes=nodes,
        by_id={n.id: n for n in nodes},
        number=json_trace["input"]["number"],
        parameter_ids=json_trace["parameters"],
    )


def traced_many(client, numbers: list[int | PageRequest]) -> list[tuple[Traced, dict]]:
    """Each input's served trace and the live figures the page computes for it (one Node run for all)."""
    asked = [n if isinstance(n, PageRequest) else str(n) for n in numbers]
    return [(served(p["trace"]), p["derived"]) for p in page_parts(client, asked)]


def traced(client, number: int) -> tuple[Traced, dict]:
    return traced_many(client, [number])[0]


def head_mean(t) -> np.ndarray:
    """Last decoder layer's cross-attention weights, averaged over the heads, from the trace's own nodes."""
    last = max(int(n.id.split(".")[1]) for n in t.nodes if n.id.startswith("dec.") and ".cross.h" in n.id)
    heads = [n.value for n in t.nodes if re.fullmatch(rf"dec\.{last}\.cross\.h\d+\.weights", n.id)]
    assert len(heads) == 4
    return np.mean(heads, axis=0).astype(np.float64)


# ---- step 16: the row that writes und, and the units before it ---------------------------------------


def test_step_16s_und_row_splits_for_42_and_1234(client):
    said = step_text(16)
    said_for = ((42, "forty", "0.500", "0.500"), (1234, "thirty", "0.492", "0.489"))
    for (number, tens, on_tens, on_end), (t, _) in zip(said_for, traced_many(client, [42, 1234]), strict=True):
        r = t.output_tokens.index("und")
        row, src = head_mean(t)[r], list(t.source_tokens)
        assert f"{row[src.index(tens)]:.3f}" == on_tens and f"{row[-1]:.3f}" == on_end, number
        assert set(np.argsort(row)[-2:]) == {src.index(tens), len(src) - 1}  # split between the two
    assert "for the input 42 ([show 42](/?input=42#step-16)) it puts 0.500 on *forty* and 0.500 on `</s>`" in said
    assert "for the input 1234 ([show 1234](/?input=1234#step-16)), 0.492 on *thirty* and 0.489 on `</s>`" in said
    assert "in longer inputs it looks back to the tens word" not in said  # the old, wider claim
    assert 'data-live="und_rows"' in said and 'data-live="units_on_their_word"' in said


def test_step_16s_diagonal_steps_off_for_34_and_keeps_to_it_for_713(client):
    """What step 16 says of the outlined cells (each row's largest weight, in each head of the last decoder layer's
    cross-attention) for its two fixed inputs, which it names as such."""
    said = step_text(16)
    (t34, _), (t713, _) = traced_many(client, [34, 713])
    last = max(int(n.id.split(".")[1]) for n in t34.nodes if n.id.startswith("dec.") and ".cross.h" in n.id)
    for h in range(4):
        top = [t34.source_tokens[j] for j in t34.node(f"dec.{last}.cross.h{h}.weights").value.argmax(-1)]
        assert (t34.target_tokens[0], top[0], t34.target_tokens[2], top[2]) == ("<s>", "four", "und", "thirty")
    diagonal = sum(
        list(t713.node(f"dec.{last}.cross.h{h}.weights").value.argmax(-1)) == list(range(len(t713.source_tokens)))
        for h in range(4)
    )
    assert diagonal == 3 and "keeps to the diagonal in three of its four heads" in said
    assert "Take the input 34 ([show 34](/?input=34#step-16)): row 1" in said


def test_a_sentence_about_a_fixed_input_says_so_and_links_to_it():
    """In steps 1–25 a number the text works through is named as "the input N", with a link that sets it in the
    same paragraph (the reader's own input is on the stage); "for 42," alone reads as if it were the picture's."""
    for step in range(1, 26):
        (path,) = (ROOT / "content" / "steps").glob(f"{step:02d}-*.md")
        for paragraph in split_front_matter(path.read_text(encoding="utf-8"))[1].split("\n\n"):
            bare = re.findall(r"(?:^|[.;:] |, )[Ff]or (\d+)\b", paragraph)  # "…: for 34, row 1 …", "For 42, the …"
            assert not bare, (step, bare, paragraph[:120])
            for number in re.findall(r"\bthe input (\d+)", paragraph):
                assert re.search(rf"\]\(/\?input={number}[&#]", paragraph), (step, number)


def test_the_reordering_figures_hold_for_200_random_inputs(client):
    rng = random.Random(22)
    numbers = [rng.randint(0, 999_999) for _ in range(200)]
    for number, (t, d) in zip(numbers, traced_many(client, numbers), strict=True):
        cross, src, out, rows = head_mean(t), list(t.source_tokens), list(t.output_tokens), list(t.target_tokens)
        und = [r for r, p in enumerate(out) if p == "und"]
        if not und:
            assert d["und_rows"] == "none (this input has no und)", number
        for r, text in zip(und, d["und_rows"].split("; ") if und else [], strict=True):
            top = np.argsort(cross[r])[::-1][:2]
            assert text == f"row {r + 1} (reads {rows[r]}): " + ", ".join(
                f"{src[i]} {cross[r][i]:.3f}".replace("-", "\u2212") for i in top
            ), number
        before = [r for r in range(len(out) - 1) if out[r + 1] == "und" and out[r] in UNITS_BEFORE_UND]
        if not before:
            assert d["units_on_their_word"] == "none (no unit comes before und here)", number
            continue
        found = sum(src[int(cross[r].argmax())] == UNITS_BEFORE_UND[out[r]] for r in before)
        assert d["units_on_their_word"] == f"{found} of {len(before)}", number
        for r in before:  # "which stands right of the tens word": "vier und dreißig" is "thirty four"
            assert (TENS[out[r + 2]], UNITS_BEFORE_UND[out[r]]) in set(zip(src, src[1:])), number


def test_the_page_fills_the_new_live_slots(client):
    """For 1234 the page computes these texts; the server fills the slots for the default input (42) with the
    page's figures for it, computed ahead."""
    (_, d), (_, d42) = traced_many(client, [1234, 42])
    assert d["und_rows"] == "row 6 (reads vier): thirty 0.492, </s> 0.489" and d["units_on_their_word"] == "1 of 1"
    page = client.get("/").text
    assert d42["und_rows"].startswith("row 2 (reads zwei): ") and d42["units_on_their_word"] == "1 of 1"
    for key in ("und_rows", "units_on_their_word"):
        shown = [htmllib.unescape(x) for x in re.findall(rf'data-live="{key}"[^>]*>([^<]*)<', page)]
        assert shown == [d42[key]], key


def test_the_units_before_und_are_the_ones_the_page_looks_for(client):
    assert client.get("/api/live").json()["constants"]["units_before_und"] == UNITS_BEFORE_UND


# ---- which heads a model needs: stated for the models it was measured on ----------------------------


def needed(rows: list[dict], key: str = "ablated", prefix: str = "head") -> list[str]:
    """Heads whose removal alone costs more than 10 points of exact match on the numbers with und."""
    base = next(r for r in rows if r[key] == "none")["with_und"]["exact_match"]
    return [r[key] for r in rows if r[key].startswith(prefix) and base - r["with_und"]["exact_match"] > 0.10]


def test_which_heads_are_needed_is_stated_for_each_model_measured():
    desk = [needed(r["analysis"]["rows"]) for r in results("head_ablation")["runs"] if r["variant"] == "baseline"]
    assert [len(h) for h in desk] == [1, 1] and desk[0] != desk[1]  # one each, a different one
    shipped = needed(results("part_ablation")["rows"], key="part", prefix="dec.1.cross.h")
    assert shipped == []  # the model on the stage needs none of the four alone
    assert "needs only one of the four" not in step_text(7) and "only one of the four matters" not in step_text(16)
    assert "each of those models needed exactly one of the four" in step_text(7)
    assert "The model on the stage needs none of them alone" in step_text(7)
    assert "each of the desk's two 2 500-step models needed exactly one of the four" in step_text(16)
    assert "the model on the stage needs none of them alone" in step_text(16)
    assert "need none, one or two" in step_text(16)
    assert "4 need no such head, 7 need one and 5 need two" in step_text(21)


def test_seed_1s_needed_head_is_its_weakest_aligner_of_reordered_pieces_only():
    (run,) = [r for r in results("alignment")["runs"] if r["variant"] == "baseline" and r["seed"] == 1]
    layer = max((la for la in run["analysis"]["layers"] if la["convention"] == "predicts"), key=lambda la: la["layer"])
    heads = {h["head"]: h for h in layer["heads"]}
    (critical,) = [r for r in results("head_ablation")["runs"] if r["variant"] == "baseline" and r["seed"] == 1]
    (head,) = needed(critical["analysis"]["rows"])
    h = int(head.split()[-1])
    assert min(heads, key=lambda i: heads[i]["reordered"]) == h
    weakest_all = min(heads, key=lambda i: heads[i]["all"])
    assert weakest_all != h
    said = (
        f"weakest aligner of reordered pieces ({100 * heads[h]['reordered']:.1f} %; over all linked pieces another "
        f"head is weaker, {100 * heads[weakest_all]['all']:.1f} % against its {100 * heads[h]['all']:.1f} %)"
    )
    assert said in step_text(29)


# ---- the training sampler, the results table, pre-LN ------------------------------------------------


def test_the_sampler_is_described_as_model_data_draws_it():
    from model.data import NumberSampler

    drawn = np.array(NumberSampler(seed=0, exclude=set()).sample(20_000))
    six = drawn[drawn >= 100_000]
    round_six = np.mean(six % 100_000 == 0)  # every digit after the first is zero
    assert 0.01 < round_six < 0.03  # ½ · (½)^5 ≈ 1.6 %, against 10^-5 for uniform digits
    assert "for half of the numbers, each digit after the first is set to zero with probability one half" in step_text(
        21
    )


def test_the_results_table_says_which_rows_it_keeps():
    said = step_text(24)
    assert "the strongest recurrent and convolutional systems" not in said
    assert "GNMT + RL ensemble" in said and "mixture-of-experts" in said and "left out" in said


def test_gpt_2_adopted_pre_normalisation_rather_than_moving_it():
    extras = (ROOT / "content" / "extras.md").read_text()
    assert "GPT-2 moved the LayerNorm" not in extras and "GPT-2 adopted it" in extras


# ---- node ids in the prose carry the reader's names (counted from 1) ----------------------------------


def test_a_node_id_in_the_prose_stands_beside_the_readers_name():
    found = 0
    for n in range(1, 30):
        text = step_text(n)
        for m in CODE_ID.finditer(text):
            found += 1
            assert text[m.start() - 2 : m.start()] == "(`" and text[m.end() : m.end() + 2] == "`)", (n, m.group(0))
            before = text[max(0, m.start() - 80) : m.start()]
            side = {"enc": "encoder", "dec": "decoder"}[m.group(1)]
            assert f"{side} {int(m.group(2)) + 1}" in before.lower(), (n, m.group(0), before)
            if m.group(4) is not None:  # a head: the one name the stage, the tables and the panel give it
                part = ids.parse(m.group(0).split(".h")[0] + f".h{m.group(4)}").reader_name()
                assert before.lower().endswith(f"{part} (`"), (n, m.group(0), before)
    assert found >= 3


def test_step_4s_token_carries_the_larger_share_for_every_input(model):
    """ "The token still carries the larger share": true of every row an input can look up (all but <pad>),
    so of every input; a positional-encoding row is √(d/2) = 4 long."""
    from model.vocab import VOCAB

    m, params = model
    lengths = np.linalg.norm(params["E"].astype(np.float64), axis=1) * np.sqrt(m.cfg.d_model)
    lookups = [i for i in range(len(VOCAB)) if i != VOCAB.pad_id]
    assert lengths[lookups].min() > np.sqrt(m.cfg.d_model / 2)
    assert "the token still carries the larger share" in step_text(4)
