"""Basic ops: (a+b)*2, erfc, BF16 matmul via out.move, sum(dim=-1), elementwise math, reductions."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402


@pypto.frontend.jit
def basic(a: pypto.Tensor(), b: pypto.Tensor(), o1: pypto.Tensor(), o2: pypto.Tensor(), o3: pypto.Tensor(),
          o4: pypto.Tensor(), o5: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 64)
    o1[:] = (a + b) * 2
    o2[:] = pypto.erfc(a)
    o3[:] = pypto.sum(a, dim=-1)
    o4[:] = pypto.clip(pypto.round(a * 4) / 4, -1.0, 1.0) + pypto.pow(b, 2)
    o5[:] = pypto.amax(a, 0, keepdim=True) - pypto.amin(b, 0, keepdim=True)


@pypto.frontend.jit
def bf16_matmul(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor()):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 64)
    c.move(pypto.matmul(a, b, pypto.DT_BF16))


def main() -> bool:
    torch.manual_seed(0)
    a, b = torch.randn(48, 64), torch.randn(48, 64)
    outs = [torch.empty(48, 64), torch.empty(48, 64), torch.empty(48), torch.empty(48, 64), torch.empty(1, 64)]
    basic(a, b, *outs)
    ok = check("(a + b) * 2", outs[0], (a + b) * 2)
    ok &= check("erfc", outs[1], torch.erfc(a), 1e-5)
    ok &= check("sum(dim=-1)", outs[2], a.sum(-1))
    ok &= check("clip/round/pow", outs[3], torch.clamp(torch.round(a * 4) / 4, -1, 1) + b ** 2)
    ok &= check("amax/amin keepdim", outs[4], a.amax(0, keepdim=True) - b.amin(0, keepdim=True))
    x, w = torch.randn(64, 96).bfloat16(), torch.randn(96, 64).bfloat16()
    c = torch.empty(64, 64, dtype=torch.bfloat16)
    bf16_matmul(x, w, c)
    ok &= check("bf16 matmul", c, (x.float() @ w.float()).bfloat16(), 0.1)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
