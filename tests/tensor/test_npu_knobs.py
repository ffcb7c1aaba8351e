"""NPU tuning knobs: accepted, recorded (visible in get_*_options), logged once at INFO, no effect on
results; ill-typed values still raise ValueError.  The root scope of ``pypto_impl.SetGlobalConfig``."""
import logging

import numpy as np
import pytest
import torch

import pypto



@pytest.fixture(autouse=True)
def _clean():
    pypto.reset_options()
    yield
    pypto.reset_options()
    pypto.pypto_impl.SetGlobalConfig({"pass.enable_slice": False})


KNOBS = [
    ("pass", {"enable_slice": True}),
    ("pass", {"vec_nbuffer_setting": {0: 2, -1: 16, -2: 1}}),
    ("pass", {"cube_l1_reuse_setting": {-1: (4, "left"), "func3_0": 2}}),
    ("pass", {"cube_nbuffer_setting": {-1: 8}}),
    ("pass", {"sg_set_scope": 10001}),
    ("pass", {"auto_mix_partition": 1}),
    ("pass", {"ooo_sched_mode": "GAPMIN"}),
    ("runtime", {"device_sched_mode": 2, "stitch_function_max_num": 32, "launch_sched_aicpu_num": 3}),
    ("runtime", {"launch_early_mode": 1, "device_sched_parallelism": 8}),
    ("codegen", {"enable_pmu_trace": True}),
]


def _scale_kernel(**options):
    @pypto.frontend.jit(**options)
    def scale(x: pypto.Tensor([pypto.DYNAMIC, 48], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 48], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 48)
        y[:] = x * 3.0 - 1.0

    return scale


@pytest.mark.parametrize("group,values", KNOBS, ids=lambda v: v if isinstance(v, str) else next(iter(v)))
def test_knob_is_recorded_and_changes_nothing(group, values):
    x = torch.randn(19, 48)
    want = torch.empty(19, 48)
    _scale_kernel()(x, want)
    getattr(pypto, f"set_{group}_options")(**values)
    got_options = getattr(pypto, f"get_{group}_options")()
    for key, value in values.items():
        assert got_options[key] == value
    got = torch.empty(19, 48)
    _scale_kernel()(x, got)
    assert torch.equal(got, want)
    got2 = torch.empty(19, 48)
    _scale_kernel(**{f"{group}_options": values})(x, got2)  # on the decorator too
    assert torch.equal(got2, want)


def test_knob_logged_once_at_info(caplog):
    from pypto.options import _NOTED

    _NOTED.discard(("pass", "sg_set_tunevf_mode"))
    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.set_pass_options(sg_set_tunevf_mode=1)
        pypto.set_pass_options(sg_set_tunevf_mode=2)
    lines = [r for r in caplog.records if "sg_set_tunevf_mode" in r.getMessage()]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO


@pytest.mark.parametrize("kw", [{"enable_slice": 1}, {"vec_nbuffer_setting": {-1: "x"}},
                                {"cube_l1_reuse_setting": {-1: (2, "up")}}, {"sg_set_scope": (1, 2, 3)},
                                {"ooo_sched_mode": "FAST"}, {"sg_set_tunevf_mode": 3}],
                         ids=lambda kw: next(iter(kw)))
def test_ill_typed_knob_values_raise(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        pypto.set_pass_options(**kw)


def test_options_decorator_with_knob_restores_after():
    @pypto.options(pass_options={"enable_slice": True}, runtime_options={"stitch_function_max_num": 64})
    def body():
        return pypto.get_pass_options()["enable_slice"], pypto.get_runtime_options()["stitch_function_max_num"]

    assert body() == (True, 64)
    assert pypto.get_pass_options()["enable_slice"] is False
    assert pypto.get_runtime_options()["stitch_function_max_num"] == 128


def test_root_scope_survives_reset_and_is_overridden():
    pypto.pypto_impl.SetGlobalConfig({"pass.enable_slice": True, "runtime.device_sched_mode": 1})
    pypto.reset_options()
    assert pypto.get_pass_options()["enable_slice"] is True
    with pypto.options(pass_options={"enable_slice": False}):
        assert pypto.get_pass_options()["enable_slice"] is False
    assert pypto.get_pass_options()["enable_slice"] is True
    pypto.pypto_impl.SetGlobalConfig({"runtime.device_sched_mode": 0})
    for bad in ({"enable_slice": True}, {"nogroup.x": 1}, {"pass.no_such_key": 1}):
        with pytest.raises(ValueError):
            pypto.pypto_impl.SetGlobalConfig(bad)


def test_conv_tile_shapes_recorded():
    l1 = pypto.pypto_impl.TileL1Info(tileHin=1, tileHout=1, tileWin=32, tileWout=16, tileCinFmap=16,
                                     tileCinWeight=16, tileN=16, tileBatch=1)
    l0 = pypto.pypto_impl.TileL0Info(tileH=1, tileW=16, tileK=16, tileN=16)
    pypto.set_conv_tile_shapes(l1, l0)
    assert pypto.get_conv_tile_shapes() == (l1, l0, True)
    with pytest.raises(ValueError, match="tileK"):
        pypto.pypto_impl.TileL0Info(tileH=1, tileW=16, tileK=0, tileN=16)
    with pytest.raises(TypeError, match="missing"):
        pypto.pypto_impl.TileL0Info(tileH=1, tileW=16)


def test_platform_npuarch_follows_the_arch(monkeypatch):
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a3")
    assert pypto.platform.npuarch == "DAV_2201"
    monkeypatch.setenv("PYPTOPRO_JIT_ARCH", "a5")
    assert pypto.platform.npuarch == "DAV_3510"
    pypto.platform.npuarch = "DAV_2201"
    assert pypto.platform.npuarch == "DAV_2201"
    with pytest.raises(ValueError):
        pypto.platform.npuarch = "DAV_9999"


def test_symbolic_scalar_module_and_ceildiv():
    from pypto.symbolic_scalar import SymInt

    assert pypto.SymInt is SymInt
    assert pypto.ceildiv(70, 32) == 3 and pypto.ceildiv(64, 32) == 2
    assert pypto.symbolic_scalar(5).concrete() == 5
    assert np.array_equal(np.array([pypto.ceildiv(n, 8) for n in range(1, 20)]), (np.arange(1, 20) + 7) // 8)


def test_official_spellings():
    """pypto.greater, pypto.DataType.DT_*, pypto.error.FeError, CompStage.CODEGEN_BINARY."""
    assert pypto.DataType.DT_FP32 is pypto.DT_FP32 and pypto.DataType.DT_INT8 is pypto.DT_INT8
    assert pypto.CompStage.CODEGEN_BINARY == 5

    @pypto.frontend.jit
    def greater(a: pypto.Tensor([8, 32], pypto.DT_FP32), o: pypto.Tensor([8, 32], pypto.DT_BOOL)):
        pypto.set_vec_tile_shapes(8, 32)
        o[:] = pypto.greater(a, 0.25)

    a = torch.randn(8, 32)
    o = torch.zeros(8, 32, dtype=torch.bool)
    greater(a, o)
    assert torch.equal(o, a > 0.25)
    with pytest.raises(pypto.error.FeError):
        greater(a)


def test_options_scope_undoes_settings_made_inside():
    @pypto.options(pass_options={"enable_slice": True})
    def body():
        pypto.set_host_options(compile_stage=pypto.CompStage.TENSOR_GRAPH)
        pypto.set_vec_tile_shapes(8, 8)
        return pypto.get_host_options()["compile_stage"]

    assert body() == pypto.CompStage.TENSOR_GRAPH
    assert pypto.get_host_options()["compile_stage"] == pypto.CompStage.ALL_COMPLETE
    assert pypto.get_vec_tile_shapes() == []
