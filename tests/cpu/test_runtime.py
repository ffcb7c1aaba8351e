"""Cache behaviour, multi-threaded launches, errors and fallback of the cpu backend."""
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto_pro
from kernels import load_kernels

ADD = """
@pl.jit(backend="cpu", name="{name}")
def add(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
        out: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32]):
    a = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x0)
    b = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x800)
    with pl.section_vector():
        for t in pl.range(pl.get_block_idx(), (x.shape[0] + 7) // 8, pl.get_block_num()):
            pl.load(a, x, [t * 8, 0])
            pl.load(b, y, [t * 8, 0])
            pl.add(a, a, b)
            pl.store(out, a, [t * 8, 0])
"""


def _add(tmp_path, name="add_k"):
    return load_kernels(tmp_path, ADD.format(name=name)).add


def test_many_blocks_and_threads(tmp_path):
    k = _add(tmp_path)
    x = np.random.default_rng(0).standard_normal((8 * 300, 64)).astype(np.float32)
    outs = [np.zeros_like(x) for _ in range(6)]

    def go(o):
        for _ in range(5):
            k[None, 97](x, x, o)

    threads = [threading.Thread(target=go, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in outs:
        assert np.array_equal(o, x + x)


def test_strided_views_zero_copy(tmp_path):
    k = _add(tmp_path)
    big = np.random.default_rng(1).standard_normal((32, 128)).astype(np.float32)
    x = big[::2, ::2]
    out = np.zeros((16, 128), np.float32)[:, 1::2]
    k[None, 2](x, x, out)
    assert np.array_equal(out, x + x)


def test_out_of_bounds_is_an_error_not_a_crash(tmp_path):
    k = _add(tmp_path)
    x = np.zeros((12, 64), np.float32)  # the second 8-row tile leaves the tensor
    with pytest.raises(pypto_pro.KernelRuntimeError, match=r"pl\.load.*exceeds tensor 'x'") as e:
        k[None, 1](x, x, np.zeros_like(x))
    assert "gen_kernel" in str(e.value)  # names the kernel source line


def test_deadlock_is_reported(tmp_path):
    src = """
@pl.jit(backend="cpu")
def dl(x: pl.Tensor[[16, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32), addr=0x0)
    m = pl.make_tile(pl.TileType([16, 64], pl.DT_FP32, pl.MemorySpace.Mat), addr=0x0)
    with pl.section_cube():
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=1)
    with pl.section_vector():
        pl.system.wait_cross_core(pipe=pl.PipeType.MTE2, event_id=2)
"""
    k = load_kernels(tmp_path, src).dl
    with pytest.raises(pypto_pro.KernelDeadlockError, match="blocked"):
        k(np.zeros((16, 64), np.float32))


GRID_ROUNDS = """
@pl.jit(backend="cpu")
def rounds(slots: pl.Tensor[[8], pl.DT_INT64], out: pl.Tensor[[8], pl.DT_INT64], n_rounds: int, bad_block: int):
    with pl.section_vector():
        b = pl.get_block_idx()
        n = pl.get_block_num()
        v = b
        for r in pl.range(n_rounds):
            slots[b] = v
            pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
            v = slots[(b + 1) % n] + 1
            pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)
        if b == bad_block:
            out[b + 8] = v
        out[b] = v
"""


@pytest.mark.parametrize("blocks", [1, 3, 8])
def test_grid_fibers_switch_many_times_across_threads(tmp_path, blocks):
    """Every block passes 2 x 60 grid barriers (a fiber switch each, resumed on whichever worker
    is free), and each round reads what the next block wrote before the barrier, so a lost or
    reordered switch shows in the numbers.  Launched repeatedly: the blocks and fiber stacks of
    one grid launch are reused by the next, and a false deadlock report (the scheduler once
    declared one when a core that had been running while the others were polled missed the
    last arrivals; about one launch in a thousand) has a fair chance to show."""
    k = load_kernels(tmp_path, GRID_ROUNDS).rounds
    R = 60
    for _ in range(300):
        out = np.full(8, -1, np.int64)
        k[None, blocks](np.zeros(8, np.int64), out, R, -1)
        want = [(b + R) % blocks + R for b in range(blocks)] + [-1] * (8 - blocks)
        assert out.tolist() == want


def test_error_inside_a_grid_fiber_after_switches(tmp_path):
    """A bounds error raised in one fiber after many switches aborts the launch with the usual
    error; the next launch (reusing the same blocks and stacks) runs normally."""
    k = load_kernels(tmp_path, GRID_ROUNDS).rounds
    with pytest.raises(pypto_pro.KernelRuntimeError, match=r"outside tensor 'out'.*block 2"):
        k[None, 4](np.zeros(8, np.int64), np.zeros(8, np.int64), 20, 2)
    out = np.zeros(8, np.int64)
    k[None, 4](np.zeros(8, np.int64), out, 5, -1)
    assert out[:4].tolist() == [(b + 5) % 4 + 5 for b in range(4)]


ENV_SWITCH = """
@pl.jit(auto_mutex=True)
def copy_rows(x: pl.Tensor[[8, 64], pl.DT_FP32], out: pl.Tensor[[8, 64], pl.DT_FP32]):
    g = pl.make_tile_group(type=pl.TileType([8, 64], pl.DT_FP32), addrs=0, mutex_ids=[0])
    with pl.section_vector():
        pl.load(g.current(), x, [0, 0])
        pl.store(out, g.current(), [0, 0])
"""


def test_backend_env_change_after_frozen_cpu_launch(tmp_path, monkeypatch):
    """Repeated cpu launches take a frozen launcher; a changed $PYPTO_BACKEND must still be obeyed by the
    next call (the environment is part of the launcher's key), in both directions."""
    k = load_kernels(tmp_path, ENV_SWITCH).copy_rows
    x = np.arange(512, dtype=np.float32).reshape(8, 64)
    for backend in ("cpu", "cpu", "sim", "cpu", "interp", "sim"):
        monkeypatch.setenv("PYPTO_BACKEND", backend)
        out = np.zeros_like(x)
        k(x, out)
        assert np.array_equal(out, x)
        assert (k.last_report is not None) == (backend == "sim"), backend


def test_cache_reuse_and_corruption(tmp_path, monkeypatch):
    root = tmp_path / "build"
    monkeypatch.setenv("PYPTO_BUILD_DIR", str(root))
    k = _add(tmp_path, "cache_probe")
    x = np.ones((8, 64), np.float32)
    out = np.zeros_like(x)
    k(x, x, out)
    sos = list(root.glob("cache_probe__*/*/call_kernel_*.so"))
    assert len(sos) == 1 and (sos[0].parent / "kernel.cpp").exists()
    # a new process with a warm cache does not compile: the library file stays the same inode
    inode = sos[0].stat().st_ino
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import numpy as np; "
            f"from kernels import load_kernels; from pathlib import Path; "
            f"k = load_kernels(Path({str(tmp_path)!r}), {ADD.format(name='cache_probe')!r}).add; "
            f"x = np.ones((8, 64), np.float32); o = np.zeros_like(x); k(x, x, o); assert (o == 2).all()")
    env = dict(os.environ, PYPTO_BUILD_DIR=str(root))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert sos[0].stat().st_ino == inode
    # a truncated library on disk: the next process detects the bad hash and rebuilds.  A new file, not the
    # same inode truncated: this process has that one mapped, and touching a truncated mapping is SIGBUS
    head = sos[0].read_bytes()[:100]
    sos[0].unlink()
    sos[0].write_bytes(head)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert sos[0].stat().st_size > 100


def test_concurrent_compiles_from_many_processes(tmp_path):
    root = tmp_path / "build"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import numpy as np; "
            f"from kernels import load_kernels; from pathlib import Path; import tempfile; "
            f"k = load_kernels(Path(tempfile.mkdtemp()), {ADD.format(name='race')!r}).add; "
            f"x = np.ones((8, 64), np.float32); o = np.zeros_like(x); k(x, x, o); assert (o == 2).all()")
    env = dict(os.environ, PYPTO_BUILD_DIR=str(root))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env) for _ in range(8)]
    assert all(p.wait() == 0 for p in procs)
    assert len(list(root.glob("race__*/*/call_kernel_*.so"))) == 1


def test_unimplemented_op_explicit_vs_default(tmp_path, monkeypatch):
    src = """
@pl.jit(backend={backend})
def pr(x: pl.Tensor[[8, 64], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 64], pl.DT_FP32), addr=0x0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.printf("hello %d\\n", 1)
"""
    x = np.zeros((8, 64), np.float32)
    from pypto_pro.backends.cpu import registry  # the cpu backend's emitters: every op has one, so drop one
    monkeypatch.delitem(registry.table(), "printf")
    explicit = load_kernels(tmp_path, src.format(backend='"cpu"')).pr
    with pytest.raises(NotImplementedError, match="printf"):
        explicit(x)
    monkeypatch.delenv("PYPTO_BACKEND", raising=False)
    default = load_kernels(tmp_path, src.format(backend="None")).pr
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        default(x)
    assert any("printf" in str(m.message) for m in w)
