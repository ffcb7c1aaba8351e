"""Element-wise fusion on the cpu backend (backends/cpu/fusion.py): fused groups must give exactly the
results of the unfused per-op code, which is bit-exact with the interpreter.

Random chains of fusable ops (tile/scalar/row-broadcast operands, aliasing destinations, fp32/fp16/bf16,
valid windows with odd widths, inf/nan/-0.0 inputs, optional interleaved set_validshapes that make the
runtime guard fall back) run on the interpreter, on the cpu backend with fusion and without it
(``PYPTO_CPU_FUSION=0``).  Fused vs unfused: identical bits (NaN payloads aside).  Interpreter vs fused: the same, exp included
(the interpreter computes it by the cpu backend's fp32 sequence, ops/fp32math.py).
"""
import contextlib
import os
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels import load_kernels
from pypto_pro.errors import KernelRuntimeError

DTYPES = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16}
BITS = {"FP32": np.uint32, "FP16": np.uint16, "BF16": np.uint16}
ALL = ("FP32", "FP16", "BF16")
F16_F32 = ("FP32", "FP16")

# (template, dtypes); {d} dst, {a} {b} tile sources, {s} scalar
OPS = [
    ("pl.add({d}, {a}, {b})", ALL), ("pl.sub({d}, {a}, {b})", ALL), ("pl.mul({d}, {a}, {b})", ALL),
    ("pl.div({d}, {a}, {b})", F16_F32), ("pl.maximum({d}, {a}, {b})", ALL), ("pl.minimum({d}, {a}, {b})", ALL),
    ("pl.add({d}, {a}, {s})", ALL), ("pl.sub({d}, {a}, {s})", ALL), ("pl.mul({d}, {a}, {s})", ALL),
    ("pl.div({d}, {a}, {s})", F16_F32), ("pl.maximum({d}, {a}, {s})", ALL), ("pl.minimum({d}, {a}, {s})", ALL),
    ("pl.neg({d}, {a})", ALL), ("pl.abs({d}, {a})", ALL), ("pl.exp({d}, {a})", F16_F32),
    ("pl.sqrt({d}, {a})", F16_F32), ("pl.rsqrt({d}, {a})", F16_F32), ("pl.recip({d}, {a})", F16_F32),
    ("pl.relu({d}, {a})", F16_F32), ("pl.expands({d}, {s})", ALL),
    ("pl.expand_sub({d}, {a}, row, dim=0)", ALL), ("pl.expand_mul({d}, {a}, row, dim=0)", ALL),
    ("pl.expand_div({d}, {a}, row, dim=0)", ALL), ("pl.expand_max({d}, {a}, row, dim=0)", ALL),
    ("pl.expand_min({d}, {a}, row, dim=0)", ALL), ("pl.row_sum(rs, {a})", F16_F32),
    ("pl.row_max(rs, {a})", F16_F32), ("pl.row_min(rs, {a})", F16_F32),
    ("pl.expand_mul({d}, {a}, rs, dim=0)", ALL), ("pl.expand_sub({d}, {a}, col, dim=1)", ALL),
    ("pl.expand_div({d}, {a}, col, dim=1)", ALL), ("pl.expand_max({d}, {a}, col, dim=1)", ALL),
    # GM traffic that joins the loop: loads of x/y, a store into x (read again by later loads: in place)
    ("pl.load({d}, x, [0, 0])", ALL), ("pl.load({d}, y, [0, 0])", ALL), ("pl.store(x, {a}, [0, 0])", ALL),
]
TILES = ["t0", "t1", "t2", "t3"]  # t3 has t2's address and geometry (an alias)
SCALARS = ["2", "-3", "0.5", "1.25", "-0.0", "1e30"]

KERNEL = """
@pl.jit(backend="{backend}")
def k_{name}(x: pl.Tensor[[{R}, {C}], pl.DT_{dt}], y: pl.Tensor[[{R}, {C}], pl.DT_{dt}],
             v: pl.Tensor[[{R}, 1], pl.DT_{dt}], w: pl.Tensor[[1, {C}], pl.DT_{dt}],
             out: pl.Tensor[[4, {R}, {C}], pl.DT_{dt}]):
    t0 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr=0x0)
    t1 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr={S})
    t2 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr={S2})
    t3 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr={S2})
    row = pl.make_tile(pl.TileType([{R}, 1], pl.DT_{dt}, layout=pl.DN), addr={S3})
    rs = pl.make_tile(pl.TileType([{R}, 1], pl.DT_{dt}, layout=pl.DN), addr={S4})
    col = pl.make_tile(pl.TileType([1, {C}], pl.DT_{dt}), addr={S5})
    with pl.section_vector():
        pl.load(row, v, [0, 0])
        pl.load(col, w, [0, 0])
        pl.load(t0, x, [0, 0])
        pl.load(t1, y, [0, 0])
        pl.expands(t2, 0.5)
        pl.set_validshape(t0, [{VR}, {VC}])
        pl.set_validshape(t1, [{VR}, {VC}])
        pl.set_validshape(t2, [{VR}, {VC}])
        pl.set_validshape(t3, [{VR}, {VC}])
{body}
        pl.set_validshape(t0, [{R}, {C}])
        pl.set_validshape(t1, [{R}, {C}])
        pl.set_validshape(t2, [{R}, {C}])
        pl.store(out, t0, [0, 0, 0])
        pl.store(out, t1, [1, 0, 0])
        pl.store(out, t2, [2, 0, 0])
        pl.store(out, rs, [3, 0, 0])
"""


@contextlib.contextmanager
def fusion(on: bool):
    """Compile kernels (on first call) with the fusion pass on or off."""
    old = os.environ.get("PYPTO_CPU_FUSION")
    os.environ["PYPTO_CPU_FUSION"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ["PYPTO_CPU_FUSION"]
        else:
            os.environ["PYPTO_CPU_FUSION"] = old


def _align(n: int) -> int:
    return (n + 511) // 512 * 512


def _source(prog: dict, backend: str, name: str) -> str:
    size = _align(prog["R"] * prog["C"] * np.dtype(DTYPES[prog["dt"]]).itemsize)
    return KERNEL.format(backend=backend, name=name, S=size, S2=2 * size, S3=3 * size,
                         S4=3 * size + 512, S5=3 * size + 1024, **prog)


def _inputs(prog: dict, seed: int):
    """Random data with inf, -inf, nan, -0.0 and 0.0 sprinkled in."""
    rng = np.random.default_rng(seed)
    R, C, npdt = prog["R"], prog["C"], DTYPES[prog["dt"]]
    special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0])

    def one(shape):
        a = rng.standard_normal(shape) * 2
        mask = rng.random(shape) < 0.08
        a[mask] = rng.choice(special, mask.sum())
        return a.astype(npdt)
    return one((R, C)), one((R, C)), one((R, 1)), one((1, C))


def _launch(kernel, prog, data):
    """out, then x (programs may store into it), from a run on copies of ``data``."""
    data = [d.copy() for d in data]
    out = np.full((4, prog["R"], prog["C"]), 7, DTYPES[prog["dt"]])
    kernel(*data, out)
    out[3, :, 1:] = 0  # only column 0 holds row sums
    return np.concatenate([out, data[0][None]])


def _run_all(tmp_path, prog, seed):
    """Outputs of the interpreter, the fused cpu kernel and the unfused cpu kernel."""
    src = "".join(_source(prog, b, n) for b, n in (("interp", "interp"), ("cpu", "fused"), ("cpu", "unfused")))
    mod = load_kernels(tmp_path, src)
    data = _inputs(prog, seed)
    ref = _launch(mod.k_interp, prog, data)
    with fusion(True):
        fused = _launch(mod.k_fused, prog, data)
    with fusion(False):
        unfused = _launch(mod.k_unfused, prog, data)
    return ref, fused, unfused


def _assert_same_bits(a, b, dt, what):
    """Same NaN positions, identical bits elsewhere (-0.0 != 0.0).  NaN payloads and signs are not
    compared: with two NaN operands x86 returns the first one, and the compiler may commute add/mul."""
    nan_a, nan_b = np.isnan(a.astype(np.float32)), np.isnan(b.astype(np.float32))
    assert np.array_equal(nan_a, nan_b), f"NaN positions differ: {what}"
    assert np.array_equal(a[~nan_a].view(BITS[dt]), b[~nan_b].view(BITS[dt])), what


def _assert_matches_interp(ref, got, prog):
    _assert_same_bits(ref, got, prog["dt"], f"interpreter mismatch\n{prog['body']}")


@st.composite
def programs(draw):
    dt = draw(st.sampled_from(ALL))
    R = draw(st.sampled_from([16, 32]))
    C = draw(st.sampled_from([16, 48, 64, 80]))
    VR = draw(st.integers(1, R))
    VC = draw(st.one_of(st.just(C), st.integers(1, C)))
    ops = [o for o in OPS if dt in o[1]]
    lines = []
    for tmpl, _ in draw(st.lists(st.sampled_from(ops), min_size=2, max_size=8)):
        d, a, b = (draw(st.sampled_from(TILES)) for _ in range(3))
        lines.append("        " + tmpl.format(d=d, a=a, b=b, s=draw(st.sampled_from(SCALARS))))
        if draw(st.integers(0, 9)) == 0:  # a window change inside the run: the guard may fall back
            t = draw(st.sampled_from(TILES))
            lines.append(f"        pl.set_validshape({t}, [{draw(st.integers(1, R))}, {draw(st.integers(1, C))}])")
    return dict(dt=dt, R=R, C=C, VR=VR, VC=VC, body="\n".join(lines))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 1e30 as fp16 is inf
@settings(max_examples=int(os.environ.get("PYPTO_FUSION_EXAMPLES", "20")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(prog=programs(), seed=st.integers(0, 2**31 - 1))
def test_random_chains_match_unfused_and_interpreter(tmp_path, prog, seed):
    ref, fused, unfused = _run_all(tmp_path, prog, seed)
    _assert_same_bits(fused, unfused, prog["dt"], f"fused != unfused\n{prog['body']}")
    _assert_matches_interp(ref, fused, prog)


CHAIN = dict(dt="FP32", R=16, C=80, VR=13, VC=77, body="""\
        pl.mul(t2, t0, t1)
        pl.add(t3, t2, 1.0)
        pl.mul(t2, t3, 0.5)
        pl.sub(t3, t2, t1)
        pl.neg(t2, t3)
        pl.exp(t3, t2)
        pl.add(t2, t3, 1.0)
        pl.recip(t3, t2)
        pl.expand_max(t2, t3, row, dim=0)
        pl.expand_sub(t1, t2, col, dim=1)""")


def _kernel_cpp(build_dir, name: str) -> str:
    (path,) = build_dir.glob(f"k_{name}__*/*/kernel.cpp")
    return path.read_text()


def test_chain_is_one_fused_loop(tmp_path, monkeypatch):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    ref, fused, unfused = _run_all(tmp_path, CHAIN, 1)
    _assert_same_bits(fused, unfused, "FP32", "fused != unfused")
    _assert_matches_interp(ref, fused, CHAIN)
    cpp = _kernel_cpp(build, "fused")
    assert "fused element-wise group" in cpp and "10 ops in one pass" in cpp
    loop = cpp[cpp.index("pto::fz::each("):cpp.index("} else {  // the original per-op code")]
    assert len(re.findall(r"const V v\d+ = ", loop)) == 10  # one statement per op
    assert "fz::exp(" in loop and "fz::splat<V>(fz::load<float>(" in loop  # exp, row broadcast
    assert re.search(r"fz::load<V>\(p\d+_ \+ c_\);  // col", loop)  # column broadcast
    # t2/t3 share storage: only the last value is stored; t1 is stored; t0 is only read
    assert len(re.findall(r"fz::store\(", loop)) == 2
    assert "fused element-wise group" not in _kernel_cpp(build, "unfused")


HALF_CHAIN = """\
        pl.mul(t2, t0, t1)
        pl.add(t3, t2, 0.1)
        pl.maximum(t2, t3, t0)
        pl.expand_sub(t3, t2, row, dim=0)
        pl.abs(t2, t3)
        pl.minimum(t3, t2, 1.5)
        pl.neg(t1, t3)"""


def test_shared_scalar_constant(tmp_path):
    prog = dict(CHAIN, body="""\
        pl.mul(t0, t0, 2)
        pl.add(t0, t0, t0)
        pl.mul(t0, t0, 2)
        pl.expands(t1, 2)""")
    ref, fused, unfused = _run_all(tmp_path, prog, 0)
    _assert_same_bits(fused, unfused, "FP32", "fused != unfused")
    _assert_matches_interp(ref, fused, prog)


@pytest.mark.parametrize("dt", ["FP16", "BF16"])
def test_16_bit_chain_rounds_after_every_op(tmp_path, monkeypatch, dt):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, dt=dt, R=32, C=48, VR=31, VC=45, body=HALF_CHAIN)
    ref, fused, unfused = _run_all(tmp_path, prog, 3)
    _assert_same_bits(fused, unfused, dt, "fused != unfused")
    _assert_matches_interp(ref, fused, prog)
    cpp = _kernel_cpp(build, "fused")
    ctype = {"FP16": "pto::half", "BF16": "pto::bf16"}[dt]
    assert "7 ops in one pass" in cpp and cpp.count(f"fz::round<{ctype}>(") == 7


ROW_SUM_CHAIN = """\
        pl.expand_sub(t2, t0, row, dim=0)
        pl.exp(t3, t2)
        pl.row_sum(rs, t3)
        pl.expand_div(t1, t3, rs, dim=0)
        pl.expand_sub(t2, t1, rs, dim=0)
        pl.abs(t2, t2)
        pl.row_sum(rs, t2)"""


@pytest.mark.parametrize("dt,vc", [("FP32", 77), ("FP32", 5), ("FP16", 45)])
def test_trailing_row_sum_is_fused(tmp_path, monkeypatch, dt, vc):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, dt=dt, R=32, VR=30, VC=vc, body=ROW_SUM_CHAIN)
    ref, fused, unfused = _run_all(tmp_path, prog, 4)
    _assert_same_bits(fused, unfused, dt, "fused != unfused")
    _assert_matches_interp(ref, fused, prog)
    cpp = _kernel_cpp(build, "fused")
    assert "2 ops in one pass: expand_sub exp + row_sum" in cpp  # a fresh [R,1] destination
    assert "3 ops in one pass: expand_div expand_sub abs + row_sum" in cpp  # over its broadcast operand


ROW_SUM_AFTER_SET_VALIDSHAPE = """\
        pl.mul(t2, t0, t1)
        pl.set_validshape(rs, [{VR}, 1])
        pl.row_sum(rs, t2)"""


@pytest.mark.parametrize("dt", ["FP32", "FP16"])
def test_row_sum_after_a_set_validshape_of_its_destination_is_fused(tmp_path, monkeypatch, dt):
    """The tensor-level lowering sets the statistics tile's window right before the row sum."""
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, dt=dt, R=32, VR=29, VC=70)
    prog["body"] = ROW_SUM_AFTER_SET_VALIDSHAPE.format(**prog)
    ref, fused, unfused = _run_all(tmp_path, prog, 5)
    _assert_same_bits(fused, unfused, dt, "fused != unfused")
    _assert_matches_interp(ref, fused, prog)
    assert "1 ops in one pass: mul + row_sum" in _kernel_cpp(build, "fused")


def test_guard_falls_back_when_windows_differ(tmp_path, monkeypatch):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, body="""\
        pl.mul(t2, t0, t1)
        pl.set_validshape(t1, [5, 9])
        pl.add(t1, t2, 1.0)
        pl.mul(t2, t1, 0.5)
        pl.set_validshape(t2, [3, 4])
        pl.sub(t3, t2, t1)""")
    ref, fused, unfused = _run_all(tmp_path, prog, 2)
    _assert_same_bits(fused, unfused, "FP32", "fused != unfused")
    _assert_matches_interp(ref, fused, prog)
    cpp = _kernel_cpp(build, "fused")
    assert "3 ops in one pass" in cpp and "try_valid(C, kTiles, 1, " in cpp  # set_validshape(t1) is inside


def test_error_inside_a_group_names_the_same_line(tmp_path, monkeypatch):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, body="""\
        pl.mul(t2, t0, t1)
        pl.add(t3, t2, 1.0)
        pl.set_validshape(t1, [pl.get_block_num() + 16, 4])
        pl.mul(t1, t3, 0.5)""")
    data = _inputs(prog, 0)
    messages = []
    for on in (True, False):  # the same source file twice: the messages name the same line
        k = load_kernels(tmp_path, _source(prog, "cpu", "k")).k_k
        with fusion(on), pytest.raises(KernelRuntimeError) as e:
            _launch(k, prog, data)
        messages.append(re.sub(r"gen_kernel_\d+", "gen_kernel", str(e.value)))
    assert messages[0] == messages[1] and "outside tile t1" in messages[0]
    assert messages[0].rstrip().endswith("pl.set_validshape(t1, [pl.get_block_num() + 16, 4])")  # the right line
    cpps = [p.read_text() for p in build.glob("k_k__*/*/kernel.cpp")]
    assert sum("try_valid(C, kTiles, 1, " in c for c in cpps) == 1  # the failing set_validshape was fused


# ------------------------------------------------------------------ loads and stores in the fused loop
GM_KERNEL = """
@pl.jit(backend="{backend}")
def k_{name}(x: pl.Tensor[[20, 100], pl.DT_{dt}], y: pl.Tensor[[20, 100], pl.DT_{dt}],
             out: pl.Tensor[[20, 100], pl.DT_{dt}]):
    a = pl.make_tile(pl.TileType([16, 64], pl.DT_{dt}, valid_shape=[-1, -1]), addr=0x0)
    b = pl.make_tile(pl.TileType([16, 64], pl.DT_{dt}, valid_shape=[-1, -1]), addr=0x1000)
    c = pl.make_tile(pl.TileType([16, 64], pl.DT_{dt}, valid_shape=[-1, -1]), addr=0x2000)
    with pl.section_vector():
        pl.set_validshape(a, [{VR}, {VC}])
        pl.load(a, x, [2, 5])
        pl.set_validshape(b, [{VR}, {VC}])
        pl.load(b, y, [{y_off}])
        pl.set_validshape(c, [{VR}, {VC}])
        pl.mul(c, a, b)
        pl.add(c, c, 1.5)
        pl.sub(c, c, a)
        pl.store({dst}, c, [{dst_off}])
"""
GM_CASE = dict(dt="FP32", VR=13, VC=37, y_off="1, 40", dst="out", dst_off="3, 50")


def _gm_run_all(tmp_path, case):
    """out (and x, which some cases store into) after the interpreter, the fused and the unfused kernel."""
    src = "".join(GM_KERNEL.format(backend=b, name=n, **case)
                  for b, n in (("interp", "interp"), ("cpu", "fused"), ("cpu", "unfused")))
    mod = load_kernels(tmp_path, src)
    rng = np.random.default_rng(0)
    npdt = DTYPES[case["dt"]]
    x0, y0 = (rng.standard_normal((20, 100)).astype(npdt) for _ in range(2))
    results = []
    for kernel, on in ((mod.k_interp, True), (mod.k_fused, True), (mod.k_unfused, False)):
        x, out = x0.copy(), np.full((20, 100), 7, npdt)
        with fusion(on):
            kernel(x, y0, out)
        results.append(np.stack([x, out]))
    return results


@pytest.mark.parametrize("case", [
    GM_CASE,                                              # strided windows in wider tensors, odd tails
    dict(GM_CASE, dt="FP16", VC=64, y_off="1, 30", dst_off="3, 36"),
    dict(GM_CASE, dt="BF16", VR=16, VC=64, y_off="0, 0", dst_off="4, 0"),
    dict(GM_CASE, dst="x", dst_off="2, 5"),               # in place: every element read before written
    dict(GM_CASE, dst="x", dst_off="2, 6"),               # shifted overlap: the guard falls back
    dict(GM_CASE, dst="y", dst_off="1, 41"),              # the same with the other input
])
def test_loads_and_store_join_the_fused_loop(tmp_path, monkeypatch, case):
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    ref, fused, unfused = _gm_run_all(tmp_path, case)
    _assert_same_bits(fused, unfused, case["dt"], "fused != unfused")
    _assert_same_bits(ref, fused, case["dt"], "interpreter != fused")
    cpp = _kernel_cpp(build, "fused")
    assert "5 ops in one pass: load load mul add sub + store" in cpp
    loop = cpp[cpp.index("pto::fz::each("):cpp.index("} else {  // the original per-op code")]
    # both loads read GM, the store writes GM; no tile is read in the loop.  Without a discard (which
    # only the tensor-level lowering emits) the tiles stay live: a, b, c keep their values
    assert len(re.findall(r"fz::load<V>\(m\d_\.p \+ r_ \* m\d_\.st0 \+ c_\)", loop)) == 2
    assert "fz::load<V>(p" not in loop
    assert re.findall(r"fz::store\((\w+)", loop) == ["p0_", "p1_", "p2_"]
    assert re.findall(r"fz::store_gm\((\w+), (\w+)", loop) == [("m2_", "m2_")]


def test_out_of_bounds_load_in_a_fused_group_reports_like_unfused(tmp_path):
    case = dict(GM_CASE, VR=16, y_off="5, 40")  # rows 5..20 of y's 20
    messages = []
    for on in (True, False):
        k = load_kernels(tmp_path, GM_KERNEL.format(backend="cpu", name="k", **case)).k_k
        x, y, out = (np.zeros((20, 100), np.float32) for _ in range(3))
        with fusion(on), pytest.raises(KernelRuntimeError) as e:
            k(x, y, out)
        messages.append(re.sub(r"gen_kernel_\d+", "gen_kernel", str(e.value)))
    assert messages[0] == messages[1] and "exceeds tensor 'y'" in messages[0]


def test_a_loaded_tile_read_after_the_group_holds_the_loaded_values(tmp_path):
    mod = load_kernels(tmp_path, (GM_KERNEL + "        pl.store(out, a, [0, 0])\n").format(
        backend="cpu", name="fused", **GM_CASE))
    x, y, out = (np.random.default_rng(1).standard_normal((20, 100)).astype(np.float32) for _ in range(3))
    with fusion(True):
        mod.k_fused(x, y, out)
    np.testing.assert_array_equal(out[:13, :37], x[2:15, 5:42])


ROW_MAX_CHAIN = """\
        pl.load(t2, x, [0, 0])
        pl.row_max(rs, t2)
        pl.expand_sub(t3, t2, rs, dim=0)
        pl.abs(t1, t3)
        pl.neg(t1, t1)
        pl.row_min(rs, t1)"""


@pytest.mark.parametrize("dt,vc", [("FP32", 77), ("FP32", 6), ("FP16", 45)])
def test_row_max_and_min_are_fused_and_exact_with_nan_and_zeros(tmp_path, monkeypatch, dt, vc):
    """Rows with NaNs and with +-0.0 maxima take the sequential path (first NaN, last zero's sign).
    Also a regression test of the unfused pto::reduce: its AVX row max lost a NaN in the first 16
    columns of rows of 32 or more."""
    build = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(build))
    prog = dict(CHAIN, dt=dt, R=32, VR=30, VC=vc, body=ROW_MAX_CHAIN)
    src = "".join(_source(prog, b, n) for b, n in (("interp", "interp"), ("cpu", "fused"), ("cpu", "unfused")))
    mod = load_kernels(tmp_path, src)
    data = list(_inputs(prog, 6))
    x = data[0]
    x[3] = -np.abs(x[3])
    x[3, ::5] = np.array(-0.0, x.dtype)
    x[3, 2] = 0.0  # row 3: max is a zero, signs mixed
    x[4, :] = -0.0  # row 4: all -0.0
    x[5, 7] = np.nan  # row 5: a NaN among numbers
    ref = _launch(mod.k_interp, prog, data)
    with fusion(True):
        fused = _launch(mod.k_fused, prog, data)
    with fusion(False):
        unfused = _launch(mod.k_unfused, prog, data)
    _assert_same_bits(fused, unfused, dt, "fused != unfused")
    _assert_same_bits(ref, fused, dt, "interpreter != fused")
    cpp = _kernel_cpp(build, "fused")
    assert "1 ops in one pass: load + row_max" in cpp and "each_row_minmax<pto::RMax>" in cpp
    assert "+ row_min" in cpp and "each_row_minmax<pto::RMin>" in cpp
