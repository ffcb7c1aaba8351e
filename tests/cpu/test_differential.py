"""Differential testing: random tile programs run on the interpreter and the cpu backend must agree.

Programs are random chains of vector ops over random shapes, dtypes, valid windows and block_dims.
Everything is compared bit for bit (NaNs equal), exp included: the interpreter computes it by the
cpu backend's fp32 sequence (ops/fp32math.py).
"""
import os

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels import load_kernels

DTYPES = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT32": np.int32,
          "INT16": np.int16}
FLOAT = ("FP32", "FP16", "BF16")

# (template, allowed dtypes); {d} dst, {a} {b} sources, {s} scalar
OPS = [
    ("pl.add({d}, {a}, {b})", None),
    ("pl.sub({d}, {a}, {b})", None),
    ("pl.mul({d}, {a}, {b})", None),
    ("pl.maximum({d}, {a}, {b})", None),
    ("pl.minimum({d}, {a}, {b})", None),
    ("pl.add({d}, {a}, {s})", None),
    ("pl.mul({d}, {a}, {s})", None),
    ("pl.div({d}, {a}, {b})", ("FP32", "FP16")),
    ("pl.abs({d}, {a})", None),
    ("pl.neg({d}, {a})", None),
    ("pl.relu({d}, {a})", ("FP32", "FP16", "INT32")),
    ("pl.exp({d}, {a})", ("FP32", "FP16")),
    ("pl.sqrt({d}, {a})", ("FP32", "FP16")),
    ("pl.addc({d}, {a}, {b}, {a})", None),
    ("pl.maximum(row, {a}, tmp, dim=0)\n        pl.expand_sub({d}, {a}, row, dim=0)", ("FP32", "FP16")),
    ("pl.sum(row, {a}, tmp, dim=0)\n        pl.expand_mul({d}, {a}, row, dim=0)", ("FP32", "FP16", "INT32")),
    ("pl.gt(mask, {a}, {b})\n        pl.select({d}, mask, {a}, {b}, tmp)", None),
    # every comparison, tile and scalar rhs, into select with a tile or scalar rhs (the row fast paths)
    ("pl.le(mask, {a}, {s})\n        pl.select({d}, mask, {b}, {s})", None),
    ("pl.ne(mask, {a}, {b})\n        pl.select({d}, mask, {b}, {a})", None),
    ("pl.eq(mask, {a}, {a})\n        pl.select({d}, mask, {b}, {s})", None),
    ("pl.lt(mask, {a}, {b})\n        pl.select({d}, mask, {a}, {s})", None),
    ("pl.ge(mask, {a}, {s})\n        pl.select({d}, mask, {b}, {a})", None),
]

KERNEL = """
@pl.jit(backend="{backend}")
def k_{backend}(x: pl.Tensor[[pl.DYNAMIC, {C}], pl.DT_{dt}], y: pl.Tensor[[pl.DYNAMIC, {C}], pl.DT_{dt}],
                out: pl.Tensor[[pl.DYNAMIC, {C}], pl.DT_{dt}]):
    t0 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr=0x0)
    t1 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr={S})
    t2 = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}, valid_shape=[-1, -1]), addr={S2})
    tmp = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_{dt}), addr={S3})
    row = pl.make_tile(pl.TileType([{R}, 1], pl.DT_{dt}, layout=pl.DN), addr={S4})
    mask = pl.make_tile(pl.TileType([{R}, {C}], pl.DT_UINT8), addr={S5})
    with pl.section_vector():
        b = pl.get_block_idx()
        pl.set_validshape(t0, [{VR}, {VC}])
        pl.set_validshape(t1, [{VR}, {VC}])
        pl.set_validshape(t2, [{VR}, {VC}])
        pl.load(t0, x, [b * {R}, 0])
        pl.load(t1, y, [b * {R}, 0])
        pl.expands(t2, 0)
{body}
        pl.store(out, t2, [b * {R}, 0])
"""


def _align(n):
    return (n + 511) // 512 * 512


@st.composite
def programs(draw):
    dt = draw(st.sampled_from(sorted(DTYPES)))
    esize = np.dtype(DTYPES[dt]).itemsize
    R = draw(st.sampled_from([r for r in (8, 16, 32) if r * esize % 32 == 0]))
    C = draw(st.sampled_from([32, 64, 96, 128]))  # a UINT8 mask tile with the data shape needs C % 32 == 0
    VR = draw(st.integers(1, R))
    VC = draw(st.integers(1, C))
    nb = draw(st.integers(1, 5))
    ops = [o for o in OPS if o[1] is None or dt in o[1]]
    chain = draw(st.lists(st.sampled_from(ops), min_size=1, max_size=6))
    tiles = ["t0", "t1", "t2"]
    lines = []
    for tmpl, _ in chain:
        d, a, b = draw(st.sampled_from(tiles)), draw(st.sampled_from(tiles)), draw(st.sampled_from(tiles))
        s = draw(st.sampled_from(["2", "-3", "0.5", "1.25"])) if dt in FLOAT else draw(st.sampled_from(["2", "-3"]))
        lines.append("        " + tmpl.format(d=d, a=a, b=b, s=s))
    lines.append("        pl.add(t2, t2, t0)")
    return dict(dt=dt, R=R, C=C, VR=VR, VC=VC, nb=nb, body="\n".join(lines))


def _with_specials(rng, a: np.ndarray) -> np.ndarray:
    """``a`` with inf, -inf, nan, -0.0 and 0.0 at ~5% of the positions (vectorised paths must handle
    them exactly like the interpreter, wherever in a row they fall)."""
    mask = rng.random(a.shape) < 0.05
    a[mask] = rng.choice(np.array([np.inf, -np.inf, np.nan, -0.0, 0.0]), mask.sum())
    return a


def _run(tmp_path, prog, seed):
    size = prog["R"] * prog["C"] * np.dtype(DTYPES[prog["dt"]]).itemsize
    fmt = dict(prog, S=_align(size), S2=2 * _align(size), S3=3 * _align(size), S4=4 * _align(size),
               S5=4 * _align(size) + 512)
    src = KERNEL.format(backend="interp", **fmt) + KERNEL.format(backend="cpu", **fmt)
    mod = load_kernels(tmp_path, src)
    rng = np.random.default_rng(seed)
    shape = (prog["nb"] * prog["R"], prog["C"])
    if prog["dt"] in FLOAT:
        x, y = (_with_specials(rng, rng.standard_normal(shape) * 2).astype(DTYPES[prog["dt"]]) for _ in range(2))
    else:
        x = rng.integers(-50, 50, shape).astype(DTYPES[prog["dt"]])
        y = rng.integers(-50, 50, shape).astype(DTYPES[prog["dt"]])
    outs = []
    for k in (mod.k_interp, mod.k_cpu):
        out = np.full(shape, 7, dtype=DTYPES[prog["dt"]])
        k[None, prog["nb"]](x, y, out)
        outs.append(out)
    return outs


def _compare(ref, got, prog):
    a = ref.astype(np.float64)
    b = got.astype(np.float64)
    same_nan = np.isnan(a) == np.isnan(b)
    assert same_nan.all(), f"NaN positions differ\n{prog['body']}"
    m = ~np.isnan(a)
    assert np.array_equal(a[m], b[m]), f"mismatch\n{prog['body']}\nmax diff {np.abs(a[m] - b[m]).max()}"


@settings(max_examples=int(os.environ.get("PYPTO_DIFFERENTIAL_EXAMPLES", "18")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(prog=programs(), seed=st.integers(0, 2**31 - 1))
def test_random_programs_match_interpreter(tmp_path, prog, seed):
    ref, got = _run(tmp_path, prog, seed)
    _compare(ref, got, prog)


@pytest.mark.parametrize("dt", ["FP16", "BF16"])
def test_cast_modes_match(tmp_path, dt):
    src = """
@pl.jit(backend="{b}")
def c_{b}(x: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[7, 8, 64], pl.DT_{dt}]):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x0)
    h = pl.make_tile(pl.TileType([8, 64], pl.DT_{dt}), addr=0x1000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        for m in [pl.RoundMode.CAST_NONE, pl.RoundMode.CAST_RINT, pl.RoundMode.CAST_ROUND, pl.RoundMode.CAST_FLOOR,
                  pl.RoundMode.CAST_CEIL, pl.RoundMode.CAST_TRUNC]:
            pl.cast(h, a, mode=m)
            pl.store(out, h, [int(m), 0, 0])
"""
    mod = load_kernels(tmp_path, src.format(b="interp", dt=dt) + src.format(b="cpu", dt=dt))
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((8, 64)) * 1000).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, 65519.0]
    outs = []
    for k in (mod.c_interp, mod.c_cpu):
        o = np.zeros((7, 8, 64), DTYPES[dt])
        k(x, o)
        outs.append(o.view(np.uint16))
    assert np.array_equal(outs[0], outs[1])
