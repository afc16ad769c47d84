"""Screenshots as numbers: a PNG decoded with zlib and numpy (no imaging library is a dependency), the
share of pixels two pictures differ in, and a picture of where they differ (a PNG written back)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type → samples per pixel (8-bit, no palette)


def chunks(png: bytes):
    pos = len(SIGNATURE)
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos : pos + 8])
        yield kind, png[pos + 8 : pos + 8 + n]
        pos += 12 + n


def decode_png(png: bytes) -> np.ndarray:
    """An 8-bit, non-interlaced, grey or RGB(A) PNG (what Chromium's screenshots are) as a (height, width,
    channels) uint8 array. The rows' filters are undone along the picture's anti-diagonals: a pixel's
    predictors (left, up, up-left) all lie on the two diagonals before its own, so each diagonal is one
    numpy step for every row and filter kind at once (Chromium writes Paeth rows mostly, which a row at a
    time could only undo pixel by pixel)."""
    if png[:8] != SIGNATURE:
        raise ValueError("not a PNG")
    parts = list(chunks(png))
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    ch = CHANNELS[colour]
    raw = np.frombuffer(zlib.decompress(b"".join(c for k, c in parts if k == b"IDAT")), np.uint8)
    rows = raw.reshape(height, width * ch + 1)
    kind = rows[:, 0].astype(np.int16)
    if kind.max() > 4:
        raise ValueError(f"bad filter type {kind.max()}")
    filt = rows[:, 1:].reshape(height, width, ch).astype(np.int16)
    # skewed: diagonal d = row + column is line d + 2 of `skew` (two zero lines before the first), row r its
    # place r + 1 (a zero row above the first); a pixel left of the picture stays 0, as PNG's rule has it
    r, x = np.indices((height, width))
    skewed = np.zeros((height + width + 2, height, ch), np.int16)
    skewed[r + x + 2, r] = filt
    out = np.zeros((height + width + 2, height + 1, ch), np.int16)
    sub, up, avg, pae = ((kind == k)[:, None].astype(np.int16) for k in (1, 2, 3, 4))
    for d in range(2, height + width + 1):
        a, b, c = out[d - 1, 1:], out[d - 1, :-1], out[d - 2, :-1]  # left, up, up-left
        p = a + b - c
        pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
        to_a = (pa <= pb) & (pa <= pc)  # Paeth's choice, in arithmetic (np.where costs ten times more here)
        to_b = (pb <= pc) & ~to_a
        paeth = c + to_a * (a - c) + to_b * (b - c)
        out[d, 1:] = (skewed[d] + sub * a + up * b + avg * ((a + b) >> 1) + pae * paeth) & 255
    return out[r + x + 2, r + 1].astype(np.uint8)


def encode_png(pixels: np.ndarray) -> bytes:
    """An (height, width, 3) uint8 array as a PNG (no filter): for looking at a difference."""
    h, w, ch = pixels.shape
    raw = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * ch)], axis=1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", w, h, 8, {1: 0, 3: 2, 4: 6}[ch], 0, 0, 0)
    return SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def differing(a: np.ndarray, b: np.ndarray, tolerance: int = 8) -> np.ndarray:
    """Where two pictures of one size differ: a pixel whose red, green or blue differs by more than
    `tolerance` (of 255) in any of them."""
    if a.shape[:2] != b.shape[:2]:
        raise ValueError(f"pictures of different sizes: {a.shape} and {b.shape}")
    return (np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16)) > tolerance).any(axis=-1)


def difference_picture(a: np.ndarray, b: np.ndarray, tolerance: int = 8) -> bytes:
    """`a` dimmed, with the pixels that differ from `b` in red: a PNG."""
    out = (a[..., :3].astype(np.uint16) // 3).astype(np.uint8)
    out[differing(a, b, tolerance)] = (255, 0, 0)
    return encode_png(out)
