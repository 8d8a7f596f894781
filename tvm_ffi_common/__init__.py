"""Pieces shared by both front ends: the built ``libtvm_ffi.so``, the C headers
and (as it grows) the pure-Python layer of the API that needs no runtime.

Nothing here installs a runtime; importing it is free of side effects.
"""

from ._version import __version__

__all__ = ["__version__"]
