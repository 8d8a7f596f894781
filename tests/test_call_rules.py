"""A front end reports a kernel's broken calling-convention rule instead of crashing."""

import os

import pytest

from subprocess_utils import run_python

BROKEN = os.path.join(os.path.dirname(__file__), "kernels", "broken_rules.c")

CASES = {
    "ok_int": "7",
    "fail_without_error": "ABIViolation error-raised",
    "unknown_status": "ABIViolation status",
    "raw_str_result": "ABIViolation result-owned",
    "long_small_str": "ABIViolation small-str-length",
    "unknown_pod_type": "ABIViolation result-type",
    "unregistered_object": "ABIViolation result-type",
    "mislabeled_object": "ABIViolation object-header",
}


@pytest.mark.parametrize("frontend", ["tvm_ffi_ref", "tvm_ffi_fast"])
def test_each_broken_rule_raises_a_named_violation(kernels, frontend):
    with open(BROKEN) as f:
        path = kernels.build("broken_rules", f.read(), language="c")
    out = run_python(f"""
    import ctypes
    import {frontend} as api
    lib = ctypes.CDLL({path!r})
    for name in {list(CASES)!r}:
        f = api.Function.__from_extern_c__(
            ctypes.cast(getattr(lib, "__tvm_ffi_" + name), ctypes.c_void_p).value,
            keep_alive_object=lib)
        try:
            print(name, f())
        except RuntimeError as e:
            print(name, type(e).__name__, e.rule)
    """)
    assert dict(line.split(" ", 1) for line in out.splitlines()) == CASES
