"""Where the installed ``apache-tvm-ffi`` keeps its headers and library, read from its files.

Found through the distribution's record (``importlib.metadata``), never by
importing ``tvm_ffi``: an import would load upstream's ``libtvm_ffi.so`` into
the test process, and under the drop-in ``tvm_ffi`` is ours anyway.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Optional

DISTRIBUTION = "apache-tvm-ffi"


def _located(suffix: str) -> Optional[str]:
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/").endswith(suffix):
            return os.path.abspath(str(dist.locate_file(entry)))
    return None


def include_dir() -> Optional[str]:
    """Upstream's include directory (holds ``tvm/ffi/c_api.h`` and ``dlpack/dlpack.h``)."""
    header = _located("tvm_ffi/include/tvm/ffi/c_api.h")
    return None if header is None else os.path.dirname(os.path.dirname(os.path.dirname(header)))


def library_dir() -> Optional[str]:
    """The directory of upstream's ``libtvm_ffi.so``."""
    library = _located("tvm_ffi/lib/libtvm_ffi.so")
    return None if library is None else os.path.dirname(library)
