"""Upstream's console scripts, run on ours: ``tvm-ffi-abi-stubgen`` (upstream's ``tvm-ffi-stubgen``).

The script has a name of its own: ``tvm-ffi-stubgen`` is a file of upstream's package,
which production environments install beside ours, and ours must not replace it.

A script runs on the front end ``TVM_FFI_IMPL`` names (``fast`` when unset),
which also serves ``import tvm_ffi`` for everything the script loads (the
``--imports`` of the stub generator), so a package written for upstream's
``tvm_ffi`` is read on ours without a second runtime in the process.
"""

from __future__ import annotations

import importlib
import os
import sys

from . import dropin


def _front_end() -> str:
    value = os.environ.get(dropin.ENV_VAR, "").strip() or "fast"
    if value not in dropin.IMPLEMENTATIONS:
        sys.exit(f"{dropin.ENV_VAR}={value!r} is not one of {sorted(dropin.IMPLEMENTATIONS)}")
    return dropin.IMPLEMENTATIONS[value]


def stubgen() -> None:
    """``tvm-ffi-abi-stubgen``: upstream's stub generator (``<front end>.stub.cli``) on ours."""
    package = _front_end()
    dropin.install(package)
    sys.exit(importlib.import_module(f"{package}.stub.cli").__main__())
