"""First call of seed 000's Add in a fresh build directory (issue 16): compile + load + run, in a new process.

Run: ``python benchmarks/bench_first_call.py [--runs N]``.  Each run is a new Python process with an empty
``$PYPTO_BUILD_DIR``; it imports seed 000's Add kernel from ``examples/pro/01_add.py`` and times
``add_kernel[None, 1](a, b, out)`` — parse, code generation, the C++ compile and the launch.  Two settings, side by side:

* ``installed``: the per-user cache holds what ``make venv`` builds once per install (the runtime library
  and the precompiled tile header, ``python -m pypto_pro.backends.cpu``); this is the goal's number.
* ``new install``: an empty per-user cache as well (the first kernel also builds the runtime library).
* ``no ops library``: as ``installed`` with ``PYPTO_PREBUILT_OPS=0`` (the kernel compiles its per-op
  functions instead of calling the ops library's).
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
from pathlib import Path

#: the child: seed 000's Add as examples/pro/01_add.py holds it (with its load restored), timed from its launch
CHILD = r'''
import importlib.util, json, resource, sys, time
import torch
spec = importlib.util.spec_from_file_location("seed_add", sys.argv[1])
seed = importlib.util.module_from_spec(spec)
spec.loader.exec_module(seed)
a = torch.rand(64, 64, dtype=torch.float16)
b = torch.rand(64, 64, dtype=torch.float16)
out = torch.empty(64, 64, dtype=torch.float16)
c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
s0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
seed.add_kernel[None, 1](a, b, out)
wall = time.perf_counter() - t0
c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
s1 = resource.getrusage(resource.RUSAGE_SELF)
assert torch.equal(out, a + b)
print(json.dumps({"wall": wall, "compiler_cpu": (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime),
                  "python_cpu": (s1.ru_utime - s0.ru_utime) + (s1.ru_stime - s0.ru_stime)}))
'''
SEED = Path(__file__).resolve().parent.parent / "examples" / "pro" / "01_add.py"


def one_run(env_extra: dict) -> dict:
    with tempfile.TemporaryDirectory(prefix="pypto-first-call-") as build:
        env = dict(os.environ, PYPTO_BUILD_DIR=os.path.join(build, "build"), PYPTO_BACKEND="cpu",
                   PYPTO_PREBUILD="0", **env_extra)
        proc = subprocess.run([sys.executable, "-c", CHILD, str(SEED)], env=env, capture_output=True, text=True)
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
    settings = [("installed", {}), ("no ops library", {"PYPTO_PREBUILT_OPS": "0"}),
                ("installed, no PCH", {"PYPTO_PCH": "0"})]
    runs = {label: [] for label, _ in settings}
    for _ in range(args.runs):  # interleaved, so a change of the machine's load spreads over all settings
        for label, env in settings:
            runs[label].append(one_run(env))
    for label, _ in settings:
        summary(label, runs[label])
    if not args.skip_new_install:
        runs = []
        for _ in range(max(1, args.runs // 2)):
            with tempfile.TemporaryDirectory(prefix="pypto-user-cache-") as user_cache:
                runs.append(one_run({"PYPTO_CACHE_DIR": user_cache}))
        summary("new install", runs)


if __name__ == "__main__":
    main()
