"""``tvm-ffi-explain``: the bytes a kernel sees when Python passes it a value.

Give it Python values (or, on the command line, Python expressions) and it
encodes them exactly as a call through :mod:`tvm_ffi_ref` would, with
:func:`tvm_ffi_ref.convert.set_arg` writing each into a ``TVMFFIAny`` of the
argument array inside a :class:`~tvm_ffi_ref.convert.CallScope`. Then it
walks the bytes: the 16 bytes of each ``TVMFFIAny`` field by field, and for
an object its header, its cell and its payload, following every pointer
(:mod:`.walk`). The result is drawn for a terminal (:mod:`.text`) or as SVG
(:mod:`.svg`).

>>> from tvm_ffi_ref.explain import explain, render_text
>>> print(render_text(explain(7)), end="")
7
  encoded by tvm_ffi_ref.convert._set_int
  comes back from a kernel that returns it as 7
<BLANKLINE>
args[0]  TVMFFIAny, 16 bytes
  the argument a kernel receives: a borrowed view (AnyView)
  TVMFFIAny
    +0   01 00 00 00              type_index    int32_t   1 = kTVMFFIInt: int64 in the payload
    +4   00 00 00 00              zero_padding  uint32_t  zero
    +8   07 00 00 00 00 00 00 00  v_int64       int64_t   7

(Addresses are left out above because ``explain`` was asked for nothing
else; the command line prints them unless given ``--stable``.)
"""

from __future__ import annotations

import ast
import ctypes
import re
from typing import Any, List, Optional, Sequence

from .. import abi
from ..convert import CallScope, _choose_setter, convert, set_arg
from .model import AddressBook, Explanation, Field, Region, Section, shorten
from .text import render_text
from .walk import Walker, known_code

__all__ = ["explain", "render_text", "render_svg", "Explanation", "Region", "Section", "Field",
           "AddressBook", "Walker"]

_ARG_SUMMARY = "the argument a kernel receives: a borrowed view (AnyView)"


def _setter_name(value: Any) -> str:
    setter = _choose_setter(value)
    return f"{setter.__module__}.{setter.__name__}"


def describe(value: Any, limit: int = 4) -> str:
    """A repr of what the front end gives back, without addresses (so it is stable).

    Containers show up to ``limit`` elements; objects their class and type key.
    """
    from ..container import Array, Dict, List, Map
    from ..function import Error, Function
    from ..object import Object
    from ..string import Bytes, String
    from ..tensor import Shape, Tensor

    name = type(value).__name__
    if isinstance(value, (String, Bytes, Shape)):
        return f"{name}({describe(type(value).__mro__[1](value), limit)})"
    if isinstance(value, (Array, List)):
        items = [describe(v, limit) for v in list(value)[:limit]]
        more = ", ..." if len(value) > limit else ""
        return f"{name}([{', '.join(items)}{more}])"
    if isinstance(value, (Map, Dict)):
        items = [f"{describe(k, limit)}: {describe(v, limit)}"
                 for k, v in list(value.items())[:limit]]
        more = ", ..." if len(value) > limit else ""
        return f"{name}({{{', '.join(items)}{more}}})"
    if isinstance(value, Tensor):
        return f"Tensor(shape={value.shape}, dtype={value.dtype}, device={value.device})"
    if isinstance(value, Error):
        return f"Error({value.kind}: {shorten(value.message, 40)})"
    if isinstance(value, Function):
        return "Function"
    if isinstance(value, Object):
        return f"{name} ({value.type_key})"
    if isinstance(value, ctypes.c_void_p):
        return "c_void_p"
    if isinstance(value, (str, bytes)):
        return shorten(repr(value), 50)
    text = repr(value)
    return shorten(text, 60) if " at 0x" not in text else f"the same {name} object"


_ADDRESS = re.compile(r" (at|object at) 0x[0-9a-fA-F]+")


def value_text(value: Any, stable: bool = True) -> str:
    """The repr of a value, objects described without their address (always) and other
    addresses dropped when ``stable``."""
    from ..object import Object

    if isinstance(value, Object):
        return describe(value)
    text = repr(value)
    if stable:
        text = _ADDRESS.sub("", text)
    return shorten(text, 70)


def _same_literal(source: str, value: Any) -> bool:
    try:
        return repr(ast.literal_eval(source)) == repr(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _comes_back_as(value: Any) -> str:
    try:
        return describe(convert(value))
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
        "" if name == text or _same_literal(name, v) else text
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


def render_svg(explanation: Explanation) -> str:
    """The explanation as an SVG document."""
    from .svg import render_explanation

    return render_explanation(explanation)
