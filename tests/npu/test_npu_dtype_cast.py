"""``torch_npu.npu_dtype_cast`` of the stand-in: HiFloat8 codes from and to floats, torch dtypes as ``.to``.

In process: importing :mod:`pypto_pro.npu.dtype_cast` does not activate the stand-in."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from pypto_pro import lowprec
from pypto_pro.npu import NpuOnlyFacilityError
from pypto_pro.npu.dtype_cast import HIFLOAT8, npu_dtype_cast


def test_every_hf8_code_decodes_to_its_value_and_encodes_back():
    codes = torch.arange(256, dtype=torch.uint8)
    values = npu_dtype_cast(codes, torch.float32, input_dtype=HIFLOAT8)
    expected = lowprec.HF8_VALUES.astype(np.float32)
    assert values.dtype == torch.float32
    np.testing.assert_array_equal(values.numpy(), expected)
    finite = torch.from_numpy(np.isfinite(expected))
    again = npu_dtype_cast(values[finite], HIFLOAT8)
    # every finite code comes back (0x80 is NaN and the infinities are left out)
    np.testing.assert_array_equal(again.numpy(), codes[finite].numpy())


def test_hf8_encoding_rounds_ties_away_saturates_and_maps_nan():
    one, nine_eighths = 1.0, 1.125  # neighbours on the grid of [1, 2): 3 mantissa bits
    tie = torch.tensor([(one + nine_eighths) / 2, -(one + nine_eighths) / 2, 1e9, -float("inf"), float("nan")])
    codes = npu_dtype_cast(tie, HIFLOAT8)
    back = npu_dtype_cast(codes, torch.float32, input_dtype=HIFLOAT8)
    assert back[:4].tolist() == [nine_eighths, -nine_eighths, 32768.0, -32768.0]
    assert codes[4].item() == lowprec.HF8_NAN_CODE


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=32),
       st.sampled_from([torch.float32, torch.float16, torch.bfloat16]))
def test_hf8_codes_of_any_float_source_match_the_codec(values, dtype):
    x = torch.tensor(values, dtype=torch.float32).to(dtype)
    expected = lowprec.hf8_encode(x.to(torch.float32).numpy())
    np.testing.assert_array_equal(npu_dtype_cast(x, HIFLOAT8).numpy(), expected)


def test_hf8_values_in_another_dtype_and_a_2d_shape():
    codes = torch.tensor([[8, 146], [20, 0]], dtype=torch.uint8)
    half = npu_dtype_cast(codes, torch.float16, input_dtype=HIFLOAT8)
    assert half.dtype == torch.float16 and half.tolist() == [[1.0, -2.5], [3.0, 0.0]]


def test_torch_dtypes_convert_as_tensor_to_and_always_copy():
    x = torch.tensor([1.7, -2.5, 300.0])
    assert torch.equal(npu_dtype_cast(x, torch.int32), x.to(torch.int32))
    assert torch.equal(npu_dtype_cast(x, torch.float16), x.to(torch.float16))
    same = npu_dtype_cast(x, torch.float32)
    assert same is not x and torch.equal(same, x)


def test_refusals():
    with pytest.raises(NpuOnlyFacilityError, match="float64 to hifloat8"):
        npu_dtype_cast(torch.ones(2, dtype=torch.float64), HIFLOAT8)
    with pytest.raises(NpuOnlyFacilityError, match="npu_dtype_cast to 290"):
        npu_dtype_cast(torch.ones(2), 290)
    with pytest.raises(TypeError, match="uint8 codes"):
        npu_dtype_cast(torch.ones(2), torch.float32, input_dtype=HIFLOAT8)
