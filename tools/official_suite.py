"""Run an official PyPTO system-test tree unchanged on the CPU and report pass rates per directory.

    python tools/official_suite.py /path/to/pypto-checkout [--level tile|tensor|all] [--backend cpu]
                                   [-n 2] [--timeout 120] [--junit out.xml] [-- extra pytest args]

The checkout is a copy of the official repository (e.g. the one ``fetch`` brings); nothing of it is
copied here.  Tests run under the ``torch_npu`` stand-in (``pytest -p pypto_pro.npu.plugin``) with
``PYPTO_BACKEND`` set; the tile level is ``python/tests/st/pypto_pro``, the tensor level every other
directory of ``python/tests/st``.  The summary counts passed / failed / errors / skipped per
directory (two levels below the level's root) and lists the most common first lines of failures.
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

TILE_ROOT = "python/tests/st/pypto_pro"
ST_ROOT = "python/tests/st"


def _targets(checkout: str, level: str) -> list:
    if level == "tile":
        return [TILE_ROOT]
    tensor = sorted(os.path.join(ST_ROOT, name) for name in os.listdir(os.path.join(checkout, ST_ROOT))
                    if name not in ("pypto_pro", "__pycache__", "conftest.py", "__init__.py"))
    return tensor if level == "tensor" else [TILE_ROOT] + tensor


def _group(classname: str, file: str, depth: int) -> str:
    path = file or classname.replace(".", "/")
    parts = path.split("/")
    if "st" in parts:
        parts = parts[parts.index("st") + 1:]
    if parts and parts[0] == "pypto_pro":
        parts = parts[1:]
        if parts and parts[0] == "frontend":
            parts = parts[1:]
    return "/".join(parts[:depth]) if len(parts) > depth else "/".join(parts[:-1]) or parts[0]


def _cases(junits):
    for junit in junits:
        yield from ET.parse(junit).getroot().iter("testcase")


def summarise(junit, depth: int = 1) -> str:
    """Pass counts per directory of one junit file, or of several (a list: e.g. one run per directory)."""
    counts = collections.defaultdict(collections.Counter)
    reasons = collections.Counter()
    for case in _cases([junit] if isinstance(junit, str) else junit):
        group = _group(case.get("classname", ""), case.get("file", ""), depth)
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = child.tag
                if child.tag != "skipped":
                    message = (child.get("message") or "").strip().splitlines()
                    reasons[(message[0] if message else child.tag)[:150]] += 1
        counts[group][outcome] += 1
    lines = [f"{'directory':48s} {'pass':>5s} {'fail':>5s} {'err':>5s} {'skip':>5s} {'rate':>6s}"]
    total = collections.Counter()
    for group in sorted(counts):
        c = counts[group]
        total.update(c)
        run = c["passed"] + c["failure"] + c["error"]
        lines.append(f"{group:48s} {c['passed']:5d} {c['failure']:5d} {c['error']:5d} {c['skipped']:5d} "
                     f"{(100.0 * c['passed'] / run if run else 0):5.1f}%")
    run = total["passed"] + total["failure"] + total["error"]
    lines.append(f"{'TOTAL':48s} {total['passed']:5d} {total['failure']:5d} {total['error']:5d} "
                 f"{total['skipped']:5d} {(100.0 * total['passed'] / run if run else 0):5.1f}%")
    lines.append("\nmost common failure messages:")
    lines += [f"{n:5d}  {text}" for text, n in reasons.most_common(40)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout")
    parser.add_argument("--level", choices=("tile", "tensor", "all"), default="all")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("-n", "--workers", default="2")
    parser.add_argument("--timeout", type=int, default=120, help="seconds per test")
    parser.add_argument("--junit", default="official_suite.xml")
    parser.add_argument("--depth", type=int, default=1, help="directory depth of the summary")
    parser.add_argument("--summary-only", action="store_true",
                        help="summarise existing junit files: --junit may be a glob (one file per directory run)")
    parser.add_argument("pytest_args", nargs="*")
    args, unknown = parser.parse_known_args(argv)  # pytest options (--ignore=..., -k ...) pass through
    args.pytest_args += unknown
    junit = os.path.abspath(args.junit)
    if args.summary_only:
        print(summarise(sorted(glob.glob(junit)), args.depth))
        return 0
    env = dict(os.environ, PYPTO_BACKEND=args.backend)
    command = [sys.executable, "-m", "pytest", "-p", "pypto_pro.npu.plugin", "-p", "no:cacheprovider",
               "-q", "--continue-on-collection-errors", f"--timeout={args.timeout}",
               f"--junitxml={junit}", "-o", "junit_family=xunit1"]
    if args.workers != "0":
        command += ["-n", args.workers]
    command += _targets(args.checkout, args.level) + args.pytest_args
    subprocess.run(command, cwd=args.checkout, env=env, stdout=subprocess.DEVNULL)
    print(summarise(junit, args.depth))
    return 0


if __name__ == "__main__":
    sys.exit(main())
