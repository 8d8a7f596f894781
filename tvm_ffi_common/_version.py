"""Versions: this project's own, and the upstream release whose ABI and Python API it matches.

``tvm_ffi_ref.__version__`` and ``tvm_ffi_fast.__version__`` (so ``tvm_ffi.__version__``
under the drop-in) report :data:`UPSTREAM_VERSION`, as code written for upstream checks
its version (a minimum version, a cache key); the project's own version is
``__impl_version__`` there, and ``__version__`` here (the ``tvm-ffi-abi`` distribution's).
The ABI version is yet another number: ``abi_version()``, from the headers.
"""

#: This project's version (the ``tvm-ffi-abi`` distribution).
__version__ = "0.1.0"

#: The ``apache-tvm-ffi`` release whose ABI and Python API this project implements.
UPSTREAM_VERSION = "0.1.15.post2"
