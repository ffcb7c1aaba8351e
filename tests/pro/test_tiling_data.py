"""TilingData parameters (docs/language.md): a trailing dataclass whose fields are runtime scalars."""
from dataclasses import dataclass

import numpy as np
import pytest

import pypto_pro.language as pl
from pypto_pro import KernelLaunchError, KernelSyntaxError


@dataclass
class ScaleTiling:
    rows: int
    scale: float
    relu: bool


@pl.jit
def scale_rows(x: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32], y: pl.Tensor[[pl.DYNAMIC, 64], pl.DT_FP32],
               td: ScaleTiling):
    t = pl.make_tile_group(type=pl.TileType([8, 64], pl.DT_FP32), addrs=0, mutex_ids=[0]).current()
    with pl.section_vector():
        for i in pl.range(pl.get_block_idx(), td.rows // 8, pl.get_block_num()):
            pl.load(t, x, [i * 8, 0])
            pl.mul(t, t, td.scale)
            if td.relu:
                pl.relu(t, t)
            pl.store(y, t, [i * 8, 0])


@pytest.mark.parametrize("rows,scale,relu", [(32, 2.0, True), (16, -0.5, False)])
def test_fields_are_runtime_values(rows, scale, relu):
    x = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    y = np.zeros_like(x)
    scale_rows[2](x, y, ScaleTiling(rows, scale, relu))
    want = x[:rows] * np.float32(scale)
    if relu:
        want = np.maximum(want, 0)
    assert np.array_equal(y[:rows], want)
    assert not y[rows:].any()


def test_wrong_argument_type_is_a_launch_error():
    x = np.zeros((8, 64), np.float32)
    with pytest.raises(KernelLaunchError, match="expected a ScaleTiling instance"):
        scale_rows(x, x, 3)
    with pytest.raises(KernelLaunchError, match="td.rows"):
        scale_rows(x, x, ScaleTiling(1.5, 1.0, False))


def test_unknown_field_names_the_line():
    @pl.jit
    def bad(x: pl.Tensor[[8, 64], pl.DT_FP32], td: ScaleTiling):
        with pl.section_vector():
            pl.setval(x, 0, td.cols)

    with pytest.raises(KernelSyntaxError, match="ScaleTiling has no field 'cols'") as e:
        bad(np.zeros((8, 64), np.float32), ScaleTiling(8, 1.0, False))
    assert "test_tiling_data.py" in str(e.value)


def test_tiling_data_must_be_last():
    @pl.jit
    def bad(td: ScaleTiling, x: pl.Tensor[[8, 64], pl.DT_FP32]):
        pass

    with pytest.raises(KernelSyntaxError, match="must be the last parameter"):
        bad(ScaleTiling(8, 1.0, False), np.zeros((8, 64), np.float32))
