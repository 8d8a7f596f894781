"""``tvm-ffi-check``: the ABI conformance checker for third-party kernel libraries.

``tvm-ffi-check libfoo.so`` (or ``python -m tvm_ffi_check libfoo.so``)
loads the library under the reference runtime, in a worker process, and
checks every exported ``__tvm_ffi_<name>`` function against the rules of the
calling convention (:data:`tvm_ffi_ref.rules.RULES`): it generates arguments
with hypothesis from each function's ``__tvm_ffi__metadata_<name>`` type
schema (a sweep of value kinds without one), watches each call through the
reference runtime, and reports each broken rule with a minimal failing call.

Modules: :mod:`.runner` (the check: worker, hypothesis, findings),
:mod:`.probe` and :mod:`._worker` (what runs next to the kernel),
:mod:`.schema` (type schemas to strategies), :mod:`.values` (generated
argument values), :mod:`.report` (table, JSON, JUnit XML), :mod:`.examples`
(the shipped example libraries), :mod:`.cli` (the command line).
"""

from __future__ import annotations

from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """The ``tvm-ffi-check`` console script."""
    from .cli import main as cli_main

    return cli_main(argv)


def check_library(path, options=None, progress=None):
    """Checks a library; see :func:`tvm_ffi_check.runner.check_library`."""
    from .runner import check_library as run

    return run(path, options, progress)


__all__ = ["main", "check_library"]
