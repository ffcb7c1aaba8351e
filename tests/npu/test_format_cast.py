"""``torch_npu.npu_format_cast`` / ``get_npu_format`` / ``Format`` under the CPU stand-in.

A cast changes storage, not values: the result holds the same logical values and carries its format;
formats the stand-in does not model raise ``NpuOnlyFacilityError`` naming them.  The functions are
checked in-process (they need no active stand-in) and once through ``import torch_npu`` in a fresh
interpreter (tests/npu/test_standin.py explains why)."""
import copy
import pickle

import pytest
import torch

from pypto_pro.npu import NpuOnlyFacilityError
from pypto_pro.npu.formats import Format, NpuFormatTensor, get_npu_format, npu_format_cast

from test_standin import run_python, script


def test_format_numbers_are_torch_npus():
    assert (Format.ND, Format.NCHW, Format.FRACTAL_NZ, Format.NC1HWC0, Format.NCDHW) == (2, 0, 29, 3, 30)
    assert str(Format.FRACTAL_NZ) == "FRACTAL_NZ"


def test_base_formats_follow_the_rank():
    assert get_npu_format(torch.zeros(3)) == 2
    assert get_npu_format(torch.zeros(3, 4)) == 2
    assert get_npu_format(torch.zeros(1, 2, 3, 4)) == 0
    assert get_npu_format(torch.zeros(1, 2, 3, 4, 5)) == 30


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int32])
def test_an_nz_cast_keeps_the_logical_values(dtype):
    x = (torch.arange(6 * 10) % 7 - 3).to(dtype).reshape(6, 10)
    y = npu_format_cast(x, 29)
    assert isinstance(y, NpuFormatTensor) and get_npu_format(y) == 29
    assert y.shape == x.shape and y.dtype == x.dtype
    assert torch.equal(y.cpu(), x)
    assert y.data_ptr() != x.data_ptr()  # a new tensor, as on the board


def test_the_format_stays_with_the_storage_and_new_tensors_are_plain():
    y = npu_format_cast(torch.ones(16, 16), Format.FRACTAL_NZ)
    assert npu_format_cast(y, 29) is y  # already in that format
    assert get_npu_format(y.add_(1)) == 29  # in place: the same tensor
    for view in (y.reshape(16, 16), y.view(256), y[0:4], y.T):  # views share the NZ storage
        assert isinstance(view, NpuFormatTensor) and get_npu_format(view) == 29
    for made in (y + 1, y.clone(), y.half(), y.cpu(), torch.matmul(y, y)):
        assert type(made) is torch.Tensor and get_npu_format(made) == 2
    assert torch.equal(y.cpu(), torch.full((16, 16), 2.0))
    assert y.cpu().data_ptr() != y.data_ptr()  # a host copy, as on the board
    assert get_npu_format(copy.deepcopy(y)) == 29 and torch.equal(copy.deepcopy(y).cpu(), y.cpu())
    back = pickle.loads(pickle.dumps(y))
    assert get_npu_format(back) == 29 and torch.equal(back.cpu(), y.cpu())


def test_casting_back_to_nd():
    x = torch.randn(2, 3, 16, 16)
    y = npu_format_cast(npu_format_cast(x, 29), 2)
    assert get_npu_format(y) == 2 and torch.equal(y.cpu(), x)
    assert npu_format_cast(x, 0) is x  # its base format already
    assert get_npu_format(npu_format_cast(x, 2)) == 2  # ND is not the base format of a 4-D tensor


@pytest.mark.parametrize("fmt, name", [(3, "NC1HWC0"), (4, "FRACTAL_Z"), (99, "an unknown format")])
def test_formats_not_modelled_are_npu_only(fmt, name):
    with pytest.raises(NpuOnlyFacilityError, match=rf"npu_format_cast to {name} \({fmt}\)"):
        npu_format_cast(torch.zeros(16, 16), fmt)


def test_nz_needs_two_dims_and_no_uint8():
    with pytest.raises(NpuOnlyFacilityError, match="1-D tensor to FRACTAL_NZ"):
        npu_format_cast(torch.zeros(16), 29)
    with pytest.raises(NpuOnlyFacilityError, match="uint8"):
        npu_format_cast(torch.zeros(16, 32, dtype=torch.uint8), 29)
    with pytest.raises(TypeError):
        npu_format_cast(torch.zeros(16, 16), "NZ")


def test_through_import_torch_npu(tmp_path):
    path = script(tmp_path, "nz_script.py", """
        import torch, torch_npu
        import pypto_pro.language as pl

        @pl.jit
        def twice(x: pl.Tensor[[16, 16], pl.DT_FP16], w: pl.Tensor[[16, 16], pl.DT_FP16, pl.NZ],
                  y: pl.Tensor[[16, 16], pl.DT_FP32, pl.NZ]):
            S, P = pl.MemorySpace, pl.PipeType
            a1 = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, S.Mat), addr=0x0, size=512)
            b1 = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, S.Mat), addr=0x200, size=512)
            a0 = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, S.Left), addr=0x0, size=512)
            b0 = pl.make_tile(pl.TileType([16, 16], pl.DT_FP16, S.Right), addr=0x0, size=512)
            acc = pl.make_tile(pl.TileType([16, 16], pl.DT_FP32, S.Acc), addr=0x0, size=1024)
            with pl.section_cube():
                pl.load(a1, x, [0, 0])
                pl.load(b1, w, [0, 0])
                pl.system.sync_src(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE2, wait_pipe=P.MTE1, event_id=0)
                pl.move(a0, a1)
                pl.move(b0, b1)
                pl.system.sync_src(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
                pl.system.sync_dst(set_pipe=P.MTE1, wait_pipe=P.M, event_id=0)
                pl.matmul(acc, a0, b0)
                pl.system.sync_src(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
                pl.system.sync_dst(set_pipe=P.M, wait_pipe=P.FIX, event_id=0)
                pl.store(y, acc, [0, 0])

        torch.npu.set_device(0)
        x = torch.randint(-3, 4, (16, 16), device="npu:0").half()
        w = torch_npu.npu_format_cast(torch.eye(16, device="npu:0").half() * 2, torch_npu.Format.FRACTAL_NZ)
        y = torch_npu.npu_format_cast(torch.zeros(16, 16, device="npu:0"), 29)
        assert torch_npu.get_npu_format(w) == 29 and torch_npu.get_npu_format(x) == 2
        assert w.device.type == "npu" and w.is_cpu and x.device.type == "cpu"
        assert y.to("npu:0") is y and y.npu() is y
        twice(x, w, y)
        torch.npu.synchronize()
        assert torch_npu.get_npu_format(y) == 29
        assert torch.equal(y.cpu(), x.float() * 2) and y.cpu().device.type == "cpu"
        try:
            torch_npu.npu_format_cast(x, torch_npu.Format.NC1HWC0)
        except NotImplementedError as e:
            assert "NC1HWC0" in str(e)
        print("nz ok")
    """)
    done = run_python(["-m", "pypto_pro.npu", path], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "nz ok" in done.stdout
