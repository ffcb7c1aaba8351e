"""Hello world: out = x + y (64x64 FP32, inferred annotations)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402


@pypto.frontend.jit
def add_kernel(x: pypto.Tensor(), y: pypto.Tensor(), out: pypto.Tensor()):
    pypto.set_vec_tile_shapes(32, 64)
    out[:] = x + y


def main() -> bool:
    x, y = torch.randn(64, 64), torch.randn(64, 64)
    out = torch.empty(64, 64)
    add_kernel(x, y, out)
    return check("hello world x + y", out, x + y, 0)


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
