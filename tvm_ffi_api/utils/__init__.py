"""Upstream's ``tvm_ffi.utils``: helpers for packages built on TVM FFI.

* :mod:`.lockfile`: :class:`FileLock`, an advisory lock between processes;
* :mod:`.kwargs_wrapper`: keyword-argument front doors for positional-only
  functions (such as TVM FFI functions);
* :mod:`.embed_cubin`: CUDA binaries embedded into object files;
* :mod:`.unpack_dataclass`: :func:`~.unpack_dataclass.unpack_dataclass_to_tuple`,
  standard-library dataclasses to nested tuples, fast.
"""

from . import kwargs_wrapper
from .lockfile import FileLock

__all__ = ["FileLock", "kwargs_wrapper"]
