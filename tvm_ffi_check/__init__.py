"""``tvm-ffi-check``: the ABI conformance checker for third-party kernel libraries.

``tvm-ffi-check libfoo.so`` (or ``python -m tvm_ffi_check libfoo.so``)
loads the library under the reference runtime, in a worker process, and
checks every function it offers -- exported ``__tvm_ffi_<name>`` symbols, and
the global functions and object-type methods it registers while loading --
against the rules of the calling convention (:data:`tvm_ffi_ref.rules.RULES`).
It generates arguments with hypothesis from each function's type schema (its
``__tvm_ffi__metadata_<name>``, or the schema registered with it), or from
the signature its errors name when it has none; hands tensors over against
guard pages; watches each call through the reference runtime; and reports
each broken rule with a minimal failing call, grouped by root cause, and
each function too few calls reached as *unverified*.

Modules: :mod:`.runner` (the library's check), :mod:`.function_check` (one
function's), :mod:`.targets` (what a library offers), :mod:`.discover`
(signatures from error text), :mod:`.schema` (type schemas to strategies),
:mod:`.objects` (arguments of the library's own types), :mod:`.pool` (objects
the library's calls returned, reused as arguments), :mod:`.values`
(generated argument values), :mod:`.result_schema` (results against the
declared return type), :mod:`.worker_client`, :mod:`._worker`,
:mod:`.probe`, :mod:`.repeat`, :mod:`.guard` and :mod:`.deadline` (the
worker process and what runs next to the kernel), :mod:`.results` and
:mod:`.report` (findings; table, JSON, JUnit XML), :mod:`.root_causes`
(findings grouped by cause), :mod:`.hints` (the advice for unverified
functions), :mod:`.examples` (the
shipped example libraries), :mod:`.cli` (the command line).
"""

from __future__ import annotations

from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """The ``tvm-ffi-check`` console script."""
    from tvm_ffi_common import extras

    extras.require("tvm-ffi-check")
    from .cli import main as cli_main

    return cli_main(argv)


def check_library(path, options=None, progress=None):
    """Checks a library; see :func:`tvm_ffi_check.runner.check_library`."""
    from .runner import check_library as run

    return run(path, options, progress)


__all__ = ["main", "check_library"]
