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


def test_pairwise_keeps_every_two_values_together():
    modes, pads, dtypes = ["NORMAL", "EXPAND", "INPLACE"], ["zero", "max", "min"], ["FP32", "FP16", "INT8", "INT32"]
    cases = []
    for m, p, d in itertools.product(modes, pads, dtypes):
        values = [("dtype", d), ("mode", m), ("pad", p)]
        cases.append(tuple(values + [(a, b) for i, a in enumerate(values) for b in values[i + 1:]]))
    chosen = covering_subset(cases)
    pairs = {(a, b) for i in chosen for a, b in itertools.combinations(cases[i][:3], 2)}
    assert len(pairs) == 3 * 4 + 3 * 4 + 3 * 3 and len(chosen) < len(cases)
