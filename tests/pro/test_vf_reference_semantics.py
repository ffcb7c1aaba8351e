"""VF semantics the API reference pages state and the official suite does not exercise: our own kernels,
numpy expectations, every backend."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.language import Vf as vf  # noqa: N813

from .on_every_backend import BACKENDS, EVERY_BACKEND, NP_OF, run_on

pytestmark = EVERY_BACKEND


def _sync(src, dst, event):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=event)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=event)


def _one_row_kernel(body, dtype, width):
    """A kernel that runs ``body(out_tile)`` (a vector function) and stores the tile's one row."""
    def kernel(out: pl.Tensor[[1, width], dtype]):
        t = pl.TileType(shape=[1, width], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            o = pl.make_tile(t, addr=0)
            body(o)
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"{body.__name__}_{dtype.name}"
    return kernel


def _arange_kernel(start, order, dtype):
    @pl.vector_function
    def arange_row(o):
        vf.store_align(o, vf.arange(start, index_order=order, dtype=dtype),
                       vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dtype))
    return _one_row_kernel(arange_row, dtype, 256 // dtype.nbytes)


ARANGE_KERNELS = {(s, o.name, d.name): _arange_kernel(s, o, d)
                  for s in (0, 5) for o in (pl.IndexOrder.INCREASE_ORDER, pl.IndexOrder.DECREASE_ORDER)
                  for d in (pl.DT_INT32, pl.DT_UINT32, pl.DT_FP16, pl.DT_INT16, pl.DT_FP32)}


@pytest.mark.parametrize("key", list(ARANGE_KERNELS), ids=lambda k: "-".join(map(str, k)))
@pytest.mark.parametrize("backend", BACKENDS)
def test_arange_orders(backend, key):
    """INCREASE: start + i; DECREASE: the same values from the last lane down, start + (n-1-i) (the page's
    measured result: arange(63, DECREASE) over 64 UINT32 lanes is 126 .. 63)."""
    start, order, name = key
    dtype = getattr(pl, "DT_" + name)
    n = 256 // dtype.nbytes
    (got,) = run_on(ARANGE_KERNELS[key], backend, np.zeros((1, n), NP_OF[dtype]))
    want = start + np.arange(n)
    if order == "DECREASE_ORDER":
        want = want[::-1]
    np.testing.assert_array_equal(got[0], want.astype(NP_OF[dtype]))


# ----------------------------------------------------------------------------- vf.get_mask_spr


def _spr_kernel(dtype, width_enum, setup):
    n = 256 // dtype.nbytes

    @pl.vector_function
    def copy_under_spr(src, dst):
        every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dtype)
        spr = vf.get_mask_spr(width=width_enum)
        vf.store_align(dst, vf.abs(vf.load_align(src, 0), spr), every)   # unselected lanes: 0

    def kernel(x: pl.Tensor[[1, n], dtype], out: pl.Tensor[[1, n], dtype]):
        t = pl.TileType(shape=[1, n], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            a = pl.make_tile(t, addr=0)
            o = pl.make_tile(t, addr=256)
            pl.load(a, x, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            setup()
            copy_under_spr(a, o)
            pl.reset_mask()
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"spr_{setup.__name__}_{dtype.name}"
    return kernel


def norm_pattern():
    pl.set_mask_norm()
    pl.set_vec_mask(0x8000_0000_0000_0001, 0xF0F0_0000_0000_FFFF)


def count_ten():
    pl.set_mask_count()
    pl.set_vec_mask(0, 10)


def after_reset():
    pl.set_vec_mask(0, 1)
    pl.reset_mask()


def _bits(high, low, n):
    word = (high << 64) | low
    return np.array([(word >> i) & 1 for i in range(n)], dtype=bool)


SPR_CASES = {
    ("norm", "B32"): (norm_pattern, lambda n: _bits(0, 0xF0F0_0000_0000_FFFF, n)),
    ("norm", "B16"): (norm_pattern, lambda n: _bits(0x8000_0000_0000_0001, 0xF0F0_0000_0000_FFFF, n)),
    ("count", "B32"): (count_ten, lambda n: np.arange(n) < 10),
    ("count", "B16"): (count_ten, lambda n: np.arange(n) < 10),
    ("reset", "B32"): (after_reset, lambda n: np.ones(n, bool)),
}
SPR_KERNELS = {k: _spr_kernel(pl.DT_FP32 if k[1] == "B32" else pl.DT_FP16, getattr(pl.MaskWidth, k[1]), setup)
               for k, (setup, _) in SPR_CASES.items()}


@pytest.mark.parametrize("key", list(SPR_CASES), ids=lambda k: "-".join(k))
@pytest.mark.parametrize("backend", BACKENDS)
def test_get_mask_spr_reads_set_vec_mask(backend, key):
    """get_mask_spr reads the {MASK1, MASK0} bits pl.set_vec_mask wrote: B32 lane i = bit i of MASK0,
    B16 lane i = bit i of the 128 bits; in count mode the first mask_low lanes; after reset_mask all."""
    dtype = np.float32 if key[1] == "B32" else np.float16
    n = 256 // np.dtype(dtype).itemsize
    x = (np.arange(n) - n / 2).astype(dtype)
    _, got = run_on(SPR_KERNELS[key], backend, x.reshape(1, n), np.full((1, n), 9, dtype))
    np.testing.assert_array_equal(got[0], np.where(SPR_CASES[key][1](n), np.abs(x), 0).astype(dtype))


# ----------------------------------------------------------------------------- vf.addc / vf.subc / vf.bit_cast
def _carry_kernel(sub, dtype):
    @pl.vector_function
    def with_carry(ta, tb, o):
        every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=dtype)
        half = vf.create_mask(pattern=pl.MaskPattern.VL32, dtype=dtype)         # lanes 0..31 selected
        cin = vf.gt(vf.load_align(tb, 0), vf.load_align(ta, 0), every)       # carry-in where b > a
        x, y = vf.load_align(ta, 0), vf.load_align(tb, 0)
        if pl.constexpr(sub):
            flags, res = vf.subc(x, y, cin, half)
        else:
            flags, res = vf.addc(x, y, cin, half)
        vf.store_align(o, res, every)
        vf.store_align(o + 64, vf.select(vf.full(1, every, dtype=dtype), vf.full(0, every, dtype=dtype), flags),
                       every)

    def kernel(a: pl.Tensor[[1, 64], dtype], b: pl.Tensor[[1, 64], dtype], out: pl.Tensor[[2, 64], dtype]):
        t = pl.TileType(shape=[1, 64], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        t2 = pl.TileType(shape=[2, 64], dtype=dtype, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            ta, tb = pl.make_tile(t, addr=0), pl.make_tile(t, addr=256)
            o = pl.make_tile(t2, addr=512)
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            with_carry(ta, tb, o)
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"{'subc' if sub else 'addc'}_{dtype.name}"
    return kernel


CARRY_KERNELS = {(sub, d.name): _carry_kernel(sub, d) for sub in (False, True) for d in (pl.DT_UINT32, pl.DT_INT32)}


@pytest.mark.parametrize("key", list(CARRY_KERNELS), ids=lambda k: ("subc" if k[0] else "addc") + "-" + k[1])
@pytest.mark.parametrize("backend", BACKENDS)
def test_add_and_subtract_with_carry(backend, key):
    """addc: dst = a + b + cin, carry = carry out; subc: dst = a + ~b + cin (a - b with cin set), borrow =
    no carry out; lanes outside preg: 0 and no flag.  Compared on the unsigned bits."""
    sub, name = key
    np_t = NP_OF[getattr(pl, "DT_" + name)]
    rng = np.random.default_rng(3)
    ua = rng.integers(0, 2 ** 32, 64, dtype=np.uint64)
    ub = rng.integers(0, 2 ** 32, 64, dtype=np.uint64)
    ua[:6] = [0xFFFFFFFF, 0, 5, 7, 0x80000000, 1]
    ub[:6] = [1, 0, 5, 5, 0x80000000, 0xFFFFFFFF]
    a, b = ua.astype(np.uint32).view(np_t), ub.astype(np.uint32).view(np_t)
    *_, got = run_on(CARRY_KERNELS[key], backend, a.reshape(1, 64), b.reshape(1, 64), np.zeros((2, 64), np_t))
    cin = (b > a).astype(np.uint64)                                 # the compare runs at the lanes' own type
    total = ua + ((ub ^ 0xFFFFFFFF) if sub else ub) + cin
    flag = (total >> 32) == (0 if sub else 1)
    on = np.arange(64) < 32
    np.testing.assert_array_equal(got[0].view(np.uint32), np.where(on, total & 0xFFFFFFFF, 0).astype(np.uint32))
    np.testing.assert_array_equal(got[1], (on & flag).astype(np_t))


@pl.vector_function
def _bits_of(src, dst):
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
    bits = vf.bit_cast(vf.load_align(src, 0), dtype=pl.DT_UINT32)
    vf.store_align(dst, vf.and_(bits, vf.full(0x7FFFFFFF, every, dtype=pl.DT_UINT32), every), every)  # |x| bits


def bit_cast_kernel(x: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_UINT32]):
    with pl.section_vector():
        a = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
        o = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec), addr=256)
        pl.load(a, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _bits_of(a, o)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, o, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_bit_cast_reinterprets_the_bits(backend):
    x = np.linspace(-3, 3, 64).astype(np.float32)
    x[:3] = [-0.0, np.inf, -np.nan]
    _, got = run_on(bit_cast_kernel, backend, x.reshape(1, 64), np.zeros((1, 64), np.uint32))
    np.testing.assert_array_equal(got[0], x.view(np.uint32) & 0x7FFFFFFF)


@pl.vector_function
def _narrowing_bit_cast(src, dst):
    vf.store_align(dst, vf.bit_cast(vf.load_align(src, 0), dtype=pl.DT_FP16), vf.create_mask())


def bad_bit_cast(x: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_FP32]):
    with pl.section_vector():
        a = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
        _narrowing_bit_cast(a, a)
        pl.store(out, a, [0, 0])


def test_bit_cast_to_another_width_is_a_type_error():
    from pypto_pro.errors import KernelTypeError
    x = np.zeros((1, 64), np.float32)
    with pytest.raises(KernelTypeError, match="bit_cast keeps the lane width") as e:
        run_on(bad_bit_cast, "interp", x, x.copy())
    assert "test_vf_reference_semantics.py:" in str(e.value)


# ----------------------------------------------------------------------------- pl.get_spr
@pl.vector_function
def _squeeze_positive(src, dst):
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    x = vf.load_align(src, 0)
    vf.store_align(dst, vf.squeeze(x, vf.gt(x, 0.0, every), gather_mode=pl.SqueezeMode.STORE_REG), every)


def squeeze_then_read_ar(x: pl.Tensor[[1, 64], pl.DT_FP32], out: pl.Tensor[[1, 64], pl.DT_FP32],
                         kept: pl.Tensor[[1, 4], pl.DT_INT64]):
    t = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    with pl.section_vector():
        a, o = pl.make_tile(t, addr=0), pl.make_tile(t, addr=256)
        pl.load(a, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _squeeze_positive(a, o)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, o, [0, 0])
        pl.setval(kept, 0, pl.get_spr())


@pytest.mark.parametrize("backend", BACKENDS)
def test_get_spr_outside_the_vector_function_reads_the_squeeze_count(backend):
    """pl.get_spr() in the kernel body: the bytes the latest squeeze(STORE_REG) kept."""
    x = np.linspace(-2, 3, 64).astype(np.float32)
    _, got, kept = run_on(squeeze_then_read_ar, backend, x.reshape(1, 64), np.zeros((1, 64), np.float32),
                          np.full((1, 4), -1, np.int64))
    positive = x[x > 0]
    np.testing.assert_array_equal(got[0, :positive.size], positive)
    assert kept[0, 0] == positive.size * 4


# ----------------------------------------------------------------------------- unaligned loads, buffer first
@pl.vector_function
def _two_unaligned_runs(src, dst):
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32)
    ureg = vf.load_unalign_init()
    p = src + 3
    vf.load_unalign_pre(ureg, p)
    first = vf.load_unalign(ureg, p, post_update=True)     # the buffer register first, as the page's example
    second = vf.load_unalign(p, ureg, post_update=True)    # and the prototype's order
    vf.store_align(dst, first, every)
    vf.store_align(dst + 64, second, every)


def unaligned_runs(x: pl.Tensor[[1, 192], pl.DT_FP32], out: pl.Tensor[[1, 128], pl.DT_FP32]):
    with pl.section_vector():
        a = pl.make_tile(pl.TileType(shape=[1, 192], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=0)
        o = pl.make_tile(pl.TileType(shape=[1, 128], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec), addr=768)
        pl.load(a, x, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _two_unaligned_runs(a, o)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, o, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_load_unalign_post_update_with_the_buffer_register_first(backend):
    x = np.arange(192, dtype=np.float32)
    _, got = run_on(unaligned_runs, backend, x.reshape(1, 192), np.zeros((1, 128), np.float32))
    np.testing.assert_array_equal(got[0], x[3:131])


# ----------------------------------------------------------------------------- vf.exp_sub of FP16 registers
def _exp_sub_half_kernel(layout):
    @pl.vector_function
    def exp_sub_half(ta, tb, o):
        first32 = vf.create_mask(pattern=pl.MaskPattern.VL32, dtype=pl.DT_FP16)    # FP16 lanes 0..31
        r = vf.exp_sub(vf.load_align(ta, 0), vf.load_align(tb, 0), first32, layout=layout, dtype=pl.DT_FP32)
        vf.store_align(o, r, vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_FP32))

    def kernel(a: pl.Tensor[[1, 128], pl.DT_FP16], b: pl.Tensor[[1, 128], pl.DT_FP16],
               out: pl.Tensor[[1, 64], pl.DT_FP32]):
        t16 = pl.TileType(shape=[1, 128], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
        t32 = pl.TileType(shape=[1, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
        with pl.section_vector():
            ta, tb, o = pl.make_tile(t16, addr=0), pl.make_tile(t16, addr=256), pl.make_tile(t32, addr=512)
            pl.load(ta, a, [0, 0])
            pl.load(tb, b, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            exp_sub_half(ta, tb, o)
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"exp_sub_half_{layout.name}"
    return kernel


EXP_SUB_HALF = {part: _exp_sub_half_kernel(layout) for part, layout in enumerate((pl.CastLayout.ZERO,
                                                                                 pl.CastLayout.ONE))}


@pytest.mark.parametrize("part", [0, 1], ids=["ZERO", "ONE"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_exp_sub_of_fp16_registers_gives_fp32_lanes(backend, part):
    """FP32 lane i = exp(a[2i+layout] - b[2i+layout]) computed in FP32, where the FP16 mask selects
    lane 2i+layout; 0 elsewhere."""
    rng = np.random.default_rng(5)
    a = rng.uniform(-2, 2, 128).astype(np.float16)
    b = rng.uniform(-2, 2, 128).astype(np.float16)
    *_, got = run_on(EXP_SUB_HALF[part], backend, a.reshape(1, 128), b.reshape(1, 128), np.zeros((1, 64), np.float32))
    src = 2 * np.arange(64) + part
    want = np.where(src < 32, np.exp(a[src].astype(np.float32) - b[src].astype(np.float32)), 0).astype(np.float32)
    np.testing.assert_allclose(got[0], want, rtol=2e-7, atol=0)


# ----------------------------------------------------------------------------- vf.gather from a tile
def _gather_kernel(src_dtype, idx_dtype, block):
    n_src = 256 // src_dtype.nbytes
    n_idx = 256 // idx_dtype.nbytes
    out_dtype = {1: pl.DT_UINT16}.get(src_dtype.nbytes, src_dtype) if not block else src_dtype

    @pl.vector_function
    def gather_row(src, index, o):
        every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=idx_dtype)
        picked = vf.gather(src, vf.load_align(index, 0), every,
                           data_copy_mode=pl.DataCopyMode.DATA_BLOCK_LOAD if block else pl.DataCopyMode.NORM)
        vf.store_align(o, picked, vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=out_dtype))

    def kernel(x: pl.Tensor[[1, n_src], src_dtype], idx: pl.Tensor[[1, n_idx], idx_dtype],
               out: pl.Tensor[[1, 256 // out_dtype.nbytes], out_dtype]):
        with pl.section_vector():
            a = pl.make_tile(pl.TileType(shape=[1, n_src], dtype=src_dtype, target_memory=pl.MemorySpace.Vec),
                             addr=0)
            i = pl.make_tile(pl.TileType(shape=[1, n_idx], dtype=idx_dtype, target_memory=pl.MemorySpace.Vec),
                             addr=256)
            o = pl.make_tile(pl.TileType(shape=[1, 256 // out_dtype.nbytes], dtype=out_dtype,
                                         target_memory=pl.MemorySpace.Vec), addr=512)
            pl.load(a, x, [0, 0])
            pl.load(i, idx, [0, 0])
            _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
            gather_row(a, i, o)
            _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
            pl.store(out, o, [0, 0])
    kernel.__name__ = f"gather_{src_dtype.name}_{idx_dtype.name}{'_block' if block else ''}"
    return kernel, out_dtype


GATHER_CASES = {"u8-u16": (pl.DT_UINT8, pl.DT_UINT16, False), "i8-u16": (pl.DT_INT8, pl.DT_UINT16, False),
                "fp16-u32": (pl.DT_FP16, pl.DT_UINT32, False), "i8-block": (pl.DT_INT8, pl.DT_UINT32, True),
                "fp32-block": (pl.DT_FP32, pl.DT_UINT32, True)}
GATHER_KERNELS = {k: _gather_kernel(*v) for k, v in GATHER_CASES.items()}


@pytest.mark.parametrize("case", list(GATHER_CASES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_from_a_tile(backend, case):
    """Element mode: the UB element index[i] goes to the low bytes of lane i (lanes as wide as the
    indices), the rest of the lane 0 -- 8-bit data zero-extended to 16 bits, 16-bit data under 32-bit
    indices in the even 16-bit lanes.  DATA_BLOCK_LOAD: DataBlock j = the 32 bytes at byte offset index[j]."""
    src_dtype, idx_dtype, block = GATHER_CASES[case]
    kernel, out_dtype = GATHER_KERNELS[case]
    n_src, n_idx = 256 // src_dtype.nbytes, 256 // idx_dtype.nbytes
    rng = np.random.default_rng(11)
    x = rng.integers(-100, 100, n_src).astype(NP_OF.get(src_dtype, np.float16))
    raw = x.view(np.uint8)
    if block:
        idx = (rng.permutation(8) * 32).astype(np.uint32)
        want = np.concatenate([raw[o:o + 32] for o in idx])
        idx = np.concatenate([idx, np.zeros(n_idx - 8, np.uint32)])
    else:
        idx = rng.integers(0, n_src, n_idx).astype(NP_OF[idx_dtype])
        es, isz = src_dtype.nbytes, idx_dtype.nbytes
        want = np.zeros(256, np.uint8)
        for i, k in enumerate(idx):
            want[i * isz:i * isz + es] = raw[k * es:(k + 1) * es]
    *_, got = run_on(kernel, backend, x.reshape(1, -1), idx.reshape(1, -1),
                     np.zeros((1, 256 // out_dtype.nbytes), NP_OF.get(out_dtype, np.float16)))
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want)


# ----------------------------------------------------------------------------- register shift amounts of another type
@pl.vector_function
def _shift_by_signed_amounts(src, amounts, o):
    every = vf.create_mask(pattern=pl.MaskPattern.ALL, dtype=pl.DT_UINT32)
    x, k = vf.load_align(src, 0), vf.load_align(amounts, 0)
    vf.store_align(o, vf.shift_left(x, shift=k, mask=every), every)
    vf.store_align(o + 64, vf.shift_right(x, k, every), every)


def shift_kernel(a: pl.Tensor[[1, 64], pl.DT_UINT32], k: pl.Tensor[[1, 64], pl.DT_INT32],
                 out: pl.Tensor[[2, 64], pl.DT_UINT32]):
    with pl.section_vector():
        ta = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec), addr=0)
        tk = pl.make_tile(pl.TileType(shape=[1, 64], dtype=pl.DT_INT32, target_memory=pl.MemorySpace.Vec), addr=256)
        o = pl.make_tile(pl.TileType(shape=[2, 64], dtype=pl.DT_UINT32, target_memory=pl.MemorySpace.Vec), addr=512)
        pl.load(ta, a, [0, 0])
        pl.load(tk, k, [0, 0])
        _sync(pl.PipeType.MTE2, pl.PipeType.V, 0)
        _shift_by_signed_amounts(ta, tk, o)
        _sync(pl.PipeType.V, pl.PipeType.MTE3, 0)
        pl.store(out, o, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_shift_uint32_lanes_by_int32_amounts(backend):
    """Per-lane amounts in an INT32 register shift UINT32 lanes (the page's example pairs them); amounts
    count as unsigned, so a negative one is past the width: 0."""
    a = np.arange(64, dtype=np.uint32) * 0x01010101
    k = (np.arange(64) % 40 - 4).astype(np.int32)
    *_, got = run_on(shift_kernel, backend, a.reshape(1, 64), k.reshape(1, 64), np.zeros((2, 64), np.uint32))
    amt = k.astype(np.int64)
    ok = (amt >= 0) & (amt < 32)
    s = np.where(ok, amt, 0).astype(np.uint64)
    np.testing.assert_array_equal(got[0], np.where(ok, (a.astype(np.uint64) << s) & 0xFFFFFFFF, 0))
    np.testing.assert_array_equal(got[1], np.where(ok, a.astype(np.uint64) >> s, 0))
