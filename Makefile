# Two entry points on a fresh machine: `make demo` and `make test`.  Each creates its own venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test venv clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build
	$(PIP) install --quiet "torch==2.13.0"
	$(PIP) install --quiet -e ".[test,plot]"
	# optional: the cross-host transport of pypto.distributed (MPI one-sided; docs/distributed.md).  Pinned:
	# MPICH 5.0.x wheels refuse connect/accept between singleton processes, 4.3.2 accepts it
	$(PIP) install --quiet "mpi4py==4.1.2" "mpich==4.3.2"
	# once per install: the cpu backend's runtime library, precompiled tile header, ops library and C launcher
	# (per-user cache)
	$(PY) -m pypto_pro.backends.cpu
	touch $@

venv: $(VENV)/.installed

demo: venv
	$(PY) examples/run_all.py

# The whole suite runs on the default backend (the compiled cpu backend where a C++ compiler exists);
# the tile-level suite runs a second time on the numpy reference interpreter, the oracle.
# Compiled kernels are kept in build/test-cache (content-addressed, see tests/conftest.py): the first run
# compiles every distinct kernel once, later runs only what changed.  `make clean` empties it.  Kernels
# compile from the precompiled tile header that `make venv` builds with the runtime library (per-user cache).
# Op x dtype matrices (marker cpu_sample) run whole on the interpreter pass and as a covering cross-section
# on cpu (tests/cpu_sampling.py); PYPTO_FULL_MATRIX=1 runs them whole on cpu as well.  Tests with a `backend`
# parameter are every_backend (not rerun by the interpreter pass).  Kernels compile at -O0 (about half the
# compile time of -O1, the same results; tests/sim at -O1), tests/cpu at the users' -O3;
# PYPTO_KERNEL_OPT=-O3 make test compiles everything at -O3.  See docs/testing.md.
test: venv
	$(PY) -m pytest -q -n 2 --dist loadgroup tests
	PYPTO_BACKEND=interp $(PY) -m pytest -q -n 2 -m "not every_backend" tests/pro

clean:
	rm -rf $(VENV) build .pytest_cache
