"""Write tests/durations.json (seconds per test module, read by tests/ordering.py) from junit reports.

    python -m pytest -n 2 tests --junitxml=/tmp/run.xml ...      # a whole run (plus the interpreter pass)
    python tools/test_durations.py /tmp/run.xml [/tmp/run2.xml ...]

Times of the same module in several reports are added (the interpreter pass of tests/pro runs on the same
workers).  Only the order of the numbers matters, so a run on a loaded machine is good enough.
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "durations.json"


def module_of(classname: str) -> str:
    """``tests.pro.test_x`` or ``tests.pro.test_x.TestClass`` -> ``tests/pro/test_x.py``."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = "/".join(parts[:n]) + ".py"
        if (ROOT / path).is_file():
            return path
    return "/".join(parts) + ".py"


def per_module(reports: List[str]) -> Dict[str, float]:
    seconds: Dict[str, float] = defaultdict(float)
    for report in reports:
        for case in ET.parse(report).getroot().iter("testcase"):
            seconds[module_of(case.get("classname", ""))] += float(case.get("time") or 0)
    return {k: round(v, 1) for k, v in sorted(seconds.items())}


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    OUT.write_text(json.dumps(per_module(argv), indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
