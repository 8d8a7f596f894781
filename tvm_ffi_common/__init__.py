"""What every part of the project shares below the Python API.

* :mod:`tvm_ffi_common.libinfo`: where ``libtvm_ffi.so`` and the C headers are;
* :mod:`tvm_ffi_common.abi`: the headers mirrored in ctypes (pure description);
* :mod:`tvm_ffi_common.capi`: ``LIB``, the library loaded and bound through the mirror;
* :mod:`tvm_ffi_common.console`: upstream's console scripts on ours (``tvm-ffi-abi-stubgen``);
* :mod:`tvm_ffi_common.extras`: the tools' optional dependencies (``[check]``).

Nothing here installs a runtime; importing the package is free of side effects, except
from a clone's unbuilt source tree, which shadows the installed package when Python runs
from the clone's root (:func:`stop_if_unbuilt_source_tree`).
"""

import importlib.machinery as _machinery
import os as _os
import sys as _sys

from ._version import UPSTREAM_VERSION, __version__

#: Our top-level packages, and upstream's name the drop-in serves.
_OURS = ("tvm_ffi_common", "tvm_ffi_api", "tvm_ffi_ref", "tvm_ffi_fast", "tvm_ffi_check",
         "tvm_ffi_explain", "tvm_ffi")


def stop_if_unbuilt_source_tree(package_file: str) -> None:
    """Steps past, or stops at, a source checkout that shadows the installed package.

    From a clone's root, ``python -m ...`` puts the clone first on ``sys.path``, and its
    packages shadow the installed ones; if the clone was not built in place, nothing runs from
    it (``_pycapi``, ``_core`` and the libraries are not there). ``python -m <one of ours>``
    is then run again without the current directory on the path (Python 3.11+, when an
    installed copy exists: nothing has run yet but the import); anything else stops with one
    line saying what to do (an ImportError would show as a traceback from ``python -m``).
    Each package whose import needs the built pieces calls this with its ``__file__``.
    """
    root = _os.path.dirname(_os.path.dirname(_os.path.abspath(package_file)))
    if not (_os.path.isfile(_os.path.join(root, "setup.py"))
            and _os.path.isdir(_os.path.join(root, "c_api"))):
        return  # an installed package, never a checkout
    built = _os.path.join(root, "tvm_ffi_common", "_pycapi")
    if any(_os.path.isfile(built + suffix) for suffix in _machinery.EXTENSION_SUFFIXES):
        return  # built in place (``pip install -e .``)
    _rerun_without_the_tree(root)
    raise SystemExit(
        f"Python found tvm-ffi-abi's unbuilt source tree ({root}) ahead of the installed "
        "package: run this from outside the source tree, or build the tree in place with "
        "`pip install -e .`")


def _rerun_without_the_tree(root: str) -> None:
    """Re-executes ``python -m <ours> ...`` with ``PYTHONSAFEPATH=1`` when that is safe."""
    argv = getattr(_sys, "orig_argv", None)
    # sys.argv[0] is "-m" only while runpy imports the module to run: nothing else ran yet.
    if (_sys.version_info < (3, 11) or _sys.flags.safe_path or not argv
            or _sys.argv[:1] != ["-m"] or "-m" not in argv[:-1]):
        return
    if argv[argv.index("-m") + 1].split(".")[0] not in _OURS:
        return
    if _installed_elsewhere(root):
        _os.execve(_sys.executable, argv, dict(_os.environ, PYTHONSAFEPATH="1"))


def _installed_elsewhere(root: str) -> bool:
    """Whether an import system without ``root`` on ``sys.path`` finds a tvm_ffi_common."""
    saved = list(_sys.path)
    _sys.path[:] = [p for p in saved if _os.path.realpath(p or _os.curdir) != root]
    try:
        for finder in _sys.meta_path:  # path entries, and an editable install's finder
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec("tvm_ffi_common", None) if find_spec is not None else None
            if spec is not None and spec.origin and not spec.origin.startswith(root + _os.sep):
                return True
        return False
    finally:
        _sys.path[:] = saved

stop_if_unbuilt_source_tree(__file__)

__all__ = ["UPSTREAM_VERSION", "__version__"]
