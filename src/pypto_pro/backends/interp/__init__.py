"""The numpy reference interpreter: the meaning of every tile program."""
from .executor import Interpreter, run_kernel

__all__ = ["Interpreter", "run_kernel"]
