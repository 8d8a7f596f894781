"""What the conformance suite compares, and how hard it looks.

``FRONTENDS`` is the one place that lists the front ends held to upstream.
A listed front end that cannot be imported makes every test fail (never skip).

Example budgets: each property names its CI budget (``examples=``); the
``--thorough`` pytest option multiplies every budget by ``THOROUGH_FACTOR``.
"""

from __future__ import annotations

import os
import sys
from typing import List

#: Front ends compared with upstream, bit for bit: "ref", "fast" (its compiled core) and
#: "fast-cffi" (the same package on its cffi core, ``TVM_FFI_FAST_CORE=cffi``: the core PyPy
#: runs, held to upstream on CPython every run), or those listed by
#: ``CONFORMANCE_FRONTENDS=a,b``, such as "pypy-ref" and "pypy-fast": the same two run by the
#: PyPy ``TVM_FFI_PYPY`` names (.ci/run's PyPy job). Upstream, the oracle, runs on CPython.
FRONTENDS: List[str] = [name for name in os.environ.get("CONFORMANCE_FRONTENDS", "").split(",")
                        if name] or ["ref", "fast", "fast-cffi"]

#: Whether every worker can make torch tensors (torch has no PyPy build).
TORCH_IN_WORKERS = not any(name.startswith("pypy-") for name in FRONTENDS)

#: Each front end's package.
PACKAGES = {"ref": "tvm_ffi_ref", "fast": "tvm_ffi_fast", "fast-cffi": "tvm_ffi_fast",
            "pypy-ref": "tvm_ffi_ref", "pypy-fast": "tvm_ffi_fast"}

#: The core each ``tvm_ffi_fast`` front end must run on (``tvm_ffi_fast._CORE``): PyPy always
#: runs the cffi core.
FAST_CORES = {"fast": "compiled", "fast-cffi": "cffi", "pypy-fast": "cffi"}


def interpreter(frontend: str) -> str:
    """The Python that runs a worker: ``$TVM_FFI_PYPY`` for the "pypy-*" front ends; for
    upstream, ``$TVM_FFI_ORACLE_PYTHON`` when set (a CPython whose NumPy is PyPy's version, so
    that the arrays NumPy exports are the same bytes on both sides), else this one."""
    if frontend == ORACLE and os.environ.get("TVM_FFI_ORACLE_PYTHON"):
        return os.environ["TVM_FFI_ORACLE_PYTHON"]
    if not frontend.startswith("pypy-"):
        return sys.executable
    if not os.environ.get("TVM_FFI_PYPY"):
        raise RuntimeError(f"front end {frontend!r} needs TVM_FFI_PYPY: a PyPy interpreter "
                           "with this project installed")
    return os.environ["TVM_FFI_PYPY"]

#: The oracle, always run (in its own worker processes).
ORACLE = "upstream"

#: How many times more examples ``--thorough`` runs.
THOROUGH_FACTOR = 50

#: ``CONFORMANCE_EXAMPLE_SCALE=0.25``: a fraction of each property's CI budget (at least one
#: generated example; the explicit ``@example`` cases all run). .ci/run's PyPy job uses it:
#: every property still runs there, and CI keeps its time.
EXAMPLE_SCALE = float(os.environ.get("CONFORMANCE_EXAMPLE_SCALE", "1"))

#: Set by ``conftest.pytest_configure`` from the command line.
THOROUGH = False
