"""Rotary position embedding with cos/sin computed in the kernel, and top-k over router logits:
the trig, shape and sorting ops of the tensor level on a DYNAMIC token count."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402

HEAD_DIM = 64
HALF = HEAD_DIM // 2


@pypto.frontend.jit
def rope(q: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32),
         inv_freq: pypto.Tensor([1, HALF], pypto.DT_FP32),
         pos: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
         out: pypto.Tensor([pypto.DYNAMIC, HEAD_DIM], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, HEAD_DIM)
    angle = pos * inv_freq                      # [tokens, HALF]: outer product by broadcasting
    cos, sin = pypto.cos(angle), pypto.sin(angle)
    x1, x2 = q[:, :HALF], q[:, HALF:]
    out[:, :HALF] = x1 * cos - x2 * sin
    out[:, HALF:] = x2 * cos + x1 * sin


@pypto.frontend.jit
def route(logits: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
          weights: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_FP32),
          experts: pypto.Tensor([pypto.DYNAMIC, 4], pypto.DT_INT64)):
    pypto.set_vec_tile_shapes(16, 16)
    values, indices = pypto.topk(pypto.softmax(logits, -1), 4, -1)
    weights[:] = values / pypto.sum(values, -1, keepdim=True)
    experts[:] = indices


def rope_reference(q, inv_freq, pos):
    angle = pos * inv_freq
    x1, x2 = q[:, :HALF], q[:, HALF:]
    return torch.cat([x1 * torch.cos(angle) - x2 * torch.sin(angle), x2 * torch.cos(angle) + x1 * torch.sin(angle)], -1)


def main() -> bool:
    ok = True
    inv_freq = (1.0 / 10000 ** (torch.arange(HALF, dtype=torch.float32) / HALF)).reshape(1, HALF)
    for tokens in (7, 40):
        q = torch.randn(tokens, HEAD_DIM)
        pos = torch.arange(tokens, dtype=torch.float32).reshape(tokens, 1) + 100
        out = torch.empty_like(q)
        rope(q, inv_freq, pos, out)
        ok &= check(f"rope tokens={tokens}", out, rope_reference(q, inv_freq, pos), 1e-4)
    logits = torch.randn(24, 16)
    weights, experts = torch.empty(24, 4), torch.empty(24, 4, dtype=torch.int64)
    route(logits, weights, experts)
    values, indices = torch.topk(torch.softmax(logits, -1), 4, -1)
    ok &= check("top-4 routing weights", weights, values / values.sum(-1, keepdim=True), 1e-5)
    ok &= check("top-4 routing experts", experts, indices, 0)
    print(f"rope compiled {rope.compile_count}x for 2 token counts (DYNAMIC)")
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
