"""Invalid tile programs: every backend must reject them the same way.

The project's rule (README "Errors"): bad input raises a ``KernelError`` subclass whose message names
the kernel and, for kernel code, the ``file:line`` and source line -- never a crash, a hang, a
Python-internal exception or a silently wrong answer -- and interp (the oracle), cpu and sim agree on
whether a program is an error and on the exception class.  Only what docs/simulator.md reserves for
the simulator (races, deadlocks, uninitialised reads) may differ, and the tests below pin down that
difference instead of forcing agreement.

Each program is written once and loaded three times (one module per backend, see ``kernels.py``),
so all three report the same line.  Programs whose compiled cpu code runs on invalid input (bounds,
scalar faults, huge block_dim) run on the cpu backend in a separate worker process with a timeout and
an address-space limit: a segfault or hang there fails the test with the program printed instead of
killing pytest.  Compile-time and launch-time rejections run in-process.

The bugs this file found (backends disagreeing on misaligned strides, an unbounded block_dim, scalar
faults without a line) are fixed; their cases are among the tests below.
"""
import multiprocessing
import os
import resource
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels import HEADER, load_kernels
from pypto_pro import errors

BACKENDS = ("interp", "cpu", "sim")
SETTINGS = settings(deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: seconds a cpu job may take in the worker, a first compile of its kernel included
WORKER_TIMEOUT = 120
#: the worker's address-space limit: a runaway allocation becomes a MemoryError, not the OOM killer
WORKER_MEMORY = 4 << 30
#: environment variables a launch reads at run time: the worker takes the test's values per job
MIRRORED_ENV = ("PYPTO_STRICT_ASSERT",)


# ------------------------------------------------------------------------------------------------
# running a program on the three backends
# ------------------------------------------------------------------------------------------------
class Program:
    """One kernel source loaded once per backend (``{backend}`` in the source is replaced)."""

    def __init__(self, tmp_dir: Path, source: str, name: str):
        self.source, self.name = source, name
        self.modules = {b: load_kernels(tmp_dir, source.replace("{backend}", b)) for b in BACKENDS}

    def kernel(self, backend: str):
        return getattr(self.modules[backend], self.name)

    def line_of(self, snippet: str) -> int:
        """The line number (in the generated file) of the only source line containing ``snippet``."""
        lines = [i for i, text in enumerate((HEADER + self.source).splitlines(), 1) if snippet in text]
        assert len(lines) == 1, (snippet, lines)
        return lines[0]

    def located(self, snippet: str) -> str:
        """How a message quotes the line containing ``snippet``: ``.py:<line>`` then the stripped line."""
        line = (HEADER + self.source).splitlines()[self.line_of(snippet) - 1]
        return f".py:{self.line_of(snippet)}\n    {line.strip()}"


def launch(kernel, args, block_dim=1):
    """``("ok", outputs)`` or ``(exception class name, message)`` of one launch."""
    try:
        kernel[None, block_dim](*args)
    except Exception as e:  # noqa: BLE001  (classified by the caller)
        return type(e).__name__, str(e)
    return "ok", [a for a in args if isinstance(a, np.ndarray)]


def _worker(conn, workdir):
    """Runs the launches sent by :class:`Worker` until it receives ``None``."""
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    modules = {}
    while True:
        job = conn.recv()
        if job is None:
            return
        source, backend, name, args, block_dim, env = job
        if (source, backend) not in modules:
            modules[source, backend] = load_kernels(Path(workdir), source.replace("{backend}", backend))
        os.environ.update(env)
        conn.send(launch(getattr(modules[source, backend], name), args, block_dim))


class Worker:
    """A spawned process running launches (of compiled cpu code, mostly): a crash or hang fails the
    test, naming the program and the launch, and the next job starts a fresh worker."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.proc = self.conn = None

    def _start(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, str(self.workdir)), daemon=True)
        self.proc.start()
        child.close()

    def stop(self):
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join()
        self.proc = None

    def run(self, prog: Program, args, block_dim=1, backend="cpu"):
        if self.proc is None or not self.proc.is_alive():
            self._start()
        what = f"{backend} launch [{block_dim}] with {_describe(args)} of\n{prog.source}"
        env = {k: os.environ.get(k, "") for k in MIRRORED_ENV}
        self.conn.send((prog.source, backend, prog.name, args, block_dim, env))
        if not self.conn.poll(WORKER_TIMEOUT):
            self.stop()
            pytest.fail(f"hang (> {WORKER_TIMEOUT} s): {what}")
        try:
            return self.conn.recv()
        except EOFError:
            self.proc.join()
            code = self.proc.exitcode
            self.proc = None
            pytest.fail(f"the kernel process died (exit code {code}; negative = signal): {what}")


def _describe(args) -> str:
    return ", ".join(f"array{list(a.shape)}:{a.dtype}" if isinstance(a, np.ndarray) else repr(a) for a in args)


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    w = Worker(tmp_path_factory.mktemp("worker"))
    yield w
    if w.proc is not None:
        w.conn.send(None)
        w.proc.join(10)
        w.stop()


def outcomes(prog: Program, make_args, block_dim=1, worker=None):
    """The outcome of the program on each backend; fresh arguments per backend.  With ``worker`` the
    cpu launch runs there (programs whose compiled code sees invalid input)."""
    res = {}
    for b in BACKENDS:
        if b == "cpu" and worker is not None:
            res[b] = worker.run(prog, make_args(), block_dim)
        else:
            res[b] = launch(prog.kernel(b), make_args(), block_dim)
    return res


def assert_rejected(res, prog: Program, cls, at=None, words=None):
    """Every backend raised exactly ``cls``, naming the kernel, the line containing ``at`` (a snippet
    or a list of acceptable snippets) and ``words``."""
    for b, (got, message) in res.items():
        assert got == cls.__name__, f"{b}: expected {cls.__name__}, got {got}: {message}\n{prog.source}"
        assert f"[kernel {prog.name}]" in message, f"{b}: kernel not named: {message}"
        if at is not None:
            places = [at] if isinstance(at, str) else at
            assert any(prog.located(p) in message for p in places), f"{b}: line of {places} not named: {message}"
        if words is not None:
            assert words in message, f"{b}: {words!r} not in {message}"


def assert_all_ok(res, prog: Program):
    """No backend raised, and every output array agrees bit for bit with the interpreter's."""
    for b, (got, outs) in res.items():
        assert got == "ok", f"{b}: unexpected {got}: {outs}\n{prog.source}"
    for b in res:
        for ref, o in zip(res["interp"][1], res[b][1]):
            assert _bytes(ref) == _bytes(o), f"{b} differs from interp\n{prog.source}"


def _bytes(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


# ------------------------------------------------------------------------------------------------
# launch errors
# ------------------------------------------------------------------------------------------------
COPY = """
@pl.jit(backend="{backend}")
def copy(x: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([8, 64], pl.DT_FP32), addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        pl.load(g.current(), x, [0, 0])
        pl.store(out, g.current(), [0, 0])
"""


def _f32(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def _read_only(a):
    a.setflags(write=False)
    return a


def _misaligned(shape):
    """A writeable float32 view whose row stride (258 bytes) is not a multiple of the element size."""
    buf = np.zeros(shape[0] * 258 + 8, np.uint8)
    return np.ndarray(shape, np.float32, buffer=buf, offset=2, strides=(258, 4))


#: case -> (arguments, block_dim, words of the message)
LAUNCH = {
    "too_few_args": (lambda: (_f32(8, 64),), 1, "expected 2 arguments"),
    "too_many_args": (lambda: (_f32(8, 64), _f32(8, 64), _f32(8, 64)), 1, "expected 2 arguments"),
    "rank_high": (lambda: (_f32(8, 64, 1), _f32(8, 64)), 1, "2-D"),
    "rank_low": (lambda: (_f32(8 * 64), _f32(8, 64)), 1, "2-D"),
    "fixed_dim": (lambda: (_f32(8, 64), _f32(8, 32)), 1, "dim 1 must be 64"),
    "dtype": (lambda: (_f32(8, 64).astype(np.float16), _f32(8, 64)), 1, "expected dtype FP32"),
    "int_dtype": (lambda: (_f32(8, 64), _f32(8, 64).astype(np.int32)), 1, "expected dtype FP32"),
    "scalar_for_tensor": (lambda: (1.0, _f32(8, 64)), 1, "torch tensor or numpy array"),
    "read_only_output": (lambda: (_f32(8, 64), _read_only(_f32(8, 64))), 1, "read-only"),
    "broadcast_output": (lambda: (_f32(8, 64), np.broadcast_to(np.float32(0), (8, 64))), 1, "read-only"),
    "block_dim_zero": (lambda: (_f32(8, 64), _f32(8, 64)), 0, "block_dim"),
    "block_dim_negative": (lambda: (_f32(8, 64), _f32(8, 64)), -3, "block_dim"),
    "block_dim_float": (lambda: (_f32(8, 64), _f32(8, 64)), 2.0, "block_dim"),
    "block_dim_bool": (lambda: (_f32(8, 64), _f32(8, 64)), True, "block_dim"),
    # interp and sim used to build a core object per block (out of memory); cpu wrapped 2**63 negative
    "block_dim_over_limit": (lambda: (_f32(8, 64), _f32(8, 64)), 65536, "block_dim must be an int in [1, 65535]"),
    "block_dim_huge": (lambda: (_f32(8, 64), _f32(8, 64)), 2 ** 63, "block_dim"),
    # a byte stride that is not whole elements: cpu used to reject it and interp/sim to accept it
    "misaligned_stride": (lambda: (_f32(8, 64), _misaligned((8, 64))), 1, "not a multiple of the element size"),
}


@pytest.fixture(scope="module")
def copy_prog(tmp_path_factory):
    return Program(tmp_path_factory.mktemp("copy"), COPY, "copy")


@pytest.mark.parametrize("case", sorted(LAUNCH))
def test_launch_errors_agree(copy_prog, case):
    """Arguments that do not fit the signature (arity, rank, fixed dims, dtype, a read-only array the
    kernel writes, a bad block_dim) are a KernelLaunchError naming the kernel on every backend -- also
    on the cpu backend after a successful launch has frozen a fast launcher for this kernel."""
    make_args, block_dim, words = LAUNCH[case]
    launch(copy_prog.kernel("cpu"), (_f32(8, 64), np.zeros((8, 64), np.float32)))  # freezes the fast path
    res = outcomes(copy_prog, make_args, block_dim)
    assert_rejected(res, copy_prog, errors.KernelLaunchError, words=words)


def test_a_failed_launch_writes_nothing(copy_prog):
    """A rejected launch leaves the (writeable) output untouched on every backend."""
    for b in BACKENDS:
        out = np.full((8, 64), 7.0, np.float32)
        assert launch(copy_prog.kernel(b), (_f32(8, 64), out), 0)[0] == "KernelLaunchError"
        assert (out == 7.0).all(), b


@pytest.mark.parametrize("view", ["reversed_rows", "every_other_column", "transposed"])
def test_non_contiguous_arrays_are_valid_arguments(copy_prog, view):
    """Non-contiguous (but element-aligned) views are accepted zero-copy, not an error (README: "any
    strides"): the copy lands in the viewed elements on every backend."""
    def make():
        big = np.zeros((64, 128), np.float32)
        out = {"reversed_rows": big[:8, :64][::-1], "every_other_column": big[:8, ::2],
               "transposed": big[:64, :8].T}[view]
        return _f32(8, 64)[::-1].copy()[::-1], out
    res = outcomes(copy_prog, make)
    assert_all_ok(res, copy_prog)
    assert np.array_equal(res["interp"][1][1], _f32(8, 64))


def test_misaligned_stride_on_the_cpu_fast_path(copy_prog):
    """After one good launch (which freezes a fast launcher keyed by dtype and shape), an output with a
    byte stride that is not whole elements is still a KernelLaunchError (it used to be written at the
    wrong addresses without any error) and nothing is written."""
    k = copy_prog.kernel("cpu")
    launch(k, (_f32(8, 64), np.zeros((8, 64), np.float32)))
    out = _misaligned((8, 64))
    got, message = launch(k, (_f32(8, 64), out))
    assert got == "KernelLaunchError" and "not a multiple of the element size" in message, (got, message)
    assert not out.any()


# ------------------------------------------------------------------------------------------------
# out-of-bounds GM windows
# ------------------------------------------------------------------------------------------------
WINDOW_2D = """
@pl.jit(backend="{backend}")
def window2d(x: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC, pl.DYNAMIC], pl.DT_FP32],
             lr: int, lc: int, sr: int, sc: int, step: int, vr: int, vc: int):
    g = pl.make_tile_group(type=pl.TileType([8, 32], pl.DT_FP32, valid_shape=[-1, -1]), addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        pl.set_validshape(t, [vr, vc])
        b = pl.get_block_idx() * step
        pl.load(t, x, [lr + b, lc])
        pl.store(out, t, [sr + b, sc])
"""

WINDOW_1D = """
@pl.jit(backend="{backend}")
def window1d(x: pl.Tensor[[pl.DYNAMIC], pl.DT_FP32], out: pl.Tensor[[pl.DYNAMIC], pl.DT_FP32],
             lo: int, so: int, step: int, v: int):
    g = pl.make_tile_group(type=pl.TileType([1, 64], pl.DT_FP32, valid_shape=[-1, -1]), addrs=0x0, mutex_ids=[0])
    with pl.section_vector():
        t = g.current()
        pl.set_validshape(t, [1, v])
        b = pl.get_block_idx() * step
        pl.load(t, x, [lo + b])
        pl.store(out, t, [so + b])
"""


@pytest.fixture(scope="module")
def windows(tmp_path_factory):
    d = tmp_path_factory.mktemp("windows")
    return Program(d, WINDOW_2D, "window2d"), Program(d, WINDOW_1D, "window1d")


def _place(draw, fits, extent, span):
    """(dimension, first offset) for windows of ``extent`` elements at offsets ``o, o + step, ...``
    (``span`` = the last block's shift): all inside when ``fits``, else anywhere around the end,
    negative and straddling included."""
    if fits:
        dim = extent + span + draw(st.integers(0, 6))
        return dim, draw(st.integers(0, dim - extent - span))
    dim = draw(st.integers(1, 3 * extent))
    return dim, draw(st.integers(-3, dim + 3))


@st.composite
def windows_2d(draw):
    """Shapes, offsets, valid window, step and block_dim of a WINDOW_2D launch; about half in bounds.
    (block_dim <= 4 keeps the examples quick; larger ones are launch errors, see LAUNCH.)"""
    vr, vc = draw(st.one_of(st.just(8), st.integers(1, 8))), draw(st.one_of(st.just(32), st.integers(1, 32)))
    # step 0 (every block the same window) or >= the window: blocks whose stores partially overlap are a
    # race on the simulator even when they write the same values (not an error of the other backends)
    step, block_dim = draw(st.sampled_from([0, 8, 11])), draw(st.integers(1, 4))
    span = step * (block_dim - 1)
    fits = draw(st.booleans())
    (xr, lr), (xc, lc) = (_place(draw, fits or draw(st.booleans()), e, sp) for e, sp in ((vr, span), (vc, 0)))
    (orr, sr), (oc, sc) = (_place(draw, fits or draw(st.booleans()), e, sp) for e, sp in ((vr, span), (vc, 0)))
    return dict(x=(xr, xc), out=(orr, oc), vr=vr, vc=vc, lr=lr, lc=lc, sr=sr, sc=sc, step=step, block_dim=block_dim)


@st.composite
def windows_1d(draw):
    """The same for WINDOW_1D (a [1, 64] tile with v valid columns)."""
    v = draw(st.one_of(st.just(64), st.integers(1, 64)))
    step, block_dim = draw(st.sampled_from([0, 64, 70])), draw(st.integers(1, 3))  # (as in windows_2d)
    fits = draw(st.booleans())
    (n_x, lo), (n_out, so) = (_place(draw, fits or draw(st.booleans()), v, step * (block_dim - 1)) for _ in range(2))
    return dict(x=(n_x,), out=(n_out,), v=v, lo=lo, so=so, step=step, block_dim=block_dim)


def _bad_window(offsets, extent, shape) -> bool:
    return any(o < 0 or o + e > d for o, e, d in zip(offsets, extent, shape))


def _expected_failures(p, load_at, store_at, extent):
    """Snippets of the failing lines, the interpreter's (first block, first op in program order) first."""
    failing = []
    for blk in range(p["block_dim"]):
        for snippet, offsets, shape in (("pl.load", load_at(blk), p["x"]), ("pl.store", store_at(blk), p["out"])):
            if _bad_window(offsets, extent, shape) and snippet not in failing:
                failing.append(snippet)
    return failing


@settings(SETTINGS, max_examples=40)
@given(p=windows_2d())
def test_gm_windows_2d(windows, worker, p):
    """Loads/stores of an [8, 32] tile (full or with a valid-shape tail) at runtime offsets, each
    block shifted by ``block_idx * step`` so only some blocks may leave the tensor.  A window that
    starts before or ends past the tensor, on any block, is a KernelRuntimeError naming a failing
    load/store line on every backend (the interpreter: the first one in block order); in-bounds
    programs copy the same bytes everywhere."""
    prog = windows[0]
    failing = _expected_failures(p, lambda b: (p["lr"] + b * p["step"], p["lc"]),
                                 lambda b: (p["sr"] + b * p["step"], p["sc"]), (p["vr"], p["vc"]))

    def make():
        return (_f32(*p["x"]), np.full(p["out"], -1.0, np.float32), p["lr"], p["lc"], p["sr"], p["sc"], p["step"],
                p["vr"], p["vc"])
    res = outcomes(prog, make, p["block_dim"], worker)
    if not failing:
        assert_all_ok(res, prog)
        want = np.full(p["out"], -1.0, np.float32)
        for b in range(p["block_dim"]):
            r, s = p["lr"] + b * p["step"], p["sr"] + b * p["step"]
            want[s:s + p["vr"], p["sc"]:p["sc"] + p["vc"]] = _f32(*p["x"])[r:r + p["vr"], p["lc"]:p["lc"] + p["vc"]]
        assert np.array_equal(res["interp"][1][1], want)
    else:
        assert_rejected(res, prog, errors.KernelRuntimeError, at=failing)
        assert prog.located(failing[0]) in res["interp"][1]


@settings(SETTINGS, max_examples=25)
@given(p=windows_1d())
def test_gm_windows_1d(windows, worker, p):
    """The same for a 1-D tensor and a [1, 64] tile: a window [o, o + v) outside [0, n) on any block is
    a KernelRuntimeError naming the failing line everywhere; otherwise all backends copy the same."""
    prog = windows[1]
    failing = _expected_failures(p, lambda b: (p["lo"] + b * p["step"],), lambda b: (p["so"] + b * p["step"],),
                                 (p["v"],))
    res = outcomes(prog, lambda: (_f32(*p["x"]), np.full(p["out"], -1.0, np.float32), p["lo"], p["so"], p["step"],
                                  p["v"]), p["block_dim"], worker)
    if failing:
        assert_rejected(res, prog, errors.KernelRuntimeError, at=failing)
        assert prog.located(failing[0]) in res["interp"][1]
    else:
        assert_all_ok(res, prog)


# ------------------------------------------------------------------------------------------------
# tile capacity and alignment (checked when the tile is declared, before anything runs)
# ------------------------------------------------------------------------------------------------
#: per arch: space -> (capacity in bytes, address alignment), from docs/language.md "Tiles"
MEMORY = {
    "a2": {"Vec": (196608, 32), "Mat": (524288, 32), "Left": (65536, 512), "Right": (65536, 512),
           "Acc": (131072, 64)},
    "a5": {"Vec": (253952, 32), "Mat": (524288, 32), "Left": (65536, 512), "Right": (65536, 512),
           "Acc": (262144, 64)},
}
ELEM = {"FP32": 4, "FP16": 2, "INT8": 1}

DECLARE = """
@pl.jit(backend="{backend}", arch="{arch}")
def declare(x: pl.Tensor[[8, 32], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([{rows}, {cols}], pl.DT_{dtype}, pl.MemorySpace.{space}), addr={addr})  # declare
"""


@st.composite
def tile_declarations(draw):
    arch = draw(st.sampled_from(sorted(MEMORY)))
    space = draw(st.sampled_from(sorted(MEMORY[arch])))
    cap, align = MEMORY[arch][space]
    if space == "Vec":
        dtype = draw(st.sampled_from(sorted(ELEM)))
        rows, cols = draw(st.integers(1, 64)), draw(st.integers(1, 128))
    else:  # whole fractals (16 x 32 bytes; L0C 16 x 16), so the footprint is rows x cols x element bytes
        dtype = "FP32" if space == "Acc" else "FP16"
        rows, cols = 16 * draw(st.integers(1, 8)), 16 * draw(st.integers(1, 8))
    size = rows * cols * ELEM[dtype]
    addr = draw(st.one_of(st.integers(0, cap // align) .map(lambda k: k * align),  # anywhere, aligned
                          st.integers(-2, 2).map(lambda k: (cap - size) // align * align + k * align),  # at the end
                          st.integers(0, cap).filter(lambda a: a % align)))  # misaligned
    return dict(arch=arch, space=space, dtype=dtype, rows=rows, cols=cols, addr=addr,
                bad=addr < 0 or addr % align != 0 or addr + size > cap or (space == "Vec" and cols * ELEM[dtype] % 32))


@settings(SETTINGS, max_examples=60)
@given(d=tile_declarations())
def test_tile_capacity_and_alignment(tmp_path, d):
    """A tile whose bytes leave its memory (capacity of the arch), a misaligned address or a Vec tile
    whose rows are not whole 32-byte blocks is a KernelMemoryError at the make_tile line on every
    backend; every other declaration compiles."""
    prog = Program(tmp_path, DECLARE.format(**d, backend="{backend}"), "declare")
    if d["bad"]:
        res = outcomes(prog, lambda: (np.zeros((8, 32), np.float32),))
        assert_rejected(res, prog, errors.KernelMemoryError, at="# declare")
    else:  # compile only: the declaration is accepted (running would build a C++ kernel per example)
        for b in BACKENDS:
            assert "tile t:" in prog.kernel(b).ir_text(np.zeros((8, 32), np.float32))


OVERLAP = """
def handover(src, dst):
    pl.system.sync_src(set_pipe=src, wait_pipe=dst, event_id=0)
    pl.system.sync_dst(set_pipe=src, wait_pipe=dst, event_id=0)


@pl.jit(backend="{backend}")
def overlap(x: pl.Tensor[[16, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x0)
    b = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr={b_addr})
    o = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x2000)
    with pl.section_vector():
        pl.load(a, x, [0, 0])
        handover(pl.PipeType.MTE2, pl.PipeType.V)
        pl.neg(o, a)  # reads a
        pl.load(b, x, [8, 0])  # writes b
        handover(pl.PipeType.MTE2, pl.PipeType.V)
        pl.add(o, o, b)
        handover(pl.PipeType.V, pl.PipeType.MTE3)
        pl.store(out, o, [0, 0])
"""


@pytest.mark.parametrize("b_addr", ["0x1000", "0x400"], ids=["disjoint", "overlapping"])
def test_overlapping_tiles_used_concurrently_are_a_simulator_race(tmp_path, b_addr):
    """Tile b is loaded (MTE2) while the vector pipe still reads tile a.  Disjoint tiles: a clean
    program, the same bytes everywhere.  Overlapping make_tile declarations are legal aliases
    (docs/language.md), so interp and cpu still agree (they run in program order), but the two pipes
    touch the same bytes unordered: a race only the simulator can see (docs/simulator.md), reported
    as KernelRaceError naming both lines."""
    prog = Program(tmp_path, OVERLAP.replace("{b_addr}", b_addr), "overlap")
    res = outcomes(prog, lambda: (_f32(16, 64) / 64, np.zeros((8, 64), np.float32)))
    if b_addr == "0x1000":
        assert_all_ok(res, prog)
        return
    race = res.pop("sim")
    assert_all_ok(res, prog)
    assert race[0] == "KernelRaceError", race
    for snippet in ("# reads a", "# writes b"):
        assert f".py:{prog.line_of(snippet)}" in race[1], (snippet, race[1])


# ------------------------------------------------------------------------------------------------
# ill-typed ops: rejected when the kernel compiles
# ------------------------------------------------------------------------------------------------
TYPED = """
@pl.jit(backend="{backend}")
def typed(x: pl.Tensor[[16, 64], pl.DT_FP32]):
{decls}
    with pl.section_{section}():
        {op}  # bad op
"""
CUBE = ("    l = pl.make_tile(pl.TileType([16, 32], pl.DT_{ld}, pl.MemorySpace.{ls}), addr=0)\n"
        "    r = pl.make_tile(pl.TileType([{k}, 16], pl.DT_{rd}, pl.MemorySpace.{rs}), addr=0x2000)\n"
        "    c = pl.make_tile(pl.TileType([16, {n}], pl.DT_{cd}, pl.MemorySpace.{cs}), addr=0x4000)")
VEC = ("    a = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0)\n"
       "    b = pl.make_tile(pl.TileType([{br}, {bc}], pl.DT_{bd}), addr=0x1000)\n"
       "    row = pl.make_tile(pl.TileType([{rr}, 1], pl.DT_FP32, layout=pl.DN), addr=0x4000)\n"
       "    col = pl.make_tile(pl.TileType([1, {cc}], pl.DT_FP32), addr=0x5000)")
GOOD_CUBE = dict(ld="FP16", ls="Left", k=32, rd="FP16", rs="Right", cd="FP32", cs="Acc", n=16)
GOOD_VEC = dict(br=8, bc=64, bd="FP32", rr=8, cc=64)

#: case -> (section, declarations changed from the good ones, op, words of the message)
TYPE_CASES = {
    "add_shapes": ("vector", dict(br=16), "pl.add(a, a, b)", "do not broadcast"),
    "add_cols": ("vector", dict(bc=32), "pl.sub(a, b, a)", "do not broadcast"),
    "add_dtypes": ("vector", dict(bd="FP16"), "pl.add(a, a, b)", "dtype"),
    "mul_int_float": ("vector", dict(bd="INT32"), "pl.mul(b, a, a)", "dtype"),
    "row_sum_dst": ("vector", dict(rr=16), "pl.sum(row, a, b, dim=0)", "dim=0"),
    "col_max_dst": ("vector", dict(cc=32), "pl.maximum(col, a, b, dim=1)", "dim=1"),
    "row_sum_into_col": ("vector", {}, "pl.sum(col, a, b, dim=0)", "dim=0"),
    "expand_operand": ("vector", {}, "pl.expand_mul(a, a, col, dim=0)", "expand"),
    "matmul_left_in_right": ("cube", dict(rs="Left"), "pl.matmul(c, l, r)", "Right tile"),
    "matmul_vec_lhs": ("cube", dict(ls="Vec"), "pl.matmul(c, l, r)", "Left tile"),
    "matmul_dst_not_acc": ("cube", dict(cs="Mat"), "pl.matmul(c, l, r)", "Acc tile"),
    "matmul_acc_dtype": ("cube", dict(cd="FP16"), "pl.matmul(c, l, r)", "FP32"),
    "matmul_mixed_dtypes": ("cube", dict(rd="BF16"), "pl.matmul(c, l, r)", "dtypes"),
    "matmul_int8_into_fp32": ("cube", dict(ld="INT8", rd="INT8"), "pl.matmul(c, l, r)", "INT32"),
    "matmul_inner_dims": ("cube", dict(k=16), "pl.matmul(c, l, r)", "inner dimensions"),
    "matmul_dst_shape": ("cube", dict(n=8), "pl.matmul(c, l, r)", "product"),
    "matmul_acc_shape": ("cube", dict(n=8), "pl.matmul_acc(c, c, l, r)", None),
    "vector_op_in_cube": ("cube", {}, "pl.add(c, c, c)", "Vec tile"),
}


@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_ill_typed_ops_fail_at_compile_time(tmp_path, case):
    """Operands of mismatched shape, dtype, memory space or layout role (vector ops, reductions into
    a wrongly shaped dst, matmul with wrong Left/Right/Acc spaces or dtypes) are a KernelTypeError at
    the op's line on every backend, raised when the kernel compiles -- the first tile statement of
    the kernel never runs (the output keeps its bytes)."""
    section, changes, op, words = TYPE_CASES[case]
    decls = (CUBE.format(**dict(GOOD_CUBE, **changes)) if section == "cube" else
             VEC.format(**dict(GOOD_VEC, **changes)))
    prog = Program(tmp_path, TYPED.format(decls=decls, section=section, op=op, backend="{backend}"), "typed")
    res = outcomes(prog, lambda: (np.zeros((16, 64), np.float32),))
    assert_rejected(res, prog, errors.KernelTypeError, at="# bad op", words=words)


# ------------------------------------------------------------------------------------------------
# runtime faults: scalar arithmetic, loops, valid shapes, assertions
# ------------------------------------------------------------------------------------------------
RUNTIME = """
@pl.jit(backend="{backend}")
def faults(x: pl.Tensor[[8, 32], pl.DT_INT32], out: pl.Tensor[[8, 32], pl.DT_INT32], case: int, n: int, m: int):
    g = pl.make_tile_group(type=pl.TileType([8, 32], pl.DT_INT32, valid_shape=[-1, -1]), addrs=0x0, mutex_ids=[0])
    h = pl.make_tile_group(type=pl.TileType([8, 32], pl.DT_INT32), addrs=0x1000, mutex_ids=[1])
    with pl.section_vector():
        t = g.current()
        u = h.current()
        if case == 0:
            pl.set_validshape(t, [n, m])  # validshape
            pl.load(t, x, [0, 0])
            pl.store(out, t, [0, 0])
        if case == 1:
            pl.load(t, x, [8 // n - 1, m // n])  # div in op
            pl.store(out, t, [0, 0])
        if case == 2:
            for i in pl.range(0, 3, n - m):  # range step
                out[0, i] = i
        if case == 3:
            pl.pto_assert(n < m)  # assert
            out[0, 0] = 1
        if case == 4:
            pl.load(t, x, [0, 0])
            pl.load(u, x, [0, 0])
            pl.expands(u, n)
            pl.div(t, t, u)  # tile div
            pl.store(out, t, [0, 0])
        if case == 5:
            k = 16 // n  # div in assign
            out[0, 0] = k
        if case == 6:
            pl.store(out, u, [0, 0])  # uninit
        if case == 7:
            for j in pl.range(0, 4 // n):  # div in range
                out[0, j] = j
        if case == 8:
            if 4 % n > 0:  # mod in if
                out[0, 0] = 2
"""


@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    return Program(tmp_path_factory.mktemp("faults"), RUNTIME, "faults")


def _int_args(case, n, m):
    return lambda: (np.arange(256, dtype=np.int32).reshape(8, 32) + 1, np.zeros((8, 32), np.int32), case, n, m)


@settings(SETTINGS, max_examples=15)
@given(n=st.integers(-2, 10), m=st.integers(-2, 34))
def test_runtime_valid_shape_bounds(faults, worker, n, m):
    """pl.set_validshape with runtime extents outside [0, shape] is a KernelRuntimeError at that line
    on every backend; inside, the load/store pair copies the valid window identically everywhere (an
    empty window moves nothing)."""
    res = outcomes(faults, _int_args(0, n, m), worker=worker)
    if 0 <= n <= 8 and 0 <= m <= 32:
        assert_all_ok(res, faults)
    else:
        assert_rejected(res, faults, errors.KernelRuntimeError, at="# validshape", words="valid")


@pytest.mark.parametrize("case,n,m,at,words", [
    (1, 0, 0, "# div in op", "division by zero"),
    (2, 3, 3, "# range step", "step is 0"),
    (4, 0, 0, "# tile div", "division by zero"),
    (5, 0, 0, "# div in assign", "division by zero"),
    (7, 0, 0, "# div in range", "division by zero"),
    (8, 0, 0, "# mod in if", "modulo by zero"),
])
def test_runtime_faults_agree(faults, worker, case, n, m, at, words):
    """An integer division by zero in an op's scalar argument, in an assignment, a pl.range bound or an
    if condition (those three used to name no line, and on interp/sim no kernel) or in an integer
    pl.div, and a runtime pl.range step of 0, are KernelRuntimeErrors at their line on every backend."""
    res = outcomes(faults, _int_args(case, n, m), worker=worker)
    assert_rejected(res, faults, errors.KernelRuntimeError, at=at, words=words)


@pytest.mark.parametrize("strict", [False, True])
def test_failed_pto_assert(faults, worker, monkeypatch, capfd, strict):
    """A failing pl.pto_assert prints and continues on every backend (official behaviour, the
    statement after it runs); with PYPTO_STRICT_ASSERT=1 it is a KernelRuntimeError at its line."""
    monkeypatch.setenv("PYPTO_STRICT_ASSERT", "1" if strict else "0")
    res = outcomes(faults, _int_args(3, 5, 2), worker=worker)
    if strict:
        assert_rejected(res, faults, errors.KernelRuntimeError, at="# assert", words="Assertion failed")
    else:
        assert_all_ok(res, faults)
        assert res["interp"][1][1][0, 0] == 1
        assert "Assertion failed" in capfd.readouterr().out


def test_uninitialised_read_is_reported_by_the_simulator_only(faults, worker):
    """Storing a tile nothing wrote: the simulator raises KernelUninitError at the store; interp and
    cpu do not track initialisation (docs/simulator.md) and agree on the bytes they store (on-chip
    memory starts as 0xFF bytes, docs/language.md)."""
    res = outcomes(faults, _int_args(6, 0, 0), worker=worker)
    uninit = res.pop("sim")
    assert uninit[0] == "KernelUninitError" and faults.located("# uninit") in uninit[1], uninit
    assert_all_ok(res, faults)
    assert set(_bytes(res["interp"][1][1])) == {0xFF}
