"""The C API function by function, for ``spec/16-c-api.md``: signatures and ownership.

The page's reference block is generated from two sources, so neither can
drift:

* the **signatures** are read from this project's headers
  (``tvm/ffi/c_api.h``, ``tvm/ffi/extra/c_env_api.h``), which the test suite
  holds to upstream's declaration by declaration
  (``tests/test_c_api_reference.py``), and to the symbols
  ``libtvm_ffi.so`` exports;
* **what each function does with ownership** is :data:`.c_api_entries.SECTIONS`,
  one :class:`Entry` per function: what it takes and who keeps it, what it
  gives and who must release it, what a failure looks like, and, flagged,
  whatever breaks the usual pattern. Written from upstream's headers and
  sources; a test requires one entry per declared function.

The usual pattern, stated once on the page: an ``int`` status is 0 on
success and -1 with an Error in the calling thread's raised-error slot
(``TVMFFIErrorMoveFromRaised`` takes it); arguments are borrowed; an
``out`` object handle is owned by the caller (one strong reference, dropped
with ``TVMFFIObjectDecRef``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, List, Tuple

from .c_api_entries import SECTIONS, Entry

#: The headers that declare the C API, relative to an include directory.
HEADERS = ("tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h")


@dataclass(frozen=True)
class Declaration:
    """One function as a header declares it."""

    name: str
    signature: str  # one line, without the export macro, ending in ";"
    header: str  # relative to the include directory
    inline: bool  # defined in the header (no symbol in the library)


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_EXPORTED = re.compile(r"\bTVM_FFI_DLL\s+([^;{#]*?\b(TVMFFI\w+)\s*\([^;{]*\))\s*;")
_INLINE = re.compile(r"\n(?:static\s+inline|inline)\s+"
                     r"([^;{#]*?\b(TVMFFI\w+)\s*\([^;{]*\))\s*\{")


#: Where an inline helper is declared: for C++ only, as upstream declares it.
_CXX_ONLY = (", inline, for C++ only as in upstream's header (C code: the `tvm_ffi_abi_*` "
             "functions of `c_api/include/tvm_ffi_abi/object_cells.h`, or the offset itself)")


def _one_line(text: str) -> str:
    text = " ".join(text.replace("TVM_FFI_ATTRIBUTE_PURE", "").split())
    return re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", text))


def declarations(include_dir: str) -> Dict[str, Declaration]:
    """Every ``TVMFFI*`` function the headers under ``include_dir`` declare, by name."""
    found: Dict[str, Declaration] = {}
    for header in HEADERS:
        with open(os.path.join(include_dir, header), encoding="utf-8") as f:
            text = _COMMENTS.sub("", f.read())
        for pattern, inline in ((_EXPORTED, False), (_INLINE, True)):
            for match in pattern.finditer(text):
                found[match.group(2)] = Declaration(match.group(2), _one_line(match.group(1)) + ";",
                                                    header, inline)
    return found


def comparable(signature: str) -> str:
    """A signature with spacing normalised and ``(void)`` written ``()``, for comparison."""
    text = re.sub(r"\s*([(),*])\s*", r"\1", signature.rstrip(";"))
    return text.replace("(void)", "()")


def wrap(signature: str, width: int = 92) -> str:
    """A signature broken after commas so that no line is longer than ``width``."""
    if len(signature) <= width:
        return signature
    indent = " " * (signature.index("(") + 1)
    lines, line = [], ""
    for piece in re.split(r"(?<=,) ", signature):
        if line and len(line) + 1 + len(piece) > width:
            lines.append(line)
            line = indent + piece
        else:
            line = f"{line} {piece}" if line else piece
    return "\n".join(lines + [line])




def entries() -> Dict[str, Entry]:
    """Every entry of :data:`SECTIONS`, by function name."""
    return {entry.name: entry for _, _, items in SECTIONS for entry in items}


def render(include_dir: str) -> List[str]:
    """The Markdown of the reference block: one section per group, one entry per function."""
    declared = declarations(include_dir)
    lines: List[str] = []
    for title, intro, items in SECTIONS:
        lines += [f"### {title}", ""]
        if intro:
            lines += [intro, ""]
        for entry in items:
            declaration = declared[entry.name]
            where = f"`{declaration.header}`" + (_CXX_ONLY if declaration.inline else "")
            lines += [f"#### `{entry.name}`", "", "```c", wrap(declaration.signature), "```", "",
                      f"* **takes:** {entry.takes}", f"* **gives:** {entry.gives}",
                      f"* **fails:** {entry.errors}"]
            if entry.exception:
                lines.append(f"* ⚑ **exception:** {entry.exception}")
            lines += [f"* declared in {where}", ""]
    return lines[:-1]


def flagged() -> List[Tuple[str, str]]:
    """``(function, what is unusual)`` for every flagged entry, in page order."""
    return [(e.name, e.exception) for _, _, items in SECTIONS for e in items if e.exception]
