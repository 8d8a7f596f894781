"""``MISSING`` and ``KWARGS``: the runtime's two marker objects, one Python wrapper each.

* :data:`MISSING` (``ffi.GetInvalidObject()``) stands for "no value given":
  a field without a default, a keyword argument left out.
* :data:`KWARGS` (``ffi.GetKwargsObject()``) separates positional arguments
  from ``name, value`` pairs in a call of a generated ``__ffi_init__``.

Code compares with ``is``, so every module takes them from here (``MISSING`` is
the one ``container`` made).
"""

from __future__ import annotations

from . import upcalls
from .container import MISSING  # noqa: F401 - re-exported: the "no value" marker object (``ffi.GetInvalidObject()``)
from .function import get_global_func

#: The "keyword arguments follow" marker object (``ffi.GetKwargsObject()``).
KWARGS = get_global_func("ffi.GetKwargsObject")()

upcalls.install("sentinels", missing=lambda: MISSING)
