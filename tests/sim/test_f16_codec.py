"""The interpreter's compiled fp16 conversions (backends/interp/f16.py) give numpy's bits.

Every fp16 pattern is decoded; fp32 patterns are sampled (every 4099th, which visits every exponent and
sign with varied significands) plus the edges: signalling and quiet NaNs of both signs, infinities,
values that round to the largest fp16 or overflow, ties at the subnormal and normal boundaries.
"""
import numpy as np
import pytest

from pypto_pro.backends.interp import f16

pytestmark = pytest.mark.skipif(f16.library() is None, reason="no C++ compiler")


def test_decode_every_fp16_pattern():
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    ref = h.view(np.float16).astype(np.float32)
    assert f16.decode(h).view(np.uint32).tobytes() == ref.view(np.uint32).tobytes()


def _edges() -> np.ndarray:
    specials = [0x7F800001, 0x7F800000, 0xFF800000, 0x7FA00000, 0xFFBFFFFF, 0x7FC00000, 0xFFC00001, 0x7F801FFF,
                0x7F802000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0x33800000, 0x33000000, 0x33000001,
                0x387FC000, 0x387FE000, 0x38800000, 0x00000001, 0x80000000]
    around = [b + d for b in specials for d in (-1, 0, 1)]
    return np.array([x & 0xFFFFFFFF for x in around], dtype=np.uint64).astype(np.uint32)


def test_encode_samples_and_edges():
    bits = np.concatenate([np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32), _edges()])
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        ref = x.astype(np.float16)
    assert f16.encode(x).view(np.uint16).tobytes() == ref.view(np.uint16).tobytes()


def test_shapes_and_non_contiguous_windows():
    x = np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32)[:, 8:72]
    np.testing.assert_array_equal(f16.encode(x), x.astype(np.float16))
    h = x.astype(np.float16)
    np.testing.assert_array_equal(f16.decode(h.view(np.uint16)), h.astype(np.float32))
