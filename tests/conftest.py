"""Session-wide settings shared by every test directory.

Compiled kernels go to ONE persistent build cache for the whole session and for later runs:
``build/test-cache`` at the repository root, unless ``$PYPTO_BUILD_DIR`` is already set.  Its entries are
content-addressed (src/pypto_pro/runtime/cache.py: the key covers the generated C++ source, the compiler,
its flags and the host ISA, the runtime/header sources, the package and codegen versions), so sharing them
between tests, between xdist workers (builders of one entry serialise on a file lock) and between runs is
safe: a kernel compiled identically by many tests is built once, and a warm run compiles only what changed.
``make clean`` removes it.  Tests that check the cache itself point ``$PYPTO_BUILD_DIR`` at their own
``tmp_path`` with monkeypatch.

Kernels compile at ``-O0`` (``$PYPTO_KERNEL_OPT``, unless already set): the same results as the users'
``-O3`` from about half the compile time of -O1 (a third of -O3's), which is most of the suite's time; the
suite's data is small, so the slower code costs next to nothing.  Tests marked ``shipped_opt`` (tests/cpu:
the bit-for-bit differential and fusion fuzzers, the vectorised paths, the casts) compile at the users'
level, so the shipped configuration stays covered; a test marked ``kernel_opt(level)`` at the level it
names (tests/sim at -O1: the simulator's compiled trace programs run whole launches; the op-emission
matrices of tests/cpu/test_extra_ops.py at the suite's level).  ``PYPTO_KERNEL_OPT=-O3`` runs the whole
suite at the users' level.

Every test starts from random state seeded by its own id (numpy's, torch's and ``random``'s global
generators): its random inputs are the same on every run and every xdist worker, so a tolerance that a
rare draw would exceed fails deterministically, where it can be looked at, not once in a while in CI.
"""
import os
import random
import sys
import zlib
from pathlib import Path

import pytest

from cpu_sampling import MARK as CPU_SAMPLE, deselect_cpu_cross_section
from ordering import longest_modules_first
from pypto_pro.backends.cpu.prebuilt import OPT_ENV

TEST_BUILD_CACHE = Path(__file__).resolve().parent.parent / "build" / "test-cache"

#: The kernel -O level of the suite (docs/testing.md, "Optimisation level"); SHIPPED_OPT tests use the users',
#: KERNEL_OPT tests the level they name (big data, where -O0 code would run longer than it compiles).
TEST_KERNEL_OPT = "-O0"
SHIPPED_OPT = "shipped_opt"
KERNEL_OPT = "kernel_opt"


def pytest_configure(config):
    config.addinivalue_line("markers", f"{CPU_SAMPLE}: a parametrized matrix that runs whole on the interpreter and "
                                       "as a covering cross-section on cpu (tests/cpu_sampling.py)")
    config.addinivalue_line("markers", f"{SHIPPED_OPT}: compile this test's kernels at the users' -O level, "
                                       f"not the suite's (${OPT_ENV}, tests/conftest.py)")
    config.addinivalue_line("markers", f"{KERNEL_OPT}(level): compile this test's kernels at ``level`` (e.g. \"-O1\"), "
                                       f"before {SHIPPED_OPT}, unless ${OPT_ENV} was set from outside")
    if "PYPTO_BUILD_DIR" not in os.environ:
        os.environ["PYPTO_BUILD_DIR"] = str(TEST_BUILD_CACHE)
        config._pypto_own_build_dir = True
    if OPT_ENV not in os.environ:
        os.environ[OPT_ENV] = TEST_KERNEL_OPT
        config._pypto_own_kernel_opt = True
    config._pypto_kernel_opt = os.environ[OPT_ENV]
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        _prebuild_for_suite_level()


def _prebuild_for_suite_level() -> None:
    """The precompiled tile header of the suite's level (``make venv`` builds the users' level): once per
    install, before the workers start, so that no worker compiles its first kernels without it."""
    from pypto_pro.backends.cpu import prebuilt
    from pypto_pro.backends.cpu.toolchain import find_toolchain

    tc = find_toolchain()
    if tc is not None and prebuilt.missing(tc):
        prebuilt.prebuild(tc)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Each test's -O level, set before its fixtures (module-scoped ones too) build anything."""
    level = item.config._pypto_kernel_opt
    own = item.get_closest_marker(KERNEL_OPT)
    if own is not None and level == TEST_KERNEL_OPT:  # (a level set from outside applies to every test)
        os.environ[OPT_ENV] = own.args[0]
        if own.args[0] != level:
            _pch_for(own.args[0])
    elif item.get_closest_marker(SHIPPED_OPT) is not None:
        os.environ.pop(OPT_ENV, None)
    else:
        os.environ[OPT_ENV] = level


_PCH_LEVELS = set()


def _pch_for(level: str) -> None:
    """The precompiled tile header of a ``kernel_opt`` level, built by the first test of this process that
    asks for it (builders serialise on the cache's lock): without it every kernel of the level would parse
    the whole header."""
    if level in _PCH_LEVELS:
        return
    _PCH_LEVELS.add(level)
    from pypto_pro.backends.cpu import prebuilt
    from pypto_pro.backends.cpu.toolchain import find_toolchain

    tc = find_toolchain()
    if tc is not None:
        prebuilt.build_pch(tc, level)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    mark_backend_parametrized(items)
    deselect_cpu_cross_section(config, items)
    longest_modules_first(config, items)


def mark_backend_parametrized(items) -> None:
    """A test with a ``backend`` parameter picks its backends itself: mark it ``every_backend``, so that the
    interpreter pass of `make test` (``-m "not every_backend"``) does not run its three cases again.  (Runs
    before ``-m`` deselects.)"""
    for item in items:
        if "backend" in getattr(getattr(item, "callspec", None), "params", {}) \
                and item.get_closest_marker("every_backend") is None:
            item.add_marker("every_backend")


def pytest_unconfigure(config):
    if getattr(config, "_pypto_own_build_dir", False):
        os.environ.pop("PYPTO_BUILD_DIR", None)
    if getattr(config, "_pypto_own_kernel_opt", False):
        os.environ.pop(OPT_ENV, None)


@pytest.fixture(autouse=True)
def _seeded_random_state(request):
    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    import numpy as np

    np.random.seed(seed)
    torch = sys.modules.get("torch")  # seeded only where a test module uses it (never imported here)
    if torch is not None:
        torch.manual_seed(seed)


@pytest.fixture(scope="module")
def private_build_dir():
    """The build dir of the session (kept for modules that still ask for it by name): per-module dirs
    made every module recompile kernels and the runtime library that other modules had already built."""
    yield Path(os.environ["PYPTO_BUILD_DIR"])
