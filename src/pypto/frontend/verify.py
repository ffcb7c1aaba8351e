"""``verify_options={"enable_pass_verify": True}``: run the recorded tensor graph on numpy and the
lowered program on the interpreter, and compare every written tensor within ``pass_verify_error_tol``.

``pypto.set_verify_golden_data(in_out_tensors=None, goldens=None)`` adds the official "tensor graph
check": ``goldens`` holds one entry per kernel parameter (None: not compared); under pass verify the
tensor-graph result of each such parameter is compared with its golden within the tolerance.  As
officially, the outcome is a log, not an exception: one line per parameter (``PASS``, ``FAILED`` or
``NO_COMPARE``) at INFO (ERROR for FAILED) on the ``pypto`` logger, also written to
``interpreter.log`` in the save directory when ``pass_verify_save_tensor`` is on, and kept as
``kernel.last_verify`` (a list of ``(parameter name, outcome)``).
"""
from __future__ import annotations

import logging
import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from pypto_pro import backends
from pypto_pro.errors import KernelRuntimeError, KernelValueError
from pypto_pro.runtime.args import as_numpy, is_torch_tensor

from .. import state
from ..reference import run_graph

_LOG = logging.getLogger("pypto")
_GOLDENS: List[Optional[np.ndarray]] = state.GOLDENS  # process-wide: state.py


def set_verify_golden_data(in_out_tensors: Optional[List[Any]] = None, goldens: Optional[List[Any]] = None) -> None:
    """Golden outputs for the tensor-graph check of the next pass-verified runs (see the module doc).
    ``in_out_tensors`` is the graph API's argument list; jit kernels take their arguments from the call,
    so it is only checked.  Golden tensors must be on the host (torch CPU tensors, numpy arrays or
    ``pypto.from_torch`` results)."""
    from ..tensor import Tensor

    for what, values in (("in_out_tensors", in_out_tensors), ("goldens", goldens)):
        if values is not None and not isinstance(values, (list, tuple)):
            raise KernelValueError(f"set_verify_golden_data: {what} must be a list, got {type(values).__name__}")
    kept: List[Optional[np.ndarray]] = []
    for i, g in enumerate(goldens or ()):
        if g is None:
            kept.append(None)
            continue
        if isinstance(g, Tensor) and g.data is not None:
            g = g.data
        if is_torch_tensor(g) and not g.is_cpu:
            raise KernelValueError(f"set_verify_golden_data: goldens[{i}] is on device '{g.device}'; pass a CPU "
                                   f"tensor (.cpu())")
        kept.append(np.array(as_numpy(g, f"goldens[{i}]"), copy=True))
    _GOLDENS[:] = kept


def _golden_check(name: str, index: int, got: np.ndarray, rtol: float, atol: float) -> str:
    golden = _GOLDENS[index] if index < len(_GOLDENS) else None
    if golden is None:
        return "NO_COMPARE"
    if golden.shape != got.shape:
        return "FAILED"
    ok = np.isclose(got.astype(np.float64), golden.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    return "PASS" if ok.all() else "FAILED"


def verify_run(jit, entry, user: Dict[int, np.ndarray], dyn: Dict[int, int], backend: str, vopts: Dict[str, Any]):
    """Reference first (on copies), then the lowered program on the reference backend (the interpreter,
    ``backends.REFERENCE``), then the compare."""
    inputs = {i: a.copy() for i, a in user.items()}
    expected = run_graph(entry.graph, inputs, dyn, getattr(jit, "arch_request", None))
    report = entry.program.run(user, dyn, backends.REFERENCE)
    tol = vopts["pass_verify_error_tol"]
    rtol, atol = (tol, tol) if isinstance(tol, (int, float)) else tuple(tol)
    root = vopts["pass_verify_save_tensor_dir"] or os.path.join("build", f"{jit.name}__verify")
    outcomes: List[Tuple[str, str]] = []
    for buf in entry.graph.params:
        outcome = _golden_check(buf.name, buf.index, expected[buf.index], rtol, atol)
        outcomes.append((buf.name, outcome))
        _LOG.log(logging.ERROR if outcome == "FAILED" else logging.INFO,
                 "[%s] tensor_graph verify of parameter %d (%s): %s", jit.name, buf.index, buf.name, outcome)
    jit.last_verify = outcomes
    if vopts["pass_verify_save_tensor"]:
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "interpreter.log"), "a") as log:
            for i, (name, outcome) in enumerate(outcomes):
                log.write(f"[{'ERROR' if outcome == 'FAILED' else 'EVENT'}] {jit.name} tensor_graph verify of "
                          f"parameter {i} ({name}) result {outcome}\n")
    for buf in entry.graph.params:
        got, want = user[buf.index], expected[buf.index]
        if vopts["pass_verify_save_tensor"]:
            np.save(os.path.join(root, f"{buf.name}_golden.npy"), want.astype(np.float64))
            np.save(os.path.join(root, f"{buf.name}_lowered.npy"), got.astype(np.float64))
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise KernelRuntimeError(f"pass verify: tensor '{buf.name}' differs from the tensor-graph reference at "
                                     f"{list(idx)}: lowered {g[idx]!r} vs reference {w[idx]!r} "
                                     f"({int(bad.sum())} elements outside rtol={rtol}, atol={atol})", kernel=jit.name)
    return report
