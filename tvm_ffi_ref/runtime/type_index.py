"""``TI``: the type indices of ``TVMFFITypeIndex`` as plain ints, for the runtime's loops.

``abi.TVMFFITypeIndex`` is an ``IntEnum``, and on CPython 3.11 reading one of its members
(``TVMFFITypeIndex.kTVMFFIStr``) passes through the enum metaclass's ``__getattr__`` hook:
100-200 ns, as much as a ctypes read. The walks over containers (maps, structural hash and
equality, JSON, deep copy) name type indices several times per element, so they read them
here: the same names and values, as attributes of a plain class.
"""

from __future__ import annotations

from tvm_ffi_common import abi

#: ``TI.kTVMFFIStr == abi.TVMFFITypeIndex.kTVMFFIStr``, and so on for every name (aliases too).
TI = type("TI", (), {name: int(member) for name, member in abi.TVMFFITypeIndex.__members__.items()})
