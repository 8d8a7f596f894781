"""examples/kernels/dtype_kernels.c: one kernel for float32, float16 and int32, any strides.

Called from NumPy and torch under each front end (each in its own process), on
compact tensors and on views that are not: transposed, sliced with a step,
reversed (NumPy's negative strides), offset into their buffer; every result is
compared with NumPy's or torch's own arithmetic, float16 rounding included.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHECKS = r"""
import numpy as np, torch
import {frontend} as tvm_ffi
lib = tvm_ffi.load_module({library!r})

def views(base):
    # compact, transposed, stepped, reversed (NumPy only), offset into the buffer
    yield "compact", base
    yield "transposed", base.T
    yield "stepped", base[::2, 1::3]
    yield "offset", base[1:, 2:]
    if isinstance(base, np.ndarray):
        yield "reversed", base[::-1, ::-2]

checked = 0
for make, name in ((np.asarray, "numpy"), (torch.from_numpy, "torch")):
    for dtype in ("float32", "float16", "int32"):
        data = (np.arange(48) - 20).reshape(6, 8)
        data = data.astype(dtype) / (4 if dtype != "int32" else 1)
        data = data.astype(dtype)
        for label, view in views(make(np.array(data))):
            array = np.asarray(view)
            total = lib.total(view)
            expected = float(array.astype(np.float64).sum()) if dtype != "int32" else int(array.sum())
            assert total == expected and type(total) is type(expected), (name, dtype, label, total)
            factor = 3 if dtype == "int32" else -2.5
            out_base = make(np.zeros((8, 8), dtype=dtype).T.copy().T)  # column-major
            out = out_base[: view.shape[0], : view.shape[1]]
            assert lib.scale_into(view, out, factor) is None
            want = (array.astype(np.float32) * np.float32(factor)).astype(dtype) \
                if dtype != "int32" else (array * np.int32(factor)).astype(dtype)
            assert np.array_equal(np.asarray(out), want), (name, dtype, label)
            checked += 1

# float16 rounding: ties to even, subnormals, overflow to inf, NaN kept
halves = np.array([1.0009765625, 6.1e-5, 1e-7, 60000.0, -0.0, np.inf, np.nan], dtype=np.float16)
out = np.empty_like(halves)
lib.scale_into(halves, out, 1.5)
want = (halves.astype(np.float32) * np.float32(1.5)).astype(np.float16)
assert np.array_equal(out, want, equal_nan=True), (out, want)
# what is refused, with the argument named
for bad, message in ((lambda: lib.total(np.zeros(3, np.float64)), "x must be float32, float16 or int32"),
                     (lambda: lib.scale_into(np.zeros(3, np.int32), np.zeros(3, np.int32), 1.5),
                      "k must be an int for an int32 tensor"),
                     (lambda: lib.scale_into(np.zeros(3, np.float32), np.zeros(3, np.float16), 1.0),
                      "out must have x's dtype")):
    try:
        bad()
        raise AssertionError(message)
    except TypeError as error:
        assert str(error) == message, error
print("checked", checked)
"""


@pytest.fixture(scope="module")
def library(kernels):
    with open(os.path.join(ROOT, "examples", "kernels", "dtype_kernels.c"), encoding="utf-8") as f:
        return kernels.build("dtype_kernels", f.read(), language="c")


@pytest.mark.parametrize("frontend", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_dtypes_and_strides_from_numpy_and_torch(library, frontend):
    script = CHECKS.format(frontend=frontend, library=library)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # 2 frameworks x 3 dtypes x views (5 for NumPy, 4 for torch)
    assert done.stdout.split() == ["checked", str(3 * 5 + 3 * 4)]
