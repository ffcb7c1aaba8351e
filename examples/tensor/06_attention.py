"""Scaled dot-product attention per head: softmax(Q K^T / sqrt(d)) V (batched matmuls, b_trans)."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402

H, S, DH = 2, 32, 64


@pypto.frontend.jit
def attention(q: pypto.Tensor(), k: pypto.Tensor(), v: pypto.Tensor(), out: pypto.Tensor()):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
    pypto.set_vec_tile_shapes(1, 32, 64)
    scores = pypto.matmul(q, k, pypto.DT_FP32, b_trans=True) * (1.0 / math.sqrt(DH))
    probs = pypto.cast(pypto.softmax(scores, -1), pypto.DT_FP16)
    out[:] = pypto.matmul(probs, v, pypto.DT_FP32)


def main() -> bool:
    torch.manual_seed(0)
    q, k, v = (torch.randn(H, S, DH).half() for _ in range(3))
    out = torch.empty(H, S, DH)
    attention(q, k, v, out)
    p = torch.softmax(q.float() @ k.float().transpose(-1, -2) / math.sqrt(DH), -1).half().float()
    return check("attention (2 heads)", out, p @ v.float(), 2e-3)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
