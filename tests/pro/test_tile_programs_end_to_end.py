"""Whole tile programs of the kind the tutorials build, written for these tests, on interp, cpu and sim:

* multi-core matmuls over dynamic M/N with 4-slot L1 groups and rotating L0/Acc slots (groups declared
  outside or inside the cube section, more cores than blocks, single-slot L0 via ``current()``);
* a fused cube + vector program: A @ B blocks staged through GM, then a row softmax over them on both
  AIVs with tails in M and N;
* a double-buffered multi-core elementwise program over dynamic shapes, the strided split of blocks
  over cores, a valid window set after the load (only the window is stored), TilingData scalar loop
  bounds, tiling keys that select code at compile time;
* launching: repeated launches, ``kernel[stream, n]`` with a stream object that is ignored, the cpu
  build cache layout, ``arch=``/``compile_timeout=``, unknown ``@pl.jit`` keywords, ``printf`` (once
  per printing core, ``loc=True`` prefixes the kernel's file:line).
"""
import glob
import os
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro.runtime.platform import get_platform_info
from pypto_pro.runtime.tilingkey import TilingKeyField

from .on_every_backend import EVERY_BACKEND, backend, jit_on, run_on  # noqa: F401  (backend: fixture)

pytestmark = EVERY_BACKEND

F16, F32, I32 = pl.DT_FP16, pl.DT_FP32, pl.DT_INT32
S = pl.MemorySpace
P = pl.PipeType
B = 64  # block edge of the matmul programs


def ints(shape, seed, lo=-3, hi=4, dtype=np.float16):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def ring(shape, dtype, space, addrs, mutex_ids, **kw):
    return pl.make_tile_group(type=pl.TileType(shape, dtype, space, **kw), addrs=addrs, mutex_ids=mutex_ids)


# ---------------------------------------------------------------------------------------------- multi-core matmul
def mm_groups_outside(a: pl.Tensor[[pl.DYNAMIC, B], F16], b: pl.Tensor[[B, pl.DYNAMIC], F16],
                      c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]):
    l1a = ring([B, B], F16, S.Mat, 0x00000, [0, 1, 2, 3])
    l1b = ring([B, B], F16, S.Mat, 0x10000, [4, 5, 6, 7])
    l0a = ring([B, B], F16, S.Left, 0, [8, 9])
    l0b = ring([B, B], F16, S.Right, 0, [10, 11])
    accs = ring([B, B], F32, S.Acc, 0, [12, 13])
    with pl.section_cube():
        for bi in pl.range(pl.get_block_idx(), a.shape[0] // B, pl.get_block_num()):
            for bj in pl.range(b.shape[1] // B):
                ta, tb = l1a.next(), l1b.next()
                pl.load_tile(tb, b, [0, bj])
                pl.load_tile(ta, a, [bi, 0])
                la, rb = l0a.next(), l0b.next()
                pl.move(la, ta)
                pl.move(rb, tb)
                acc = accs.next()
                pl.matmul(acc, la, rb)
                pl.store_tile(c, acc, [bi, bj])


def mm_groups_inside(a: pl.Tensor[[pl.DYNAMIC, B], F16], b: pl.Tensor[[B, pl.DYNAMIC], F16],
                     c: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]):
    with pl.section_cube():
        l1a = ring([B, B], F16, S.Mat, 0x00000, [0, 1, 2, 3])
        l1b = ring([B, B], F16, S.Mat, 0x10000, [4, 5, 6, 7])
        la, rb = ring([B, B], F16, S.Left, 0, [8]).current(), ring([B, B], F16, S.Right, 0, [9]).current()
        one_acc = ring([B, B], F32, S.Acc, 0, [10])
        for bi in pl.range(pl.get_block_idx(), a.shape[0] // B, pl.get_block_num()):
            for bj in pl.range(b.shape[1] // B):
                ta, tb = l1a.next(), l1b.next()
                pl.load_tile(ta, a, [bi, 0])
                pl.load_tile(tb, b, [0, bj])
                pl.move(la, ta)
                pl.move(rb, tb)
                acc = one_acc.next()  # a one-slot group: next() keeps returning its only slot
                pl.matmul(acc, la, rb)
                pl.store_tile(c, acc, [bi, bj])


MATMULS = {"groups_outside_32_cores": (mm_groups_outside, (320, 192), lambda m: 32),
           "groups_inside_one_block_per_core": (mm_groups_inside, (256, 320), lambda m: m // B),
           "groups_inside_platform_cores": (mm_groups_inside, (384, 128),
                                            lambda m: min(get_platform_info().cube_core_num, m // B))}


@pytest.mark.parametrize("case", sorted(MATMULS))
def test_multi_core_matmul_over_dynamic_shapes(backend, case):
    fn, (m, n), cores = MATMULS[case]
    a, b = ints((m, B), 1), ints((B, n), 2)
    c = run_on(fn, backend, a, b, np.zeros((m, n), np.float32), blocks=cores(m))[2]
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


# ---------------------------------------------------------------------------------------------- cube + vector softmax
KS, TN, HALF = 64, 64, 32  # K, the N block, the rows each AIV owns (M <= 2 * HALF)


def matmul_then_softmax(a: pl.Tensor[[pl.DYNAMIC, KS], F16], b: pl.Tensor[[KS, pl.DYNAMIC], F16],
                        probs: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32],
                        scores: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F32]):
    m, n = a.shape[0], b.shape[1]
    with pl.section_cube():
        a1 = ring([2 * HALF, KS], F16, S.Mat, 0x0000, [0], valid_shape=[-1, -1])[0]
        b1 = ring([KS, TN], F16, S.Mat, 0x4000, [1], valid_shape=[-1, -1])[0]
        a0 = ring([2 * HALF, KS], F16, S.Left, 0, [2], valid_shape=[-1, -1], compact=1)[0]
        b0 = ring([KS, TN], F16, S.Right, 0, [3], valid_shape=[-1, -1], compact=1)[0]
        acc = ring([2 * HALF, TN], F32, S.Acc, 0, [4], valid_shape=[-1, -1], compact=1)[0]
        pl.set_validshape(a1, [m, KS])
        pl.set_validshape(a0, [m, KS])
        pl.load(a1, a, [0, 0])
        pl.move(a0, a1)
        for c0 in pl.range(0, n, TN):
            width = pl.min(TN, n - c0)
            pl.set_validshape(b1, [KS, width])
            pl.set_validshape(b0, [KS, width])
            pl.set_validshape(acc, [m, width])
            pl.load(b1, b, [0, c0])
            pl.move(b0, b1)
            pl.matmul(acc, a0, b0)
            pl.store(scores, acc, [0, c0])
        pl.system.set_cross_core(pipe=P.FIX, event_id=1)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=P.MTE2, event_id=1)
        r0 = pl.get_subblock_idx() * HALF
        if r0 < m:
            rows = pl.min(HALF, m - r0)
            blk = ring([HALF, TN], F32, S.Vec, 0x0000, [5], valid_shape=[-1, -1])[0]
            work = ring([HALF, TN], F32, S.Vec, 0x2000, [6], valid_shape=[-1, -1])[0]
            part = ring([HALF, 1], F32, S.Vec, 0x4000, [7], layout=pl.DN, valid_shape=[-1, -1])[0]
            top = ring([HALF, 1], F32, S.Vec, 0x4100, [8], layout=pl.DN, valid_shape=[-1, -1])[0]
            total = ring([HALF, 1], F32, S.Vec, 0x4200, [9], layout=pl.DN, valid_shape=[-1, -1])[0]
            for t in (part, top, total):
                pl.set_validshape(t, [rows, 1])
            pl.expands(top, float("-inf"))
            pl.expands(total, 0.0)
            for c0 in pl.range(0, n, TN):  # pass 1: the row maxima
                width = pl.min(TN, n - c0)
                pl.set_validshape(blk, [rows, width])
                pl.set_validshape(work, [rows, width])
                pl.load(blk, scores, [r0, c0])
                pl.maximum(part, blk, work, dim=0)
                pl.maximum(top, top, part)
            for c0 in pl.range(0, n, TN):  # pass 2: the sums of exp(x - max)
                width = pl.min(TN, n - c0)
                pl.set_validshape(blk, [rows, width])
                pl.set_validshape(work, [rows, width])
                pl.load(blk, scores, [r0, c0])
                pl.expand_sub(blk, blk, top, dim=0)
                pl.exp(blk, blk)
                pl.sum(part, blk, work, dim=0)
                pl.add(total, total, part)
            for c0 in pl.range(0, n, TN):  # pass 3: normalise
                width = pl.min(TN, n - c0)
                pl.set_validshape(blk, [rows, width])
                pl.load(blk, scores, [r0, c0])
                pl.expand_sub(blk, blk, top, dim=0)
                pl.exp(blk, blk)
                pl.expand_div(blk, blk, total, dim=0)
                pl.store(probs, blk, [r0, c0])


@pytest.mark.parametrize("m,n", [(48, 512), (17, 150), (1, 64), (64, 70)],
                         ids=["48x512", "tails_17x150", "one_row", "n_tail"])
def test_matmul_then_row_softmax_on_both_vector_cores(backend, m, n):
    a, b = ints((m, KS), 3, -2, 3), ints((KS, n), 4, -2, 3)
    scores = np.zeros((m, n), np.float32)
    probs, scores = run_on(matmul_then_softmax, backend, a, b, np.zeros((m, n), np.float32), scores)[2:]
    exact = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_array_equal(scores, exact)
    want = torch.softmax(torch.from_numpy(exact).double(), dim=-1).numpy()
    np.testing.assert_allclose(probs, want, rtol=2e-5, atol=1e-7)


# ---------------------------------------------------------------------------------------------- vector programs
def rotating_add(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16], y: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16],
                 z: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], F16]):
    xs = ring([B, 128], F16, S.Vec, 0x00000, [0, 1])
    ys = ring([B, 128], F16, S.Vec, 0x08000, [2, 3])
    zs = ring([B, 128], F16, S.Vec, 0x10000, [20, 21])
    with pl.section_vector():
        for bi in pl.range(pl.get_block_idx(), x.shape[0] // B, pl.get_block_num()):
            for bj in pl.range(x.shape[1] // 128):
                tx, ty, tz = xs.next(), ys.next(), zs.next()
                pl.load_tile(tx, x, [bi, bj])
                pl.load_tile(ty, y, [bi, bj])
                pl.add(tz, tx, ty)
                pl.store_tile(z, tz, [bi, bj])


@pytest.mark.parametrize("cores", ["platform", "one_per_row_block", "two"])
def test_double_buffered_add_over_cores(backend, cores):
    m, n = 448, 256
    blocks = {"platform": min(get_platform_info().vector_core_num, m // B), "one_per_row_block": m // B,
              "two": 2}[cores]  # two cores: several row blocks each, the slots rotate
    x, y = torch.rand(m, n, dtype=torch.float16), torch.rand(m, n, dtype=torch.float16)
    z = torch.empty(m, n, dtype=torch.float16)
    jit_on(rotating_add, backend)[None, blocks](x, y, z)
    assert torch.equal(z, x + y)  # one fp16 rounding of the fp32 sum, as torch


def blocks_per_core(counts: pl.Tensor[[16], I32], total: pl.DT_INT64):
    with pl.section_vector():
        me = pl.get_block_idx()
        mine = 0
        for blk in pl.range(me, total, pl.get_block_num()):
            mine = mine + 1
        pl.setval(counts, me, mine)


def test_strided_loop_splits_blocks_over_cores(backend):
    counts = run_on(blocks_per_core, backend, np.zeros(16, np.int32), 70, blocks=16)[0]
    assert counts.tolist() == [5] * 6 + [4] * 10  # 70 = 16 * 4 + 6


def window_after_load(x: pl.Tensor[[32, 64], F32], r: pl.DT_INT64, c: pl.DT_INT64, y: pl.Tensor[[32, 64], F32]):
    t = pl.make_tile(pl.TileType([32, 64], F32, S.Vec, valid_shape=[-1, -1]), addr=0x100, size=8192)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
        pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.V, event_id=0)
        pl.set_validshape(t, [r, c])
        pl.system.sync_src(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
        pl.system.sync_dst(set_pipe=P.V, wait_pipe=P.MTE3, event_id=1)
        pl.store(y, t, [0, 0])


@pytest.mark.parametrize("r,c", [(19, 40), (32, 64), (1, 1)])
def test_window_set_after_the_load_limits_the_store(backend, r, c):
    x = ints((32, 64), 5, -50, 50, np.float32)
    y = run_on(window_after_load, backend, x, r, c, np.zeros_like(x))[3]
    want = np.zeros_like(x)
    want[:r, :c] = x[:r, :c]
    np.testing.assert_array_equal(y, want)


@dataclass
class RowCount:
    rows: int


def first_rows(x: pl.Tensor[[64, 128], F16], y: pl.Tensor[[64, 128], F16], td: RowCount):
    slots = ring([1, 128], F16, S.Vec, 0, [0, 1])
    with pl.section_vector():
        for r in pl.range(td.rows):
            t = slots.next()
            pl.load_tile(t, x, [r, 0])
            pl.store_tile(y, t, [r, 0])


@pytest.mark.parametrize("rows", [3, 10])
def test_tilingdata_field_bounds_a_loop(backend, rows):
    x = ints((64, 128), 6, -9, 10)
    y = np.zeros_like(x)
    jit = jit_on(first_rows, backend)
    jit[None, 1](x, y, RowCount(rows=rows))
    np.testing.assert_array_equal(y[:rows], x[:rows])
    assert not y[rows:].any()


class Variant:
    Doubled = TilingKeyField(bits=1, values=[0, 1])

    def is_valid(self, key):
        return key[0] in (0, 1)


def maybe_doubled(x: pl.Tensor[[8, 64], F16], y: pl.Tensor[[8, 64], F16]):
    t = ring([8, 64], F16, S.Vec, 0, [0])[0]
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        if Doubled == 1:  # noqa: F821  (a compile-time constant of the tiling key)
            pl.add(t, t, t)
        pl.store(y, t, [0, 0])


@pytest.mark.parametrize("doubled", [0, 1])
def test_tiling_key_selects_code_at_compile_time(backend, doubled):
    x = ints((8, 64), 7, -9, 10)
    y = np.zeros_like(x)
    jit_on(maybe_doubled, backend, tiling_key=Variant)[None, 1, {"Doubled": doubled}](x, y)
    np.testing.assert_array_equal(y, x * (2 if doubled else 1))


# ---------------------------------------------------------------------------------------------- launching
def sub_kernel(x: pl.Tensor[[32, 64], F16], y: pl.Tensor[[32, 64], F16], z: pl.Tensor[[32, 64], F16]):
    tx, ty = ring([32, 64], F16, S.Vec, 0, [0])[0], ring([32, 64], F16, S.Vec, 0x1000, [1])[0]
    tz = ring([32, 64], F16, S.Vec, 0x2000, [2])[0]
    with pl.section_vector():
        pl.load(tx, x, [0, 0])
        pl.load(ty, y, [0, 0])
        pl.sub(tz, tx, ty)
        pl.store(z, tz, [0, 0])


class IgnoredStream:
    """Any object serves as the stream of ``kernel[stream, n]``: launches are synchronous."""

    def synchronize(self):
        pass


def test_repeated_launches_and_a_stream_object(backend):
    k = jit_on(sub_kernel, backend)
    x, y = torch.rand(32, 64, dtype=torch.float16), torch.rand(32, 64, dtype=torch.float16)
    for launch in (lambda: k[None, 1], lambda: k[IgnoredStream(), 3], lambda: k):
        z = torch.full((32, 64), 9.0, dtype=torch.float16)
        launch()(x, y, z)  # with 3 cores each writes the same values: benign for the simulator
        assert torch.equal(z, x - y)
    if backend == "cpu":
        root = os.environ.get("PYPTO_BUILD_DIR") or "build"
        cpps = glob.glob(os.path.join(root, "*sub_kernel__a5*", "**", "kernel.cpp"), recursive=True)
        assert cpps, f"no kernel.cpp under {root}"
        assert any(glob.glob(os.path.join(os.path.dirname(p), "call_kernel*.so")) for p in cpps)


def test_arch_and_compile_timeout_options(backend):
    k = jit_on(sub_kernel, backend, arch="a5", compile_timeout=120)
    x, y = torch.rand(32, 64, dtype=torch.float16), torch.rand(32, 64, dtype=torch.float16)
    z = torch.empty(32, 64, dtype=torch.float16)
    k[None, 4](x, y, z)
    assert torch.equal(z, x - y)


def test_an_unknown_jit_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="timeout"):
        pl.jit(arch="a5", timeout=200)  # the option is called compile_timeout


def greet(flag: pl.Tensor[[1], I32]):
    with pl.section_vector():
        pl.printf("hi from the tile program\n")
        pl.setval(flag, 0, 7)


def test_printf_from_one_vector_core(backend, capfd):
    flag = run_on(greet, backend, np.zeros(1, np.int32))[0]
    assert flag[0] == 7
    assert capfd.readouterr().out.count("hi from the tile program\n") == 1


def report_core_zero(out: pl.Tensor[[4], I32]):
    me, n = pl.get_block_idx(), pl.get_block_num()
    if me == 0:
        pl.printf("core %d of %d\n", me, n, loc=True)


def test_printf_outside_sections_with_its_location(backend, capfd):
    run_on(report_core_zero, backend, np.zeros(4, np.int32), blocks=3)
    lines = [ln for ln in capfd.readouterr().out.splitlines() if "core " in ln]
    assert lines and all(ln.endswith("core 0 of 3") for ln in lines)
    assert all("test_tile_programs_end_to_end.py:" in ln for ln in lines)
