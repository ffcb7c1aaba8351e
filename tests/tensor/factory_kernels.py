"""A kernel factory under ``from __future__ import annotations``: the annotations are strings that
name the factory's argument, evaluated with the kernel's closure (tests/tensor/test_acceptance_frontend.py)."""
from __future__ import annotations

import pypto


def scale_kernel(cols: int):
    @pypto.frontend.jit
    def scale(x: pypto.Tensor([4, cols], pypto.DT_FP32), o: pypto.Tensor([4, cols], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, cols)
        o[:] = x * 2.0

    return scale
