"""The tile parser's hints for Python operators on tiles and numpy/math functions given tiles or
runtime scalars name the tile op to call instead."""
import pytest
import torch

from pypto_pro.errors import KernelSyntaxError


def _message(kernel, *args) -> str:
    with pytest.raises(KernelSyntaxError) as info:
        kernel[None, 1](*args)
    return str(info.value)


def _op_kernel(expr: str):
    """A kernel computing ``u = <expr>`` from a loaded tile ``t``, written to a module file so the
    parser can read its source."""
    import importlib.util
    import pathlib
    import tempfile

    path = pathlib.Path(tempfile.mkdtemp()) / "slip_kernel.py"
    path.write_text(f"""import math
import numpy as np
import pypto_pro.language as pl
V = pl.MemorySpace.Vec

@pl.jit(backend="interp")
def k(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32, V), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        u = {expr}
        pl.store(y, t, [0, 0])
""")
    spec = importlib.util.spec_from_file_location("slip_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


ARGS = (torch.zeros(16, 64), torch.zeros(16, 64))


@pytest.mark.parametrize("op,name", [("*", "mul"), ("-", "sub"), ("/", "div"), ("+", "add")])
def test_arithmetic_on_a_tile_names_the_tile_op_and_its_scalar_form(op, name):
    msg = _message(_op_kernel(f"t {op} 2.0"), *ARGS)
    assert f"operator '{op}' on tiles" in msg and f"pl.{name}(dst, lhs, rhs)" in msg
    assert f"pl.{name}(dst, t, 2.0)" in msg


def test_a_shift_of_a_tile_names_pl_shl_without_a_scalar_form():
    msg = _message(_op_kernel("t << 2"), *ARGS)
    assert "pl.shl(dst, lhs, rhs)" in msg and "may be a scalar" not in msg


def test_a_numpy_function_on_a_tile_names_the_tile_op():
    msg = _message(_op_kernel("np.exp(t)"), *ARGS)
    assert "on tiles use the tile op pl.exp(dst, src)" in msg


def test_math_on_a_runtime_scalar_says_there_is_no_runtime_scalar_form():
    msg = _message(_op_kernel("math.sqrt(x.shape[0])"), *ARGS)
    assert "there is no runtime scalar sqrt" in msg and "pl.sqrt(dst, src)" in msg


def test_a_tile_plus_an_integer_used_as_a_tile_says_it_is_an_address():
    """``t + 2`` is VF pointer arithmetic; storing it as a tile explains that instead of naming a class."""
    kernel = _op_kernel("t + 2\n        pl.store(y, u, [0, 0])")
    from pypto_pro.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match=r"`tile \+ offset`, an address .* pl\.add\(dst, tile, value\)"):
        kernel[None, 1](*ARGS)
