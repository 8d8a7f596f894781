"""What an explanation is made of: regions of memory, their sections and fields.

The walker (:mod:`.walk`) reads memory and produces this model; the
renderers (:mod:`.text`, :mod:`.svg`) only draw it. Every byte is copied into
the model while the memory is alive, so rendering later is safe.

* A :class:`Region` is one run of memory with an address: a ``TVMFFIAny``
  argument, an object (header, cell, payload), a separate buffer (a List's
  slots, a dense Map's table, a tensor's shape array), a C string...
* A region is cut into :class:`Section` s, each one C struct or array
  element ("header: TVMFFIObject", "slot[0]: TVMFFIAny").
* A section lists :class:`Field` s: offset from the region's start, the raw
  bytes, the field's C name and type, and what the bytes mean. A field that
  holds a pointer may lead to another region (``target``), drawn after it.

The :class:`AddressBook` gives every address a name (``#2`` for the second
region, ``#2+40`` inside it, a function's name for code) so that output can
say where a pointer goes, and, in *stable* mode, print names instead of the
pointer's bytes so that output is the same on every run.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional


@dataclass
class Field:
    """One field of a section: where it is, its bytes, and what they mean."""

    offset: int  # from the start of the region
    name: str
    ctype: str  # C spelling, e.g. "int32_t"
    raw: bytes
    meaning: str = ""
    pointer: Optional[int] = None  # set when the field holds an address (None for NULL too)
    is_pointer: bool = False  # the bytes are an address (masked in stable mode unless NULL)
    target: Optional["Region"] = None  # the region the pointer leads to, drawn after
    see_also: Optional["Region"] = None  # the region it leads to, already drawn elsewhere

    @property
    def size(self) -> int:
        """How many bytes the field occupies."""
        return len(self.raw)


@dataclass
class Section:
    """One struct (or array element, or run of bytes) inside a region."""

    title: str  # e.g. "header", "cell", "slot[2]", "payload"
    struct: str  # e.g. "TVMFFIObject", "TVMFFISeqCell", "char[14]"
    fields: List[Field] = field(default_factory=list)
    note: str = ""  # one line about the whole section
    elided: bool = False  # stands for sections left out ("... 292 more slots ...")


@dataclass
class Region:
    """One run of memory with an address, cut into sections."""

    label: str  # "#1", "#2", ... in drawing order (the root Any of an argument is "args[0]")
    kind: str  # e.g. "TVMFFIAny", "ffi.String object", "List buffer"
    address: Optional[int]
    size: int
    summary: str = ""  # one line: what this region is and who owns it
    sections: List[Section] = field(default_factory=list)
    code: str = ""  # where the reference implementation builds or reads it

    def fields(self) -> List[Field]:
        """Every field of every section, in order."""
        return [f for s in self.sections for f in s.fields]

    def children(self) -> List["Region"]:
        """The regions this one's pointers lead to, in field order."""
        return [f.target for f in self.fields() if f.target is not None]


@dataclass
class Explanation:
    """A whole explanation: the Python values, how they were encoded, and the regions."""

    sources: List[str]  # the expressions (or reprs) of the values
    values: List[str]  # repr of each value, shortened
    setters: List[str]  # the convert.py setter that encoded each value
    roots: List[Region]  # one TVMFFIAny region per value (args[i])
    returns: List[str] = field(default_factory=list)  # what each value comes back as
    error: Optional[str] = None  # why the values could not be encoded, if they could not
    book: Optional["AddressBook"] = None


# --------------------------------------------------------------------- addresses

_libc = ctypes.CDLL(None)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


try:
    _dladdr = _libc.dladdr
    _dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    _dladdr.restype = ctypes.c_int
except AttributeError:  # pragma: no cover - every glibc/musl has it
    _dladdr = None


#: The interpreter tag of an extension module's file name (``.cpython-311-x86_64-linux-gnu.so``).
_LIBRARY_TAG = re.compile(r"\.(cpython|pypy)[\w.-]*\.so$|\.abi3\.so$")


def code_name(address: int) -> Optional[str]:
    """``symbol (library)`` for a code address of a loaded library, as ``dladdr`` sees it.

    Only an exact symbol match is named; otherwise just the library. None when
    the address belongs to no library (a ctypes callback lives in anonymous
    memory).
    """
    if _dladdr is None or not address:
        return None
    info = _DlInfo()
    if not _dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return None
    library = _LIBRARY_TAG.sub(".so", os.path.basename(info.dli_fname.decode(errors="replace")))
    if info.dli_sname and info.dli_saddr == address:
        return f"{info.dli_sname.decode(errors='replace')} in {library}"
    return f"code in {library}"


class AddressBook:
    """Names for addresses: regions by label, code by name, the rest by hex.

    ``stable=True`` never prints an address: pointer bytes are masked and
    unnamed addresses become ``<addr>``, so output does not change between runs.
    """

    def __init__(self, stable: bool = False, known_code: Optional[Dict[int, str]] = None):
        self.stable = stable
        self._regions: List[Region] = []
        self._code: Dict[int, str] = dict(known_code or {})

    def add_region(self, region: Region) -> None:
        """Records that ``[address, address + size)`` is ``region`` (named by its label)."""
        if region.address:
            self._regions.append(region)

    @staticmethod
    def relabel(roots: List[Region]) -> None:
        """Numbers every region below the roots ``#1``, ``#2``... in drawing order (depth first)."""
        count = 0

        def visit(region: Region) -> None:
            nonlocal count
            for child in region.children():
                count += 1
                child.label = f"#{count}"
                visit(child)

        for root in roots:
            visit(root)

    def add_code(self, address: Optional[int], name: str) -> None:
        """Names a code address."""
        if address:
            self._code[address] = name

    def name_of(self, address: int) -> Optional[str]:
        """The name of an address, when it has one: ``#2``, ``#2+40``, or a function."""
        if address in self._code:
            return self._code[address]
        # The innermost region wins: later regions may lie inside earlier ones.
        best = None
        for region in self._regions:
            start, size = region.address, max(region.size, 1)
            if start <= address < start + size and (best is None or size < best.size):
                best = region
        if best is not None:
            offset = address - best.address
            return best.label if offset == 0 else f"{best.label}+{offset}"
        name = code_name(address)
        if name is not None:
            self._code[address] = name
        return name

    def pointer(self, address: Optional[int]) -> str:
        """How to print a pointer value: NULL, a name, or hex (``<addr>`` when stable)."""
        if not address:
            return "NULL"
        name = self.name_of(address)
        if name is not None:
            return name
        return "<addr>" if self.stable else f"0x{address:x}"

    def hex_address(self, address: Optional[int]) -> str:
        """An address in hex, or ``<addr>`` in stable mode."""
        if not address:
            return "NULL"
        return "<addr>" if self.stable else f"0x{address:x}"


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


Formatter = Callable[[Field], str]
