"""Launch forms the official runtime accepts: keywords, defaults, bit patterns, plain @pl.jit functions."""
import struct

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError

from .kernels import assert_bits_equal


@pl.jit(backend="interp")
def fill(out: pl.Tensor[[1, 8], pl.DT_INT32], value: pl.DT_INT32, extra: pl.DT_INT32 = 5):
    with pl.section_vector():
        for i in pl.range(8):
            out[0, i] = value + extra * i


def test_keyword_arguments_bind_by_name_and_defaults_fill_in():
    a, b = np.zeros((1, 8), np.int32), np.zeros((1, 8), np.int32)
    fill(out=a, value=3)
    fill[None, 1](b, extra=2, value=-1)
    assert_bits_equal(a, np.array([[3 + 5 * i for i in range(8)]], np.int32))
    assert_bits_equal(b, np.array([[-1 + 2 * i for i in range(8)]], np.int32))


def test_bad_keywords_name_the_signature():
    with pytest.raises(KernelLaunchError, match="unexpected keyword argument 'nope'"):
        fill(np.zeros((1, 8), np.int32), 1, nope=2)


def test_an_unsigned_bit_pattern_is_the_signed_scalar():
    out = np.zeros((1, 8), np.int32)
    bits = struct.unpack("<I", struct.pack("<f", -1.0))[0]  # 0xBF800000 > INT32_MAX
    fill(out, bits, 0)
    assert out[0, 0] == struct.unpack("<i", struct.pack("<f", -1.0))[0]
    with pytest.raises(KernelLaunchError, match="does not fit INT32"):
        fill(out, 1 << 32, 0)


@pl.jit(backend="interp")
def count_up(out: pl.Tensor[[8], pl.DT_UINT32]):
    with pl.section_vector():
        for i in pl.range(8):
            out[i] = i * 3


def test_integer_tensors_of_the_other_signedness_carry_the_bits():
    out = np.zeros(8, np.int32)  # torch has no uint32 tensors on most versions
    count_up(out)
    assert_bits_equal(out, np.arange(8, dtype=np.int32) * 3)
    with pytest.raises(KernelLaunchError, match="expected dtype UINT32"):
        count_up(np.zeros(8, np.int16))


def test_jit_of_a_function_without_kernel_parameters_is_a_plain_wrapper():
    @pl.jit()
    def host_helper(a, b: int = 2):
        """doc"""
        return a * b

    assert host_helper(3) == 6 and host_helper(3, b=4) == 12
    assert host_helper.__name__ == "host_helper" and host_helper.__doc__ == "doc"
    assert not isinstance(host_helper, pl.JitKernel)


@pl.jit(backend="interp")
def add_dyn(x: pl.Tensor[[pl.DYNAMIC, 8], pl.DT_FP32], y: pl.Tensor[[pl.STATIC, 8], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([1, 8], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.store(y, t, [0, 0])


def test_variant_cache_under_its_official_name():
    cache = add_dyn._compiled_by_signature
    cache.clear()
    for rows in (2, 3, 2):
        add_dyn(np.ones((rows, 8), np.float32), np.zeros((rows, 8), np.float32))
    assert len(cache) == 2  # one variant per STATIC row count
    add_dyn._kernel_def_by_static_signature.clear()  # clearing also drops the frozen launchers
    add_dyn(np.ones((2, 8), np.float32), np.zeros((2, 8), np.float32))
    assert len(add_dyn._compiled_by_signature) == 1
    assert add_dyn.func_name == "add_dyn"


def test_a_tiling_key_kernel_called_directly_is_a_value_error():
    from .test_tiling_key import AttentionKey, causal_rows

    k = pl.jit(causal_rows, backend="interp", tiling_key=AttentionKey)
    with pytest.raises(ValueError, match="cannot be called directly"):
        k(np.zeros((4, 4), np.float32))  # checked before the arguments
