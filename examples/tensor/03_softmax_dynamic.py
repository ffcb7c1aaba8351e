"""Row softmax over a DYNAMIC batch: a pypto.loop over row blocks, views with valid shapes, assemble."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402

BLOCK, HIDDEN = 16, 128


@pypto.frontend.jit
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32),
                   y: pypto.Tensor([pypto.DYNAMIC, HIDDEN], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(BLOCK, HIDDEN)
    rows = x.shape[0]
    for i in pypto.loop((rows + BLOCK - 1) // BLOCK, idx_name="blk"):
        valid = pypto.min(rows - i * BLOCK, BLOCK)
        tile = pypto.view(x, [BLOCK, HIDDEN], [i * BLOCK, 0], valid_shape=[valid, HIDDEN])
        pypto.assemble(pypto.softmax(tile, -1), [i * BLOCK, 0], y)


def main() -> bool:
    ok = True
    for rows in (16, 37, 100):
        x = torch.randn(rows, HIDDEN)
        y = torch.empty_like(x)
        softmax_kernel(x, y)
        ok &= check(f"softmax {rows}x{HIDDEN} (DYNAMIC rows)", y, torch.softmax(x, -1), 1e-6)
    ok &= check("compiled once for every batch size", softmax_kernel.compile_count, 1, 0)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
