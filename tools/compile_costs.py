"""Where a test run's C++ compile time goes: per test module, the compiles, their compiler CPU seconds and
the generated source they read, from the log that ``PYPTO_COMPILE_LOG=<file>`` makes the toolchain write
(one JSON line per compile; backends/cpu/toolchain.py).  Given two logs (e.g. before and after a change,
both from cold build directories), the modules side by side.

Usage: python tools/compile_costs.py LOG [LOG2] [--top N]
"""
import argparse
import collections
import json
from typing import Dict, List


def per_module(path: str) -> Dict[str, List[float]]:
    """module -> [compiles, CPU seconds, source bytes]."""
    out: Dict[str, List[float]] = collections.defaultdict(lambda: [0, 0.0, 0])
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            row = out[rec["test"].split("::")[0] or "(outside a test)"]
            row[0] += 1
            row[1] += rec["cpu"]
            row[2] += rec["bytes"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    tables = [per_module(p) for p in args.logs[:2]]
    first = tables[0]
    modules = sorted(set().union(*tables), key=lambda m: -max(t.get(m, [0, 0.0])[1] for t in tables))
    for i, t in enumerate(tables):
        n, cpu, size = (sum(r[k] for r in t.values()) for k in range(3))
        print(f"log {i + 1}: {n} compiles, {cpu:.1f} CPU-s, {size / 1e6:.2f} MB of C++")
    for m in modules[:args.top]:
        cells = []
        for t in tables:
            n, cpu, size = t.get(m, (0, 0.0, 0))
            cells.append(f"{cpu:7.1f} s {n:4d} x {size / 1e6:5.2f} MB")
        ratio = ""
        if len(tables) == 2 and first.get(m, [0, 0.0])[1] > 0:
            ratio = f"  {tables[1].get(m, [0, 0.0])[1] / first[m][1]:5.2f}"
        print(f"{' | '.join(cells)}{ratio}  {m}")


if __name__ == "__main__":
    main()
