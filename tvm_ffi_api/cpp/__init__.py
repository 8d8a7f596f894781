"""Upstream's ``tvm_ffi.cpp``: build C, C++ and CUDA sources into TVM FFI modules.

* :func:`load_inline` / :func:`build_inline`: source strings in, a Module
  (or the library's path) out, with the named functions exported;
* :func:`load` / :func:`build`: the same for source files;
* :func:`to_cpp_dtype`: the C++ element type of a dtype.

Builds are cached by content under ``$TVM_FFI_CACHE_DIR`` and redone only when
an input changed; the libraries link against, and run on, this package's
runtime. See :mod:`.extension` for the details.
"""

from .dtype import to_cpp_dtype
from .extension import build, build_inline, load, load_inline

__all__ = ["build", "build_inline", "load", "load_inline", "to_cpp_dtype"]
