"""Shared check printer for the tensor-level examples."""
import numpy as np


def check(name: str, got, want, tol: float = 1e-4) -> bool:
    got = np.asarray(got.float() if hasattr(got, "float") else got, dtype=np.float64)
    want = np.asarray(want.float() if hasattr(want, "float") else want, dtype=np.float64)
    err = float(np.abs(got - want).max()) if got.size else 0.0
    ok = got.shape == want.shape and err <= tol
    print(f"{name}: max |err| = {err:.2g} -> {'PASSED' if ok else 'FAILED'}")
    return ok
