"""What every part of the project shares below the Python API.

* :mod:`tvm_ffi_common.libinfo`: where ``libtvm_ffi.so`` and the C headers are;
* :mod:`tvm_ffi_common.abi`: the headers mirrored in ctypes (pure description);
* :mod:`tvm_ffi_common.capi`: ``LIB``, the library loaded and bound through the mirror;
* :mod:`tvm_ffi_common.console`: upstream's console scripts on ours (``tvm-ffi-abi-stubgen``);
* :mod:`tvm_ffi_common.extras`: the tools' optional dependencies (``[check]``).

Nothing here installs a runtime; importing the package is free of side effects, except
that importing it from an unbuilt source tree stops with one line saying what to do.
"""

import importlib.machinery as _machinery
import os as _os

from ._version import __version__


def _stop_if_unbuilt_source_tree() -> None:
    """Raises ImportError, in one line, when this is a source checkout with nothing built.

    From a clone's root, ``python -m ...`` finds the clone's packages before the installed
    ones; without this, the first compiled piece missing (``_pycapi``) would surface as an
    ImportError that names neither the cause nor the way out.
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(here)
    if not (_os.path.isfile(_os.path.join(root, "setup.py"))
            and _os.path.isdir(_os.path.join(root, "c_api"))):
        return  # an installed package, never a checkout
    if any(_os.path.isfile(_os.path.join(here, "_pycapi" + suffix))
           for suffix in _machinery.EXTENSION_SUFFIXES):
        return  # built in place (``pip install -e .``)
    raise ImportError(
        f"tvm_ffi_common was found in the unbuilt source tree {root}, ahead of any installed "
        "tvm-ffi-abi: run this from outside the source tree, or build the tree in place with "
        "`pip install -e .`", name=__name__, path=__file__)


_stop_if_unbuilt_source_tree()

__all__ = ["__version__"]
