"""What every part of the project shares below the Python API.

* :mod:`tvm_ffi_common.libinfo`: where ``libtvm_ffi.so`` and the C headers are;
* :mod:`tvm_ffi_common.abi`: the headers mirrored in ctypes (pure description);
* :mod:`tvm_ffi_common.capi`: ``LIB``, the library loaded and bound through the mirror;
* :mod:`tvm_ffi_common.console`: upstream's console scripts on ours (``tvm-ffi-abi-stubgen``);
* :mod:`tvm_ffi_common.extras`: the tools' optional dependencies (``[check]``).

Nothing here installs a runtime; importing the package is free of side effects, except
that importing it from an unbuilt source tree stops the process with one line saying what
to do (:func:`stop_if_unbuilt_source_tree`).
"""

import importlib.machinery as _machinery
import os as _os

from ._version import __version__


def stop_if_unbuilt_source_tree(package_file: str) -> None:
    """Stops the process with one line when ``package_file``'s package is in a source checkout
    that was not built in place.

    From a clone's root, ``python -m ...`` finds the clone's packages before the installed
    ones, and nothing can run from them: the compiled pieces (``_pycapi``, ``_core``, the
    libraries) are not there. An ImportError would show as a traceback (``python -m`` prints
    one for an error raised inside a parent package), so this exits with the way out instead.
    Each package whose import needs the built pieces calls it with its ``__file__``.
    """
    root = _os.path.dirname(_os.path.dirname(_os.path.abspath(package_file)))
    if not (_os.path.isfile(_os.path.join(root, "setup.py"))
            and _os.path.isdir(_os.path.join(root, "c_api"))):
        return  # an installed package, never a checkout
    built = _os.path.join(root, "tvm_ffi_common", "_pycapi")
    if any(_os.path.isfile(built + suffix) for suffix in _machinery.EXTENSION_SUFFIXES):
        return  # built in place (``pip install -e .``)
    raise SystemExit(
        f"Python found tvm-ffi-abi's unbuilt source tree ({root}) ahead of the installed "
        "package: run this from outside the source tree, or build the tree in place with "
        "`pip install -e .`")

stop_if_unbuilt_source_tree(__file__)

__all__ = ["__version__"]
