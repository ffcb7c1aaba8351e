"""Control flow: compile-time if (Python values), runtime if on symbolic values, is_loop_begin/end,
loop steps over a DYNAMIC dim."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pypto  # noqa: E402
from _check import check  # noqa: E402


@pypto.frontend.jit
def scan_blocks(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 64],
                                                                                       pypto.DT_FP32),
                scale: float = 2.0):
    pypto.set_vec_tile_shapes(8, 64)
    rows = x.shape[0]
    for i in pypto.loop(0, rows, 8):
        valid = pypto.min(rows - i, 8)
        part = pypto.view(x, [8, 64], [i, 0], valid_shape=[valid, 64])
        if pypto.is_loop_begin(i):
            pypto.assemble(part * 0, [i, 0], y)
        elif pypto.is_loop_end(i):
            pypto.assemble(part * -1, [i, 0], y)
        else:
            pypto.assemble(part * scale if scale > 1 else part, [i, 0], y)


def main() -> bool:
    ok = True
    for rows, scale in ((30, 2.0), (30, 0.5), (16, 3.0)):
        x = torch.randn(rows, 64)
        y = torch.empty_like(x)
        scan_blocks(x, y, scale)
        want = x * (scale if scale > 1 else 1)
        want[:8] = 0
        last = (rows - 1) // 8 * 8
        want[last:] = -x[last:]
        ok &= check(f"runtime if / is_loop_begin/end rows={rows} scale={scale}", y, want, 0)
    return ok


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
