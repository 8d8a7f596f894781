"""The optional dependencies of the tools, and the one line that says how to get them.

The runtime (``tvm_ffi_common``, ``tvm_ffi_api``, ``tvm_ffi_ref``, ``tvm_ffi_fast``) needs
only cffi; NumPy and torch are used when a caller hands their arrays over. The tools
``tvm-ffi-check`` and ``tvm-ffi-explain`` generate and show NumPy values and (the checker)
draw calls with hypothesis: those come with ``pip install 'tvm-ffi-abi[check]'``.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Sequence

#: The distribution name, as pip knows it.
DISTRIBUTION = "tvm-ffi-abi"

#: The modules the ``[check]`` extra brings (pyproject.toml lists the same).
CHECK_MODULES = ("numpy", "hypothesis")


def missing(modules: Sequence[str]) -> list:
    """The names in ``modules`` that cannot be imported here (found without importing them)."""
    return [name for name in modules if importlib.util.find_spec(name) is None]


def require(tool: str, modules: Sequence[str] = CHECK_MODULES, extra: str = "check") -> None:
    """Exits with one line naming what to install when ``tool``'s extra is not installed."""
    absent = missing(modules)
    if absent:
        sys.exit(f"{tool} needs {' and '.join(absent)}, which a plain install leaves out: "
                 f"pip install '{DISTRIBUTION}[{extra}]'")
