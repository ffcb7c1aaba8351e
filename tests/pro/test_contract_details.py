"""Details of the tile-level contract (docs/language.md, docs/contract.md) that acceptance probing found unmet: runtime tile
group indices, the a5 Left/Right/Acc layouts, ``make_tile(size=)``, bool mutex ids, fillpad's address rules,
the fixpipe's BF16 + scale refusal, torch E8M0 arguments, deadlock locations and signature errors with
file:line.  Behaviour is checked on every backend where it runs code."""
import functools

import ml_dtypes
import numpy as np
import pytest
import torch

import pypto_pro.language as pl
from pypto_pro import (KernelDeadlockError, KernelLaunchError, KernelMemoryError, KernelRuntimeError, KernelSyntaxError,
                       KernelTypeError)
from pypto_pro.backends import cpu

BACKENDS = ["interp", pytest.param("cpu", marks=pytest.mark.skipif(not cpu.available(), reason="no C++ compiler")),
            "sim"]

pytestmark = [pytest.mark.usefixtures("private_build_dir"), pytest.mark.every_backend]
M = pl.MemorySpace


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@functools.lru_cache(maxsize=None)
def on(fn, backend: str):
    return pl.jit(fn, backend=backend)


# ----------------------------------------------------------------------------- g[i] at a runtime index
def rotating_slots(x: pl.Tensor[[64, 64], pl.DT_FP32], y: pl.Tensor[[64, 64], pl.DT_FP32], depth_used: int):
    g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0x0, mutex_ids=[0, 1])
    with pl.section_vector():
        for i in pl.range(4):
            t = g[i % depth_used]
            pl.load(t, x, [i * 16, 0])
            pl.exp(t, t)
            pl.store(y, t, [i * 16, 0])


def test_tile_group_index_may_be_a_runtime_value(backend):
    """docs/language.md: ``g[i]`` is slot i with the cursor untouched; only a constant i is checked at compile time.
    Under auto_mutex the slots' ids still order the reuse (the simulator sees no race)."""
    x = np.random.default_rng(0).random((64, 64), np.float32)
    y = np.zeros_like(x)
    k = on(rotating_slots, backend)
    k(x, y, 2)
    np.testing.assert_allclose(y, np.exp(x), rtol=2e-7)
    if backend == "sim":
        assert k.last_report.hazards == []


def test_runtime_tile_group_index_out_of_range_is_a_runtime_error(backend):
    x = np.ones((64, 64), np.float32)
    with pytest.raises(KernelRuntimeError, match=r"tile group index 2 is outside \[0, 2\) of group g") as info:
        on(rotating_slots, backend)(x, np.zeros_like(x), 3)
    assert info.value.loc.source_line.strip() == "t = g[i % depth_used]"


def test_constant_tile_group_index_is_still_checked_at_compile_time():
    @pl.jit(backend="interp")
    def k(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0x0, mutex_ids=[0, 1])
        with pl.section_vector():
            pl.load(g[2], x, [0, 0])

    with pytest.raises(KernelSyntaxError, match=r"tile group index 2 is outside \[0, 2\)"):
        k(np.ones((16, 64), np.float32))


# ----------------------------------------------------------------------------- declarations
def _declare(ttype_kwargs, arch="a5", **make_kwargs):
    @pl.jit(backend="interp", arch=arch)
    def k(x: pl.Tensor[[16, 16], pl.DT_FP16]):
        t = pl.make_tile(pl.TileType(**ttype_kwargs), addr=0, **make_kwargs)
        with pl.section_cube():
            pl.load(t, x, [0, 0]) if ttype_kwargs["target_memory"] == M.Mat else None

    k(np.ones((16, 16), np.float16))


def test_zz_left_tiles_are_a2_a3_only():
    """docs/language.md "Tiles": Left is ZZ on a2/a3 and NZ on a5; ZZ/NN are rejected for Left/Right/Acc on a5."""
    left_zz = dict(shape=[16, 16], dtype=pl.DT_FP16, target_memory=M.Left, layout=pl.ZZ)
    _declare(left_zz, arch="a3")
    with pytest.raises(KernelTypeError, match="layout ZZ is not legal for a Left tile on arch a5"):
        _declare(left_zz, arch="a5")


def test_make_tile_size_smaller_than_the_tile_is_rejected():
    vec = dict(shape=[16, 16], dtype=pl.DT_FP16, target_memory=M.Mat)
    _declare(vec, size=512)
    _declare(vec, size=4096)  # larger reserves more: allowed
    with pytest.raises(KernelMemoryError, match=r"size=256 is smaller than the tile: .* needs 512 bytes"):
        _declare(vec, size=256)


def test_bool_mutex_ids_are_rejected():
    @pl.jit(backend="interp")
    def k(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0x0, mutex_ids=[True])
        with pl.section_vector():
            pl.load(g.next(), x, [0, 0])

    with pytest.raises(KernelTypeError, match=r"each mutex_ids entry is an int"):
        k(np.ones((16, 64), np.float32))


# ----------------------------------------------------------------------------- fillpad modes and addresses
def _fillpad(mode, same_address: bool):
    @pl.jit(backend="interp")
    def k(x: pl.Tensor[[16, 16], pl.DT_FP32], y: pl.Tensor[[16, 16], pl.DT_FP32]):
        src = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, valid_shape=[-1, -1], pad=pl.TilePad.zero), addr=0)
        dst = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, pad=pl.TilePad.zero),
                           addr=0 if same_address else 0x400)
        with pl.section_vector():
            pl.set_validshape(src, [8, 8])
            pl.load(src, x, [0, 0])
            pl.fillpad(dst, src, mode=mode)
            pl.store(y, dst, [0, 0])

    x = np.ones((16, 16), np.float32)
    y = np.full((16, 16), 7, np.float32)
    k(x, y)
    return y


def test_fillpad_modes_fix_the_addresses():
    """docs/language.md: NORMAL writes another tile of the same shape, INPLACE the same tile (same address)."""
    expected = np.zeros((16, 16), np.float32)
    expected[:8, :8] = 1
    np.testing.assert_array_equal(_fillpad(pl.FillPadMode.NORMAL, same_address=False), expected)
    np.testing.assert_array_equal(_fillpad(pl.FillPadMode.INPLACE, same_address=True), expected)
    with pytest.raises(KernelTypeError, match="NORMAL/EXPAND fillpad writes a different tile"):
        _fillpad(pl.FillPadMode.NORMAL, same_address=True)
    with pytest.raises(KernelTypeError, match="INPLACE fillpad pads src in place"):
        _fillpad(pl.FillPadMode.INPLACE, same_address=False)


# ----------------------------------------------------------------------------- fixpipe: BF16 with scale
def _matmul_store(out_dtype, scale):
    @pl.jit(backend="interp")
    def k(a: pl.Tensor[[16, 16], pl.DT_FP16], c: pl.Tensor[[16, 16], out_dtype]):
        ma = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, M.Mat), addr=0)
        left = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, M.Left), addr=0)
        right = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, M.Right), addr=0)
        acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, M.Acc), addr=0)
        with pl.section_cube():
            pl.load(ma, a, [0, 0])
            pl.move(left, ma)
            pl.move(right, ma)
            pl.matmul(acc, left, right)
            pl.store(c, acc, [0, 0], scale=scale)

    c = np.zeros((16, 16), out_dtype.require_numpy())
    k(np.ones((16, 16), np.float16), c)
    return c


def test_fixpipe_refuses_a_scaled_bf16_output():
    """docs/language.md: "UINT8 output and FP32/INT32->BF16 with scale are rejected"; unscaled BF16 and scaled FP16
    are fine."""
    assert float(_matmul_store(pl.DT_BF16, None)[0, 0]) == 16
    assert float(_matmul_store(pl.DT_FP16, 0.5)[0, 0]) == 8
    with pytest.raises(KernelTypeError, match="scale quantization from FP32 to BF16 is not supported"):
        _matmul_store(pl.DT_BF16, 0.5)


# ----------------------------------------------------------------------------- torch E8M0 arguments
@pytest.mark.skipif(not hasattr(ml_dtypes, "float8_e8m0fnu"), reason="ml_dtypes < 0.5 has no E8M0")
def test_torch_e8m0_tensors_are_accepted_zero_copy(backend):
    def copy(x: pl.Tensor[[4, 64], pl.DT_FP8E8M0], out: pl.Tensor[[4, 64], pl.DT_FP8E8M0]):
        t = pl.make_tile_group(type=pl.TileType([4, 64], pl.DT_FP8E8M0, M.Vec), addrs=0, mutex_ids=[0]).current()
        with pl.section_vector():
            pl.load(t, x, [0, 0])
            pl.store(out, t, [0, 0])

    x = torch.tensor([[2.0 ** (i % 9 - 4) for i in range(64)]] * 4).to(torch.float8_e8m0fnu)
    out = torch.zeros(4, 64).to(torch.float8_e8m0fnu)
    if backend == "cpu":
        pytest.importorskip("pypto_pro.backends.cpu")
    try:
        on(copy, backend)(x, out)
    except NotImplementedError as e:  # a backend that cannot move E8M0 says so by name
        assert "E8M0" in str(e)
        return
    assert torch.equal(out.view(torch.uint8), x.view(torch.uint8))


# ----------------------------------------------------------------------------- locations of errors
def test_deadlock_report_places_every_blocked_core(backend):
    """docs/contract.md: file:line plus the source line, also for cores blocked on cross-core events and sync_all."""
    def lonely(x: pl.Tensor[[16, 64], pl.DT_FP32]):
        with pl.section_vector():
            if pl.get_block_idx() == 0:
                pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)

    with pytest.raises(KernelDeadlockError) as info:
        on(lonely, backend)[None, 2](np.ones((16, 64), np.float32))
    text = str(info.value)
    assert "block 0 AIV0 waits for sync_all #0 (AIV_ONLY)\n    at " in text
    assert "test_contract_details.py:" in text
    assert "pl.system.sync_all(core_type=pl.SyncCoreType.AIV_ONLY)" in text
    assert info.value.loc is not None


def test_block_dim_may_be_a_numpy_integer():
    def fill(out: pl.Tensor[[4], pl.DT_INT32]):
        with pl.section_vector():
            pl.setval(out, pl.get_block_idx(), pl.get_block_idx() + 1)

    out = np.zeros(4, np.int32)
    on(fill, "interp")[None, np.int64(4)](out)
    np.testing.assert_array_equal(out, [1, 2, 3, 4])
    with pytest.raises(pl.KernelLaunchError, match="block_dim must be an int"):
        on(fill, "interp")[None, True](out)


def test_signature_errors_point_at_the_parameter():
    @pl.jit(backend="interp")
    def k(x,
          out: pl.Tensor[[4], pl.DT_FP32]):
        pass

    with pytest.raises(KernelSyntaxError, match="parameter 'x' needs an annotation") as info:
        k(np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert info.value.loc.filename.endswith("test_contract_details.py")
    assert info.value.loc.source_line.strip() == "def k(x,"


SLOT_IDS = lambda base: [base, base + 1]  # noqa: E731 - the point: a lambda is a compile-time callable
DOUBLE = lambda t: pl.add(t, t, t)  # noqa: E731


def test_lambdas_from_outside_are_compile_time_callables():
    def uses_ids(a: pl.Tensor[[16, 64], pl.DT_FP32], b: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0, mutex_ids=SLOT_IDS(0))
        with pl.section_vector():
            pl.load(g.next(), a, [0, 0])
            pl.store(b, g.current(), [0, 0])

    def passes_a_tile(a: pl.Tensor[[16, 64], pl.DT_FP32], b: pl.Tensor[[16, 64], pl.DT_FP32]):
        g = pl.make_tile_group(type=pl.TileType([16, 64], pl.DT_FP32), addrs=0, mutex_ids=[0])
        with pl.section_vector():
            t = g.current()
            pl.load(t, a, [0, 0])
            DOUBLE(t)
            pl.store(b, t, [0, 0])

    a = np.random.default_rng(3).random((16, 64), np.float32)
    b = np.zeros_like(a)
    on(uses_ids, "interp")(a, b)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(KernelSyntaxError, match="write it as a def helper") as info:
        on(passes_a_tile, "interp")(a, b)
    assert info.value.loc.source_line.strip() == "DOUBLE(t)"



@pl.jit
def doubled(x: pl.Tensor[[8, 16], pl.DT_FP32], out: pl.Tensor[[8, 16], pl.DT_FP32]):
    t = pl.make_tile(pl.TileType([8, 16], pl.DT_FP32), addr=0)
    with pl.section_vector():
        pl.load(t, x, [0, 0])
        pl.system.bar_all()
        pl.add(t, t, t)
        pl.system.bar_all()
        pl.store(out, t, [0, 0])


def test_changing_the_backend_drops_launchers_frozen_for_the_old_one():
    """A cpu launch freezes a relauncher; asking for the simulator afterwards must run the simulator."""
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    out = np.zeros_like(x)
    doubled.backend = "cpu"
    doubled(x, out)
    doubled(x, out)
    assert doubled.last_report is None
    doubled.backend = "sim"
    out[:] = 0
    doubled(x, out)
    assert doubled.last_report is not None and doubled.backend == "sim"
    np.testing.assert_array_equal(out, x + x)
    with pytest.raises(KernelLaunchError, match="unknown backend"):
        doubled.backend = "gpu"
