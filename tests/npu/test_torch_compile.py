"""``torch.compile`` under the CPU stand-in: torch asks the accelerator runtime about the ``npu`` device
while tracing (its current stream); the stand-in answers, so a compiled module that launches a pypto
kernel runs, also inside a ``torch.npu.graph`` capture.  Fresh interpreter, as tests/npu/test_standin.py."""
from test_standin import run_python, script


def test_a_compiled_module_launches_the_kernel(tmp_path):
    path = script(tmp_path, "compiled.py", """
        import torch, torch_npu
        from torch._dynamo import allow_in_graph
        from torch._subclasses.fake_tensor import FakeTensor
        import pypto

        @pypto.frontend.jit
        def halve_rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                       y: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(4, 64)
            y[:] = x * 0.5 + 1.0

        @allow_in_graph
        def halve(x):
            if isinstance(x, FakeTensor):
                return torch.empty_like(x)
            y = torch.empty_like(x)
            halve_rows(x, y)
            return y

        class Net(torch.nn.Module):
            def forward(self, x):
                return halve(x)

        torch.npu.set_device(0)
        assert torch.accelerator.current_stream().device_index == 0
        net = torch.compile(Net(), backend="eager", dynamic=True)
        x = torch.randn(8, 64, device="npu:0")
        assert torch.equal(net(x), x * 0.5 + 1.0)
        g = torch.npu.NPUGraph()
        with torch.npu.graph(g):
            y = net(x)
        x.copy_(torch.ones(8, 64))
        g.replay()
        assert torch.equal(y, torch.full((8, 64), 1.5))
        print("compiled ok")
    """)
    done = run_python(["-m", "pypto_pro.npu", path], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compiled ok" in done.stdout


def test_npu_devices_inside_a_compiled_region_mean_the_cpu(tmp_path):
    """A compiled region is traced on fake tensors, which keep the device they are given: the stand-in runs
    compiled code in a mode that maps ``npu`` devices to the CPU, so the graph names the CPU."""
    path = script(tmp_path, "compiled_devices.py", """
        import warnings
        import torch, torch_npu
        from torch.overrides import _get_current_function_mode_stack

        def f(x):
            return x + torch.ones(4, device="npu") + x.to("npu:0")

        class Twice(torch.nn.Module):
            def forward(self, x):
                return x * torch.full((4,), 2.0, device=torch.device("npu", 0))

        x = torch.randn(4)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no graph break at Tensor.to
            compiled = torch.compile(f, backend="eager", fullgraph=True)
            assert torch.equal(compiled(x), x + 1 + x) and torch.equal(compiled(x), x + 1 + x)
        twice = torch.compile(Twice(), backend="eager")
        assert isinstance(twice, torch.nn.Module) and torch.equal(twice(x), x * 2)
        assert _get_current_function_mode_stack() == []  # eager code outside stays mode-free
        print("compiled devices ok")
    """)
    done = run_python(["-m", "pypto_pro.npu", path], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compiled devices ok" in done.stdout
