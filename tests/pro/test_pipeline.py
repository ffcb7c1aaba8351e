"""pl.pipeline: a serial cube/vector loop keeps its serial meaning on every backend."""
import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro.passes.pipeline_sync import insert_pipeline_sync

from .kernels import assert_bits_equal

STEPS = 3
BACKENDS = ["interp", "cpu", "sim"]


@pl.pipeline.stage
def triple_stage(acc_in, eye_l, acc, state, scratch):
    """Cube: scratch = 3 * state, through a matmul with the identity and a scaled store.  The pass
    orders the core types; within the core each step waits for the one before (bar_all)."""
    pl.load(acc_in[0], state, [0, 0])
    pl.system.bar_all()
    pl.move(acc_in[1], acc_in[0])
    pl.system.bar_all()
    pl.matmul(acc, acc_in[1], eye_l)
    pl.system.bar_all()
    pl.store(scratch, acc, [0, 0], scale=3.0)
    pl.system.bar_all()


@pl.pipeline.stage
def bump_stage(v, scratch, state, trace, step):
    """Vector: state = scratch - 2 (each AIV its half), and a copy of every step into trace."""
    row = pl.get_subblock_idx() * 16
    pl.load(v, scratch, [row, 0])
    pl.system.bar_all()
    pl.sub(v, v, 2.0)
    pl.system.bar_all()
    pl.store(state, v, [row, 0])
    pl.store(trace, v, [step, row, 0])
    pl.system.bar_all()


def _serial_loop(state, eye, scratch, trace):
    mat = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Mat), addr=0)
    eye_mat = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Mat), addr=0x8000)
    left = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Left), addr=0)
    right = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Right), addr=0)
    acc = pl.make_tile(pl.TileType([32, 32], pl.DT_FP32, pl.MemorySpace.Acc), addr=0)
    v = pl.make_tile(pl.TileType([16, 32], pl.DT_FP32), addr=0)
    with pl.section_cube():
        pl.load(eye_mat, eye, [0, 0])
        pl.system.bar_all()
        pl.move(right, eye_mat)
    for step in pl.range(STEPS):
        with pl.section_cube():
            triple_stage([mat, left], right, acc, state, scratch)
        with pl.section_vector():
            bump_stage(v, scratch, state, trace, step)


@pl.jit(pipeline=pl.pipeline.PipelineConfig(preload=2))
def tripled(state: pl.Tensor[[32, 32], pl.DT_FP32], eye: pl.Tensor[[32, 32], pl.DT_FP32],
            scratch: pl.Tensor[[32, 32], pl.DT_FP32], trace: pl.Tensor[[STEPS, 32, 32], pl.DT_FP32]):
    _serial_loop(state, eye, scratch, trace)


@pl.jit(pipeline=pl.pipeline.PipelineConfig(preload=1, sync_only=True))
def tripled_sync_only(state: pl.Tensor[[32, 32], pl.DT_FP32], eye: pl.Tensor[[32, 32], pl.DT_FP32],
                      scratch: pl.Tensor[[32, 32], pl.DT_FP32], trace: pl.Tensor[[STEPS, 32, 32], pl.DT_FP32]):
    _serial_loop(state, eye, scratch, trace)


@pl.jit
def tripled_unsynchronised(state: pl.Tensor[[32, 32], pl.DT_FP32], eye: pl.Tensor[[32, 32], pl.DT_FP32],
                           scratch: pl.Tensor[[32, 32], pl.DT_FP32],
                           trace: pl.Tensor[[STEPS, 32, 32], pl.DT_FP32]):
    _serial_loop(state, eye, scratch, trace)


def _run(kernel, backend):
    x = (np.arange(32 * 32, dtype=np.float32).reshape(32, 32) % 5)
    state, trace = x.copy(), np.zeros((STEPS, 32, 32), np.float32)
    kernel.backend = backend
    kernel(state, np.eye(32, dtype=np.float32), np.zeros((32, 32), np.float32), trace)
    want = x.copy()
    for step in range(STEPS):
        want = want * 3 - 2
        assert_bits_equal(trace[step], want, f"step {step}")
    assert_bits_equal(state, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", [tripled, tripled_sync_only])
def test_pipeline_kernel_keeps_serial_order_across_cores(kernel, backend):
    _run(kernel, backend)


def test_the_same_loop_without_pipeline_races_on_the_simulator():
    """Without pipeline= nothing orders the cores: the simulator reports the cross-core race that the
    pipeline pass removes."""
    from pypto_pro import KernelRaceError

    with pytest.raises(KernelRaceError):
        _run(tripled_unsynchronised, "sim")


@pl.pipeline.stage
def double_rows(tile, src, dst, row):
    pl.load(tile, src, [row, 0])
    pl.add(tile, tile, tile)
    pl.store(dst, tile, [row, 0])


@pl.jit(pipeline=pl.pipeline.PipelineConfig(preload=1))
def vector_only_pipeline(a: pl.Tensor[[64, 32], pl.DT_FP32], out: pl.Tensor[[64, 32], pl.DT_FP32]):
    group = pl.make_tile_group(type=pl.TileType([16, 32], pl.DT_FP32), addrs=0, mutex_ids=[0, 1])
    for k in pl.range(4):
        with pl.section_vector():
            double_rows(group.next(), a, out, k * 16)


@pytest.mark.parametrize("backend", BACKENDS)
def test_single_core_type_pipeline_needs_no_hand_over(backend):
    a = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    out = np.zeros_like(a)
    vector_only_pipeline.backend = backend
    vector_only_pipeline(a, out)
    assert_bits_equal(out, a + a)
    kir = next(iter(vector_only_pipeline._variants.values()))
    assert insert_pipeline_sync(kir, vector_only_pipeline.pipeline) is kir


def test_stage_marks_and_keeps_the_function():
    def f(x):
        return x + 1

    assert pl.pipeline.stage(f) is f and pl.pipeline.is_stage(f) and f(1) == 2
    assert not pl.pipeline.is_stage(lambda x: x)


@pytest.mark.parametrize("bad", [dict(preload=-1), dict(preload=1.5), dict(preload=True), dict(sync_only=1)])
def test_pipeline_config_values_are_checked(bad):
    with pytest.raises(ValueError, match="PipelineConfig"):
        pl.pipeline.PipelineConfig(**bad)


def test_pipeline_takes_a_config():
    with pytest.raises(TypeError, match="PipelineConfig"):
        pl.jit(pipeline={"preload": 2})
