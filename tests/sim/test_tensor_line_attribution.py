"""The simulator attributes the tile ops of a tensor-level value materialised for a later statement
(a matmul result, an element-wise intermediate feeding a matmul) to the line that wrote it, so a
profile names the line that does the work."""
import collections
import inspect

import torch

import pypto


@pypto.frontend.jit(backend="sim")
def chained(x: pypto.Tensor([64, 64], pypto.DT_FP16), w1: pypto.Tensor([64, 64], pypto.DT_FP16),
            w2: pypto.Tensor([64, 64], pypto.DT_FP16), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [32, 64], [32, 64])
    pypto.set_vec_tile_shapes(32, 64)
    h = pypto.matmul(x, w1, pypto.DT_FP32)  # FIRST
    a = pypto.cast(pypto.sigmoid(h), pypto.DT_FP16)  # MIDDLE
    out[:] = pypto.matmul(a, w2, pypto.DT_FP32)  # LAST


def _line(tag: str) -> int:
    lines, start = inspect.getsourcelines(chained.__wrapped__)
    return start + next(i for i, line in enumerate(lines) if tag in line)


def test_each_statement_owns_its_ops_in_the_sim_report():
    x, w1, w2 = (torch.randn(64, 64).half() * 0.3 for _ in range(3))
    out = torch.empty(64, 64)
    chained(x, w1, w2, out)
    ref = torch.sigmoid(x.float() @ w1.float()).half().float() @ w2.float()
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2)
    ops = collections.defaultdict(set)
    for ins in chained.last_report.instructions:
        ops[ins.loc.lineno if ins.loc else None].add(ins.op)
    first, middle, last = _line("FIRST"), _line("MIDDLE"), _line("LAST")
    assert {"matmul", "load", "store"} <= ops[first]
    assert "cast" in ops[middle] and "matmul" not in ops[middle]
    assert "matmul" in ops[last] and "cast" not in ops[last] and "exp" not in ops[last]
