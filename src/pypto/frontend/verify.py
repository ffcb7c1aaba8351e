"""``verify_options={"enable_pass_verify": True}``: run the recorded tensor graph on numpy and the
lowered program on the interpreter, and compare every written tensor within ``pass_verify_error_tol``."""
from __future__ import annotations

import os
from typing import Any, Dict

import numpy as np

from pypto_pro.errors import KernelRuntimeError

from ..reference import run_graph


def verify_run(jit, entry, user: Dict[int, np.ndarray], dyn: Dict[int, int], backend: str, vopts: Dict[str, Any]):
    """Reference first (on copies), then the lowered program on the interpreter, then the compare."""
    inputs = {i: a.copy() for i, a in user.items()}
    expected = run_graph(entry.graph, inputs, dyn)
    report = entry.program.run(user, dyn, "interp")
    tol = vopts["pass_verify_error_tol"]
    rtol, atol = (tol, tol) if isinstance(tol, (int, float)) else tuple(tol)
    for buf in entry.graph.params:
        got, want = user[buf.index], expected[buf.index]
        if vopts["pass_verify_save_tensor"]:
            root = vopts["pass_verify_save_tensor_dir"] or os.path.join("build", f"{jit.name}__verify")
            os.makedirs(root, exist_ok=True)
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
