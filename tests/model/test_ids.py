"""Ids have a grammar (model/ids.py): every id the trace mints parses into fields that write it
again, and the fields say what the id means."""

from __future__ import annotations

import pytest

from model import ids
from tests.golden.fingerprint import load

GOLDEN = load()
EVERY_ID = sorted(
    {n[0] for t in GOLDEN.values() for n in t["nodes"]} | {i for t in GOLDEN.values() for n in t["nodes"] for i in n[2]}
)


def test_every_minted_id_parses_into_fields_that_write_it_again():
    assert len(EVERY_ID) > 350
    for i in EVERY_ID:
        assert ids.compose(ids.parse(i)) == i, i


@pytest.mark.parametrize(
    "node_id, fields",
    [
        (
            "dec.1.cross.h3.weights",
            dict(
                stack="dec",
                layer=1,
                sublayer="cross",
                head=3,
                role="weights",
                station="dec.1.cross",
                is_head_slice=False,
            ),
        ),
        ("enc.0.self.q.h2", dict(stack="enc", layer=0, sublayer="self", head=2, role="q", is_head_slice=True)),
        ("enc.0.ffn.ln.gamma", dict(stack="enc", layer=0, sublayer="ffn", head=None, role="gamma", parent="ln")),
        ("src.x0", dict(side="src", stack=None, layer=None, sublayer=None, role="x0", station=None)),
        ("lens.dec.1.probs", dict(lens=True, stack="dec", layer=1, sublayer=None, role="probs")),
        ("dec.norm.gamma", dict(stack="dec", layer=None, role="gamma", parent="norm")),
        ("E", dict(where="E", role="E", stack=None, side=None)),
    ],
)
def test_an_id_says_where_its_tensor_lives(node_id, fields):
    name = ids.parse(node_id)
    for field, want in fields.items():
        assert getattr(name, field) == want, (node_id, field)


def test_a_reader_counts_layers_and_heads_from_one():
    assert ids.parse("dec.1.cross.h3.weights").reader_name() == "decoder 2 · cross-attention · head 4"
    assert ids.parse("dec.0.self.h0.masked").reader_name() == "decoder 1 · masked self-attention · head 1"
    assert ids.parse("enc.1.ffn.hidden").reader_name() == "encoder 2 · feed-forward"


def test_the_minting_functions_write_the_grammar():
    sub = ids.sublayer_id("dec", 1, "cross")
    assert ids.head_id(sub, 3, "weights") == "dec.1.cross.h3.weights"
    assert ids.head_slice_id(ids.join(sub, "q"), 2) == "dec.1.cross.q.h2"
    assert ids.lens_id(0, "probs") == "lens.dec.0.probs"
    with pytest.raises(ValueError):
        ids.sublayer_id("dec", 1, "crosss")


def test_a_sibling_is_the_tensor_in_the_same_place_with_another_role():
    assert ids.sibling("dec.0.self.h1.scores", "masked") == "dec.0.self.h1.masked"
    assert ids.sibling("enc.0.self.q.h2", "k") == "enc.0.self.k.h2"
    assert ids.sibling("enc.1.ffn.ln.gamma", "beta") == "enc.1.ffn.ln.beta"
    assert ids.sibling("lens.dec.1.probs", "tokens") == "lens.dec.1.tokens"


def test_every_recorded_node_carries_its_name_and_sends_only_its_id():
    from model import models
    from model.train import load
    from recorder import parameters, trace

    model = load(models.weights_path("modern"))
    t = trace(model, 42, parameters(model), ablation=["enc.1.self", "dec.1.cross.h1"], lens=True)
    for node in t.nodes:
        assert node.name is node.name and node.name == ids.parse(node.id)  # read once, kept
        assert ids.compose(node.name) == node.id
        assert set(node.to_json()) == {"id", "op", "inputs", "attrs", "shape", "dtype", "data"}
    named = {n.id: n.name for n in t.nodes}
    assert named["dec.1.cross.h1.off"].head == 1 and named["dec.1.cross.h1.off"].role == "off"
    assert named["lens.dec.0.norm"].lens and named["enc.1.self.gate"].station == "enc.1.self"


def test_the_recorder_never_splits_an_id():
    from pathlib import Path

    for path in (Path(__file__).resolve().parents[2] / "recorder").glob("*.py"):
        assert ".split(" not in path.read_text(), path.name
