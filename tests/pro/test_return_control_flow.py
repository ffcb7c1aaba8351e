"""``return`` inside runtime loops and branches, of kernels and of inlined helpers (docs/language.md,
"return").  Each kernel runs on every backend; results are checked against plain Python running the same
helpers' logic."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pypto_pro.language as pl
from pypto_pro import KernelSyntaxError, KernelTypeError

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")


# ----------------------------------------------------------------------------------------------
# helpers with returns in every shape of runtime control flow
# ----------------------------------------------------------------------------------------------
def first_above(xs, limit, n):
    """(index, value) of the first element above ``limit``, or (-1, 0): a return inside a loop's if."""
    for i in pl.range(n):
        if xs[i] > limit:
            return i, xs[i]
    return -1, 0


def band(v):
    """Nested branches, each returning."""
    if v > 10:
        if v > 100:
            return 2
        return 1
    else:
        return 0


def count_until(limit):
    """A return inside a while inside a for: both loops are left."""
    total = 0
    for i in pl.range(4):
        j = 0
        while j < 5:
            total = total + 1
            if total >= limit:
                return total * 10 + i
            j = j + 1
    return -total


def small_case(v):
    """A return inside a compile-time unrolled loop inside a runtime branch."""
    if v >= 0:
        for k in range(4):
            if v == k:
                return k * 100
    return -1


def only_else(v):
    """The then branch falls through to the final return; the else branch returns."""
    if v > 4:
        v = v + 1
    else:
        return 0
    return v


def pair_of(flag, base):
    """Structs built in each branch are merged field by field."""
    if flag:
        return pl.struct("Pair", a=base, b=base + 1)
    return pl.struct("Pair", a=0 - base, b=0)


def named(flag, base):
    if flag:
        return pl.make_tuple(lo=base, hi=base * 2, ok=True)
    return pl.make_tuple(lo=base + 1, hi=0, ok=False)


def mark(out, v):
    """Bare returns: what follows them is skipped."""
    out[20] = 1
    if v > 3:
        return
    out[21] = 1
    return


def shapes(xs: pl.Tensor[[8], pl.DT_INT64], out: pl.Tensor[[32], pl.DT_INT64], limit: int, v: int, flag: bool):
    with pl.section_vector():
        idx, val = first_above(xs, limit, 8)
        out[0] = idx
        out[1] = val
        out[2] = band(v)
        out[3] = count_until(v)
        out[4] = small_case(v)
        out[5] = only_else(v)
        p = pair_of(flag, v)
        out[6] = p.a
        out[7] = p.b
        t = named(flag, v)
        out[8] = t.lo + t.hi
        if t.ok:
            out[9] = 1
        for r in pl.range(2):                   # a helper with returns called in a loop: fresh each call
            out[10 + r] = band(v * (r + 1))
        mark(out, v)


def shapes_model(xs, limit, v, flag):
    out = [0] * 32
    hit = next(((i, int(x)) for i, x in enumerate(xs) if x > limit), (-1, 0))
    out[0:2] = hit

    def band_(w):
        return 2 if w > 100 else 1 if w > 10 else 0

    out[2] = band_(v)
    total, res = 0, None
    for i in range(4):
        for _ in range(5):
            total += 1
            if total >= v:
                res = total * 10 + i
                break
        if res is not None:
            break
    out[3] = res if res is not None else -total
    out[4] = v * 100 if 0 <= v < 4 else -1
    out[5] = v + 1 if v > 4 else 0
    out[6:8] = [v, v + 1] if flag else [-v, 0]
    out[8] = v + v * 2 if flag else v + 1
    out[9] = int(flag)
    out[10:12] = [band_(v), band_(2 * v)]
    out[20] = 1
    out[21] = 0 if v > 3 else 1
    return out


SHAPES = {b: pl.jit(backend=b)(shapes) for b in BACKENDS}
XS = np.array([3, 9, 1, 12, 40, 7, 120, 5], np.int64)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("limit,v,flag", [(10, 2, True), (50, 7, False), (500, 30, True), (0, -3, False),
                                          (8, 200, True)])
def test_helper_returns_in_loops_and_branches(backend, limit, v, flag):
    out = np.zeros(32, np.int64)
    SHAPES[backend](XS, out, limit, v, flag)
    assert out.tolist() == shapes_model(XS, limit, v, flag)


def search(xs: pl.Tensor[[16], pl.DT_INT64], out: pl.Tensor[[2], pl.DT_INT64], limit: int):
    with pl.section_vector():
        idx, val = first_above(xs, limit, 16)
        out[0] = idx
        out[1] = val


SEARCH = {b: pl.jit(backend=b)(search) for b in ("interp", "cpu")}


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-100, 100), min_size=16, max_size=16), st.integers(-100, 100))
def test_first_above_matches_python(values, limit):
    xs = np.array(values, np.int64)
    want = next(([i, v] for i, v in enumerate(values) if v > limit), [-1, 0])
    for backend, kernel in SEARCH.items():
        out = np.full(2, 77, np.int64)
        kernel(xs, out, limit)
        assert out.tolist() == want, backend


# ----------------------------------------------------------------------------------------------
# kernel-level returns
# ----------------------------------------------------------------------------------------------
def grid_walk(out: pl.Tensor[[40], pl.DT_INT64], n: int, stop: int):
    with pl.section_vector():
        for i in pl.range(n):
            k = 0
            while k < n:
                out[i * n + k] = 1
                if i * n + k == stop:
                    return                      # ends the kernel: both loops and what follows
                k = k + 1
        out[36] = 5
    with pl.section_vector():
        out[37] = 6


GRID = {b: pl.jit(backend=b)(grid_walk) for b in BACKENDS}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stop", [0, 7, 35, 100])
def test_kernel_return_inside_nested_loops(backend, stop):
    out = np.zeros(40, np.int64)
    GRID[backend](out, 6, stop)
    want = [0] * 40
    for cell in range(min(stop, 35) + 1):
        want[cell] = 1
    if stop > 35:
        want[36], want[37] = 5, 6
    assert out.tolist() == want


# ----------------------------------------------------------------------------------------------
# a helper returning different tiles from a runtime branch
# ----------------------------------------------------------------------------------------------
def pick(flag, a, b):
    if flag:
        return a
    return b


def tile_pick(x: pl.Tensor[[8, 64], pl.DT_FP32], y: pl.Tensor[[8, 64], pl.DT_FP32],
              z: pl.Tensor[[8, 64], pl.DT_FP32], flag: bool):
    tt = pl.TileType(shape=[8, 64], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec)
    ga = pl.make_tile_group(type=tt, addrs=[0x0, 0x800], mutex_ids=[0, 1])
    gb = pl.make_tile_group(type=tt, addrs=[0x1000, 0x1800], mutex_ids=[2, 3])
    gc = pl.make_tile_group(type=tt, addrs=[0x2000], mutex_ids=[4])
    with pl.section_vector():
        a = ga.next()
        b = gb.next()
        c = gc.next()
        pl.load(a, x, [0, 0])
        pl.load(b, y, [0, 0])
        chosen = pick(flag, a, b)
        pl.mul(c, chosen, chosen)
        pl.store(z, c, [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_helper_returns_different_tiles(backend):
    kernel = pl.jit(backend=backend)(tile_pick)
    x = np.linspace(-2, 2, 8 * 64, dtype=np.float32).reshape(8, 64)
    y = x[::-1].copy() + 1
    for flag in (True, False):
        z = np.zeros_like(x)
        kernel(x, y, z, flag)
        src = x if flag else y
        assert z.tolist() == (src * src).tolist()


# ----------------------------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------------------------
def falls_off(v):
    if v > 0:
        return v
    v = v + 1


def mixed_kinds(v):
    if v > 0:
        return v, v
    return v


def float_or_int(v):
    if v > 0:
        return 1.5
    return v


def uses(helper):
    def kernel(out: pl.Tensor[[4], pl.DT_INT64], v: int):
        with pl.section_vector():
            out[0] = helper(v)
    return kernel


def returns_value(out: pl.Tensor[[4], pl.DT_INT64], v: int):
    with pl.section_vector():
        if v > 0:
            return 1


@pytest.mark.parametrize("fn,error,words", [
    (uses(falls_off), KernelSyntaxError, "falls_off returns a value inside runtime control flow but can also "
                                         "reach its end"),
    (uses(mixed_kinds), KernelSyntaxError, "mixed_kinds returns differently shaped values"),
    (uses(float_or_int), KernelTypeError, "float_or_int returns a INT64 here but a FP32 elsewhere"),
    (returns_value, KernelSyntaxError, "a kernel cannot return a value"),
])
def test_return_errors(fn, error, words):
    with pytest.raises(error, match=words) as e:
        pl.jit(backend="interp")(fn)(np.zeros(4, np.int64), 1)
    assert e.value.loc is not None
