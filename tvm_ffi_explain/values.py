"""Python values described without addresses, so that explanations are reproducible."""

from __future__ import annotations

import ast
import ctypes
import re
from typing import Any

from .model import shorten


def describe(value: Any, limit: int = 4) -> str:
    """A repr of what the front end gives back, without addresses (so it is stable).

    Containers show up to ``limit`` elements; objects their class and type key.
    """
    from tvm_ffi_ref.container import Array, Dict, List, Map
    from tvm_ffi_ref.function import Error, Function
    from tvm_ffi_ref.object import Object
    from tvm_ffi_ref.string import Bytes, String
    from tvm_ffi_ref.tensor import Shape, Tensor

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
        try:
            dtype_text = str(value.dtype)
        except ValueError:  # a dtype the runtime cannot spell (complex64 is code 5): its triple
            dtype_text = "(code, bits, lanes)=%s" % (value._fields().dtype,)
        return f"Tensor(shape={value.shape}, dtype={dtype_text}, device={value.device})"
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
    from tvm_ffi_ref.object import CObject

    if isinstance(value, CObject):
        return describe(value)
    text = repr(value)
    if stable:
        text = _ADDRESS.sub("", text)
    return shorten(text, 70)


def same_literal(source: str, value: Any) -> bool:
    try:
        return repr(ast.literal_eval(source)) == repr(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
