"""The numpy reference interpreter: the meaning of every tile program."""
from .executor import Interpreter, run_kernel

#: blocks of an SPMD launch whose size the caller leaves to the backend: the interpreter runs cores one
#: after another, so more blocks only add per-core setup; two still exercise the distribution and sync_all
LAUNCH_BLOCKS = 2


def launch_blocks(arch, work: int) -> int:
    """Blocks to launch an SPMD kernel with when the caller does not choose (see :mod:`pypto_pro.backends`)."""
    return LAUNCH_BLOCKS


def run(kernel, tensors, scalars, block_dim, *, jit=None):
    """Backend entry point (see :mod:`pypto_pro.backends`)."""
    run_kernel(kernel, tensors, scalars, block_dim)
    return None


__all__ = ["Interpreter", "LAUNCH_BLOCKS", "launch_blocks", "run_kernel", "run"]
