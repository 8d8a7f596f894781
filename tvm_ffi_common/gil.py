"""Whether calls release the GIL: the default every front end gives a new Function.

Upstream's ``Function.release_gil`` is a per-function switch whose default comes from the
environment; the compiled front end reads the same variable in C (``frontend/object.c``).
"""

from __future__ import annotations

import functools
import os
import re


@functools.lru_cache(maxsize=None)
def release_gil_by_default() -> bool:
    """Whether a new Function releases the GIL around its calls (``Function.release_gil``).

    True unless ``TVM_FFI_RELEASE_GIL_BY_DEFAULT`` is set and reads as 0: the variable
    upstream reads, once per process (read as C's ``strtol`` reads it, as the fast front end
    does: text without a leading integer is 0). Holding the GIL saves a scalar call its two
    GIL hand-overs, but a kernel that waits for a thread calling back into Python deadlocks.
    """
    text = os.environ.get("TVM_FFI_RELEASE_GIL_BY_DEFAULT", "")
    leading = re.match(r"\s*[+-]?\d+", text)
    return text == "" or (leading is not None and int(leading.group()) != 0)
