"""Run every example script and report; exits non-zero if any check fails (``make demo``)."""
import pathlib
import runpy
import sys
import time

HERE = pathlib.Path(__file__).parent


def main() -> int:
    failed = []
    for path in sorted(HERE.glob("*/[0-9]*.py")):
        print(f"== {path.relative_to(HERE)}")
        start = time.perf_counter()
        module = runpy.run_path(str(path), run_name="example")
        ok = module["main"]()
        print(f"   ({time.perf_counter() - start:.2f} s)")
        if not ok:
            failed.append(path.name)
    print("\nall examples PASSED" if not failed else f"\nFAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
