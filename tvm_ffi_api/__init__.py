"""The Python API both front ends share, written once: this folder.

``tvm_ffi_ref`` (ctypes over the Python runtime) and ``tvm_ffi_fast`` (a
compiled core over the C runtime) offer one interface, upstream's
``tvm_ffi``. Everything above their cores is the same Python, so it lives
here, once, and each front end *mounts* this folder: its ``__init__`` calls
:func:`mount`, which appends this folder to the package's ``__path__``. Then
``import tvm_ffi_fast.container`` finds ``tvm_ffi_api/container.py`` and runs
it as the module ``tvm_ffi_fast.container``; ``tvm_ffi_ref.container`` is the
same file run again as a module of the reference. Each package gets its own
module objects (its own classes and tables), and a relative import in a file
here resolves inside the importing package:

* ``from .object import Object`` finds that package's **core**: the few
  modules each front end writes itself, which come first on its
  ``__path__`` (``object``, ``convert``, ``function``, ``shortcuts``). What
  a core must provide is declared once, by the stubs beside this file
  (``object.pyi``, ``convert.pyi``, ``function.pyi``, ``shortcuts.pyi``:
  type checkers read them, the import system does not), and
  ``tests/test_core_contract.py`` checks every core against them;
* ``from .container import Array`` finds another shared module, mounted too.

So a file here may import the core modules by those names and nothing else
of a front end's; the cores import shared modules the same way. The ctypes
mirror of the headers and the bound library are not per package: they are
``tvm_ffi_common.abi`` and ``tvm_ffi_common.capi``.

This package itself offers no submodules (its ``__path__`` is empty):
``import tvm_ffi_api.container`` raises ``ImportError``, because a shared
module only means something inside a front end. Import ``tvm_ffi_ref`` or
``tvm_ffi_fast``.
"""

from __future__ import annotations

import os
from typing import List, Optional

from tvm_ffi_common import stop_if_unbuilt_source_tree

stop_if_unbuilt_source_tree(__file__)

#: This folder, which the front ends mount.
FOLDER = os.path.dirname(os.path.abspath(__file__))

# The modules here run only as modules of a front end (see above).
__path__: List[str] = []  # type: ignore[no-redef]  # (mypy gives a package one of its own)


def mount(package_path: List[str], core_folder: Optional[str] = None) -> None:
    """Makes this folder's modules submodules of the package whose ``__path__`` is given.

    The one way a front end picks its core: ``core_folder`` (the folder holding
    the core's four modules; default the package's own directory, the
    reference's layout) goes first on the path, so its modules win, and this
    folder goes last.
    """
    if core_folder is not None and core_folder not in package_path:
        package_path.insert(0, core_folder)
    if FOLDER not in package_path:
        package_path.append(FOLDER)
