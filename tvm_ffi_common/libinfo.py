"""Where the shared C pieces live: ``libtvm_ffi.so`` and the C headers.

Both front ends (``tvm_ffi_ref`` and ``tvm_ffi_fast``) load the same
``libtvm_ffi.so``; kernel authors compile against the same headers. An
installed wheel carries both inside this package (``lib/`` and ``include/``);
a source checkout built in place has the library here and the headers in
``c_api/include``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import List, Optional

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SOURCE_INCLUDE = os.path.join(os.path.dirname(_PACKAGE_DIR), "c_api", "include")

#: The library's file name, which is also its SONAME: a kernel linked against
#: upstream's ``libtvm_ffi.so`` resolves its imports against whichever library
#: of that name is already loaded.
LIBRARY_NAME = "libtvm_ffi.so"

#: Set to a path to load a different ``libtvm_ffi.so`` (for experiments).
LIBRARY_PATH_ENV = "TVM_FFI_LIBRARY_PATH"


def library_path() -> str:
    """The absolute path of the ``libtvm_ffi.so`` this installation uses.

    Raises ``OSError`` naming the places searched when it is missing (a source
    checkout that was not built: run ``pip install -e .``).
    """
    override = os.environ.get(LIBRARY_PATH_ENV)
    candidates = [override] if override else []
    candidates.append(os.path.join(_PACKAGE_DIR, "lib", LIBRARY_NAME))
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise OSError(
        f"{LIBRARY_NAME} was not found (looked in: {', '.join(candidates)}); "
        "build it with `pip install .` or `pip install -e .`"
    )


def include_paths() -> List[str]:
    """Directories to pass as ``-I`` to compile against this project's C headers."""
    installed = os.path.join(_PACKAGE_DIR, "include")
    for path in (installed, _SOURCE_INCLUDE):
        if os.path.isfile(os.path.join(path, "tvm", "ffi", "c_api.h")):
            return [path]
    raise OSError(f"the TVM FFI C headers were not found in {installed} or {_SOURCE_INCLUDE}")


def library_dir() -> str:
    """The directory holding ``libtvm_ffi.so`` (for ``-L`` and an rpath)."""
    return os.path.dirname(library_path())


_loaded: Optional[ctypes.CDLL] = None


def load_library() -> ctypes.CDLL:
    """Loads ``libtvm_ffi.so`` once, with ``RTLD_GLOBAL``, and returns it.

    Global visibility matters: kernel libraries loaded later resolve their
    ``TVMFFI*`` imports against the symbols already in the process. For the
    same reason, ``ImportError`` is raised when another ``libtvm_ffi.so``
    (upstream's) already provides them (:mod:`tvm_ffi_common.dropin`).
    """
    global _loaded
    if _loaded is None:
        from .dropin import check_no_other_library

        mode = ctypes.RTLD_GLOBAL
        if sys.platform.startswith("linux"):
            mode |= os.RTLD_NOW
        path = library_path()
        library = ctypes.CDLL(path, mode=mode)
        check_no_other_library(library, path)
        _loaded = library
    return _loaded


# ------------------------------------------------------------ the testing library

#: The testing kernel library (``c_api/testing``): upstream's ``testing.*``
#: functions and types, which upstream's own test suite relies on.
TESTING_LIBRARY_NAME = "libtvm_ffi_testing.so"

_testing_loaded: Optional[ctypes.CDLL] = None


def testing_library_path() -> str:
    """The absolute path of ``libtvm_ffi_testing.so`` (next to ``libtvm_ffi.so``)."""
    path = os.path.join(library_dir(), TESTING_LIBRARY_NAME)
    if not os.path.isfile(path):
        raise OSError(f"{TESTING_LIBRARY_NAME} was not found in {library_dir()}; "
                      "build it with `pip install .` or `pip install -e .`")
    return path


def load_testing_library() -> ctypes.CDLL:
    """Loads ``libtvm_ffi_testing.so`` once (a runtime must serve the process).

    The library registers its functions and types as it loads; if that
    fails, ``ImportError`` says why.
    """
    global _testing_loaded
    if _testing_loaded is None:
        load_library()
        library = ctypes.CDLL(testing_library_path(), mode=ctypes.RTLD_GLOBAL)
        library.TVMFFITestingLoadError.restype = ctypes.c_char_p
        error = library.TVMFFITestingLoadError()
        if error is not None:
            raise ImportError(f"{TESTING_LIBRARY_NAME} could not register its functions and "
                              f"types: {error.decode(errors='replace')}")
        _testing_loaded = library
    return _testing_loaded
