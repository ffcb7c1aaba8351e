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
