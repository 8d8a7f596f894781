"""Typed global functions: how packed arguments are checked against a signature.

Upstream declares most ``ffi.*`` globals as typed C++ functions and derives
their packed form from the C++ signature. The packed form checks the argument
count first, then converts each argument in order, and reports failures as
``TypeError`` with a text that spells the whole signature::

    Mismatched number of arguments when calling: `ffi.ArraySize(0: ffi.Array) -> int`.
    Expected 1 but got 2 arguments
    Mismatched type on argument #1 when calling: `ffi.ArrayGetItem(0: ffi.Array, 1: int)
    -> Any`. Expected `int` but got `float`

(each on one line). A front end may show these texts to users, so the
reference reproduces them. :class:`Signature` holds the spelling of each
parameter; the spelling also decides how the argument converts:

=============  ==================================================================
``int``        an int or a bool payload, as a Python int
``Any``        any value, made owned for the duration of the call (a raw C
               string becomes a str, as upstream's ``Any`` conversion does)
``ffi.Array``  (and ``ffi.List``, ``ffi.Map``, ``ffi.Dict``) an object of exactly
               that type, borrowed, as its address
``List<Any>``  a List, or an Array copied into a temporary List that dies
               after the call (so mutating it changes nothing the caller sees)
``Dict<Any, Any>``  a Dict, or a Map copied into a temporary Dict likewise
=============  ==================================================================
"""

from __future__ import annotations

from typing import Callable, Dict, List, Sequence

from .. import abi
from . import anyvalue, memory
from .functions import def_global
from .registry import TYPES
from .slots import FFIError

TI = abi.TVMFFITypeIndex

#: Object parameters that accept exactly one type index.
EXACT_OBJECT_PARAMS: Dict[str, int] = {
    "ffi.Array": TI.kTVMFFIArray,
    "ffi.List": TI.kTVMFFIList,
    "ffi.Map": TI.kTVMFFIMap,
    "ffi.Dict": TI.kTVMFFIDict,
}

#: Converting parameters: spelling -> (the type taken as is, the type copied, copier).
#: Copiers are installed by the modules that own the container (see :func:`register_copier`).
_COPIERS: Dict[str, Callable[[int], int]] = {}
CONVERTING_PARAMS: Dict[str, tuple] = {
    "List<Any>": (TI.kTVMFFIList, TI.kTVMFFIArray),
    "Dict<Any, Any>": (TI.kTVMFFIDict, TI.kTVMFFIMap),
}


def register_copier(spelling: str, copier: Callable[[int], int]) -> None:
    """Sets how a converting parameter copies its other accepted type (address -> new address)."""
    _COPIERS[spelling] = copier


def type_key_of(value: abi.TVMFFIAny) -> str:
    """The type key upstream names a value's type by in error messages."""
    try:
        return TYPES.type_key(value.type_index)
    except FFIError:
        return f"type_index={value.type_index}"


class Signature:
    """The C++ signature of a typed global: its name, parameter spellings and result."""

    def __init__(self, name: str, params: Sequence[str], returns: str):
        self.name = name
        self.params = list(params)
        self.returns = returns
        spelled = ", ".join(f"{i}: {p}" for i, p in enumerate(self.params))
        self.text = f"{name}({spelled}) -> {returns}"

    def check_count(self, args: Sequence[abi.TVMFFIAny]) -> None:
        """Raises upstream's TypeError when the number of arguments is wrong."""
        if len(args) != len(self.params):
            raise FFIError("TypeError", f"Mismatched number of arguments when calling: "
                           f"`{self.text}`. Expected {len(self.params)} but got {len(args)} "
                           "arguments")

    def mismatch(self, i: int, value: abi.TVMFFIAny) -> FFIError:
        """Upstream's TypeError for argument ``i`` not converting to its parameter type."""
        return FFIError("TypeError", f"Mismatched type on argument #{i} when calling: "
                        f"`{self.text}`. Expected `{self.params[i]}` but got "
                        f"`{type_key_of(value)}`")

    def convert(self, args: Sequence[abi.TVMFFIAny], i: int, owned_objects: List[int],
                owned_anys: List[abi.TVMFFIAny]):
        """Argument ``i`` converted for its parameter; temporaries go to the ``owned_*`` lists."""
        param, value = self.params[i], args[i]
        index = value.type_index
        if param == "int":
            if index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
                raise self.mismatch(i, value)
            return value.v_int64
        if param == "Any":
            owned = abi.TVMFFIAny()
            anyvalue.view_to_owned(value, owned)
            owned_anys.append(owned)
            return owned
        if param in EXACT_OBJECT_PARAMS:
            if index != EXACT_OBJECT_PARAMS[param]:
                raise self.mismatch(i, value)
            return value.v_ptr
        if param in CONVERTING_PARAMS:
            same, other = CONVERTING_PARAMS[param]
            if index == same:
                return value.v_ptr
            if index == other:
                copy = _COPIERS[param](value.v_ptr)
                owned_objects.append(copy)
                return copy
            raise self.mismatch(i, value)
        raise ValueError(f"{self.text}: no conversion for parameter spelling {param!r}")


def typed_global(name: str, params: Sequence[str], returns: str):
    """Registers the decorated ``impl(result, *converted_args)`` as typed global ``name``.

    The packed function checks and converts the arguments as upstream does,
    calls ``impl``, and then releases every temporary the conversion made.
    """
    signature = Signature(name, params, returns)

    def register(impl):
        def packed(args, result):
            signature.check_count(args)
            owned_objects: List[int] = []
            owned_anys: List[abi.TVMFFIAny] = []
            try:
                values = [signature.convert(args, i, owned_objects, owned_anys)
                          for i in range(len(args))]
                impl(result, *values)
            finally:
                for value in owned_anys:
                    anyvalue.dec_ref_any(value)
                for address in owned_objects:
                    memory.dec_ref(address)

        def_global(name)(packed)
        impl.signature = signature
        return impl

    return register
