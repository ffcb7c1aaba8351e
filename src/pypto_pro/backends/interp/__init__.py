"""The numpy reference interpreter: the meaning of every tile program."""
from .executor import Interpreter, run_kernel


def run(kernel, tensors, scalars, block_dim, *, jit=None):
    """Backend entry point (see :mod:`pypto_pro.backends`)."""
    run_kernel(kernel, tensors, scalars, block_dim)
    return None


__all__ = ["Interpreter", "run_kernel", "run"]
