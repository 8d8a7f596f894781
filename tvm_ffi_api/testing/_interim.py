"""What this package takes from API modules being written beside it, with stand-ins.

Upstream's testing package builds on ``dataclasses`` (``c_class`` and the enum
bases ``IntEnum``/``StrEnum`` with ``entry``), ``registry.init_ffi_api`` and
``utils.FileLock``. Each is taken from this front end when it has it; until it
does, a stand-in keeps the package importable:

* ``c_class`` registers the class (``register_object``) without the dataclass
  methods, so its options (``frozen``, ``eq``, ``order``, ...) have no effect;
* ``ENUMS`` is False, and the two C++-backed enum classes are not defined;
* ``init_ffi_api`` sets each ``<namespace>.<name>`` global function (one level)
  as an attribute of the module;
* ``FileLock`` holds an exclusive ``fcntl`` lock on a file.

Delete a stand-in once its module is part of the API.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from ..function import get_global_func
from ..registry import list_global_func_names, register_object

try:
    from ..dataclasses import c_class
except ImportError:
    def c_class(type_key: str, **options: Any) -> Callable[[type], type]:
        """``register_object(type_key)`` (stand-in: the dataclass options are not applied)."""
        return register_object(type_key)

try:
    from ..dataclasses import IntEnum, StrEnum, entry

    ENUMS = True
except ImportError:
    IntEnum = StrEnum = entry = None
    ENUMS = False

try:
    from ..registry import init_ffi_api
except ImportError:
    def init_ffi_api(namespace: str, target_module_name: Optional[str] = None) -> None:
        """Sets each global ``<namespace>.<name>`` as attribute ``name`` of the target module."""
        target = sys.modules[target_module_name or namespace]
        for name in list_global_func_names():
            head, _, short = name.rpartition(".")
            if head == namespace:
                setattr(target, short, get_global_func(name))

try:
    from ..utils import FileLock
except ImportError:
    class FileLock:
        """An exclusive advisory lock on ``path`` while the ``with`` block runs."""

        def __init__(self, path: str) -> None:
            self.path = path
            self._file = None

        def __enter__(self) -> "FileLock":
            import fcntl

            self._file = open(self.path, "a")  # noqa: SIM115 - closed in __exit__
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
            return self

        def __exit__(self, *exc_info: Any) -> None:
            import fcntl

            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
            self._file.close()
            self._file = None
