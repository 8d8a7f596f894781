"""Typed functions: how packed arguments are checked against a signature.

Its twin in C: ``tvm_ffi_fast/src/functions.c``.

Upstream declares most ``ffi.*`` globals as typed C++ functions and derives
their packed form from the C++ signature. The packed form checks the argument
count first, then converts each argument -- the last one first, since the
conversions are the C++ call's argument expressions, which the compiler
upstream is built with evaluates right to left, so with two bad arguments the
later one is reported -- and reports failures as ``TypeError`` with a text
that spells the whole signature::

    Mismatched number of arguments when calling: `ffi.ArraySize(0: ffi.Array) -> int`.
    Expected 1 but got 2 arguments
    Mismatched type on argument #1 when calling: `ffi.ArrayGetItem(0: ffi.Array, 1: int)
    -> Any`. Expected `int` but got `float`

(each on one line). A front end may show these texts to users, so the
reference reproduces them. The same signature is also published: a typed
global's metadata is its *type schema*, JSON naming the parameter and result
types (``ffi.GetGlobalFuncMetadata`` returns it), while a function written
against raw packed arguments has the bare schema ``{"type":"ffi.Function"}``.

:class:`Signature` holds the spelling of each parameter; the spelling decides
how the argument converts and how it appears in the schema:

==================  ====================  ===================================================
spelling            schema type           the argument, as the implementation receives it
==================  ====================  ===================================================
``int``             ``int``               an int or a bool payload, as a Python int
``bool``            ``bool``              an int or a bool payload, as a Python bool
``Optional<int>``   ``Optional<int>``     None, or an int as for ``int``
``Any``             ``Any``               any value, made owned for the duration of the call
                                          (a raw C string becomes a str, as upstream's ``Any``
                                          conversion does); ``AnyView`` the same, spelled so
``str``             ``ffi.String``        a str (or a raw C string, made a str), owned
``bytes``           ``ffi.Bytes``         bytes (or a byte-array pointer, made bytes), owned
``void*``           ``void*``             an opaque pointer or None, as an int (0 for None)
``ffi.Object``      ``ffi.Object``        any object, borrowed, as its address
``ffi.Array`` ...   ``ffi.Array`` ...     (and ``ffi.List``, ``ffi.Map``, ``ffi.Dict``,
                                          ``ffi.Function``, ``ffi.Module``) an object of
                                          exactly that type, borrowed, as its address
``List<Any>``       ``ffi.List<Any>``     a List, or an Array copied into a temporary List that
                                          dies after the call (so mutating it changes nothing
                                          the caller sees)
``Dict<Any, Any>``  ``ffi.Dict<Any,Any>`` a Dict, or a Map copied into a temporary Dict likewise
==================  ====================  ===================================================

Results are spelled the same way, plus ``void`` (schema ``None``),
``Array<str>``, ``Optional<str>``, ``Optional<ffi.Function>`` and ``Device``.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, List, Sequence

from tvm_ffi_common import abi

from . import anyvalue, memory
from .container_locks import HELD_PARAMS, hold_all, release_all
from .functions import PACKED_METADATA, def_global, new_python_function
from .registry import TYPES
from .slots import FFIError

TI = abi.TVMFFITypeIndex

#: Object parameters by the type index they take (that type or one derived from it).
OBJECT_PARAMS: Dict[str, int] = {
    "ffi.Array": TI.kTVMFFIArray,
    "ffi.List": TI.kTVMFFIList,
    "ffi.Map": TI.kTVMFFIMap,
    "ffi.Dict": TI.kTVMFFIDict,
    "ffi.Function": TI.kTVMFFIFunction,
    "ffi.Module": TI.kTVMFFIModule,
}

#: Converting parameters: spelling -> (the type taken as is, the type copied, copier).
#: Copiers are installed by the modules that own the container (see :func:`register_copier`).
_COPIERS: Dict[str, Callable[[int], int]] = {}
CONVERTING_PARAMS: Dict[str, tuple] = {
    "List<Any>": (TI.kTVMFFIList, TI.kTVMFFIArray),
    "Dict<Any, Any>": (TI.kTVMFFIDict, TI.kTVMFFIMap),
}

#: Strings and bytes: spelling -> (the inline and object forms, the view kind it converts).
_STRING_PARAMS: Dict[str, tuple] = {
    "str": ((TI.kTVMFFISmallStr, TI.kTVMFFIStr), TI.kTVMFFIRawStr),
    "bytes": ((TI.kTVMFFISmallBytes, TI.kTVMFFIBytes), TI.kTVMFFIByteArrayPtr),
}


def _schema(type_key: str, *args: dict) -> dict:
    return {"type": type_key, "args": list(args)} if args else {"type": type_key}


_ANY = _schema("Any")

#: Every spelling's type schema (as upstream's TypeSchema JSON names it).
SCHEMAS: Dict[str, dict] = {
    "int": _schema("int"),
    "bool": _schema("bool"),
    "Any": _ANY,
    "AnyView": _ANY,
    "str": _schema("ffi.String"),
    "bytes": _schema("ffi.Bytes"),
    "void*": _schema("void*"),
    "void": _schema("None"),
    "ffi.Object": _schema("ffi.Object"),
    "List<Any>": _schema("ffi.List", _ANY),
    "Dict<Any, Any>": _schema("ffi.Dict", _ANY, _ANY),
    "Array<str>": _schema("ffi.Array", _schema("ffi.String")),
    "Optional<str>": _schema("Optional", _schema("ffi.String")),
    "Optional<int>": _schema("Optional", _schema("int")),
    "Optional<ffi.Function>": _schema("Optional", _schema("ffi.Function")),
    "Device": _schema("Device"),
    **{spelling: _schema(spelling) for spelling in OBJECT_PARAMS},
}


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"))


def metadata_json(schema: dict) -> bytes:
    """A global's metadata: ``{"type_schema": <the schema, as a JSON string>}``."""
    return _compact({"type_schema": _compact(schema)}).encode()


assert PACKED_METADATA == metadata_json(_schema("ffi.Function"))


def register_object_type(type_key: str, type_index: int) -> None:
    """Makes ``type_key`` a spelling: a parameter taking exactly that type, and ``Array<type_key>``."""
    OBJECT_PARAMS[type_key] = type_index
    SCHEMAS[type_key] = _schema(type_key)
    SCHEMAS[f"Array<{type_key}>"] = _schema("ffi.Array", _schema(type_key))


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
    """The C++ signature of a typed function: its name, parameter spellings and result."""

    def __init__(self, name: str, params: Sequence[str], returns: str):
        for spelling in [*params, returns]:
            if spelling not in SCHEMAS:
                raise ValueError(f"{name}: no type schema for spelling {spelling!r}")
        self.name = name
        self.params = list(params)
        self.returns = returns
        spelled = ", ".join(f"{i}: {p}" for i, p in enumerate(self.params))
        self.text = f"{name}({spelled}) -> {returns}"

    @property
    def metadata(self) -> bytes:
        """The metadata upstream registers for a typed function of this signature."""
        return metadata_json({"type": "ffi.Function", "named_args": {
            "return": [SCHEMAS[self.returns]],
            "params": [SCHEMAS[p] for p in self.params]}})

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
        if param == "Optional<int>" and index == TI.kTVMFFINone:
            return None
        if param in ("int", "bool", "Optional<int>"):
            if index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
                raise self.mismatch(i, value)
            return bool(value.v_int64) if param == "bool" else value.v_int64
        if param in ("Any", "AnyView") or param in _STRING_PARAMS:
            if param in _STRING_PARAMS:
                forms, view_kind = _STRING_PARAMS[param]
                if index not in forms and not (index == view_kind and value.v_ptr):
                    raise self.mismatch(i, value)
            owned = abi.TVMFFIAny()
            anyvalue.view_to_owned(value, owned)
            owned_anys.append(owned)
            return owned
        if param == "void*":
            if index == TI.kTVMFFINone:
                return 0
            if index != TI.kTVMFFIOpaquePtr:
                raise self.mismatch(i, value)
            return value.v_ptr or 0
        if param == "ffi.Object":
            if index < TI.kTVMFFIStaticObjectBegin:
                raise self.mismatch(i, value)
            return value.v_ptr
        if param in OBJECT_PARAMS:
            # an object of the declared type or of a type derived from it, as a C++
            # ObjectRef parameter accepts (TIRx passes its own StructuralMutator subclass)
            expected = OBJECT_PARAMS[param]
            if index != expected and not (index >= TI.kTVMFFIStaticObjectBegin and
                                          TYPES.is_instance(index, expected)):
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
        raise ValueError(f"{self.text}: {param!r} is a result type, not a parameter type")

    def packed(self, impl) -> Callable[[Sequence[abi.TVMFFIAny], abi.TVMFFIAny], None]:
        """The packed form of ``impl(result, *converted_args)``: check, convert, call, release.

        The List and Dict the function works on (its ``ffi.List``/``ffi.Dict``
        parameters) are held while it runs (``container_locks.py``).
        """

        def call(args, result):
            self.check_count(args)
            owned_objects: List[int] = []
            owned_anys: List[abi.TVMFFIAny] = []
            try:
                values = [self.convert(args, i, owned_objects, owned_anys)
                          for i in reversed(range(len(args)))]
                values.reverse()
                held = hold_all(value for param, value in zip(self.params, values)
                                if param in HELD_PARAMS and value)
                try:
                    impl(result, *values)
                finally:
                    release_all(held)
            finally:
                for value in owned_anys:
                    anyvalue.dec_ref_any(value)
                for address in owned_objects:
                    memory.dec_ref(address)

        return call


def typed_function(params: Sequence[str], returns: str, impl, on_destroy=None,
                   name: str = "") -> int:
    """A Function object (owned address) calling ``impl(result, *converted_args)``.

    Its errors spell the signature with ``name``: a type's method is named
    ``<type key>.<method>``; upstream's typed lambdas have no name, so their
    texts read ``(0: int) -> Any``. ``on_destroy()`` runs when the function dies.
    """
    return new_python_function(Signature(name, params, returns).packed(impl), on_destroy)


def typed_global(name: str, params: Sequence[str], returns: str):
    """Registers the decorated ``impl(result, *converted_args)`` as typed global ``name``.

    The packed function checks and converts the arguments as upstream does,
    calls ``impl``, and then releases every temporary the conversion made; the
    global's metadata is the signature's type schema.
    """
    signature = Signature(name, params, returns)

    def register(impl):
        def_global(name, metadata=signature.metadata)(signature.packed(impl))
        impl.signature = signature
        return impl

    return register
