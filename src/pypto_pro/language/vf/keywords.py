"""Other keyword names of ``vf.<op>`` parameters: the spellings of the official API reference pages and
of the official ``Vf`` signatures where they differ from ours ({keyword: our parameter}).

The mask operand is ``preg`` on the reference pages and ``mask`` in the official signatures; every
``vf`` function with a ``preg`` parameter takes either.  Positional calls are unaffected.
"""
from __future__ import annotations

from typing import Dict

#: accepted by every vf function that has the parameter on the right and none named like the left.
GENERIC: Dict[str, str] = {"mask": "preg"}

#: per function.
BY_FUNCTION: Dict[str, Dict[str, str]] = {
    "prelu": {"src": "src0", "slope": "src1"},
    "addc": {"carry_in": "carry_src"},
    "subc": {"borrow_in": "borrow_src"},
    "shift_left": {"shift": "scalar"},
    "shift_right": {"shift": "scalar"},
    "leaky_relu": {"alpha": "scalar"},
    "full": {"scalar": "src", "scalar_or_src": "src"},
    "exp_sub": {"src": "src0", "max_val": "src1"},
    "select": {"src_true": "src0", "src_false": "src1"},
    "gather": {"indices": "index"},
    "load_align": {"src": "tile"},
    "store_align": {"dst": "tile"},
    "store_unalign": {"dst_ptr": "tile"},
    "store_unalign_post": {"dst_ptr": "tile"},
    "scatter": {"base_ptr": "tile"},
    "load": {"src_ptr": "tile"},
    "store": {"dst_ptr": "tile"},
    "load_unalign": {"src_ptr": "tile", "ureg": "align_reg"},
    "load_unalign_pre": {"src_ptr": "tile", "ureg": "align_reg"},
}


def aliases_for(name: str, params) -> Dict[str, str]:
    """{keyword: parameter} that ``vf.<name>`` (parameter names ``params``) accepts besides its own names."""
    found = {k: v for k, v in GENERIC.items() if v in params and k not in params}
    found.update({k: v for k, v in BY_FUNCTION.get(name, {}).items() if v in params and k not in params})
    return found
