"""``pypto.set_pass_config`` and friends: NPU pass switches, validated, recorded, read back, reset."""
import dataclasses
import logging

import pytest

import pypto

KEY = pypto.PassConfigKey.KEY_DUMP_GRAPH


def test_per_pass_value_then_default_then_fallback():
    assert pypto.get_pass_config("S", "P", KEY, True) is True  # nothing set: the caller's default
    pypto.set_pass_default_config(KEY, False)
    assert pypto.get_pass_config("S", "P", KEY, True) is False  # the pass default
    pypto.set_pass_config("S", "P", KEY, True)
    assert pypto.get_pass_config("S", "P", KEY, False) is True  # the pass's own value
    assert pypto.get_pass_config("S", "Other", KEY, True) is False
    assert pypto.get_pass_configs("S", "P").dumpGraph is True
    assert pypto.get_pass_configs("S", "Other") == pypto.PassConfigs()


def test_pass_configs_are_read_only():
    cfg = pypto.get_pass_configs("S", "P")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.dumpGraph = True


@pytest.mark.parametrize("call", [lambda: pypto.set_pass_config("S", "P", "KEY_DUMP_GRAPH", True),
                                  lambda: pypto.set_pass_config("S", "P", KEY, 1),
                                  lambda: pypto.get_pass_config("S", 3, KEY, False),
                                  lambda: pypto.get_pass_default_config(0, False),
                                  lambda: pypto.set_pass_default_config(KEY, "yes")],
                         ids=["key-str", "value-int", "identifier-int", "key-int", "value-str"])
def test_ill_typed_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_reset_options_forgets_the_switches(caplog):
    with caplog.at_level(logging.INFO, logger="pypto"):
        pypto.set_pass_default_config(KEY, True)
        pypto.set_pass_config("S", "P", KEY, True)
    assert pypto.get_pass_default_config(KEY, False) is True
    pypto.reset_options()
    assert pypto.get_pass_default_config(KEY, False) is False
    assert pypto.get_pass_config("S", "P", KEY, False) is False
