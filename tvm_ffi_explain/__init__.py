"""``tvm-ffi-explain``: the bytes a kernel sees when Python passes it a value.

Give it Python values (or, on the command line, Python expressions) and it
encodes them exactly as a call through :mod:`tvm_ffi_ref` would, with
:func:`tvm_ffi_ref.convert.set_arg` writing each into a ``TVMFFIAny`` of the
argument array inside a :class:`~tvm_ffi_ref.convert.CallScope`. Then it
walks the bytes: the 16 bytes of each ``TVMFFIAny`` field by field, and for
an object its header, its cell and its payload, following every pointer
(:mod:`.walk`). The result is drawn for a terminal (:mod:`.text`) or as SVG
(:mod:`.svg`).

>>> from tvm_ffi_explain import explain, render_text
>>> print(render_text(explain(7)), end="")
7
  encoded by tvm_ffi_ref.convert._set_int
  comes back from a kernel that returns it as 7
<BLANKLINE>
args[0]  TVMFFIAny, 16 bytes
  the argument a kernel receives: a borrowed view (AnyView)
       +0  01 00 00 00              type_index    int32_t   1 = kTVMFFIInt: int64 in the payload
       +4  00 00 00 00              zero_padding  uint32_t  zero
       +8  07 00 00 00 00 00 00 00  v_int64       int64_t   7

Each line is one field: its offset in the region, its bytes as they lie in
memory (least significant first), its C name and type, and what the bytes
mean. ``explain`` hides addresses by default (``stable=True``: pointer bytes
print as ``··``, regions are named ``#1``, ``#2``...); the command line shows
them unless given ``--stable``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence

from tvm_ffi_common import abi
from tvm_ffi_ref.convert import (
    CallScope,
    _choose_setter,
    round_trip as _round_trip,  # (explain has a parameter of that name)
    set_arg,
)

from .known_code import known_code
from .model import AddressBook, Explanation, Field, Region, Section, shorten  # noqa: F401 - re-exported
from .text import render_text
from .values import describe, same_literal, value_text
from .walk import Walker

__all__ = ["explain", "any_hex", "render_text", "render_svg", "Explanation", "Region", "Section", "Field",
           "AddressBook", "Walker"]

_ARG_SUMMARY = "the argument a kernel receives: a borrowed view (AnyView)"


def _setter_name(value: Any) -> str:
    setter = _choose_setter(value)
    return f"{setter.__module__}.{setter.__name__}"


def _comes_back_as(value: Any) -> str:
    try:
        return describe(_round_trip(value))
    except Exception as error:  # noqa: BLE001 - the explanation says what happened
        return f"nothing: {type(error).__name__}: {error}"


def explain(*values: Any, sources: Optional[Sequence[str]] = None, stable: bool = True,
            max_items: int = 8, max_depth: int = 6, max_bytes: int = 64,
            round_trip: bool = True) -> Explanation:
    """Encodes ``values`` as one call's arguments and walks their bytes.

    ``sources`` names each value (default: its repr). ``stable`` hides
    addresses (pointer bytes are masked, regions named ``#1``, ``#2``...), so
    that the output is the same on every run; the command line turns it off.
    ``round_trip`` adds what each value becomes when a kernel returns it.
    """
    book = AddressBook(stable=stable, known_code=known_code())
    texts = [value_text(v, stable) for v in values]
    names = list(sources) if sources is not None else texts
    explanation = Explanation(sources=names, values=[
        "" if name == text or same_literal(name, v) else text
        for name, text, v in zip(names, texts, values)], setters=[], roots=[], book=book)
    scope = CallScope()
    args = (abi.TVMFFIAny * max(len(values), 1))()
    try:
        for i, value in enumerate(values):
            explanation.setters.append(_setter_name(value))
            set_arg(args[i], value, scope)
        walker = Walker(book, max_items=max_items, max_depth=max_depth, max_bytes=max_bytes)
        for i in range(len(values)):
            address = ctypes.addressof(args[i])
            explanation.roots.append(walker.any_region(address, f"args[{i}]", _ARG_SUMMARY,
                                                       depth=0))
    except Exception as error:  # noqa: BLE001 - a value that cannot be passed is explained too
        explanation.error = f"{type(error).__name__}: {error}"
    finally:
        scope.close()
    AddressBook.relabel(explanation.roots)
    if round_trip and explanation.error is None:
        explanation.returns = [_comes_back_as(v) for v in values]
    return explanation


_POINTER_KINDS = {int(abi.TVMFFITypeIndex.kTVMFFIOpaquePtr), int(abi.TVMFFITypeIndex.kTVMFFIRawStr),
                  int(abi.TVMFFITypeIndex.kTVMFFIDLTensorPtr),
                  int(abi.TVMFFITypeIndex.kTVMFFIByteArrayPtr),
                  int(abi.TVMFFITypeIndex.kTVMFFIObjectRValueRef)}


def any_hex(value: Any, stable: bool = True) -> str:
    """The 16 bytes ``value`` is passed as: ``type_index | padding or length | payload``, in hex.

    With ``stable`` an address in the payload is shown as ``..`` bytes.

    >>> any_hex(7)
    '01 00 00 00 | 00 00 00 00 | 07 00 00 00 00 00 00 00'
    >>> any_hex("hi")
    '0b 00 00 00 | 02 00 00 00 | 68 69 00 00 00 00 00 00'
    >>> any_hex([1])
    '47 00 00 00 | 00 00 00 00 | .. .. .. .. .. .. .. ..'
    """
    scope = CallScope()
    out = abi.TVMFFIAny()
    try:
        set_arg(out, value, scope)
        raw = bytes(out)
    finally:
        scope.close()
    index = int.from_bytes(raw[:4], "little", signed=True)
    payload = raw[8:].hex(" ")
    if stable and (index >= 64 or index in _POINTER_KINDS) and any(raw[8:]):
        payload = " ".join([".."] * 8)
    return f"{raw[:4].hex(' ')} | {raw[4:8].hex(' ')} | {payload}"


def render_svg(explanation: Explanation) -> str:
    """The explanation as an SVG document."""
    from .svg import render_explanation

    return render_explanation(explanation)
