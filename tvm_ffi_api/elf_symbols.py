"""The dynamic symbols of an ELF shared library, read from the file.

``dlsym`` can find a symbol by name but cannot list them; a kernel library's
functions, though, are exactly its exported ``__tvm_ffi_<name>`` symbols. This
module reads the ``.dynsym`` table (through the section headers) of a 64- or
32-bit, little- or big-endian ELF file and returns defined and undefined names.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import List, Set

#: ``st_shndx`` of an undefined symbol.
_SHN_UNDEF = 0
_SHT_DYNSYM = 11
_STT_FUNC, _STT_OBJECT, _STT_NOTYPE, _STT_GNU_IFUNC = 2, 1, 0, 10

#: The prefix of an exported TVM FFI function: ``__tvm_ffi_<name>``.
EXPORT_PREFIX = "__tvm_ffi_"
#: Prefixes of companion symbols that are not functions of their own.
COMPANION_PREFIXES = ("__tvm_ffi__",)


@dataclass
class DynamicSymbols:
    """The names a library defines (exports) and leaves undefined (imports)."""

    defined: Set[str] = field(default_factory=set)
    undefined: Set[str] = field(default_factory=set)
    #: The defined names that are functions (code), not data.
    functions: Set[str] = field(default_factory=set)

    def _exports(self, names: Set[str]) -> List[str]:
        return sorted(
            name[len(EXPORT_PREFIX):]
            for name in names
            if name.startswith(EXPORT_PREFIX) and not name.startswith(COMPANION_PREFIXES)
        )

    def tvm_ffi_functions(self) -> List[str]:
        """The ``<name>`` of every exported function ``__tvm_ffi_<name>``, sorted."""
        return self._exports(self.functions)

    def tvm_ffi_data(self) -> List[str]:
        """The ``<name>`` of every ``__tvm_ffi_<name>`` that is data, not a function."""
        return self._exports(self.defined - self.functions)

    def uses_tvm_ffi(self) -> bool:
        """Whether the library exports TVM FFI functions or calls the TVM FFI C API."""
        return bool(self.tvm_ffi_functions()) or any(n.startswith("TVMFFI") for n in self.undefined)


def read_dynamic_symbols(path: str) -> DynamicSymbols:
    """Reads the dynamic symbol table of the ELF file at ``path``.

    Raises ``ValueError`` when the file is not ELF or has no dynamic symbols.
    """
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise ValueError(f"{path} is not an ELF file")
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(endian + "Q", data, 0x28)
        shentsize, shnum, _ = struct.unpack_from(endian + "HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(endian + "I", data, 0x20)
        shentsize, shnum, _ = struct.unpack_from(endian + "HHH", data, 0x2E)

    def section(index: int):
        base = shoff + index * shentsize
        if is64:
            _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                endian + "IIQQQQIIQQ", data, base)
        else:
            _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from(
                endian + "IIIIIIIIII", data, base)
        return kind, offset, size, link, entsize

    result = DynamicSymbols()
    found = False
    for index in range(shnum):
        kind, offset, size, link, entsize = section(index)
        if kind != _SHT_DYNSYM or entsize == 0:
            continue
        found = True
        _, str_offset, str_size, _, _ = section(link)
        strings = data[str_offset:str_offset + str_size]
        for start in range(offset + entsize, offset + size, entsize):  # entry 0 is null
            if is64:
                name_at, info, _, shndx = struct.unpack_from(endian + "IBBH", data, start)
            else:
                name_at, _, _, info, _, shndx = struct.unpack_from(endian + "IIIBBH", data, start)
            end = strings.index(b"\0", name_at)
            name = strings[name_at:end].decode("utf-8", "replace")
            if not name:
                continue
            if shndx == _SHN_UNDEF:
                result.undefined.add(name)
            elif info & 0xF in (_STT_FUNC, _STT_OBJECT, _STT_NOTYPE, _STT_GNU_IFUNC):
                result.defined.add(name)
                if info & 0xF in (_STT_FUNC, _STT_GNU_IFUNC):
                    result.functions.add(name)
    if not found:
        raise ValueError(f"{path} has no dynamic symbol table")
    return result
