"""The quantising fixpipe (ops/fixpipe.py): FP32/INT32 accumulators leaving Acc through ``pl.store``,
``pl.store_tile`` and ``pl.move`` (Acc -> Vec) with a compile-time, runtime (FP32 value, INT32/INT64 FP32 bit
pattern) or per-channel (INT64 Scaling tile) ``scale`` and ``relu_pre_mode``, on every backend.

The accumulator is made exact: FP32 data times an FP32 identity (or INT8 data times ``c * I`` into INT32), so
each case states the accumulator it feeds the fixpipe and the expectation is plain numpy: ReLU, one FP32
multiply by the scale cut to 10 mantissa bits, one rounding to nearest even, INT8 saturation with NaN -> 0.
Hand-written cases pin ties, saturation, NaN/inf and the scale truncation with literal expected values.
On ``sim`` the strict simulator must report no race, deadlock or uninitialised read.
"""

import functools
import struct

import ml_dtypes
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import KernelRuntimeError, KernelSyntaxError, KernelTypeError
from pypto_pro.backends import cpu
from pypto_pro.ops import fixpipe

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]

M, N = 16, 32
MS = pl.MemorySpace
P = pl.PipeType
FP16, FP32, INT8, INT32, BF16 = pl.DT_FP16, pl.DT_FP32, pl.DT_INT8, pl.DT_INT32, pl.DT_BF16
NP = {FP16: np.float16, FP32: np.float32, INT8: np.int8, INT32: np.int32}


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


# ----------------------------------------------------------------------------------------------------- kernels
@functools.lru_cache(maxsize=None)
def quant_kernel(acc_dtype, out_dtype, form: str, relu: bool, path: str, backend: str, const=None):
    """x [M, N] @ eye [N, N] into Acc, then the fixpipe into ``out`` along ``path`` ("store", "store_tile",
    "move").  ``form``: "none", "const" (``const``), "value" (FP32 param), "bits32"/"bits64" (INT param with
    the FP32 pattern) or "channel" (INT64 words [1, N] -> Mat -> Scaling tile)."""
    in_dtype = FP32 if acc_dtype == FP32 else INT8
    mode = pl.ReluPreMode.NormalRelu if relu else None

    def kernel(x: pl.Tensor[[M, N], in_dtype], eye: pl.Tensor[[N, N], in_dtype],
               words: pl.Tensor[[1, N], pl.DT_INT64], out: pl.Tensor[[M, N], out_dtype],
               s_f: pl.DT_FP32, s_i32: pl.DT_INT32, s_i64: pl.DT_INT64):
        vec = pl.make_tile(pl.TileType([M, N], out_dtype, MS.Vec), addr=0)
        with pl.section_cube():
            xm = pl.make_tile(pl.TileType([M, N], in_dtype, MS.Mat), addr=0)
            em = pl.make_tile(pl.TileType([N, N], in_dtype, MS.Mat), addr=0x10000)
            wm = pl.make_tile(pl.TileType([1, N], pl.DT_INT64, MS.Mat), addr=0x20000)
            left = pl.make_tile(pl.TileType([M, N], in_dtype, MS.Left), addr=0)
            right = pl.make_tile(pl.TileType([N, N], in_dtype, MS.Right), addr=0)
            acc = pl.make_tile(pl.TileType([M, N], acc_dtype, MS.Acc), addr=0)
            scales = pl.make_tile(pl.TileType([1, N], pl.DT_INT64, MS.Scaling), addr=0)
            pl.load(xm, x, [0, 0])
            pl.load(em, eye, [0, 0])
            pl.load(wm, words, [0, 0])
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
            pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.FIX, event_id=1)
            pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.FIX, event_id=1)
            pl.move(scales, wm)
            pl.move(left, xm)
            pl.move(right, em)
            pl.system.sync_src(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
            pl.system.sync_dst(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
            pl.matmul(acc, left, right)
            pl.system.sync_src(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
            pl.system.sync_dst(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
            if pl.constexpr(path == "move"):
                if pl.constexpr(form == "none"):
                    pl.move(vec, acc, relu_pre_mode=mode, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
                elif pl.constexpr(form == "const"):
                    pl.move(vec, acc, relu_pre_mode=mode, scale=const)
                elif pl.constexpr(form == "value"):
                    pl.move(vec, acc, relu_pre_mode=mode, scale=s_f)
                elif pl.constexpr(form == "bits32"):
                    pl.move(vec, acc, relu_pre_mode=mode, scale=s_i32)
                elif pl.constexpr(form == "bits64"):
                    pl.move(vec, acc, relu_pre_mode=mode, scale=s_i64)
                else:
                    pl.move(vec, acc, scale=scales, acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0)
                pl.system.set_cross_core(pipe=P.FIX, event_id=0)
            elif pl.constexpr(path == "store_tile"):
                if pl.constexpr(form == "const"):
                    pl.store_tile(out, acc, [0, 0], relu_pre_mode=mode, scale=const)
                elif pl.constexpr(form == "bits32"):
                    pl.store_tile(out, acc, [0, 0], relu_pre_mode=mode, scale=s_i32)
                else:
                    pl.store_tile(out, acc, [0, 0], scale=scales)
            else:
                if pl.constexpr(form == "none"):
                    pl.store(out, acc, [0, 0], relu_pre_mode=mode)
                elif pl.constexpr(form == "const"):
                    pl.store(out, acc, [0, 0], relu_pre_mode=mode, scale=const)
                elif pl.constexpr(form == "value"):
                    pl.store(out, acc, [0, 0], relu_pre_mode=mode, scale=s_f)
                elif pl.constexpr(form == "bits32"):
                    pl.store(out, acc, [0, 0], relu_pre_mode=mode, scale=s_i32)
                elif pl.constexpr(form == "bits64"):
                    pl.store(out, acc, [0, 0], relu_pre_mode=mode, scale=s_i64)
                else:
                    pl.store(out, acc, [0, 0], scale=scales)
        if pl.constexpr(path == "move"):
            with pl.section_vector():
                pl.system.wait_cross_core(pipe=P.MTE3, event_id=0)
                if pl.get_subblock_idx() == 0:
                    pl.store(out, vec, [0, 0])

    return pl.jit(kernel, backend=backend)


def run(acc_values: np.ndarray, out_dtype, form="none", relu=False, path="store", backend="interp", scale=None,
        words=None, eye_scale=1, bits=None):
    """Feed ``acc_values`` ([M, N]; FP32, or INT32 through INT8 data times ``eye_scale * I``) to the fixpipe.
    ``bits``: the INT parameter's value for the bits forms (default: the FP32 pattern of ``scale``)."""
    acc_dtype = FP32 if acc_values.dtype == np.float32 else INT32
    if acc_dtype == FP32:
        x, eye = acc_values.astype(np.float32), np.eye(N, dtype=np.float32)
    else:
        x = (acc_values // eye_scale).astype(np.int8)
        assert np.array_equal(x.astype(np.int64) * eye_scale, acc_values), "INT32 accumulator not reachable"
        eye = (np.eye(N, dtype=np.int64) * eye_scale).astype(np.int8)
    w = np.zeros((1, N), np.int64) if words is None else words
    out = np.zeros((M, N), NP[out_dtype])
    s_bits = bits if bits is not None else f32_bits(scale) if scale is not None else 0
    kernel = quant_kernel(acc_dtype, out_dtype, form, relu, path, backend, scale if form == "const" else None)
    kernel(x, eye, w, out, 0.0 if scale is None else float(scale), s_bits if form == "bits32" else 0,
           s_bits if form == "bits64" else 0)
    return out


def hw_scale(v) -> np.ndarray:
    """The scale as the fixpipe holds it, written out independently: FP32 bits with the low 13 cut."""
    return np.asarray(np.float32(v)).view(np.uint32) & np.uint32(0xFFFFE000)


def expect(acc: np.ndarray, out_dtype, scale=None, relu=False) -> np.ndarray:
    x = acc.astype(np.float32)
    if relu:
        x = np.where(x < 0, np.float32(0), x)
    if scale is not None:
        s = hw_scale(scale).view(np.float32)
        with np.errstate(all="ignore"):
            x = (x * s).astype(np.float32)
    if out_dtype == INT8:
        return np.where(np.isnan(x), 0, np.clip(np.rint(x), -128, 127)).astype(np.int8)
    with np.errstate(all="ignore"):
        return x.astype(NP[out_dtype])


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), (got, want)


def acc_grid(seed: int, lo=-200.0, hi=200.0) -> np.ndarray:
    """FP32 accumulator values with quarter steps (ties of every kind after a 0.5/2.0 scale)."""
    rng = np.random.default_rng(seed)
    return (rng.integers(int(lo * 4), int(hi * 4), (M, N)) / 4).astype(np.float32)


# ----------------------------------------------------------------------------------------------------- literal cases
def literal_acc(values) -> np.ndarray:
    acc = np.zeros((M, N), np.float32)
    acc[0, :len(values)] = values
    return acc


def test_rounding_is_to_nearest_even_and_int8_saturates(backend):
    vals = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, 128.0, -128.5, -129.0, 1e9, -1e9, 3.49, -3.51]
    got = run(literal_acc(vals), INT8, "const", scale=1.0, backend=backend)[0, :len(vals)]
    assert got.tolist() == [0, 2, 2, 0, -2, -2, 126, 127, 127, -128, -128, 127, -128, 3, -4]


def test_scale_multiplies_then_rounds(backend):
    vals = [1.0, 3.0, -3.0, 5.0, 0.25, 63.75, -64.25]
    got = run(literal_acc(vals), INT8, "const", scale=0.5, backend=backend)[0, :len(vals)]
    assert got.tolist() == [0, 2, -2, 2, 0, 32, -32]  # 0.5 -> 0, 1.5 -> 2, -1.5 -> -2, 2.5 -> 2, 0.125 -> 0
    got = run(literal_acc(vals), INT8, "const", scale=-1.0, backend=backend)[0, :len(vals)]
    assert got.tolist() == [-1, -3, 3, -5, 0, -64, 64]


def test_nan_and_infinity(backend):
    """x @ I with inf in row 1: inf on the diagonal column, NaN (inf * 0) in the others."""
    x = np.zeros((M, N), np.float32)
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    i8 = run(x, INT8, "const", scale=2.0, backend=backend)
    assert i8[0].tolist() == [0] * N                     # NaN row -> 0
    assert i8[1, 1] == 127 and i8[2, 2] == -128 and i8[1, 0] == 0 and i8[2, 3] == 0
    f16 = run(x, FP16, "const", scale=2.0, backend=backend)
    assert np.isnan(f16[0]).all() and f16[1, 1] == np.inf and f16[2, 2] == -np.inf
    relu = run(x, INT8, "const", relu=True, scale=2.0, backend=backend)
    assert relu[2, 2] == 0 and relu[1, 1] == 127 and relu[0, 0] == 0


def test_relu_comes_before_the_scale(backend):
    """A negative scale shows the order: relu(x) * s, so positives turn negative and negatives give 0."""
    vals = [3.0, -3.0, 0.0, 10.0]
    got = run(literal_acc(vals), INT8, "const", relu=True, scale=-2.0, backend=backend)[0, :4]
    assert got.tolist() == [-6, 0, 0, -20]


def test_scale_keeps_ten_mantissa_bits(backend):
    """1 + 2^-11 is held as 1.0 (the low 13 mantissa bits are cut, not rounded); 1 + 2^-10 is kept."""
    acc = literal_acc([2048.0, 4096.0])
    assert run(acc, FP32, "const", scale=1 + 2 ** -11, backend=backend)[0, :2].tolist() == [2048.0, 4096.0]
    assert run(acc, FP32, "const", scale=1 + 2 ** -10, backend=backend)[0, :2].tolist() == [2050.0, 4100.0]
    # an FP32 runtime scalar is cut the same way
    assert run(acc, FP32, "value", scale=1 + 2 ** -11, backend=backend)[0, :2].tolist() == [2048.0, 4096.0]


def test_fp16_output_overflows_to_infinity(backend):
    got = run(literal_acc([60000.0, 70000.0, -70000.0, 65519.0]), FP16, "const", scale=1.0, backend=backend)
    assert got[0, :4].tolist() == [60000.0, np.inf, -np.inf, 65504.0]


# ----------------------------------------------------------------------------------------------------- scale forms
@pytest.mark.cpu_sample
@pytest.mark.parametrize("form", ["const", "value", "bits32", "bits64"])
@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_per_tensor_scale_forms_store_int8(backend, form, relu):
    acc = acc_grid(1)
    got = run(acc, INT8, form, relu=relu, scale=0.5, backend=backend)
    same_bits(got, expect(acc, INT8, 0.5, relu))


@pytest.mark.parametrize("out_dtype", [FP16, FP32], ids=lambda d: d.name)
def test_fp32_acc_scaled_to_float_outputs(backend, out_dtype):
    acc = (np.random.default_rng(2).standard_normal((M, N)) * 1000).astype(np.float32)
    got = run(acc, out_dtype, "value", scale=0.37, backend=backend)
    same_bits(got, expect(acc, out_dtype, 0.37))


def test_negative_scale_as_unsigned_int32_bit_pattern(backend):
    """An INT32 scale parameter takes the unsigned pattern struct.pack("!f", -1.0) gives (0xBF800000)."""
    acc = acc_grid(3, -50, 50)
    pattern = f32_bits(-1.0)
    assert pattern > 2 ** 31
    got = run(acc, INT8, "bits32", scale=-1.0, bits=pattern, backend=backend)
    same_bits(got, expect(acc, INT8, -1.0))


def test_int64_scale_uses_the_low_32_bits(backend):
    acc = acc_grid(4)
    got = run(acc, INT8, "bits64", scale=2.0, bits=(1 << 46) | f32_bits(2.0), backend=backend)
    same_bits(got, expect(acc, INT8, 2.0))


@pytest.mark.parametrize("path", ["store", "store_tile", "move"])
def test_paths_agree(backend, path):
    acc = acc_grid(6)
    same_bits(run(acc, INT8, "const", scale=0.25, path=path, backend=backend), expect(acc, INT8, 0.25))
    same_bits(run(acc, INT8, "bits32", relu=True, scale=2.0, path=path, backend=backend),
              expect(acc, INT8, 2.0, relu=True))


def test_no_scale_conversions(backend):
    acc = acc_grid(7, -70000, 70000)
    same_bits(run(acc, FP16, backend=backend), expect(acc, FP16))
    same_bits(run(acc, FP16, relu=True, backend=backend), expect(acc, FP16, relu=True))
    same_bits(run(acc, FP16, relu=True, path="move", backend=backend), expect(acc, FP16, relu=True))


# ----------------------------------------------------------------------------------------------------- INT32 accumulators
def int_acc(seed: int, c: int = 100) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-128, 128, (M, N)).astype(np.int32) * c


def test_int32_acc_requantised_to_int8(backend):
    acc = int_acc(8)
    got = run(acc, INT8, "const", scale=0.05, eye_scale=100, backend=backend)
    same_bits(got, expect(acc, INT8, 0.05))


def test_int32_acc_dequantised_to_fp16_with_relu(backend):
    acc = int_acc(9)
    got = run(acc, FP16, "bits32", relu=True, scale=0.01, eye_scale=100, backend=backend)
    same_bits(got, expect(acc, FP16, 0.01, relu=True))


def test_int32_acc_unscaled_relu_stays_exact(backend):
    acc = int_acc(10)
    got = run(acc, INT32, relu=True, eye_scale=100, backend=backend)
    same_bits(got, np.maximum(acc, 0).astype(np.int32))


# ----------------------------------------------------------------------------------------------------- per channel
def channel_words(scales) -> np.ndarray:
    """INT64 words built bit by bit here (FP32 bits cut to 10 mantissa bits | the signed flag, bit 46)."""
    bits = np.asarray(scales, np.float32).view(np.uint32).astype(np.int64) & 0xFFFFE000
    return (bits | (1 << 46)).reshape(1, N)


def test_trans_quant_words_format():
    words = fixpipe.trans_quant_words(np.array([2.0, -1.0, 0.1], np.float32))
    assert [int(w) for w in words] == [0x4000_4000_0000, 0x4000_BF80_0000, (1 << 46) | (0x3DCCCCCD & 0xFFFFE000)]
    with_offset = fixpipe.trans_quant_words(np.array([1.0, 1.0, 1.0], np.float32), np.array([-3.0, 300.0, 2.5]))
    assert [(int(w) >> 37) & 0x1FF for w in with_offset] == [0x1FD, 0xFF, 2]


@pytest.mark.cpu_sample
@pytest.mark.parametrize("out_dtype", [INT8, FP16, FP32], ids=lambda d: d.name)
@pytest.mark.parametrize("path", ["store", "store_tile", "move"])
def test_per_channel_scales(backend, out_dtype, path):
    scales = np.linspace(-3.0, 3.0, N).astype(np.float32)
    acc = acc_grid(11, -60, 60)
    got = run(acc, out_dtype, "channel", words=channel_words(scales), path=path, backend=backend)
    x = (acc * hw_scale(scales).view(np.float32)[None, :]).astype(np.float32)
    want = (np.clip(np.rint(x), -128, 127).astype(np.int8) if out_dtype == INT8 else x.astype(NP[out_dtype]))
    same_bits(got, want)


def test_per_channel_int32_acc_to_fp16(backend):
    scales = np.full(N, 0.01, np.float32)
    acc = int_acc(12)
    got = run(acc, FP16, "channel", words=channel_words(scales), eye_scale=100, backend=backend)
    same_bits(got, expect(acc, FP16, 0.01))


def test_per_channel_int8_needs_the_signed_flag(backend):
    words = channel_words(np.ones(N, np.float32))
    words[0, 5] &= ~(1 << 46)
    with pytest.raises(KernelRuntimeError, match="word 5 lacks the signed-INT8 flag"):
        run(acc_grid(13), INT8, "channel", words=words, backend=backend)
    # FP16/FP32 outputs do not read the flag
    same_bits(run(acc_grid(13), FP32, "channel", words=words, backend=backend), acc_grid(13))


def test_per_channel_offset_is_not_implemented(backend):
    words = channel_words(np.ones(N, np.float32))
    words[0, 2] |= 3 << 37
    with pytest.raises(KernelRuntimeError, match="word 2 has an offset.*not implemented"):
        run(acc_grid(14), INT8, "channel", words=words, backend=backend)


# ----------------------------------------------------------------------------------------------------- differential
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), spread=st.sampled_from([1.0, 100.0, 1e5]),
       specials=st.lists(st.sampled_from([0.5, -0.5, 2.5, -127.5, 3e38, -0.0]), max_size=8),
       scale=st.floats(-8, 8, width=32, allow_subnormal=False), relu=st.booleans())
@example(seed=0, spread=1.0, specials=[], scale=-0.0, relu=False)  # a -0.0 scale flips every zero's sign
def test_interp_cpu_and_numpy_agree(seed, spread, specials, scale, relu):
    """The cpu backend is bit-identical to the interpreter and both to the numpy expectation (runtime scale)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((M, N)) * spread).astype(np.float32)
    x.flat[:len(specials)] = specials
    acc = x + np.float32(0)  # x @ I: a -0.0 input sums with +0.0 products to +0.0
    want = expect(acc, INT8, scale, relu)
    same_bits(run(x, INT8, "value", relu=relu, scale=scale), want)
    if cpu.available():
        same_bits(run(x, INT8, "value", relu=relu, scale=scale, backend="cpu"), want)
        same_bits(run(x, FP16, "value", relu=relu, scale=scale, backend="cpu"), expect(acc, FP16, scale, relu))


# ----------------------------------------------------------------------------------------------------- static rules
def _store_kernel(out_dtype, scale_tile=None, *, relu=None, phase=None, scalar_dtype=pl.DT_FP32, use_scalar=False,
                  move_mode=None, scale_const=None, scale_tensor=False):
    def kernel(out: pl.Tensor[[M, N], out_dtype], words: pl.Tensor[[1, N], pl.DT_INT64], s: scalar_dtype):
        vec = pl.make_tile(pl.TileType([M, N], out_dtype, MS.Vec), addr=0)
        with pl.section_cube():
            acc = pl.make_tile(pl.TileType([M, N], FP32, MS.Acc), addr=0)
            if pl.constexpr(scale_tile is not None):
                t = pl.make_tile(pl.TileType(scale_tile[0], scale_tile[1], scale_tile[2]), addr=0)
                if pl.constexpr(move_mode is not None):
                    pl.move(vec, acc, scale=t, acc_to_vec_mode=move_mode)
                else:
                    pl.store(out, acc, [0, 0], scale=t, relu_pre_mode=relu, phase=phase)
            elif pl.constexpr(use_scalar):
                pl.store(out, acc, [0, 0], scale=s)
            elif pl.constexpr(scale_tensor):
                pl.store(out, acc, [0, 0], scale=words)
            else:
                pl.store(out, acc, [0, 0], scale=scale_const)

    return pl.jit(kernel, backend="interp")


def _launch(kernel, out_dtype):
    host = {BF16: ml_dtypes.bfloat16, pl.DT_UINT8: np.uint8}.get(out_dtype) or NP[out_dtype]
    kernel(np.zeros((M, N), host), np.zeros((1, N), np.int64), 0.0)


def SCALING(shape, dtype):
    return (shape, dtype, MS.Scaling)


@pytest.mark.parametrize("case,match", [
    (dict(out_dtype=pl.DT_UINT8, scale_const=2.0), "quantization to UINT8 is not supported"),
    (dict(out_dtype=FP16, scale_tensor=True), "scale Tensor is not supported for per-channel quantization"),
    (dict(out_dtype=INT8, scale_tile=([1, N], pl.DT_INT64, MS.Mat)), "MemorySpace.Scaling"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, N], FP32)), "dtype FP32 is not supported.*npu_trans_quant_param"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, N], INT32)), "scale tile dtype must be INT64"),
    (dict(out_dtype=INT8, scale_tile=SCALING([N, 1], pl.DT_INT64)), r"shape \[1, N\].*row == 1"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, 8], pl.DT_INT64)), "multiple of 16"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, N], pl.DT_INT64), relu=pl.ReluPreMode.NormalRelu),
     "cannot be used together with relu_pre_mode"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, N], pl.DT_INT64), phase=pl.STPhase.Final),
     "cannot be combined with phase"),
    (dict(out_dtype=INT8, scale_tile=SCALING([1, N], pl.DT_INT64), move_mode=pl.AccToVecMode.DualModeSplitM),
     "only supports single-mode"),
    (dict(out_dtype=INT8, use_scalar=True, scalar_dtype=pl.DT_FP16), "scale runtime scalar dtype fp16 is not"),
    (dict(out_dtype=INT8, scale_const="2.0"), "scale must be"),
    (dict(out_dtype=INT8), "the fixpipe converts FP32 accumulators without a scale to FP32, FP16, BF16, HF8, not INT8"),
    (dict(out_dtype=INT32, scale_const=1.0), "with a scale to FP32, FP16, INT8, HF8, not INT32"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_static_rules(case, match):
    """Rejected at parse time as a ParserSyntaxError (KernelSyntaxError), also a KernelTypeError."""
    out_dtype = case.pop("out_dtype")
    with pytest.raises(KernelSyntaxError, match=match) as e:
        _launch(_store_kernel(out_dtype, **case), out_dtype)
    assert isinstance(e.value, KernelTypeError) and "test_fixpipe_quant.py" in str(e.value)


def test_scaled_bf16_is_rejected():
    with pytest.raises(KernelSyntaxError, match="from FP32 to BF16 is not supported"):
        _launch(_store_kernel(BF16, scale_const=2.0), BF16)


def test_a_scaling_tile_is_two_dimensional():
    with pytest.raises(KernelSyntaxError, match="scale tile must be 2D"):
        _launch(_store_kernel(INT8, scale_tile=SCALING([N], pl.DT_INT64)), INT8)
