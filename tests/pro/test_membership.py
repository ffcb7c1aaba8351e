"""``x in seq`` / ``x not in seq`` with runtime operands (docs/language.md, "Scalars"): a compile-time tuple or
list of scalars, or a ``pl.range`` / ``range`` with runtime bounds."""
import numpy as np
import pytest

import pypto_pro.language as pl

BACKENDS = ["interp", "cpu", "sim"]
pytestmark = pytest.mark.usefixtures("private_build_dir")
ODD = [1, 3, 5]


def memberships(out: pl.Tensor[[6, 12], pl.DT_INT64], n: int):
    with pl.section_vector():
        for i in pl.range(12):
            out[0, i] = 1 if i in (0, 4, 7) else 0
            out[1, i] = 1 if i not in ODD else 0
            out[2, i] = 1 if i in pl.range(2, n, 3) else 0
            out[3, i] = 1 if i in range(n, 0, -2) else 0
            out[4, i] = 1 if i not in range(n) else 0
            out[5, i] = 1 if 3 in (1, 2, 3) and i in [] else 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 9, 12])
def test_runtime_membership(backend, n):
    out = np.full((6, 12), -1, np.int64)
    pl.jit(backend=backend)(memberships)(out, n)
    rows = [[i in (0, 4, 7) for i in range(12)], [i not in ODD for i in range(12)],
            [i in range(2, n, 3) for i in range(12)], [i in range(n, 0, -2) for i in range(12)],
            [i not in range(n) for i in range(12)], [False] * 12]
    assert out.tolist() == [[int(v) for v in r] for r in rows]
