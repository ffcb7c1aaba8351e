"""First call of seed 000's Add in a fresh build directory (issue 16): compile + load + run, in a new process.

Run: ``python benchmarks/bench_first_call.py [--runs N]``.  Each run is a new Python process with an empty
``$PYPTO_BUILD_DIR``; it times ``add_kernel[None, 1](a, b, out)`` — parse, code generation, the C++ compile
and the launch — after the imports.  Two settings, side by side:

* ``installed``: the per-user cache holds what ``make venv`` builds once per install (the runtime library
  and the precompiled tile header, ``python -m pypto_pro.backends.cpu``); this is the goal's number.
* ``new install``: an empty per-user cache as well (the first kernel also builds the runtime library).
* ``installed, no PCH``: as ``installed`` with ``PYPTO_PCH=0`` (the kernel parses the tile header).

It prints the median and the spread (min-max) of the wall time, and the CPU time of the compiler processes
and of Python during the call: on an idle machine the wall time is about their sum (the compiles of one
call run one after another, except a new install's runtime library, which builds alongside the kernel);
on a machine shared with other jobs, the wall time grows with the load and the CPU times do not.  Results: docs/performance.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import json, resource, time
import torch
import pypto_pro.language as pl

@pl.jit(auto_mutex=True)
def add_kernel(
    a: pl.Tensor[[64, 64], pl.DT_FP16],
    b: pl.Tensor[[64, 64], pl.DT_FP16],
    out: pl.Tensor[[64, 64], pl.DT_FP16],
):
    tt = pl.TileType(shape=[64, 64], dtype=pl.DT_FP16, target_memory=pl.MemorySpace.Vec)
    ta = pl.make_tile_group(type=tt, addrs=0x0000, mutex_ids=[0])
    tb = pl.make_tile_group(type=tt, addrs=0x2000, mutex_ids=[1])
    to = pl.make_tile_group(type=tt, addrs=0x4000, mutex_ids=[2])
    with pl.section_vector():
        pl.load(to.current(), a, [0, 0])
        pl.load(tb.current(), b, [0, 0])
        pl.add(to.current(), ta.current(), tb.current())
        pl.store(out, to.current(), [0, 0])

a = torch.rand(64, 64, dtype=torch.float16)
b = torch.rand(64, 64, dtype=torch.float16)
out = torch.empty(64, 64, dtype=torch.float16)
c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
s0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
add_kernel[None, 1](a, b, out)
wall = time.perf_counter() - t0
c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
s1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "compiler_cpu": (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime),
                  "python_cpu": (s1.ru_utime - s0.ru_utime) + (s1.ru_stime - s0.ru_stime)}))
'''


def one_run(env_extra: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="pypto-first-call-") as build:
        script = os.path.join(build, "seed_add.py")  # a file: @pl.jit reads the kernel's source
        with open(script, "w") as f:
            f.write(CHILD)
        env = dict(os.environ, PYPTO_BUILD_DIR=os.path.join(build, "build"), PYPTO_BACKEND="cpu",
                   PYPTO_PREBUILD="0", **env_extra)
        proc = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"the seed Add failed:\n{proc.stderr}")
        return json.loads(proc.stdout.strip().splitlines()[-1])


def summary(label: str, runs: list) -> None:
    walls = sorted(r["wall"] for r in runs)
    cpus = sorted(r["compiler_cpu"] for r in runs)
    py = statistics.median(r["python_cpu"] for r in runs)
    print(f"{label:<18} first call {statistics.median(walls):6.3f} s median "
          f"(min {walls[0]:.3f}, max {walls[-1]:.3f}, {len(walls)} runs) | CPU time: compiler "
          f"{statistics.median(cpus):.3f} s (min {cpus[0]:.3f}, max {cpus[-1]:.3f}) + Python {py:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--skip-new-install", action="store_true", help="only the installed settings")
    args = ap.parse_args()
    # what `make venv` does once per install (a no-op when already built)
    subprocess.run([sys.executable, "-m", "pypto_pro.backends.cpu", "--quiet"], check=True)
    print(f"seed 000's Add, first call in a fresh build directory; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    summary("installed", [one_run({}) for _ in range(args.runs)])
    summary("installed, no PCH", [one_run({"PYPTO_PCH": "0"}) for _ in range(args.runs)])
    if not args.skip_new_install:
        runs = []
        for _ in range(max(1, args.runs // 2)):
            with tempfile.TemporaryDirectory(prefix="pypto-user-cache-") as user_cache:
                runs.append(one_run({"PYPTO_CACHE_DIR": user_cache}))
        summary("new install", runs)


if __name__ == "__main__":
    main()
