"""Cost of the torch_npu CPU stand-in per torch call (issue 16): the same small torch calls with and without it.

Run: ``python benchmarks/bench_npu_standin.py [--runs N] [--calls N]``.  Each run is a fresh Python process per
setting (``plain``: torch alone; ``standin``: after ``pypto_pro.npu.install()``), so the stand-in never leaks
into the plain numbers.  A run times ``--calls`` calls of each case in a loop (best of 5 loops, in microseconds
per call) on small CPU tensors:

* ``add``: ``torch.add(a, b)``, ``matmul``: ``torch.matmul(a, b)``, ``method``: ``a.mul(b)``, ``getitem``:
  ``a[0]`` -- calls that name no device: the stand-in should add nothing to them;
* ``zeros``: ``torch.zeros(8, 8)`` and ``to``: ``a.to(torch.float64)`` -- calls that take a device or a target
  and that the stand-in inspects (without naming the NPU);
* ``zeros_npu`` / ``to_npu``: the same naming ``device="npu"`` (stand-in only: plain torch cannot).

It prints, per case, the median and the spread (min-max) over the runs of each setting and the difference
(``standin - plain``, the stand-in's cost per call).  Results: docs/performance.md / docs/npu.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, sys, time, timeit
import torch
torch.set_num_threads(1)
standin = sys.argv[1] == "standin"
if standin:
    import pypto_pro.npu
    assert pypto_pro.npu.install()
calls = int(sys.argv[2])
a = torch.rand(8, 8)
b = torch.rand(8, 8)
cases = {
    "add": lambda: torch.add(a, b),
    "matmul": lambda: torch.matmul(a, b),
    "method": lambda: a.mul(b),
    "getitem": lambda: a[0],
    "zeros": lambda: torch.zeros(8, 8),
    "to": lambda: a.to(torch.float64),
}
if standin:
    cases["zeros_npu"] = lambda: torch.zeros(8, 8, device="npu")
    cases["to_npu"] = lambda: a.to("npu:0")
out = {}
for name, fn in cases.items():
    fn()
    out[name] = min(timeit.repeat(fn, number=calls, repeat=5, timer=time.process_time)) / calls * 1e6
print(json.dumps(out))
'''


def run(setting: str, calls: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", CHILD, setting, str(calls)], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per setting (default 5)")
    parser.add_argument("--calls", type=int, default=20000, help="calls per timed loop (default 20000)")
    opts = parser.parse_args()
    results = {"plain": [], "standin": []}
    for _ in range(opts.runs):  # alternate the settings so that a change of machine load hits both
        for setting in results:
            results[setting].append(run(setting, opts.calls))
    print(f"{'case':10} {'plain us/call':>22} {'stand-in us/call':>22} {'added us':>10}")
    for case in results["standin"][0]:
        stand = [r[case] for r in results["standin"]]
        cell = lambda xs: f"{statistics.median(xs):6.2f} ({min(xs):.2f}-{max(xs):.2f})"  # noqa: E731
        if case in results["plain"][0]:
            plain = [r[case] for r in results["plain"]]
            added = f"{statistics.median(stand) - statistics.median(plain):10.2f}"
            print(f"{case:10} {cell(plain):>22} {cell(stand):>22} {added}")
        else:
            print(f"{case:10} {'-':>22} {cell(stand):>22} {'':>10}")


if __name__ == "__main__":
    main()
