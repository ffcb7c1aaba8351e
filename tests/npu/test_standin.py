"""The torch_npu CPU stand-in: NPU scripts and test suites run unchanged on the CPU.

Every check runs in a fresh interpreter: the stand-in changes torch process-wide, so it must never
leak into the rest of the suite (and it is never active unless asked for).
"""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.every_backend

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + "/src"


def run_python(args, tmp_path, env_extra=None, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SRC] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    # the session's content-addressed build cache (tests/conftest.py): kernels the scripts share build once
    env["PYPTO_BUILD_DIR"] = os.environ.get("PYPTO_BUILD_DIR") or str(tmp_path / "build")
    env.update(env_extra or {})
    return subprocess.run([sys.executable] + args, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout)


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


DEVICE_SCRIPT = """
    import sys
    import torch, torch_npu
    import pypto_pro.language as pl

    @pl.jit
    def scale_rows(x: pl.Tensor[[16, 32], pl.DT_FP32], y: pl.Tensor[[16, 32], pl.DT_FP32]):
        tile = pl.make_tile(pl.TileType(shape=[16, 32], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                            addr=0)
        with pl.section_vector():
            pl.load(tile, x, [0, 0])
            pl.mul(tile, tile, 3.0)
            pl.store(y, tile, [0, 0])

    torch.npu.set_device("npu:0")
    assert torch.npu.is_available() and torch.npu.device_count() == 1 and torch.npu.current_device() == 0
    assert "Ascend950" in torch.npu.get_device_name() and torch_npu.npu.get_soc_version() == 260
    x = torch.randn(16, 32, device="npu:0")
    y = torch.empty(16, 32, device=torch.device("npu", 0))
    z = torch.zeros_like(x, device="npu").to("npu:0").npu()
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        scale_rows[torch.npu.current_stream(), 1](x, y)
    torch.npu.synchronize()
    assert x.device.type == y.device.type == z.device.type == "cpu"
    assert torch.equal(y.cpu(), x * 3.0)
    print("argv", sys.argv[1:], "ok")
"""


def test_runner_runs_an_npu_script_unchanged(tmp_path):
    path = script(tmp_path, "npu_script.py", DEVICE_SCRIPT)
    done = run_python(["-m", "pypto_pro.npu", path, "--flag", "7"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "argv ['--flag', '7'] ok" in done.stdout


def test_console_script_is_declared():
    import tomllib
    root = os.path.dirname(SRC)
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["pypto-npu"] == "pypto_pro.npu.__main__:main"


def test_inactive_unless_asked_for(tmp_path):
    done = run_python(["-c", "import torch_npu"], tmp_path)
    assert done.returncode != 0 and "No module named 'torch_npu'" in done.stderr


def test_child_processes_get_the_stand_in(tmp_path):
    child = script(tmp_path, "child.py", "import torch, torch_npu\nprint(torch.ones(2, device='npu:0').sum().item())\n")
    parent = script(tmp_path, "parent.py", f"""
        import subprocess, sys
        out = subprocess.run([sys.executable, {child!r}], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        print("child said", out.stdout.strip())
    """)
    done = run_python(["-m", "pypto_pro.npu", parent], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "child said 2.0" in done.stdout


NPU_ONLY = [
    ("torch_npu.npu_rms_norm(torch.ones(2), torch.ones(2))", "torch_npu.npu_rms_norm"),
    ("torch_npu.npu_format_cast(torch.ones(16, 16), 3)", "torch_npu.npu_format_cast to NC1HWC0 (3)"),
    ("torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU])",
     "torch_npu.profiler.profile"),

]


def test_npu_only_facilities_raise_naming_the_facility(tmp_path):
    """Each facility is tried in the same fresh interpreter (one torch import for all of them)."""
    tries = "".join(f"""
        try:
            {use}
        except NpuOnlyFacilityError as e:
            assert isinstance(e, NotImplementedError)
            print("refused:", e)
        else:
            print("no error:", {facility!r})
    """ for use, facility in NPU_ONLY)
    path = script(tmp_path, "facility.py", """
        import torch, torch_npu
        from pypto_pro.npu import NpuOnlyFacilityError
    """ + tries)
    done = run_python(["-m", "pypto_pro.npu", path], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no error" not in done.stdout, done.stdout
    refused = [line for line in done.stdout.splitlines() if line.startswith("refused: ")]
    assert len(refused) == len(NPU_ONLY)
    for line, (_, facility) in zip(refused, NPU_ONLY):
        assert line.startswith(f"refused: {facility}") and "NPU-only" in line, line


def test_a_real_torch_npu_is_never_shadowed(tmp_path):
    real = tmp_path / "site" / "torch_npu"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    path = script(tmp_path, "uses_real.py", """
        import pypto_pro.npu as standin
        assert standin.install() is False and not standin.is_active()
        import torch_npu
        assert torch_npu.REAL
        print("real torch_npu kept")
    """)
    done = run_python(["-m", "pypto_pro.npu", path], tmp_path,
                      env_extra={"PYTHONPATH": os.pathsep.join([SRC, str(tmp_path / "site")])})
    assert done.returncode == 0, done.stderr
    assert "real torch_npu kept" in done.stdout


def test_pytest_plugin_runs_an_npu_test_module(tmp_path):
    script(tmp_path, "test_on_npu.py", """
        import pytest
        import torch
        import torch_npu

        @pytest.mark.soc("950")
        @pytest.mark.world_size(1)
        def test_tensor_on_npu():
            torch.npu.set_device(0)
            t = torch.arange(4, device="npu").npu()
            torch.npu.synchronize()
            assert t.sum().item() == 6
    """)
    done = run_python(["-m", "pytest", "-p", "pypto_pro.npu.plugin", "-p", "no:cacheprovider", "-q",
                       "--strict-markers", "test_on_npu.py"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_pytest_plugin_closes_a_capture_a_failed_test_left_open(tmp_path):
    """The first test fails between ``capture_begin`` and ``capture_end``: the plugin ends that capture
    after it (with a warning), so the second test's torch calls run instead of being refused as captured."""
    script(tmp_path, "test_capture_left_open.py", """
        import torch
        import torch_npu

        def test_fails_inside_a_capture():
            g = torch.npu.NPUGraph()
            g.capture_begin()
            assert torch.npu.is_current_stream_capturing()
            raise AssertionError("stopped inside the capture")

        def test_after_it():
            assert not torch.npu.is_current_stream_capturing()
            assert torch.add(torch.ones(2), 1).tolist() == [2.0, 2.0]
    """)
    done = run_python(["-m", "pytest", "-p", "pypto_pro.npu.plugin", "-p", "no:cacheprovider", "-q",
                       "test_capture_left_open.py"], tmp_path)
    assert "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    assert "left a torch.npu graph capture open" in done.stdout


def test_runner_usage_and_missing_script(tmp_path):
    usage = run_python(["-m", "pypto_pro.npu"], tmp_path)
    assert usage.returncode == 2 and "usage: python -m pypto_pro.npu script.py" in usage.stderr
    missing = run_python(["-m", "pypto_pro.npu", "nowhere.py"], tmp_path)
    assert missing.returncode == 2 and "no such script: nowhere.py" in missing.stderr


def readme_seed_program() -> str:
    """Seed 000's Add program as the README prints it (the first python block that imports torch_npu)."""
    import re
    readme = open(os.path.join(os.path.dirname(SRC), "README.md"), encoding="utf-8").read()
    return next(block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "torch_npu" in block)


def test_readme_seed_program_runs_verbatim(tmp_path):
    path = tmp_path / "seed_add.py"
    path.write_text(readme_seed_program())
    on_cpu = run_python(["-m", "pypto_pro.npu", str(path)], tmp_path, env_extra={"PYPTO_BACKEND": "cpu"})
    assert on_cpu.returncode == 0, on_cpu.stderr
    add_line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "pl.add(" in text)
    on_sim = run_python(["-m", "pypto_pro.npu", str(path)], tmp_path, env_extra={"PYPTO_BACKEND": "sim"})
    assert on_sim.returncode != 0
    assert "KernelUninitError" in on_sim.stderr and f"seed_add.py:{add_line}" in on_sim.stderr


def test_seeding_reaches_the_device_generator_and_the_device_id_is_set(tmp_path):
    body = """
        import warnings
        warnings.simplefilter("error")
        import torch, torch_npu
        torch.manual_seed(7)
        a = torch.rand(3, device="npu:0")
        torch.npu.manual_seed_all(7)
        b = torch.rand(3, device="npu")
        assert torch.equal(a, b) and not torch.npu._is_in_bad_fork()
        import os
        print("seeded", os.environ["TILE_FWK_DEVICE_ID"])
    """
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "seed.py", body)], tmp_path)
    assert r.returncode == 0 and "seeded 0" in r.stdout, r.stderr[-2000:]


def test_graph_capture_records_kernel_launches_and_torch_operators_and_replays_them(tmp_path):
    body = """
        import torch, torch_npu, pypto
        import pypto_pro.npu

        @pypto.frontend.jit
        def add_one(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 32)
            y[:] = x + 1.0

        x = torch.zeros(8, 32, device="npu:0")
        g = torch.npu.NPUGraph()
        assert not torch.npu.is_current_stream_capturing()
        with torch.npu.graph(g):
            assert torch.npu.is_current_stream_capturing()
            y = torch.empty(8, 32, device="npu")  # allocations run at capture
            add_one(x, y)                         # launches are recorded, not run
        assert g.launches == 1
        y.fill_(-5.0)
        g.replay()
        assert torch.equal(y, torch.ones(8, 32))
        x.fill_(2.0)                              # a replay reads what the tensors hold now
        g.replay()
        assert torch.equal(y, torch.full((8, 32), 3.0))
        # torch operators are captured too: run once at capture, replayed in order into the same tensors
        h = torch.npu.NPUGraph()
        with torch.npu.graph(h):
            z = torch.add(x, 1)                   # captured operator, its result is static memory
            w = torch.empty(8, 32, device="npu")
            add_one(z, w)                         # a launch reading the operator's result
            v = w * 2                             # an operator reading the launch's result
        assert h.launches == 1
        x.fill_(10.0)
        h.replay()
        assert torch.equal(z, torch.full((8, 32), 11.0)) and torch.equal(v, torch.full((8, 32), 24.0))
        try:
            with torch.npu.graph(torch.npu.NPUGraph()):
                torch.add(x, 1).sum().item()
        except pypto_pro.npu.NpuOnlyFacilityError as e:
            assert "('item') inside torch.npu.graph capture" in str(e), e
        else:
            raise AssertionError("a host read inside a capture must be refused")
        print("replayed")
    """
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "graph.py", body)], tmp_path)
    assert r.returncode == 0 and "replayed" in r.stdout, r.stderr[-3000:]


def test_graph_capture_of_tile_kernels(tmp_path):
    body = DEVICE_SCRIPT.split("torch.npu.set_device")[0] + """
    x = torch.ones(16, 32, device="npu")
    y = torch.zeros(16, 32, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        scale_rows[torch.npu.current_stream(), 1](x, y)  # kernel[stream, block_dim](...) is recorded
        scale_rows(y, y)                                 # and so is a direct call
    assert g.launches == 2 and torch.equal(y, torch.zeros(16, 32))
    g.replay()
    assert torch.equal(y, torch.full((16, 32), 9.0))
    print("tile replayed")
    """
    r = run_python(["-m", "pypto_pro.npu", script(tmp_path, "tile_graph.py", body)], tmp_path)
    assert r.returncode == 0 and "tile replayed" in r.stdout, r.stderr[-3000:]
