"""The cpu cross-section of the cpu_sample matrices (tests/cpu_sampling.py) covers what it promises."""
import itertools

from cpu_sampling import covering_subset


def test_every_feature_is_covered_and_the_choice_is_deterministic():
    ops, dtypes = ["add", "sub", "mul", "div"], ["INT8", "INT32", "FP16", "FP32", "BF16"]
    cases = [(("dtype", d), ("op", o)) for o, d in itertools.product(ops, dtypes)]
    chosen = covering_subset(cases)
    assert chosen == covering_subset(cases)
    covered = {f for i in chosen for f in cases[i]}
    assert covered == {f for case in cases for f in case}
    assert len(chosen) < len(cases)


def test_a_single_parameter_keeps_every_case():
    cases = [(("case", str(i)),) for i in range(6)]
    assert covering_subset(cases) == list(range(6))
