"""The less common ops on the cpu backend (backends/cpu/emit_extra.py, include/pto/extra.h): each kernel
runs with backend="cpu" and backend="interp" on the same inputs and the results must agree bit for bit
(NaN payloads included); printf / pto_assert / dump_data must print exactly the interpreter's text."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.errors import KernelRuntimeError
from pypto_pro.ir.optable import OPS

from kernels import load_kernels

NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32, "INT16": np.int16,
      "INT8": np.int8, "UINT8": np.uint8, "UINT16": np.uint16}
ALL = ["FP32", "FP16", "BF16", "INT32", "INT16", "INT8", "UINT8"]
FALLBACK = "running it on the interpreter"
#: the data-movement and part-op matrices (52 kernels) check what each op emits, which the optimiser does not
#: change (no conversions, no reductions): they compile at the suite's level, not the users' -O3 of tests/cpu
#: (tests/conftest.py); the casts, prints and syncs stay at -O3, and the fuzzers cover the element-wise paths there
EMISSION_MATRIX = pytest.mark.kernel_opt("-O0")


def pair(tmp_path, src: str, name: str = "k"):
    """(cpu kernel, interp kernel) compiled from one source; ``@B@`` stands for the backend name."""
    src = src.replace('@pl.jit(backend="@B@")\n', "")  # one function, one file: identical source locations
    mod = load_kernels(tmp_path, src + f'\n_cpu = pl.jit(backend="cpu")({name})\n'
                                       f'_interp = pl.jit(backend="interp")({name})\n')
    return mod._cpu, mod._interp


def run_both(tmp_path, src, args, block_dim=1, capfd=None, name="k"):
    """Run both kernels on private copies of ``args``; returns (cpu args, interp args[, cpu out, interp out])."""
    cpu, ref = pair(tmp_path, src, name)
    a_cpu = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a_ref = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if capfd is not None:
        capfd.readouterr()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cpu[block_dim](*a_cpu)
    assert not [m for m in w if FALLBACK in str(m.message)], "the cpu kernel fell back to the interpreter"
    out_cpu = capfd.readouterr().out if capfd is not None else None
    ref[block_dim](*a_ref)
    out_ref = capfd.readouterr().out if capfd is not None else None
    if capfd is not None:
        return a_cpu, a_ref, out_cpu, out_ref
    return a_cpu, a_ref


def bits_equal(a, b, what=""):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    if not np.array_equal(a.view(np.uint8), b.view(np.uint8)):
        bad = np.argwhere(a.view(np.uint8).reshape(a.shape[0], -1) != b.view(np.uint8).reshape(b.shape[0], -1))
        raise AssertionError(f"{what}: cpu and interp differ at {bad[:5].tolist()} (of {len(bad)})\n"
                             f"cpu={a.ravel()[:8]}\ninterp={b.ravel()[:8]}")


def random(shape, dtype, seed=0, nans=True):
    rng = np.random.default_rng(seed)
    npd = NP[dtype]
    if np.issubdtype(npd, np.integer):
        info = np.iinfo(npd)
        return rng.integers(max(info.min, -1000), min(info.max, 1000) + 1, shape).astype(npd)
    x = (rng.standard_normal(shape) * 8).astype(np.float32)
    if nans:
        x.ravel()[::37] = np.nan
        x.ravel()[5::53] = -0.0
    return x.astype(npd)


def test_every_interpreted_op_has_cpp_emission():
    from pypto_pro.backends.cpu import registry

    missing = sorted(n for n in OPS if n not in registry.table())
    # MX operands (FP8/FP4/E8M0) have no C++ storage type: their kernels run on the interpreter
    assert missing == sorted(registry.NOT_IMPLEMENTED) == ["matmul_mx", "matmul_mx_acc"]


# ----------------------------------------------------------------------------------------------
# fillpad
# ----------------------------------------------------------------------------------------------
FILLPAD = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[8, 64], pl.DT_@D@], out: pl.Tensor[[@R2@, @C2@], pl.DT_@D@], vr: int, vc: int):
    src = pl.make_tile(pl.TileType([8, 64], pl.DT_@D@, valid_shape=[-1, -1]@SRCPAD@), addr=0)
    dst = pl.make_tile(pl.TileType([@R2@, @C2@], pl.DT_@D@, pad=pl.TilePad.@P@), addr=0x8000)
    with pl.section_vector():
        pl.set_validshape(src, [vr, vc])
        pl.load(src, x, [0, 0])
        pl.fillpad(@DST@, src, mode=pl.FillPadMode.@M@)
        pl.store(out, @DST@, [0, 0])
"""


@EMISSION_MATRIX
@pytest.mark.cpu_sample(pairs=True)
@pytest.mark.parametrize("mode", ["NORMAL", "EXPAND", "INPLACE"])
@pytest.mark.parametrize("pad", ["zero", "max", "min"])
@pytest.mark.parametrize("dtype", ALL)
def test_fillpad(tmp_path, dtype, pad, mode):
    r2, c2 = (16, 128) if mode == "EXPAND" else (8, 64)
    src = (FILLPAD.replace("@D@", dtype).replace("@P@", pad).replace("@M@", mode).replace("@R2@", str(r2))
           .replace("@C2@", str(c2)).replace("@DST@", "src" if mode == "INPLACE" else "dst")
           .replace("@SRCPAD@", f", pad=pl.TilePad.{pad}" if mode == "INPLACE" else ""))
    x = random((8, 64), dtype, seed=1)
    out = np.zeros((r2, c2), NP[dtype])
    c, r = run_both(tmp_path, src, [x, out, 3, 41])
    bits_equal(c[1], r[1], "fillpad")


def test_fillpad_into_subview_and_mat(tmp_path):
    src = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[8, 64], pl.DT_FP16], out: pl.Tensor[[16, 64], pl.DT_FP16]):
    s = pl.make_tile(pl.TileType([8, 64], pl.DT_FP16, valid_shape=[-1, -1]), addr=0)
    d = pl.make_tile(pl.TileType([16, 64], pl.DT_FP16, pad=pl.TilePad.max, valid_shape=[-1, -1]), addr=0x4000)
    with pl.section_vector():
        pl.set_validshape(s, [5, 33])
        pl.load(s, x, [0, 0])
        pl.expands(d, 1.5)
        pl.set_validshape(d, [3, 7])
        pl.fillpad(d[8:16, 0:64], s)
        pl.store(out, d, [0, 0])
"""
    x = random((8, 64), "FP16", seed=2)
    c, r = run_both(tmp_path, src, [x, np.zeros((16, 64), np.float16)])
    bits_equal(c[1], r[1], "fillpad into a subview keeps the parent's valid window")


# ----------------------------------------------------------------------------------------------
# transpose
# ----------------------------------------------------------------------------------------------
TRANSPOSE = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[32, 64], pl.DT_@D@], out: pl.Tensor[[64, 32], pl.DT_@D@], vr: int, vc: int):
    s = pl.make_tile(pl.TileType([32, 64], pl.DT_@D@, valid_shape=[-1, -1]), addr=0)
    d = pl.make_tile(pl.TileType([64, 32], pl.DT_@D@), addr=0x8000)
    with pl.section_vector():
        pl.set_validshape(s, [vr, vc])
        pl.load(s, x, [0, 0])
        pl.transpose(d, s)
        pl.store(out, d, [0, 0])
"""


@EMISSION_MATRIX
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("window", [(32, 64), (13, 50), (1, 1)])
def test_transpose(tmp_path, dtype, window):
    x = random((32, 64), dtype, seed=3)
    c, r = run_both(tmp_path, TRANSPOSE.replace("@D@", dtype), [x, np.zeros((64, 32), NP[dtype]), *window])
    bits_equal(c[1], r[1], "transpose")
    vr, vc = window
    assert np.array_equal(c[1][:vc, :vr].view(np.uint8), np.ascontiguousarray(x[:vr, :vc].T).view(np.uint8))


# ----------------------------------------------------------------------------------------------
# fill_index
# ----------------------------------------------------------------------------------------------
FILL_INDEX = """
@pl.jit(backend="@B@")
def k(out: pl.Tensor[[24, 64], pl.DT_@D@], si: int, sf: float):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_@D@, valid_shape=[-1, -1]), addr=0)
    b = pl.make_tile(pl.TileType([8, 64], pl.DT_@D@), addr=0x4000)
    c = pl.make_tile(pl.TileType([8, 64], pl.DT_@D@), addr=0x8000)
    with pl.section_vector():
        pl.set_validshape(a, [5, 39])
        pl.fill_index(a, si)
        pl.fill_index(b, sf)
        pl.fill_index(c)
        pl.store(out, a, [0, 0])
        pl.store(out, b, [8, 0])
        pl.store(out, c, [16, 0])
"""


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("start", [(100, 2.5), (-7, -3.25), (2**31 + 5, 70000.75)])
def test_fill_index(tmp_path, dtype, start):
    si, sf = start
    if dtype.startswith("U") and (si < 0 or sf < 0):
        pytest.skip("negative floats -> unsigned is platform-defined in numpy")
    if not dtype.startswith("FP") and not dtype.startswith("BF") and sf > 1e4:
        pytest.skip("out-of-range float -> int conversion is platform-defined in numpy")
    c, r = run_both(tmp_path, FILL_INDEX.replace("@D@", dtype), [np.zeros((24, 64), NP[dtype]), si, sf])
    bits_equal(c[0], r[0], "fill_index")


# ----------------------------------------------------------------------------------------------
# part ops
# ----------------------------------------------------------------------------------------------
PART = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[16, 64], pl.DT_@D@], y: pl.Tensor[[16, 64], pl.DT_@D@], z: pl.Tensor[[16, 64], pl.DT_@D@],
      out: pl.Tensor[[16, 64], pl.DT_@D@], ar: int, ac: int, br: int, bc: int):
    s0 = pl.make_tile(pl.TileType([16, 64], pl.DT_@D@, valid_shape=[-1, -1]), addr=0)
    s1 = pl.make_tile(pl.TileType([16, 64], pl.DT_@D@, valid_shape=[-1, -1]), addr=0x2000)
    d = pl.make_tile(pl.TileType([16, 64], pl.DT_@D@, valid_shape=[-1, -1]), addr=0x4000)
    with pl.section_vector():
        pl.load(d, z, [0, 0])
        pl.load(s0, x, [0, 0])
        pl.load(s1, y, [0, 0])
        pl.set_validshape(s0, [ar, ac])
        pl.set_validshape(s1, [br, bc])
        pl.set_validshape(d, [14, 60])
        pl.@OP@(d, s0, s1)
        pl.set_validshape(d, [16, 64])
        pl.store(out, d, [0, 0])
"""


@EMISSION_MATRIX
@pytest.mark.cpu_sample(pairs=True)
@pytest.mark.parametrize("op", ["partadd", "partmax", "partmin", "partmul"])
@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT32", "INT16", "INT8"])
@pytest.mark.parametrize("windows", [(16, 64, 16, 64), (10, 30, 12, 20), (3, 64, 16, 5)])
def test_part_ops(tmp_path, op, dtype, windows):
    x, y, z = (random((16, 64), dtype, seed=s) for s in (4, 5, 6))
    c, r = run_both(tmp_path, PART.replace("@D@", dtype).replace("@OP@", op),
                    [x, y, z, np.zeros((16, 64), NP[dtype]), *windows])
    bits_equal(c[3], r[3], op)


# ----------------------------------------------------------------------------------------------
# add_relu_cast / sub_relu_cast / mul_cast
# ----------------------------------------------------------------------------------------------
CAST_OPS = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[8, 64], pl.DT_@S@], y: pl.Tensor[[8, 64], pl.DT_@S@], lhs_out: pl.Tensor[[8, 64], pl.DT_@S@],
      out: pl.Tensor[[8, 64], pl.DT_@T@]):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_@S@), addr=0)
    b = pl.make_tile(pl.TileType([8, 64], pl.DT_@S@), addr=0x2000)
    d = pl.make_tile(pl.TileType([8, 64], pl.DT_@T@, valid_shape=[-1, -1]), addr=0x4000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        pl.expands(d, 0)
        pl.set_validshape(d, [7, 45])
        pl.@OP@(d, a, b, target_type=pl.DT_@T@, mode=pl.RoundMode.@M@)
        pl.set_validshape(d, [8, 64])
        pl.store(lhs_out, a, [0, 0])
        pl.store(out, d, [0, 0])
"""

CASTS = [("FP32", "FP16", m) for m in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC",
                                        "CAST_ODD")] + \
        [("FP32", "BF16", "CAST_ROUND"), ("FP32", "INT32", "CAST_FLOOR"), ("FP16", "FP32", "CAST_NONE"),
         ("FP16", "INT8", "CAST_RINT"), ("BF16", "FP16", "CAST_TRUNC"), ("INT32", "FP32", "CAST_ROUND"),
         ("INT32", "INT16", "CAST_NONE"), ("INT16", "FP16", "CAST_CEIL")]


@pytest.mark.cpu_sample(pairs=True)
@pytest.mark.parametrize("op", ["add_relu_cast", "sub_relu_cast", "mul_cast"])
@pytest.mark.parametrize("src_t,dst_t,mode", CASTS)
def test_fused_cast_ops(tmp_path, op, src_t, dst_t, mode):
    x, y = random((8, 64), src_t, seed=7), random((8, 64), src_t, seed=8)
    if np.issubdtype(NP[src_t], np.floating) or src_t == "BF16":
        x = (x.astype(np.float32) * 3.3).astype(NP[src_t])  # values between representable targets
    src = CAST_OPS.replace("@S@", src_t).replace("@T@", dst_t).replace("@OP@", op).replace("@M@", mode)
    c, r = run_both(tmp_path, src, [x, y, np.zeros((8, 64), NP[src_t]), np.zeros((8, 64), NP[dst_t])])
    bits_equal(c[2], r[2], f"{op}: lhs (scratch)")
    bits_equal(c[3], r[3], f"{op}: dst")


# ----------------------------------------------------------------------------------------------
# printf / pto_assert / dump_data
# ----------------------------------------------------------------------------------------------
PRINTF = """
@pl.jit(backend="@B@")
def k(n: int, f: pl.DT_FP32):  # a pl.DT_* parameter makes it a kernel (only int/float: a plain function)
    with pl.section_vector():
        b = pl.get_block_idx()
        for i in pl.range(n):
            pl.printf("b=%d i=%i u=%u x=%x neg=%d negu=%u negx=%x\\n", b, i, i - 3, i + 250, -i - 1, -i - 1, -i - 1)
        pl.printf("[%5d|%-5d|%+d|% d|%05d|%.3d|%-+6d|%5.3d]\\n", b, b, b, b, -b, b, b, -b - 40)
        pl.printf("[%#x|%#5x|%#05x|%#-6x|%#.3x|%p|%5p|%x]\\n", b, b, b, b, b, -b - 1, b + 11, 0)
        pl.printf("[%f|%.2f|%10.3f|%-10.1f|%+f|%08.2f|% .1f]\\n", f, f * b, -f, f, f, -f, f)
        pl.printf("[%f|%f|%f|%.0f|%5.1f]\\n", f * 1e30 * 1e30, -f * 1e30 * 1e30, f * 1e30 * 1e30 - f * 1e30 * 1e30,
                  0.1, 1.0 / 3.0)
        pl.printf("flag=%d const=%d %f\\n", b > 0, 7, 2.5, loc=True)
        pl.printf("no values\\n")
"""


def test_printf_output_matches_interpreter(tmp_path, capfd):
    _, _, out, ref = run_both(tmp_path, PRINTF, [3, 1.7], block_dim=3, capfd=capfd)
    assert out == ref
    assert "b=2 i=2 u=18446744073709551615 x=fc neg=-3 negu=18446744073709551613" in out
    assert out.index("b=0 i=0") < out.index("b=1 i=0") < out.index("b=2 i=0")


MIX_PRINTF = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[16, 16], pl.DT_FP16]):
    m = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, pl.MemorySpace.Mat), addr=0)
    v = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16), addr=0)
    with pl.section_cube():
        pl.load(m, x, [0, 0])
        pl.printf("cube of block %d\\n", pl.get_block_idx())
        pl.printf("cube again\\n")
    with pl.section_vector():
        pl.load(v, x, [0, 0])
        pl.printf("vector %d sub %d\\n", pl.get_block_idx(), pl.get_subblock_idx())
"""


def test_printf_from_every_core_of_a_mix_kernel(tmp_path, capfd):
    x = np.ones((16, 16), np.float16)
    _, _, out, ref = run_both(tmp_path, MIX_PRINTF, [x], block_dim=2, capfd=capfd)
    assert out == ref and out.count("cube again") == 2 and out.count("vector") == 4


ASSERT = """
@pl.jit(backend="@B@")
def k(out: pl.Tensor[[4], pl.DT_INT64], lim: int, f: float):
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.printf("before %d\\n", b)
        pl.pto_assert(b < lim, "b=%d f=%.3f lim=%x", b, f, lim)
        pl.pto_assert(b + lim != 3)
        pl.pto_assert((b * 2) <= lim, loc=True)
        out[b] = b + 100
"""


def test_pto_assert_reports_and_continues(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv("PYPTO_STRICT_ASSERT", raising=False)
    c, r, out, ref = run_both(tmp_path, ASSERT, [np.zeros(4, np.int64), 1, 0.5], block_dim=3, capfd=capfd)
    assert out == ref
    assert "Assertion failed: b < lim b=2 f=0.500 lim=1\n" in out
    assert "Assertion failed: b + lim != 3\n" in out and "] Assertion failed: (b * 2) <= lim\n" in out
    bits_equal(c[0], r[0], "the kernel continues after a failed assertion")
    assert c[0].tolist() == [100, 101, 102, 0]


def test_pto_assert_strict_mode_raises_like_the_interpreter(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("PYPTO_STRICT_ASSERT", "1")
    cpu, ref = pair(tmp_path, ASSERT)
    outs, msgs = [], []
    for kern in (cpu, ref):
        capfd.readouterr()
        buf = np.zeros(4, np.int64)
        with pytest.raises(KernelRuntimeError) as e:
            kern[2](buf, 1, 0.25)
        outs.append(capfd.readouterr().out)
        msgs.append(str(e.value))
        assert buf.tolist() == [100, 0, 0, 0]
    assert outs[0] == outs[1] == "before 0\nbefore 1\n"
    for m in msgs:
        assert "Assertion failed: b < lim b=1 f=0.250 lim=1 (on block 1 AIV0)" in m
    # the condition passes: nothing printed, nothing raised
    capfd.readouterr()
    cpu[1](np.zeros(4, np.int64), 5, 0.25)
    assert capfd.readouterr().out == "before 0\n"


DUMP = """
@pl.jit(backend="@B@")
def k(x: pl.Tensor[[8, 32], pl.DT_@D@], g: pl.Tensor[[2, 3, 4], pl.DT_@D@], r0: int):
    t = pl.make_tile(pl.TileType([8, 32], pl.DT_@D@, valid_shape=[-1, -1]), addr=0)
    with pl.section_vector():
        pl.set_validshape(t, [5, 19])
        pl.load(t, x, [0, 0])
        pl.dump_data(t)
        pl.dump_data(t[r0:4, 8:16])
        pl.dump_data(t, [1, 2], [2, 30], flag="window", loc=True)
        pl.dump_data(g)
        pl.dump_data(g, [1, r0, 0], [1, 2, 9])
"""


@pytest.mark.parametrize("dtype", ["FP32", "FP16", "BF16", "INT32", "INT8"])
def test_dump_data_matches_interpreter(tmp_path, capfd, dtype):
    x = random((8, 32), dtype, seed=9)
    g = np.asfortranarray(random((2, 3, 4), dtype, seed=10))  # strided GM tensor
    _, _, out, ref = run_both(tmp_path, DUMP.replace("@D@", dtype), [x, g, 1], capfd=capfd)
    assert out == ref
    assert "t[1:4, 8:16] =\n" in out and "window\n" in out and "g =\n" in out


def test_default_backend_runs_printf_compiled(tmp_path, capfd, monkeypatch):
    """No fallback: with cpu as the default backend a printing kernel must not warn."""
    monkeypatch.delenv("PYPTO_BACKEND", raising=False)
    k = load_kernels(tmp_path, PRINTF.replace('backend="@B@"', "backend=None")).k
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[2](1, 0.5)
    assert "b=1 i=0" in capfd.readouterr().out


# ----------------------------------------------------------------------------------------------
# sync_all SOFT mode / workspaces, Acc -> Vec move with offset=
# ----------------------------------------------------------------------------------------------
SYNC_ALL = """
@pl.jit(backend="@B@")
def k(slots: pl.Tensor[[8], pl.DT_INT64], sums: pl.Tensor[[8], pl.DT_INT64], ws: pl.Tensor[[64], pl.DT_INT32]):
    with pl.section_vector():
        b = pl.get_block_idx()
        for r in pl.range(3):
            slots[b] = (b + 1) * 10 + r
            pl.system.sync_all(@WS@core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.@M@)
            total = 0
            for i in pl.range(pl.get_block_num()):
                total = total + slots[i]
            pl.system.sync_all(@WS@core_type=pl.SyncCoreType.AIV_ONLY, mode=pl.SyncAllMode.@M@)
            sums[b] = sums[b] + total
"""


@pytest.mark.parametrize("mode", ["SOFT", "HARD"])
@pytest.mark.parametrize("ws", ["ws, ", ""])
def test_sync_all_soft_and_workspaces(tmp_path, mode, ws):
    src = SYNC_ALL.replace("@M@", mode).replace("@WS@", ws)
    args = [np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(64, np.int32)]
    c, r = run_both(tmp_path, src, args, block_dim=5)
    bits_equal(c[1], r[1], "sums")
    assert c[1][:5].tolist() == [150 + 150 + 5 + 150 + 10] * 5


ACC_TO_VEC = """
@pl.jit(backend="@B@")
def k(a: pl.Tensor[[32, 32], pl.DT_FP16], b: pl.Tensor[[32, 64], pl.DT_FP16], c: pl.Tensor[[32, 64], pl.DT_FP32]):
    a1 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Mat), addr=0)
    b1 = pl.make_tile(pl.TileType([32, 64], pl.DT_FP16, pl.MemorySpace.Mat), addr=0x10000)
    a0 = pl.make_tile(pl.TileType([32, 32], pl.DT_FP16, pl.MemorySpace.Left), addr=0)
    b0 = pl.make_tile(pl.TileType([32, 64], pl.DT_FP16, pl.MemorySpace.Right), addr=0)
    acc = pl.make_tile(pl.TileType([32, 64], pl.DT_FP32, pl.MemorySpace.Acc), addr=0)
    v = pl.make_tile(pl.TileType([32, 64], pl.DT_FP32), addr=0)
    with pl.section_cube():
        pl.load(a1, a, [0, 0])
        pl.load(b1, b, [0, 0])
        pl.move(a0, a1)
        pl.move(b0, b1)
        pl.matmul(acc, a0, b0)
        pl.set_validshape(v, [32 - @R@, 64 - @C@])
        pl.move(v, acc, [@R@, @C@]@MODE@)
        pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=2)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=2)
        pl.set_validshape(v, [32 - @R@, 64 - @C@])
        if pl.get_subblock_idx() == 0:
            pl.store(c, v, [0, 0])
"""


@pytest.mark.parametrize("offset", [(0, 0), (8, 16)])
@pytest.mark.parametrize("mode", ["", ", acc_to_vec_mode=pl.AccToVecMode.SingleModeVec0",
                                  ", relu_pre_mode=pl.ReluPreMode.NormalRelu"])
def test_acc_to_vec_move_with_offset(tmp_path, offset, mode):
    """Acc -> Vec with offset=[r, c] moves the window [offset, offset + the Vec tile's valid shape) of the
    accumulator (here the rest of it from [r, c] on); the cpu backend gives the interpreter's bits."""
    rng = np.random.default_rng(11)
    # small integers: exact products and sums, so the check is about the move, not the matmul's rounding
    a = rng.integers(-4, 5, (32, 32)).astype(np.float16)
    b = rng.integers(-4, 5, (32, 64)).astype(np.float16)
    src = ACC_TO_VEC.replace("@R@", str(offset[0])).replace("@C@", str(offset[1])).replace("@MODE@", mode)
    cpu, ref = pair(tmp_path, src, "k")
    out = np.zeros((32, 64), np.float32)
    ref(a, b, out)
    want = a.astype(np.float32) @ b.astype(np.float32)
    if "Relu" in mode:
        want = np.maximum(want, 0)
    r0, c0 = offset
    assert np.array_equal(out[:32 - r0, :64 - c0], want[r0:, c0:])
    assert not out[32 - r0:].any() and not out[:, 64 - c0:].any()  # only the valid window is stored
    out_cpu = np.zeros((32, 64), np.float32)
    cpu(a, b, out_cpu)
    bits_equal(out_cpu, out, "c")
