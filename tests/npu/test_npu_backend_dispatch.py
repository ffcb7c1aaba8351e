"""The stand-in maps ``npu`` devices through torch's dispatcher (the CPU is the ``npu`` backend's kernels),
so torch calls that name no NPU run without any Python of the stand-in in front of them.

Behaviour checks only (the cost is measured by benchmarks/bench_npu_standin.py).  Fresh interpreter, as
tests/npu/test_standin.py: the stand-in changes torch process-wide."""
from test_standin import run_python, script

MAPPING = """
    import threading
    import torch, torch_npu
    from torch.overrides import _get_current_function_mode_stack

    # nothing sits in front of torch calls that name no NPU
    assert _get_current_function_mode_stack() == []
    assert torch.add is torch._C._VariableFunctions.add

    made = {
        "zeros": torch.zeros(2, 3, device="npu"),
        "ordinal 1": torch.ones(2, device="npu:1"),
        "device object": torch.empty(2, device=torch.device("npu", 0)),
        "bare ordinal": torch.full((2,), 3.0, device=0),
        "tensor": torch.tensor([1.0, 2.0], device="npu:0"),
        "as_tensor": torch.as_tensor([1, 2], device="npu"),
        "arange": torch.arange(5, device="npu"),
        "randint": torch.randint(0, 5, (3,), device="npu"),
        "eye": torch.eye(3, device="npu"),
        "zeros_like": torch.zeros_like(torch.ones(2), device="npu"),
        "new_ones": torch.ones(2).new_ones(3, device="npu"),
        "linear": torch.nn.Linear(3, 4, device="npu").weight,
        "requires_grad": torch.zeros(2, device="npu", requires_grad=True),
    }
    for name, t in made.items():
        assert t.device.type == "cpu", name
    assert made["requires_grad"].requires_grad and made["tensor"].tolist() == [1.0, 2.0]
    assert made["eye"].trace().item() == 3.0 and made["arange"].tolist() == [0, 1, 2, 3, 4]

    # Tensor.to a target naming the NPU is the tensor itself, like .npu()
    x = torch.ones(3)
    assert x.to("npu") is x and x.to(torch.device("npu", 0)) is x and x.to(device="npu:0") is x
    assert x.to("npu", torch.float16).dtype == torch.float16 and x.to(torch.float64).dtype == torch.float64
    net = torch.nn.Linear(2, 2)
    weight = net.weight
    assert net.to("npu").weight is weight and net.npu() is net

    # the default device and device contexts
    with torch.device("npu"):
        assert torch.zeros(2).device.type == "cpu"
    torch.set_default_device("npu")
    assert torch.zeros(2).device.type == "cpu"
    torch.set_default_device(None)

    # any thread (the dispatcher is process-wide)
    seen = []
    worker = threading.Thread(target=lambda: seen.append(torch.zeros(2, device="npu").device.type))
    worker.start(); worker.join()
    assert seen == ["cpu"]

    # npu random tensors draw from the CPU generator
    torch.manual_seed(3)
    a = torch.rand(4, device="npu")
    torch.manual_seed(3)
    assert torch.equal(a, torch.rand(4))
    print("mapped ok")
"""


def test_npu_devices_map_to_the_cpu_without_a_function_mode(tmp_path):
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "mapping.py", MAPPING)], tmp_path)
    assert r.returncode == 0 and "mapped ok" in r.stdout, r.stderr[-3000:]


RAND_INT = """
    import torch, torch_npu
    for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
        t = torch.rand((3, 4), dtype=dtype, device="npu:0")
        assert t.dtype == dtype and t.shape == (3, 4) and not t.any(), dtype
    # floating dtypes are unchanged, and without the npu device torch's CPU rule holds
    assert torch.rand(2, dtype=torch.float16, device="npu").dtype == torch.float16
    try:
        torch.rand(2, dtype=torch.int32)
    except RuntimeError as e:
        assert "Int" in str(e)
    else:
        raise AssertionError("torch.rand(int32) on the CPU itself stays torch's error")
    print("rand ok")
"""


def test_rand_of_an_integer_dtype_on_the_npu_is_zeros(tmp_path):
    """The NPU's uniform fill takes integer dtypes and fills [0, 1): zeros (docs/npu.md)."""
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "rand_int.py", RAND_INT)], tmp_path)
    assert r.returncode == 0 and "rand ok" in r.stdout, r.stderr[-3000:]


CAPTURE_GUARD = """
    import torch, torch_npu
    import pypto_pro.npu
    from torch.overrides import _get_current_function_mode_stack

    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        assert len(_get_current_function_mode_stack()) == 1
        torch.empty(4, device="npu")
        try:
            bool(torch.mul(torch.ones(1), 2))
        except pypto_pro.npu.NpuOnlyFacilityError as e:
            assert "'__bool__'" in str(e), e
        else:
            raise AssertionError("a host read inside a capture must be refused")
    assert _get_current_function_mode_stack() == []
    assert torch.mul(torch.ones(1), 2).item() == 2.0
    print("guard ok")
"""


def test_the_capture_guard_is_active_only_inside_a_capture(tmp_path):
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "guard.py", CAPTURE_GUARD)], tmp_path)
    assert r.returncode == 0 and "guard ok" in r.stdout, r.stderr[-3000:]


SURFACE = """
    import torch, torch_npu
    from pypto_pro.npu import NpuOnlyFacilityError
    for use in (lambda: torch_npu._npu_paged_attention(), lambda: torch.npu.init_dump(),
                lambda: torch.npu.set_dump("acl.json"), lambda: torch.npu.finalize_dump(),
                lambda: torch_npu.npu_quant_matmul(torch.ones(1), torch.ones(1))):
        try:
            use()
        except NpuOnlyFacilityError as e:
            assert "NPU-only" in str(e)
        else:
            raise AssertionError("an NPU-only facility must raise")
    torch_npu.npu.config.allow_internal_format = True
    assert torch_npu.npu.config.allow_internal_format is True
    torch.npu.set_device_limit(0, 12, 24)
    codes = torch_npu.npu_dtype_cast(torch.tensor([1.0, -2.5]), torch_npu.hifloat8)
    assert torch_npu.npu_dtype_cast(codes, torch.float32, input_dtype=torch_npu.hifloat8).tolist() == [1.0, -2.5]
    print("surface ok")
"""


def test_the_official_torch_npu_surface(tmp_path):
    """Names the official programs use: implemented, or refused naming the facility (never AttributeError)."""
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "surface.py", SURFACE)], tmp_path)
    assert r.returncode == 0 and "surface ok" in r.stdout, r.stderr[-3000:]
