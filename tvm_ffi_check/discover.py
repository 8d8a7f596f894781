"""Signatures of functions without a type schema, read from the errors they raise.

A library built with upstream's default macros exports no
``__tvm_ffi__metadata_<name>``, yet its typed functions say what they want
when called wrongly:

* upstream's C++ typed functions (``TVM_FFI_DLL_EXPORT_TYPED_FUNC``,
  ``refl::GlobalDef().def``): ``Mismatched number of arguments when calling:
  `add(0: int, 1: str) -> int`. Expected 2 but got 0 arguments``;
* functions compiled by TVM: ``Expected 3 arguments when calling:
  `vadd(A: Tensor([16], float32), B: Tensor([n], float32), x: int32)```;
* hand-written C kernels, often: ``add() takes 2 argument(s), got 0``.

:func:`signature_from_message` turns the signature in backticks into a
:class:`~tvm_ffi_check.schema.Signature` of type schemas (the keys upstream's
metadata uses, plus ``shape``/``dtype`` for a TVM tensor), and
:func:`arity_from_message` reads a bare argument count. :func:`refused`
tells a call its function's argument checks turned away (it never reached
the body) from one that ran.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from .schema import Signature

_SIGNATURE = re.compile(r"when calling:\s*`(?P<sig>[^`]*)`")
_ARITY = (
    re.compile(r"Expected (\d+) but got \d+ arguments?"),       # upstream C++
    re.compile(r"Expected (\d+) arguments?\b"),                  # TVM-compiled
    re.compile(r"takes (?:exactly )?(\d+) (?:positional )?arguments?", re.I),
    re.compile(r"expect(?:s|ed|ing)? (?:exactly )?(\d+) arguments?", re.I),
)
#: Words of an argument check: a refusal names an argument and what it should have been.
_ARGUMENT_CHECK = re.compile(r"on argument #\d+|when calling:\s*`|Expected \d+ (?:but got \d+ )?"
                             r"arguments?")

_SIMPLE = {
    "int": "int", "float": "float", "bool": "bool", "str": "ffi.String", "bytes": "ffi.Bytes",
    "None": "None", "void": "None", "Any": "Any", "AnyView": "Any", "Device": "Device",
    "DataType": "DataType", "DLTensor*": "DLTensor*", "void*": "void*", "BigInt": "ffi.BigInt",
    "handle": "void*", "Tensor": "ffi.Tensor", "Object": "ffi.Object",
}
_CONTAINERS = {
    "Array": "ffi.Array", "List": "ffi.List", "Map": "ffi.Map", "Dict": "ffi.Dict",
    "Optional": "Optional", "Variant": "Variant", "Tuple": "Tuple", "std::vector": "ffi.Array",
    "std::array": "ffi.Array", "std::optional": "Optional", "std::map": "ffi.Map",
    "std::unordered_map": "ffi.Map", "std::variant": "Variant", "std::tuple": "Tuple",
    "RValueRef": "ObjectRValueRef",
}
_TVM_SCALAR = re.compile(r"(?P<kind>u?int|float|bfloat)(?P<bits>\d+)(?:x\d+)?\Z")
_TVM_TENSOR = re.compile(r"Tensor\(\[(?P<dims>.*)\],\s*(?P<dtype>[A-Za-z0-9_]+)\)\Z")
_TVM_CONST = re.compile(r"T\.u?int\d+\((?P<value>-?\d+)\)\Z")


def split_top_level(text: str, separator: str = ",") -> List[str]:
    """Splits at ``separator`` outside brackets of any kind."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and not (ch == ">" and text[i - 1:i] == "-"):
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return [p for p in parts if p]


def _dimension(text: str):
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    constant = _TVM_CONST.match(text)
    if constant:
        return int(constant.group("value"))
    return text  # a symbolic size: the same name is the same size within a call


def type_from_text(text: str) -> Optional[dict]:
    """The type schema a type's printed name stands for; None for one not understood."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("("):  # a typed function's own signature: `(0: int) -> int`
        return {"type": "ffi.Function"}
    if text in _SIMPLE:
        return {"type": _SIMPLE[text]}
    tensor = _TVM_TENSOR.match(text)
    if tensor:
        dims = [_dimension(d) for d in split_top_level(tensor.group("dims"))]
        return {"type": "ffi.Tensor", "shape": dims, "dtype": tensor.group("dtype")}
    scalar = _TVM_SCALAR.match(text)
    if scalar:
        kind = scalar.group("kind")
        return {"type": "int" if kind in ("int", "uint") else "float"}
    if text.endswith(">") and "<" in text:
        head, inner = text[:text.index("<")].strip(), text[text.index("<") + 1:-1]
        key = _CONTAINERS.get(head)
        if key is None:
            return None
        args = [type_from_text(part) for part in split_top_level(inner)]
        if head == "std::array":
            args = args[:1]
        return {"type": key, "args": [a if a is not None else {"type": "Any"} for a in args]}
    if re.fullmatch(r"[A-Za-z_][\w.:]*\*?", text):
        return {"type": text}  # ffi.String, std::string, const char*, a library's type key
    if text == "const char*":
        return {"type": text}
    return None


def _parameter(text: str) -> Optional[dict]:
    # `0: int` (upstream), `A: Tensor([16], float32)` (TVM), or a bare type.
    label, colon, rest = text.partition(":")
    if colon and not rest.startswith(":") and re.fullmatch(r"\s*[\w.]+\s*", label):
        return type_from_text(rest)
    return type_from_text(text)


def parse_call_signature(text: str) -> Optional[Tuple[str, List[Optional[dict]], Optional[dict]]]:
    """``name(params) -> ret`` as ``(name, param schemas, return schema)``; None if not one."""
    text = text.strip()
    open_at = text.find("(")
    if open_at <= 0:
        return None
    depth = 0
    for close_at in range(open_at, len(text)):
        if text[close_at] == "(":
            depth += 1
        elif text[close_at] == ")":
            depth -= 1
            if depth == 0:
                break
    else:
        return None
    name = text[:open_at].strip()
    params = [_parameter(p) for p in split_top_level(text[open_at + 1:close_at])]
    rest = text[close_at + 1:].strip()
    returns = type_from_text(rest[2:]) if rest.startswith("->") else None
    return name, params, returns


def signature_from_message(message: str) -> Optional[Signature]:
    """The signature an argument-check error names, or None."""
    found = _SIGNATURE.search(message)
    if found is None:
        return None
    parsed = parse_call_signature(found.group("sig"))
    if parsed is None:
        return None
    _, params, returns = parsed
    return Signature(params, returns, source="error text", text=found.group("sig").strip())


def arity_from_message(message: str) -> Optional[int]:
    """The number of arguments an error says the function takes, or None."""
    for pattern in _ARITY:
        found = pattern.search(message)
        if found:
            return int(found.group(1))
    return None


def refused(kind: str, message: str) -> bool:
    """Whether an error is the function turning its arguments away before its body ran.

    A ``TypeError`` is how a function says its arguments have the wrong type
    (upstream's typed functions raise nothing else for a mismatch), and an
    argument check of a compiled function names the argument and the
    signature it was checked against.
    """
    return kind == "TypeError" or bool(_ARGUMENT_CHECK.search(message or ""))
