"""Where a token is: the paper's sinusoid table (§3.5), rotary embeddings and ALiBi's score bias."""

from __future__ import annotations

import math

import torch
from torch import Tensor


def sinusoid_table(n_positions: int, d_model: int) -> Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))  (§3.5)."""
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * inv_freq)
    table[:, 1::2] = torch.cos(pos * inv_freq)
    return table.float()


def rotate(x: Tensor, start: int = 0) -> Tensor:
    """Rotary position embedding (Su et al. 2021) on (B, h, T, d_k) at positions start … start+T−1,
    pairs (2i, 2i+1) rotated."""
    t, d = x.shape[-2], x.shape[-1]
    angles = sinusoid_angles(start + t, d, x.device)[start:]  # (T, d/2)
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def sinusoid_angles(t: int, d: int, device: torch.device) -> Tensor:
    inv_freq = 10000.0 ** (-torch.arange(0, d, 2, device=device, dtype=torch.float32) / d)
    return torch.arange(t, device=device, dtype=torch.float32)[:, None] * inv_freq


def alibi_bias(n_heads: int, t_q: int, t_k: int, device: torch.device, start: int = 0) -> Tensor:
    """ALiBi (Press et al. 2022): −m_h·|i − j| added to the scores, slopes 2^(−8h/H); queries at
    positions start … start+t_q−1."""
    slopes = 2.0 ** (-8.0 * torch.arange(1, n_heads + 1, device=device) / n_heads)
    dist = (torch.arange(start, start + t_q, device=device)[:, None] - torch.arange(t_k, device=device)).abs()
    return -slopes[:, None, None] * dist  # (h, T_q, T_k)
