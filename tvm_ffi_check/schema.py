"""Type schemas (``__tvm_ffi__metadata_<name>``) and the arguments they call for.

A kernel built with ``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` and
``TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1`` exports, next to
``__tvm_ffi_<name>``, a function returning the JSON text
``{"type_schema": "<schema>"}``, where ``<schema>`` is itself JSON text (upstream
writes it as an escaped string; an object is accepted too). A schema is
``{"type": <key>}`` plus ``"args"`` for parameterised types, e.g.
``{"type": "ffi.Array", "args": [{"type": "int"}]}``. A function's schema is
``{"type": "ffi.Function", "named_args": {"return": [R], "params": [P...]}}``
(upstream 0.1.x); the older positional form ``"args": [R, P...]`` is read too.

Type keys are upstream's ``StaticTypeKey`` names ("None", "bool", "int",
"float", "void*", "DataType", "Device", "DLTensor*", "const char*", "Any",
"ffi.String", "ffi.Array", ...) plus the C++-only "std::string", "Optional",
"Variant" and "Tuple". :func:`strategy_for` turns one into a hypothesis
strategy of values (:mod:`tvm_ffi_check.values`); a key it does not know
(a library's own object type, say) gets the sweep of value kinds, which a
correct kernel answers with a TypeError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hypothesis import strategies as st

from .result_schema import ALIASES, describe_type  # noqa: F401 - describe_type: re-exported
from .values import (
    FUNCTION_BEHAVIOURS,
    DeviceArg,
    DictArg,
    DTypeArg,
    ErrorArg,
    FunctionArg,
    ListArg,
    ObjectArg,
    OpaquePtrArg,
    RawStrArg,
    ShapeArg,
    TensorArg,
)

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
#: Most generated containers stay small: a kernel's bugs rarely need big ones.
_MAX_ITEMS = 4
_DTYPES = ("float32", "float64", "float16", "int32", "int64", "int8", "uint8", "bool")
_DEVICES = (("cpu", 0), ("cpu", 1), ("cuda", 0))


#: What a packed function's schema is: ``{"type": "ffi.Function"}`` and nothing more.
PACKED = "an ffi.Function schema without parameters"


class SchemaError(ValueError):
    """Metadata that is not the JSON upstream writes."""


@dataclass
class Signature:
    """What a function's type schema says: its parameters and return type.

    ``source`` says where it comes from: ``"metadata"`` (an exported
    ``__tvm_ffi__metadata_<name>``), ``"registry"`` (the schema registered
    with a global or method), ``"error text"`` (the signature a refused call
    named, :mod:`.discover`) or ``"arity"`` (only the number of arguments is
    known: each parameter is None). ``text`` is the signature as the error
    printed it.
    """

    params: List[Optional[dict]]
    returns: Optional[dict]
    source: str = "metadata"
    text: str = ""

    def describe(self) -> str:
        """``(int, ffi.String) -> int``."""
        ret = describe_type(self.returns) if self.returns is not None else "?"
        return f"({', '.join(describe_type(p) for p in self.params)}) -> {ret}"


def parse_metadata(text: str) -> Optional[Signature]:
    """The signature in metadata JSON text; None when it carries no type schema.

    Raises :class:`SchemaError` when the text is not valid metadata.
    """
    try:
        metadata = json.loads(text)
    except ValueError as exc:
        raise SchemaError(f"the metadata is not JSON: {exc}") from None
    if not isinstance(metadata, dict):
        raise SchemaError("the metadata is not a JSON object")
    schema = metadata.get("type_schema")
    if schema is None:
        return None
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as exc:
            raise SchemaError(f"type_schema is not JSON: {exc}") from None
    return signature_of(schema)


def _check_type(schema: Any) -> dict:
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        raise SchemaError(f"not a type schema: {schema!r}")
    for arg in schema.get("args", ()) or ():
        _check_type(arg)
    return schema


def signature_of(schema: Any) -> Signature:
    """The signature of an ``ffi.Function`` type schema."""
    _check_type(schema)
    if schema["type"] != "ffi.Function":
        raise SchemaError(f"the type schema is a {schema['type']}, not an ffi.Function")
    named = schema.get("named_args")
    if isinstance(named, dict):
        returns = named.get("return") or [None]
        params = named.get("params")
        if not isinstance(params, list) or not isinstance(returns, list):
            raise SchemaError("named_args needs lists 'return' and 'params'")
        return Signature([_check_type(p) for p in params],
                         None if returns[0] is None else _check_type(returns[0]))
    args = schema.get("args")
    if isinstance(args, list) and args:
        return Signature(list(args[1:]), args[0])
    raise SchemaError(f"{PACKED} ('named_args' or 'args')")


# ------------------------------------------------------------- strategies


@dataclass
class Context:
    """What a function's strategies draw on besides its schema.

    ``catalog``: the library's own types by key (:func:`tvm_ffi_check.targets.type_catalog`);
    ``sizes``: a call's size for each symbolic tensor dimension.
    """

    catalog: Dict[str, dict] = field(default_factory=dict)
    sizes: Dict[str, int] = field(default_factory=dict)
    #: Objects earlier calls returned, by type (:class:`tvm_ffi_check.pool.Pool`), or None.
    pool: Any = None

    def pooled(self, key: str) -> Optional[st.SearchStrategy]:
        """Objects from the pool a ``key`` parameter accepts, or None when there are none."""
        recipes = self.pool.serving(key) if self.pool is not None else []
        return st.sampled_from(recipes) if recipes else None


_ints = st.integers(_INT64_MIN, _INT64_MAX)
_floats = st.floats(allow_nan=True, allow_infinity=True)
_text = st.text(max_size=20)
_binary = st.binary(max_size=20)


def _tensors(as_pointer: Any = False) -> st.SearchStrategy:
    pointer = st.booleans() if as_pointer is None else st.just(as_pointer)
    return st.builds(
        TensorArg,
        dtype=st.sampled_from(("float32",) * 4 + _DTYPES),
        shape=st.lists(st.integers(0, 5), max_size=3).map(tuple),
        seed=st.integers(0, 2 ** 16),
        layout=st.sampled_from(("contiguous", "contiguous", "transposed", "offset")),
        as_pointer=pointer,
    )


_devices = st.sampled_from(_DEVICES).map(lambda d: DeviceArg(*d))
_dtypes = st.sampled_from(_DTYPES).map(DTypeArg)
_functions = st.sampled_from(FUNCTION_BEHAVIOURS).map(FunctionArg)
_shapes = st.lists(st.integers(0, 8), max_size=_MAX_ITEMS).map(lambda d: ShapeArg(tuple(d)))
_pointers = st.sampled_from(("null", "buffer")).map(OpaquePtrArg)
_big_ints = st.one_of(st.integers(max_value=_INT64_MIN - 1), st.integers(min_value=_INT64_MAX + 1))
_keys = st.one_of(_text, _ints)


def sweep() -> st.SearchStrategy:
    """One value of any kind a caller may pass: the fallback with no schema."""
    scalars = st.one_of(st.none(), st.booleans(), _ints, _floats, _text, _binary)
    return st.one_of(
        scalars,
        _tensors(as_pointer=None),
        _devices,
        _dtypes,
        _functions,
        _shapes,
        _pointers,
        st.lists(scalars, max_size=_MAX_ITEMS),
        st.dictionaries(_keys, scalars, max_size=3),
    )


def sweep_arguments(max_args: int = 3) -> st.SearchStrategy:
    """Argument lists of 0..max_args values of any kind (a function without a schema)."""
    return st.lists(sweep(), max_size=max_args).map(tuple)


def strategy_for(schema: Optional[dict], depth: int = 0,
                 context: Optional[Context] = None) -> st.SearchStrategy:
    """A strategy of values a caller may pass for a parameter of type ``schema``.

    ``context`` holds the library's own types (an argument of one is made by
    its constructor, :mod:`.objects`) and the sizes of a call's symbolic
    tensor dimensions.
    """
    if schema is None:
        return sweep()
    context = context or Context()
    key = ALIASES.get(schema["type"], schema["type"])
    args = schema.get("args") or []

    def arg(i: int) -> st.SearchStrategy:
        return strategy_for(args[i] if i < len(args) else None, depth + 1, context)

    if "shape" in schema:
        return _shaped_tensors(schema, context)
    if schema.get("guessed"):  # a kind one probe call accepted: mostly it, and every kind
        plain = strategy_for({k: v for k, v in schema.items() if k != "guessed"}, depth, context)
        # three in four of the guessed kind (one_of would flatten the sweep's many branches
        # beside it, and the guess would come up once in sixteen)
        return st.integers(0, 3).flatmap(lambda pick: plain if pick else sweep())

    if key == "None":
        return st.none()
    if key == "bool":
        return st.booleans()
    if key == "int":
        return _ints
    if key == "float":
        return _floats
    if key in ("ffi.String", "std::string", "ffi.SmallStr"):
        return _text
    if key == "const char*":
        return st.one_of(_text, _text.map(RawStrArg))
    if key in ("ffi.Bytes", "ffi.SmallBytes", "TVMFFIByteArray*"):
        return _binary
    if key == "ffi.BigInt":
        return st.one_of(_ints, _big_ints)
    if key == "DataType":
        return _dtypes
    if key == "Device":
        return _devices
    if key == "DLTensor*":
        return _tensors(as_pointer=None)
    if key == "ffi.Tensor":
        return _tensors(as_pointer=False)
    if key == "void*":
        return _pointers
    if key == "ffi.Function":
        return _functions
    if key == "ffi.Shape":
        return _shapes
    if key == "ffi.Error":
        return st.builds(ErrorArg, st.sampled_from(("ValueError", "TypeError")), _text)
    if key == "Optional":
        return st.one_of(st.none(), arg(0))
    if key == "Variant":
        return st.one_of(*[strategy_for(a, depth + 1, context) for a in args]) if args else sweep()
    if key == "ObjectRValueRef":
        return arg(0)
    if key == "Tuple":
        return st.tuples(*[strategy_for(a, depth + 1, context) for a in args])
    if key in ("ffi.Array", "ffi.List"):
        items = st.lists(arg(0), max_size=_MAX_ITEMS if depth < 2 else 1)
        if key == "ffi.List":
            return items.map(lambda xs: ListArg(tuple(xs)))
        return items
    if key in ("ffi.Map", "ffi.Dict"):
        keys = _hashable(args[0] if args else None, depth, context)
        pairs = st.dictionaries(keys, arg(1), max_size=3 if depth < 2 else 1)
        if key == "ffi.Dict":
            return pairs.map(lambda d: DictArg(tuple(d.items())))
        return pairs
    if key == "ffi.Object":
        others = st.one_of(st.lists(st.integers(0, 9), max_size=2),
                           _text.map(lambda s: s + "-" * 8), _shapes)
        pooled = context.pooled(key)  # the library's own objects: what such a parameter wants
        return others if pooled is None else st.one_of(pooled, others)
    # Objects the library itself returned, when there are any: a constructor called with
    # generated arguments may itself crash, and that is the constructor's finding.
    made = context.pooled(key) or _library_objects(key, depth, context)
    return made if made is not None else sweep()  # "Any" and types nobody can make


def _library_objects(key: str, depth: int, context: Context) -> Optional[st.SearchStrategy]:
    """Objects of one of the library's own types, made by its constructor; None if none."""
    from .objects import constructor

    kind = context.catalog.get(key)
    made = constructor(kind) if kind is not None and depth <= 2 else None
    if made is None:
        return None
    params = st.tuples(*[strategy_for(p, depth + 1, context) for p in made.params])
    return params.map(lambda values: ObjectArg(key, made.via, values, made.fields))


_NUMPY_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64"}


def _shaped_tensors(schema: dict, context: Context) -> st.SearchStrategy:
    """Tensors of the shape and dtype a compiled function named (mostly), or any tensor."""
    dtype = schema.get("dtype")
    if dtype not in _NUMPY_DTYPES:
        return _tensors(as_pointer=None)
    dims = [st.just(d) if isinstance(d, int) else
            st.just(context.sizes[d]) if d in context.sizes else st.integers(0, 8)
            for d in schema["shape"]]
    exact = st.builds(TensorArg, dtype=st.just(dtype), shape=st.tuples(*dims),
                      seed=st.integers(0, 2 ** 16), layout=st.just("contiguous"),
                      as_pointer=st.booleans())
    return st.one_of(exact, exact, exact, _tensors(as_pointer=None))


def _hashable(schema: Optional[dict], depth: int, context: Context) -> st.SearchStrategy:
    """Map keys: what a Python dict can hold for a key type."""
    if schema is None or schema["type"] == "Any":
        return _keys
    if schema["type"] in ("int", "bool", "float", "ffi.String", "std::string", "const char*",
                          "ffi.Bytes", "None"):
        return strategy_for(schema, depth + 1, context)
    if schema["type"] in ("Optional", "Variant"):
        return st.one_of(*[_hashable(a, depth, context) for a in schema.get("args") or [None]])
    return _keys


def _symbols(schema: Optional[dict]) -> List[str]:
    return [d for d in (schema or {}).get("shape", ()) if isinstance(d, str)]


def arguments_for(signature: Optional[Signature],
                  context: Optional[Context] = None) -> st.SearchStrategy:
    """A strategy of whole argument tuples for a function (a sweep without a signature).

    A symbolic tensor dimension (``n`` in ``Tensor([n], float32)``) takes one
    size per call, the same in every tensor that names it.
    """
    if signature is None:
        return sweep_arguments()
    context = context or Context()
    symbols = sorted({name for p in signature.params for name in _symbols(p)})
    if not symbols:
        return st.tuples(*[strategy_for(p, 0, context) for p in signature.params])

    @st.composite
    def sized(draw):
        sizes = {name: draw(st.integers(0, 8)) for name in symbols}
        inner = Context(context.catalog, sizes, context.pool)
        return tuple(draw(strategy_for(p, 0, inner)) for p in signature.params)

    return sized()
