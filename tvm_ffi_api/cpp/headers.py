"""The header directories a build compiles against: ours, and upstream's C++ API.

This project ships the C ABI as C headers (``tvm/ffi/c_api.h``,
``tvm/ffi/extra/c_env_api.h``, ``dlpack/dlpack.h``): a C kernel needs nothing
else. Upstream's header-only C++ API (``tvm/ffi/function.h``, the
``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` macros, ``TensorView``, the containers) is
not ours to ship; a C++ kernel written against it compiles with the headers of
an installed ``apache-tvm-ffi``, found here on disk without importing that
package (importing it would load its runtime next to ours). Our directory
comes first, so the C declarations are ours; the C++ headers only add inline
code over that same C ABI, and the library links against our
``libtvm_ffi.so``.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import re
from typing import List, Optional, Tuple

from tvm_ffi_common import libinfo

#: The distribution whose headers C++ sources need, pinned to the ABI we implement.
UPSTREAM_DISTRIBUTION = "apache-tvm-ffi==0.1.15.post2"

#: A header only the C++ API has: its presence marks a usable include directory.
_CXX_MARKER = os.path.join("tvm", "ffi", "function.h")

_VERSION_LINE = re.compile(r"#define\s+TVM_FFI_VERSION_(MAJOR|MINOR)\s+(\d+)")


def our_include_paths() -> List[str]:
    """The directories holding this project's C headers (``-I`` for every build)."""
    return list(libinfo.include_paths())


@functools.lru_cache(maxsize=None)
def find_upstream_cxx_include() -> Optional[str]:
    """The ``include`` directory of an installed ``apache-tvm-ffi``, or None.

    Located through the import path (``PathFinder``, which sees the package
    on disk even while ``import tvm_ffi`` is redirected to ours), never
    imported. The directory must hold the C++ API (``tvm/ffi/function.h``).
    """
    spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        candidate = os.path.join(folder, "include")
        if os.path.isfile(os.path.join(candidate, _CXX_MARKER)):
            return os.path.abspath(candidate)
    return None


def _header_version(include_dir: str) -> Optional[Tuple[int, int]]:
    """``(major, minor)`` of the ``c_api.h`` under ``include_dir`` (None if unreadable)."""
    try:
        with open(os.path.join(include_dir, "tvm", "ffi", "c_api.h"), encoding="utf-8") as f:
            found = dict(m.groups() for m in _VERSION_LINE.finditer(f.read()))
        return int(found["MAJOR"]), int(found["MINOR"])
    except (OSError, KeyError, ValueError):
        return None


def missing_cxx_api_message(why: str) -> str:
    """The error text for a C++ build that needs upstream's C++ headers and has none."""
    return (f"{why} needs the TVM FFI C++ API headers (tvm/ffi/function.h, "
            "TVM_FFI_DLL_EXPORT_TYPED_FUNC, TensorView, ...), which this package does not "
            f"ship. Install them with `pip install {UPSTREAM_DISTRIBUTION}`: only its "
            "header files are used, the library still links against and runs on this "
            "package's libtvm_ffi.so.")


def require_upstream_cxx_include(why: str) -> str:
    """:func:`find_upstream_cxx_include`, or ``RuntimeError`` saying what to install.

    Also refuses headers of another ABI major/minor version than ours: their
    inline code would assume layouts this runtime does not have.
    """
    found = find_upstream_cxx_include()
    if found is None:
        raise RuntimeError(missing_cxx_api_message(why))
    theirs, ours = _header_version(found), _header_version(our_include_paths()[0])
    if theirs is not None and ours is not None and theirs != ours:
        raise RuntimeError(
            f"the TVM FFI C++ headers in {found} are for ABI {theirs[0]}.{theirs[1]}, this "
            f"package implements {ours[0]}.{ours[1]}; install `{UPSTREAM_DISTRIBUTION}`")
    return found


def include_paths(cxx: bool) -> List[str]:
    """``-I`` directories for a build: ours, then (for C++/CUDA) upstream's C++ API if installed."""
    paths = our_include_paths()
    if cxx:
        upstream = find_upstream_cxx_include()
        if upstream is not None and upstream not in paths:
            paths.append(upstream)
    return paths


def mentions_missing_tvm_header(compiler_output: str) -> bool:
    """Whether a failed compile's text says a ``tvm/ffi/...`` header was not found."""
    return re.search(r"tvm/ffi/[\w/.]+\.h[^\n]*(No such file|not found)", compiler_output) is not None
