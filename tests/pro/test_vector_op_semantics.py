"""Documented meaning of the elementwise, fused, composite, compare/select and fillpad vector ops,
checked on interp, cpu and sim with our own kernels and inputs.

Every output is compared in full with a numpy statement of the op's meaning (docs/language.md
"Semantics of ops"): fp16 arithmetic is fp32 rounded once per op, fused ops round once at the end
except ``mul_add_dst`` (product rounded first) and the ``*_cast`` ops (rounded to the source dtype,
then widened), part ops combine where both sources are valid and copy the valid one elsewhere.
On sim every launch must be free of races, deadlocks and uninitialised reads.
"""
import numpy as np
import pytest

import pypto_pro.language as pl

from .on_every_backend import EVERY_BACKEND, Vec, backend, poison, run_on, vec_run  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F32, F16, I32, U8 = pl.DT_FP32, pl.DT_FP16, pl.DT_INT32, pl.DT_UINT8


def grid(shape, first, inc, dtype=np.float32):
    """Row-major ``first + inc * k`` over the flat index ``k``, rounded to ``dtype`` once."""
    k = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return (first + inc * k).astype(dtype)


def noisy(shape, seed, lo=-6.0, hi=6.0, dtype=np.float32, step=1 / 16):
    """Random multiples of ``step`` in [lo, hi): exact in fp16 and fp32, so sums and products of two of
    them are exact in fp32."""
    rng = np.random.default_rng(seed)
    return (np.round(rng.uniform(lo, hi, shape) / step) * step).astype(dtype)


def to_f16(x):
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float32).astype(np.float16)


# ------------------------------------------------------------------------------------------ unary
def _abs(d, s, t):
    pl.abs(d, s[0])


def _neg(d, s, t):
    pl.neg(d, s[0])


def _relu(d, s, t):
    pl.relu(d, s[0])


def _sqrt(d, s, t):
    pl.sqrt(d, s[0])


def _log(d, s, t):
    pl.log(d, s[0])


UNARY = {"abs": (_abs, np.abs, (-5, 5)), "neg": (_neg, np.negative, (-5, 5)),
         "relu": (_relu, lambda x: np.maximum(x, np.float32(0)), (-5, 5)),
         "sqrt": (_sqrt, np.sqrt, (0, 40)), "log": (_log, None, (1 / 64, 30))}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_fp32(backend, op):
    step, ref, (lo, hi) = UNARY[op]
    x = noisy((24, 40), seed=len(op), lo=lo, hi=hi, step=1 / 64)
    x[0, :3] = [lo, lo + 1 / 64, hi - 1 / 64]  # the ends of the range, e.g. 0 for sqrt
    got = vec_run(backend, step, [x], Vec(x.shape, F32))
    if op == "log":  # computed in double and rounded once on every backend
        np.testing.assert_array_equal(got, np.log(x.astype(np.float64)).astype(np.float32))
    else:
        np.testing.assert_array_equal(got, ref(x))


# ------------------------------------------------------------------------------------------ binary
def _add(d, s, t):
    pl.add(d, s[0], s[1])


def _sub(d, s, t):
    pl.sub(d, s[0], s[1])


def _mul(d, s, t):
    pl.mul(d, s[0], s[1])


def _div(d, s, t):
    pl.div(d, s[0], s[1])


def _max(d, s, t):
    pl.maximum(d, s[0], s[1])


def _min(d, s, t):
    pl.minimum(d, s[0], s[1])


BINARY = {"add": (_add, np.add), "sub": (_sub, np.subtract), "mul": (_mul, np.multiply),
          "div": (_div, np.divide), "maximum": (_max, np.maximum), "minimum": (_min, np.minimum)}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_fp32(backend, op):
    step, ref = BINARY[op]
    a = grid((16, 72), -3.5, 0.375)
    b = noisy((16, 72), seed=7, lo=0.5, hi=20)  # positive: no division by zero
    b[::3] *= -1
    got = vec_run(backend, step, [a, b], Vec(a.shape, F32))
    np.testing.assert_array_equal(got, ref(a, b))


def _and_11(d, s, t):
    pl.and_(d, s[0], 11)


def test_and_with_a_scalar(backend):
    x = (np.arange(16 * 24, dtype=np.int64) * 5011 - 900000).astype(np.int32).reshape(16, 24)
    got = vec_run(backend, _and_11, [x], Vec(x.shape, I32))
    np.testing.assert_array_equal(got, x & 11)


def _shl(d, s, t):
    pl.shl(d, s[0], s[1])


def _shr(d, s, t):
    pl.shr(d, s[0], s[1])


def test_shifts_wrap_left_and_keep_the_sign_right(backend):
    rng = np.random.default_rng(3)
    x = rng.integers(-2 ** 31, 2 ** 31, (8, 48), dtype=np.int64).astype(np.int32)
    n = rng.integers(0, 32, (8, 48)).astype(np.int32)
    left = vec_run(backend, _shl, [x, n], Vec(x.shape, I32))
    right = vec_run(backend, _shr, [x, n], Vec(x.shape, I32))
    np.testing.assert_array_equal(left, ((x.astype(np.int64) << n) & 0xFFFFFFFF).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(right, x >> n)  # arithmetic: negative values stay negative
    assert (right[x < 0] < 0).all()


def _xor(d, s, t):
    pl.xor(d, s[0], s[1], t[0])


def test_xor_with_its_scratch_tile(backend):
    rng = np.random.default_rng(11)
    x, y = (rng.integers(-10 ** 6, 10 ** 6, (16, 40)).astype(np.int32) for _ in range(2))
    got = vec_run(backend, _xor, [x, y], Vec(x.shape, I32), scratch=[Vec(x.shape, I32)])
    np.testing.assert_array_equal(got, x ^ y)


# ------------------------------------------------------------------------------------------ reductions
def _rmax(d, s, t):
    pl.maximum(d, s[0], t[0], dim=0)


def _rmin(d, s, t):
    pl.minimum(d, s[0], t[0], dim=0)


def _cmax(d, s, t):
    pl.maximum(d, s[0], t[0], dim=1)


def _cmin(d, s, t):
    pl.minimum(d, s[0], t[0], dim=1)


@pytest.mark.parametrize("op", ["max", "min"])
def test_maximum_minimum_reduce_rows_and_columns(backend, op):
    """dim=0: one value per row into an [R, 1] DN tile; dim=1: one per column into [1, C]."""
    x = noisy((24, 64), seed=5, lo=-100, hi=100)
    tmp = [Vec(x.shape, F32)]
    per_row = vec_run(backend, _rmax if op == "max" else _rmin, [x], Vec((24, 1), F32, layout=pl.DN), scratch=tmp)
    per_col = vec_run(backend, _cmax if op == "max" else _cmin, [x], Vec((1, 64), F32), scratch=tmp)
    fn = np.max if op == "max" else np.min
    np.testing.assert_array_equal(per_row, fn(x, axis=1, keepdims=True))
    np.testing.assert_array_equal(per_col, fn(x, axis=0, keepdims=True))


# ------------------------------------------------------------------------------------------ fused ops
def _add_relu(d, s, t):
    pl.add_relu(d, s[0], s[1])


def _sub_relu(d, s, t):
    pl.sub_relu(d, s[0], s[1])


def _addc(d, s, t):
    pl.addc(d, s[0], s[1], s[2])


def test_add_relu_sub_relu_addc_fp32(backend):
    a, b, c = noisy((16, 56), 21), noisy((16, 56), 22), noisy((16, 56), 23)
    out = Vec(a.shape, F32)
    np.testing.assert_array_equal(vec_run(backend, _add_relu, [a, b], out), np.maximum(a + b, 0))
    np.testing.assert_array_equal(vec_run(backend, _sub_relu, [a, b], out), np.maximum(a - b, 0))
    np.testing.assert_array_equal(vec_run(backend, _addc, [a, b, c], out), a + b + c)  # exact: order-free


def _add_relu_cast(d, s, t):
    pl.add_relu_cast(d, s[0], s[1], target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)


def _sub_relu_cast(d, s, t):
    pl.sub_relu_cast(d, s[0], s[1], target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)


def _mul_cast(d, s, t):
    pl.mul_cast(d, s[0], s[1], target_type=pl.DT_FP32, mode=pl.RoundMode.CAST_ROUND)


CASTING = {"add_relu_cast": (_add_relu_cast, lambda a, b: np.maximum(to_f16(a + b), 0)),
           "sub_relu_cast": (_sub_relu_cast, lambda a, b: np.maximum(to_f16(a - b), 0)),
           "mul_cast": (_mul_cast, lambda a, b: to_f16(a * b))}


@pytest.mark.parametrize("op", sorted(CASTING))
def test_fp16_ops_that_widen_to_fp32_round_in_fp16_first(backend, op):
    step, ref = CASTING[op]
    a = noisy((16, 64), 31, -300, 300, np.float16, step=1 / 32)
    b = noisy((16, 64), 32, -40, 40, np.float16, step=1 / 128)
    a[0, 0], b[0, 0] = 14.25, -5.125  # 14.25 * -5.125 = -73.03125 is a tie in fp16 -> -73.0
    got = vec_run(backend, step, [a, b], Vec(a.shape, F32))
    np.testing.assert_array_equal(got, ref(a.astype(np.float32), b.astype(np.float32)).astype(np.float32))
    if op == "mul_cast":
        assert got[0, 0] == -73.0


def _fmar(d, s, t):
    pl.fused_mul_add_relu(d, s[0], s[1])


def _mad(d, s, t):
    pl.mul_add_dst(d, s[0], s[1])


def _fma(d, s, t):
    pl.fused_mul_add(d, s[0], s[1])


def _axpy(d, s, t):
    pl.axpy(d, s[0], -1.5)


def test_fused_mul_add_relu_rounds_once(backend):
    """d = relu(d * a + b), one rounding to fp16."""
    a, b, d = (noisy((32, 64), seed, -40, 40, np.float16, step=1 / 8) for seed in (41, 42, 43))
    got = vec_run(backend, _fmar, [a, b], d)
    a32, b32, d32 = (v.astype(np.float32) for v in (a, b, d))
    np.testing.assert_array_equal(got, to_f16(np.maximum(d32 * a32 + b32, 0)))
    assert (got == 0).any() and (got > 0).any()


def test_mul_add_dst_rounds_the_product_first(backend):
    """d = fp16(fp16(a * b) + d): two roundings, as the hardware's mul followed by add."""
    a, b, d = (noisy((32, 64), seed, -60, 60, np.float16, step=1 / 16) for seed in (51, 52, 53))
    a[3, 5], b[3, 5], d[3, 5] = 33.25, -13.125, 6.0625
    got = vec_run(backend, _mad, [a, b], d)
    a32, b32, d32 = (v.astype(np.float32) for v in (a, b, d))
    np.testing.assert_array_equal(got, to_f16(to_f16(a32 * b32).astype(np.float32) + d32))
    assert got[3, 5] == -430.5  # one rounding would give -430.25


def test_fused_mul_add_and_axpy_update_the_destination(backend):
    a, b, d = noisy((16, 48), 61), noisy((16, 48), 62), noisy((16, 48), 63)
    np.testing.assert_array_equal(vec_run(backend, _fma, [a, b], d), d * a + b)  # exact in fp32
    np.testing.assert_array_equal(vec_run(backend, _axpy, [a], d), np.float32(-1.5) * a + d)


# ------------------------------------------------------------------------------------------ part ops
def _partadd(d, s, t):
    pl.partadd(d, s[0], s[1])


def _partmax(d, s, t):
    pl.partmax(d, s[0], s[1])


def _partmin(d, s, t):
    pl.partmin(d, s[0], s[1])


def _partmul(d, s, t):
    pl.partmul(d, s[0], s[1])


PART = {"partadd": (_partadd, np.add), "partmax": (_partmax, np.maximum), "partmin": (_partmin, np.minimum),
        "partmul": (_partmul, np.multiply)}


@pytest.mark.cpu_sample
@pytest.mark.parametrize("op", sorted(PART))
@pytest.mark.parametrize("second_rows", [5, 16])
def test_part_ops_combine_where_both_are_valid(backend, op, second_rows):
    """The second source is valid in its first ``second_rows`` rows only: those rows get op(x, y), the
    others a copy of x."""
    step, ref = PART[op]
    x = noisy((32, 64), 71, -30, 30, np.float16, step=1 / 4)
    y = noisy((32, 64), 72, -30, 30, np.float16, step=1 / 8)
    specs = [Vec(x.shape, F16, valid=(32, 64)), Vec(y.shape, F16, valid=(second_rows, 64))]
    got = vec_run(backend, step, [x, y], Vec(x.shape, F16, valid=(32, 64)), src_specs=specs)
    want = x.copy()
    want[:second_rows] = to_f16(ref(x[:second_rows].astype(np.float32), y[:second_rows].astype(np.float32)))
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------ compare + select
def _gt_then_select(d, s, t):
    pl.gt(t[0], s[0], s[1])
    pl.system.bar_v()
    pl.select(d, t[0], s[0], s[1], t[1])


def _positive_picks_first(d, s, t):
    pl.gt(t[0], s[2], 0.0)
    pl.system.bar_v()
    pl.select(d, t[0], s[0], s[1], t[1])


def test_gt_mask_selects_the_larger(backend):
    a, b = grid((16, 40), 9, -0.25), noisy((16, 40), 81, -10, 10)
    got = vec_run(backend, _gt_then_select, [a, b], Vec(a.shape, F32),
                  scratch=[Vec(a.shape, U8), Vec(a.shape, F32)])
    np.testing.assert_array_equal(got, np.where(a > b, a, b))


def test_gt_against_a_scalar_on_an_fp16_tile_drives_an_fp32_select(backend):
    a, b = noisy((16, 64), 82), noisy((16, 64), 83)
    sign = np.where(np.random.default_rng(84).random((16, 64)) < 0.4, 2.5, -0.5).astype(np.float16)
    sign[0, :4] = [0, -0.0, 1e-4, -1e-4]  # 0 is not > 0
    got = vec_run(backend, _positive_picks_first, [a, b, sign], Vec(a.shape, F32),
                  scratch=[Vec(a.shape, U8), Vec(a.shape, F32)])
    np.testing.assert_array_equal(got, np.where(sign > 0, a, b))


# ------------------------------------------------------------------------------------------ fillpad
def _fillpad(d, s, t):
    pl.fillpad(d, s[0])


def _fillpad_expand(d, s, t):
    pl.fillpad(d, s[0], mode=pl.FillPadMode.EXPAND)


@pytest.mark.parametrize("dst_cols", [8, 24])
def test_fillpad_zero_outside_the_valid_window(backend, dst_cols):
    """NORMAL (same shape) and EXPAND (wider destination): the valid [3, 6] corner is copied, the rest of
    the destination is the pad value 0 and becomes valid, so the whole of it is stored."""
    x = np.arange(100, 164, dtype=np.int32).reshape(8, 8)
    src = Vec((8, 8), I32, valid=(3, 6))
    dst = Vec((8, dst_cols), I32, pad=pl.TilePad.zero)
    got = vec_run(backend, _fillpad if dst_cols == 8 else _fillpad_expand, [x], dst, src_specs=[src])
    want = np.zeros((8, dst_cols), np.int32)
    want[:3, :6] = x[:3, :6]
    np.testing.assert_array_equal(got, want)


def fillpad_in_place(x: pl.Tensor[[8, 16], pl.DT_INT32], y: pl.Tensor[[8, 16], pl.DT_INT32]):
    ty = pl.TileType([8, 16], pl.DT_INT32, pl.MemorySpace.Vec, pad=pl.TilePad.zero)
    t = pl.make_tile(ty, addr=0x400)
    same = pl.make_tile(ty, addr=0x400)
    with pl.section_vector():
        pl.set_validshape(t, [6, 3])
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=2)
        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=2)
        pl.fillpad(same, t, mode=pl.FillPadMode.INPLACE)
        pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=3)
        pl.system.sync_dst(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.MTE3, event_id=3)
        pl.store(y, same, [0, 0])


def test_fillpad_inplace_pads_the_source_itself(backend):
    x = (np.arange(128, dtype=np.int32) * 3 - 7).reshape(8, 16)
    y = run_on(fillpad_in_place, backend, x, poison((8, 16), np.int32))[1]
    want = np.zeros_like(x)
    want[:6, :3] = x[:6, :3]
    np.testing.assert_array_equal(y, want)
