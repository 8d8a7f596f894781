"""Short flat lists and tuples of plain scalars: fast's shortcut agrees with the full walk.

tvm_ffi_fast converts a list or tuple of at most 16 exact ints (within int64), floats, bools
and Nones without the iterative level walk (nested.c); anything else in it (a big int, an int
subclass, a string, a nested list) sends the whole sequence through the walk. Each case here
is converted by fast and by the reference and the items read back, with their types, must be
the same, on both sides of the 16-item boundary and for every kind of item that disqualifies.
"""

from __future__ import annotations

import pytest

from subprocess_utils import run_python

CASES = r"""
class Int(int):
    pass

cases = [
    [], (), [1], [1, 2.5, True, False, None], (0, -1, 2**63 - 1, -2**63),
    list(range(16)), list(range(17)), tuple(float(i) / 3 for i in range(16)),
    [1, 2**63], [1, -2**63 - 1], [1, 2**200], [1, Int(7)], [1, "s"], [1, b"b"],
    [1, [2, 3]], (1, (2.0, None)), [True] * 16 + [None], [1, {"k": 2}],
]
for case in cases:
    got = api.convert(case)
    print(repr([(type(v).__name__, v) for v in got]), type(got).__name__, len(got))
"""


def _converted(module: str) -> str:
    return run_python(f"import {module} as api\n" + CASES, timeout=120)


def test_flat_sequences_convert_as_the_reference_does():
    """fast and ref give the same items, types and lengths for every case."""
    fast, ref = _converted("tvm_ffi_fast"), _converted("tvm_ffi_ref")
    assert fast.count("\n") >= 18
    assert fast == ref


def test_flat_list_keeps_scalar_types():
    """bool stays bool, float stays float and None stays None through the shortcut."""
    out = run_python("import tvm_ffi_fast as api\n"
                     "print([type(v).__name__ for v in api.convert([1, 1.0, True, None])])",
                     timeout=120)
    assert out.strip() == "['int', 'float', 'bool', 'NoneType']"
