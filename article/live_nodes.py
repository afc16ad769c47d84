"""The trace nodes the article's live figures read, named once: /api/live (article/recipe.py) sends them to the
page, which computes the figures (static/compute/derived.js) knowing no id, and the scene's structure names the
worked row's blocks by the same ids (scene/structure.py)."""

from __future__ import annotations

from model import ids
from model.numbers import EN_ONES, EN_TENS
from model.vocab import EOS

WORKED_STATION = ids.sublayer_id("enc", 0, "self")  # the sub-layer steps 6–9 show: encoder layer 1's self-attention
# the words the worked row's rule reads (static/compute/worked.js chooseWorked): a tens word asking about the unit
# after it is the question German's order raises (zweiundvierzig says the unit first); the end token last
WORKED_WORDS = {"eos": EOS, "tens": EN_TENS[2:], "units": EN_ONES[1:]}
FIRST_SUM = ids.join(WORKED_STATION, "sum")  # its residual sum: the sub-layer's input plus its output
FIRST_LN = ids.join(WORKED_STATION, "ln")  # post-LN only: that sum's LayerNorm
FIRST_PROJ = ids.join(WORKED_STATION, "proj")  # the sub-layer's output (W_o), before the sum
FIRST_Q = ids.join(WORKED_STATION, "q")
FFN_HIDDEN = ids.join(ids.sublayer_id("enc", 0, "ffn"), "hidden")  # encoder layer 1's ReLU (or SwiGLU) units
SCALED = ids.join("src", "scaled")  # the paper's embedding only: √d·E[token]
X0 = ids.join("src", "x0")  # the embedding plus the positions
LOGITS, PROBS, TOKENS = (ids.join("out", role) for role in ("logits", "probs", "tokens"))
FIRST_DECODER_SELF = ids.sublayer_id("dec", 0, "self")


def last_cross(n_layers: int) -> str:
    """The last decoder layer's cross-attention."""
    return ids.sublayer_id("dec", n_layers - 1, "cross")


def last_cross_weights(n_layers: int, n_heads: int) -> list[str]:
    """Each head's weights of the last decoder layer's cross-attention."""
    return [ids.head_id(last_cross(n_layers), h, "weights") for h in range(n_heads)]


def worked_blocks(station: str = WORKED_STATION, head: int = 0) -> dict[str, str]:
    """The trace nodes of the worked row: the head's columns of Q, K and V, its scores, weights and output."""
    p = f"{station}.h{head}"
    return {
        "q": f"{station}.q.h{head}",
        "k": f"{station}.k.h{head}",
        "v": f"{station}.v.h{head}",
        "scores": f"{p}.scores",
        "weights": f"{p}.weights",
        "out": f"{p}.out",
        "v_full": f"{station}.v",
    }


def head_weight_ids(t, station: str = WORKED_STATION) -> list[str]:
    """The weights nodes of every head of a self-attention sub-layer, head by head."""
    return sorted(
        (n.id for n in t.nodes if n.id.startswith(f"{station}.h") and n.id.endswith(".weights")),
        key=lambda i: int(i[len(station) + 2 :].split(".")[0]),
    )
