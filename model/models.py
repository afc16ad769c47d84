"""The miniatures the product ships, by name: the paper's 2017 recipe (the default) and today's.

One definition of which models exist, where their weights lie and how each is configured; the CLI,
the service and the API read it (`?model=` on the page and the API picks one).
"""

from __future__ import annotations

from pathlib import Path

from model.transformer import MODERN, Config

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
DEFAULT = "2017"
CONFIGS: dict[str, dict] = {"2017": {}, "modern": MODERN}  # overrides of Config
DIRECTORIES: dict[str, Path] = {"2017": ARTIFACTS, "modern": ARTIFACTS / "modern"}
TITLES = {
    "2017": "the paper's recipe (2017)",
    "modern": "today's recipe (pre-RMSNorm, rotary, SwiGLU, no biases, untied output)",
}
NAMES = tuple(CONFIGS)


def check_name(name: str) -> str:
    """The name itself, or a ValueError naming the accepted ones."""
    if name not in CONFIGS:
        raise ValueError(f"unknown model {name!r}; accepted: {', '.join(NAMES)}")
    return name


def config(name: str) -> Config:
    from model.vocab import VOCAB

    return Config(vocab_size=len(VOCAB), **CONFIGS[check_name(name)])


def weights_path(name: str) -> Path:
    return DIRECTORIES[check_name(name)] / "model.safetensors"
