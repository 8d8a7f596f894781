"""The reflected types upstream's library registers when it loads.

Its twin in C: ``tvm_ffi_fast/src/reflection.c``.

A *reflected* type describes its object layout in its ``TVMFFITypeInfo``:
fields (name, offset, size, a getter and a setter, an optional default),
methods (Function objects, static or not), and metadata (the object's total
size, how structural equality treats it, and a ``creator`` that makes an
empty object). Generic code -- a front end printing an object, a serializer,
``ffi.MakeObjectFromPackedArgs`` (:mod:`.reflection_make_object`) -- works from these
records alone.

Upstream's library registers a few such types as it loads; a C++ kernel may
look at them, so this runtime registers the same records (the type keys and
indices themselves are in ``registry.py``):

============================  ====  =======================================================
type                          size  fields (offset: name, kind)
============================  ====  =======================================================
``ffi.Module`` (73)             48  24: ``imports_`` (Array of modules)
``ffi.VisitInterrupt`` (77)     40  24: ``value`` (Any, default None)
``ffi.BigInt`` (78)             32  --
``ffi.EnumState`` (128)         48  24: ``entries`` (List), 32: ``indexes``, 40: ``attrs``
                                    (Dicts); static method ``__ffi_init__``
``ffi.Enum`` (129)              48  24: ``_int_index`` (int), 32: ``_str_index`` (str)
``ffi.IntEnum`` (130)           48  24: ``value`` (int)
``ffi.StrEnum`` (131)           48  32: ``value`` (str)
``ffi.reflection.AccessStep``   48  24: ``kind`` (int32), 32: ``key`` (Any)
``ffi.reflection.AccessPath``   48  24: ``parent``, 32: ``step`` (objects or NULL),
                                    40: ``depth`` (int32); methods ``_root``, ``_extend``,
                                    ``_attr`` ... ``_path_equal``
``ffi.StructuralVisitor``       40  --
``ffi.VisitErrorContext``       40  24: ``reverse_visit_pattern`` (List), 32:
                                    ``prev_error_context``
``ffi.StructuralMutator``       40  --
``ffi.StructuralKey``           48  24: ``key`` (Any), 40: ``hash_i64`` (int);
                                    static method ``__ffi_init__``
============================  ====  =======================================================

Objects of these types made here are plain: the header, then the fields at
their offsets. A 16-byte field holds an owned Any; an 8-byte field of an
object type holds an owned object pointer or NULL; the rest are integers.
Releasing an object releases its fields (and its ancestors' fields) by those
rules. Every type gets ``__ffi_type_final__`` (no subclasses), as upstream.
``ffi.StructuralKey.__ffi_init__`` is the constructor :mod:`.structural_key`
implements (it hashes the key structurally).
"""

from __future__ import annotations

import ctypes
import json
from typing import List, Optional

from tvm_ffi_common import abi

from . import anyvalue, errors, maps, memory, sequences, strings
from .functions import set_bool, set_object
from .registry import TYPES
from .signatures import Signature, register_object_type, type_key_of, typed_function
from .slots import ErrorAlreadyRaised, FFIError

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask
SEQ = abi.TVMFFISEqHashKind
ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)


def _index(key: str) -> int:
    return TYPES.key_to_index(key.encode())


ENUM_STATE = _index("ffi.EnumState")
ENUM = _index("ffi.Enum")
INT_ENUM = _index("ffi.IntEnum")
STR_ENUM = _index("ffi.StrEnum")
ACCESS_STEP = _index("ffi.reflection.AccessStep")
ACCESS_PATH = _index("ffi.reflection.AccessPath")
STRUCTURAL_VISITOR = _index("ffi.StructuralVisitor")
VISIT_ERROR_CONTEXT = _index("ffi.VisitErrorContext")
STRUCTURAL_MUTATOR = _index("ffi.StructuralMutator")
STRUCTURAL_KEY = _index("ffi.StructuralKey")

register_object_type("ffi.reflection.AccessPath", ACCESS_PATH)
register_object_type("ffi.reflection.AccessStep", ACCESS_STEP)


# ----------------------------------------------------------- field access


def c_callback(prototype):
    """Wraps a Python field accessor as a C callback that reports errors as C does."""

    def wrap(fn):
        def call(*args):
            try:
                fn(*args)
                return 0
            except ErrorAlreadyRaised:
                pass
            except FFIError as error:
                errors.raise_error(error.kind, error.message)
            except Exception as error:  # noqa: BLE001 - never let it reach C
                errors.raise_error(type(error).__name__, str(error))
            return -1

        return prototype(call)

    return wrap


def convert_error(value: abi.TVMFFIAny, target: str) -> FFIError:
    return FFIError("TypeError", f"Cannot convert from type `{type_key_of(value)}` to `{target}`")


@c_callback(abi.TVMFFIFieldGetter)
def get_any(field, result):
    """A field holding an owned Any: its value, with a new reference."""
    anyvalue.copy_any(abi.TVMFFIAny.from_address(field), result.contents)
    anyvalue.inc_ref_any(result.contents)


def store_any(field: int, value: abi.TVMFFIAny) -> None:
    """Stores an owned copy of ``value`` in the Any at ``field``, releasing the old value."""
    owned = abi.TVMFFIAny()
    anyvalue.view_to_owned(value, owned)
    slot = abi.TVMFFIAny.from_address(field)
    old = abi.TVMFFIAny()
    anyvalue.copy_any(slot, old)
    anyvalue.copy_any(owned, slot)
    anyvalue.dec_ref_any(old)


@c_callback(abi.TVMFFIFieldSetter)
def _set_any(field, value):
    store_any(field, value.contents)


@c_callback(abi.TVMFFIFieldGetter)
def get_object(field, result):
    """A field holding an object pointer (NULL: None): its value, with a new reference."""
    address = ctypes.c_void_p.from_address(field).value
    result = result.contents
    if address:
        memory.inc_ref(address)
        set_object(result, address)
    else:
        result.type_index = TI.kTVMFFINone
        result.v_int64 = 0


def store_object(field: int, value: abi.TVMFFIAny) -> None:
    """Stores ``value`` (None or an object, with a new reference) in the object pointer at
    ``field``, releasing the old one; anything else is a TypeError."""
    if value.type_index == TI.kTVMFFINone:
        new = None
    elif value.type_index >= TI.kTVMFFIStaticObjectBegin:
        new = value.v_ptr
        memory.inc_ref(new)
    else:
        raise convert_error(value, "ffi.Object")
    slot = ctypes.c_void_p.from_address(field)
    old, slot.value = slot.value, new
    if old:
        memory.dec_ref(old)


@c_callback(abi.TVMFFIFieldSetter)
def _set_object(field, value):
    store_object(field, value.contents)


def _int_accessors(ctype):
    @c_callback(abi.TVMFFIFieldGetter)
    def getter(field, result):
        strings.store_int(result.contents, ctype.from_address(field).value)

    @c_callback(abi.TVMFFIFieldSetter)
    def setter(field, value):
        value = value.contents
        if value.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise convert_error(value, "int")
        ctype.from_address(field).value = value.v_int64

    return getter, setter


_get_i64, _set_i64 = _int_accessors(ctypes.c_int64)
_get_i32, _set_i32 = _int_accessors(ctypes.c_int32)

#: Field kinds: (size, alignment, getter, setter).
ANY, OBJECT, I64, I32 = ((16, 8, get_any, _set_any), (8, 8, get_object, _set_object),
                         (8, 8, _get_i64, _set_i64), (4, 4, _get_i32, _set_i32))


# ----------------------------------------------------- reflected objects


def _is_object_field(field: abi.TVMFFIFieldInfo) -> bool:
    return field.size == 8 and (field.field_static_type_index == TI.kTVMFFIAny
                                or field.field_static_type_index >= TI.kTVMFFIStaticObjectBegin)


def _release_fields(address: int) -> None:
    info = TYPES.entry(memory.type_index_of(address)).info
    records = [info.type_ancestors[d].contents for d in range(info.type_depth)] + [info]
    for record in records:
        for i in range(record.num_fields):
            field = record.fields[i]
            if field.size == ANY_SIZE:
                anyvalue.dec_ref_any(abi.TVMFFIAny.from_address(address + field.offset))
            elif _is_object_field(field):
                slot = ctypes.c_void_p.from_address(address + field.offset)
                if slot.value:
                    memory.dec_ref(slot.value)
                slot.value = None


def new_reflected(type_index: int) -> int:
    """An empty object of a reflected type registered here (zeroed fields); owned address."""
    metadata = TYPES.entry(type_index).info.metadata
    size = metadata.contents.total_size if metadata else memory.HEADER_SIZE
    return memory.new_object(type_index, size, _release_fields)


def _retain_fields(address: int) -> None:
    """Takes a new reference to every object a reflected object's fields hold."""
    info = TYPES.entry(memory.type_index_of(address)).info
    records = [info.type_ancestors[d].contents for d in range(info.type_depth)] + [info]
    for record in records:
        for i in range(record.num_fields):
            field = record.fields[i]
            if field.size == ANY_SIZE:
                anyvalue.inc_ref_any(abi.TVMFFIAny.from_address(address + field.offset))
            elif _is_object_field(field):
                pointer = ctypes.c_void_p.from_address(address + field.offset).value
                if pointer:
                    memory.inc_ref(pointer)


def _shallow_copy(result, address):
    """``__ffi_shallow_copy__``: a new object with the same field values (shared, not copied)."""
    type_index = memory.type_index_of(address)
    copy = new_reflected(type_index)
    size = TYPES.entry(type_index).info.metadata.contents.total_size
    ctypes.memmove(copy + memory.HEADER_SIZE, address + memory.HEADER_SIZE,
                   size - memory.HEADER_SIZE)
    _retain_fields(copy)
    set_object(result, copy)


def _creator(type_index: int):
    @abi.TVMFFIObjectCreator
    def create(out):
        try:
            out[0] = new_reflected(type_index)
            return 0
        except Exception as error:  # noqa: BLE001 - never let it reach C
            errors.raise_error(type(error).__name__, str(error))
            return -1

    return create


# ------------------------------------------------------------ registration


def _schema_metadata(schema: str) -> bytes:
    return json.dumps({"type_schema": schema}, separators=(",", ":")).encode()


_keep: List[object] = []  # the creator callbacks the records point to, and registration buffers


def _bytes(text: Optional[str]) -> abi.TVMFFIByteArray:
    if not text:
        return abi.TVMFFIByteArray(None, 0)
    buffer = ctypes.create_string_buffer(text.encode())
    _keep.append(buffer)
    return abi.TVMFFIByteArray(ctypes.addressof(buffer), len(text.encode()))


def _field(type_index: int, name: str, offset: int, kind, schema: str, static_index: int,
           flags: int = 0, doc: Optional[str] = None) -> None:
    size, alignment, getter, setter = kind
    info = abi.TVMFFIFieldInfo()
    info.name, info.doc = _bytes(name), _bytes(doc)
    info.metadata = _bytes(_schema_metadata(schema).decode())
    info.flags, info.size, info.alignment, info.offset = flags, size, alignment, offset
    info.getter = getter
    info.setter = ctypes.cast(setter, ctypes.c_void_p)
    info.field_static_type_index = static_index
    TYPES.register_field(type_index, info)


def _metadata(type_index: int, total_size: int, kind: int, creator: bool) -> None:
    metadata = abi.TVMFFITypeMetadata(total_size=total_size, structural_eq_hash_kind=kind)
    if creator:
        create = _creator(type_index)
        _keep.append(create)
        metadata.creator = create
    TYPES.register_metadata(type_index, metadata)


def _method(type_index: int, name: str, function: int, metadata: bytes, flags: int = 0,
            doc: Optional[str] = None) -> None:
    info = abi.TVMFFIMethodInfo()
    info.name, info.doc = _bytes(name), _bytes(doc)
    info.metadata = _bytes(metadata.decode())
    info.flags = flags
    info.method = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction)
    info.method.v_ptr = function
    TYPES.register_method(type_index, info)  # the record keeps its own reference
    memory.dec_ref(function)


def _typed_method(type_index: int, name: str, params, returns: str, impl, flags: int = 0,
                  doc: Optional[str] = None) -> None:
    full_name = f"{TYPES.type_key(type_index)}.{name}"  # how upstream names a method
    function = typed_function(params, returns, impl, name=full_name)
    _method(type_index, name, function, Signature(full_name, params, returns).metadata, flags,
            doc)


def _set_true_attr(type_index: int, name: bytes) -> None:
    TYPES.register_attr(type_index, name, abi.TVMFFIAny(type_index=TI.kTVMFFIBool, v_int64=1))


# ------------------------------------------------------------- EnumState


def _enum_state_init(result):
    """``ffi.EnumState.__ffi_init__()``: a state with an empty List and two empty Dicts."""
    state = new_reflected(ENUM_STATE)
    for offset, make in ((24, lambda: sequences.new_list(0)),
                         (32, lambda: maps.dict_from_pairs([])),
                         (40, lambda: maps.dict_from_pairs([]))):
        ctypes.c_void_p.from_address(state + offset).value = make()
    set_object(result, state)


# ------------------------------------------------------------ AccessPath


def new_access_path(parent: Optional[int], step: Optional[int]) -> int:
    """A path one ``step`` below ``parent`` (both borrowed; None/None: the root); owned."""
    path = new_reflected(ACCESS_PATH)
    for offset, address in ((24, parent), (32, step)):
        if address:
            memory.inc_ref(address)
            ctypes.c_void_p.from_address(path + offset).value = address
    depth = 0 if not parent else ctypes.c_int32.from_address(parent + 40).value + 1
    ctypes.c_int32.from_address(path + 40).value = depth
    return path


def _path_parent(path: int) -> Optional[int]:
    return ctypes.c_void_p.from_address(path + 24).value


def _path_step(path: int) -> Optional[int]:
    return ctypes.c_void_p.from_address(path + 32).value


def _path_depth(path: int) -> int:
    return ctypes.c_int32.from_address(path + 40).value


def _step_equal(a: Optional[int], b: Optional[int]) -> bool:
    from .any_hash import any_equal

    if a == b:
        return True
    if not a or not b or ctypes.c_int32.from_address(a + 24).value != \
            ctypes.c_int32.from_address(b + 24).value:
        return False
    return any_equal(abi.TVMFFIAny.from_address(a + 32), abi.TVMFFIAny.from_address(b + 32))


def _paths_equal(a: Optional[int], b: Optional[int]) -> bool:
    while a and b:
        if _path_depth(a) != _path_depth(b) or not _step_equal(_path_step(a), _path_step(b)):
            return False
        a, b = _path_parent(a), _path_parent(b)
    return a == b


#: The step kinds of AccessStep.kind, with the key each step method takes.
_STEP_METHODS = [("_attr", 0, "str"), ("_array_item", 1, "int"), ("_map_item", 2, "Any"),
                 ("_attr_missing", 3, "str"), ("_array_item_missing", 4, "int"),
                 ("_map_item_missing", 5, "Any")]


def new_access_step(kind: int, key: abi.TVMFFIAny) -> int:
    """An AccessStep of ``kind`` (``AccessKind``: 0 attr ... 5 map item missing) whose key is
    a new reference to ``key``; owned address."""
    step = new_reflected(ACCESS_STEP)
    ctypes.c_int32.from_address(step + 24).value = kind
    slot = abi.TVMFFIAny.from_address(step + 32)
    anyvalue.copy_any(key, slot)
    anyvalue.inc_ref_any(slot)
    return step


def _step_method(kind: int, key_spelling: str):
    def extend(result, path, key):
        if key_spelling == "int":
            key_any = abi.TVMFFIAny()
            strings.store_int(key_any, key)
            key = key_any
        step = new_access_step(kind, key)
        set_object(result, new_access_path(path, step))
        memory.dec_ref(step)

    return extend


def _path_extend(result, path, step):
    set_object(result, new_access_path(path, step))


def _path_is_prefix_of(result, path, other):
    if _path_depth(path) > _path_depth(other):
        set_bool(result, False)
        return
    while _path_depth(other) > _path_depth(path):
        other = _path_parent(other)
    set_bool(result, _paths_equal(path, other))


def _path_equal(result, path, other):
    set_bool(result, _paths_equal(path, other))


def _path_to_steps(result, path):
    steps = []
    while path and _path_depth(path) > 0:
        step = abi.TVMFFIAny()
        address = _path_step(path)
        if address:
            set_object(step, address)
        steps.append(step)
        path = _path_parent(path)
    set_object(result, sequences.array_from_anys(steps[::-1]))


def _structural_key_init(result, key):
    from .structural_key import new_structural_key  # it needs the structural hash, loaded later

    set_object(result, new_structural_key(key))


# ------------------------------------------------------------------ load


def _schema(type_key: str, *args: str) -> str:
    return ('{"type":"%s","args":[%s]}' % (type_key, ",".join(args)) if args
            else '{"type":"%s"}' % type_key)


def _register_preloaded_records() -> None:
    list_of_objects = _schema("ffi.List", _schema("ffi.Object"))
    optional_object = _schema("Optional", _schema("ffi.Object"))
    static = FLAGS.kTVMFFIFieldFlagBitMaskIsStaticMethod
    init_off = FLAGS.kTVMFFIFieldFlagBitMaskInitOff
    seq_ignore = FLAGS.kTVMFFIFieldFlagBitMaskSEqHashIgnore

    # static types with reflection
    _metadata(TI.kTVMFFIModule, 48, SEQ.kTVMFFISEqHashKindUnsupported, creator=False)
    _field(TI.kTVMFFIModule, "imports_", 24, OBJECT, _schema("ffi.Array", _schema("Any")),
           TI.kTVMFFIArray)
    _metadata(TI.kTVMFFIVisitInterrupt, 40, SEQ.kTVMFFISEqHashKindUnsupported, creator=True)
    _field(TI.kTVMFFIVisitInterrupt, "value", 24, ANY, _schema("Any"), -1,
           flags=FLAGS.kTVMFFIFieldFlagBitMaskHasDefault)
    _metadata(TI.kTVMFFIBigInt, 32, SEQ.kTVMFFISEqHashKindUnsupported, creator=False)

    # the dynamic types, 128 ... 137
    for offset, name, doc, schema, index in (
            (24, "entries", "Enum singletons in registration order.", list_of_objects,
             TI.kTVMFFIList),
            (32, "indexes", "Canonical integer and string indices to enum singletons.",
             _schema("ffi.Dict", _schema("Any"), _schema("ffi.Object")), TI.kTVMFFIObject),
            (40, "attrs", "Extensible-attribute columns keyed by enum singleton.",
             _schema("ffi.Dict", _schema("ffi.String"),
                     _schema("ffi.Dict", _schema("ffi.Object"), _schema("Any"))),
             TI.kTVMFFIObject)):
        _field(ENUM_STATE, name, offset, OBJECT, schema, index, flags=init_off, doc=doc)
    _typed_method(ENUM_STATE, "__ffi_init__", [], "ffi.Object", _enum_state_init, static)
    _metadata(ENUM_STATE, 48, SEQ.kTVMFFISEqHashKindUnsupported, creator=True)

    _field(ENUM, "_int_index", 24, I64, _schema("int"), TI.kTVMFFIInt, flags=seq_ignore,
           doc="Canonical integer index.")
    _field(ENUM, "_str_index", 32, ANY, _schema("ffi.String"), -1, doc="Canonical string index.")
    _metadata(ENUM, 48, SEQ.kTVMFFISEqHashKindUniqueInstance, creator=True)
    _field(INT_ENUM, "value", 24, I64, _schema("int"), TI.kTVMFFIInt,
           flags=init_off | seq_ignore, doc="Canonical integer index.")
    _metadata(INT_ENUM, 48, SEQ.kTVMFFISEqHashKindUniqueInstance, creator=True)
    _field(STR_ENUM, "value", 32, ANY, _schema("ffi.String"), -1, flags=init_off | seq_ignore,
           doc="Canonical string index.")
    _metadata(STR_ENUM, 48, SEQ.kTVMFFISEqHashKindUniqueInstance, creator=True)

    _field(ACCESS_STEP, "kind", 24, I32, _schema("int"), TI.kTVMFFIInt)
    _field(ACCESS_STEP, "key", 32, ANY, _schema("Any"), -1)
    _metadata(ACCESS_STEP, 48, SEQ.kTVMFFISEqHashKindConstTreeNode, creator=True)

    path, step = "ffi.reflection.AccessPath", "ffi.reflection.AccessStep"
    _field(ACCESS_PATH, "parent", 24, OBJECT, optional_object, -1)
    _field(ACCESS_PATH, "step", 32, OBJECT, _schema("Optional", _schema(step)), -1)
    _field(ACCESS_PATH, "depth", 40, I32, _schema("int"), TI.kTVMFFIInt)
    _typed_method(ACCESS_PATH, "_root", [], path, lambda result: set_object(
        result, new_access_path(None, None)), static)
    _typed_method(ACCESS_PATH, "_extend", [path, step], path, _path_extend)
    for name, kind, key in _STEP_METHODS:
        _typed_method(ACCESS_PATH, name, [path, key], path, _step_method(kind, key))
    _typed_method(ACCESS_PATH, "_is_prefix_of", [path, path], "bool", _path_is_prefix_of)
    _typed_method(ACCESS_PATH, "_to_steps", [path], f"Array<{step}>", _path_to_steps)
    _typed_method(ACCESS_PATH, "_path_equal", [path, path], "bool", _path_equal)
    _metadata(ACCESS_PATH, 48, SEQ.kTVMFFISEqHashKindConstTreeNode, creator=True)

    _metadata(STRUCTURAL_VISITOR, 40, SEQ.kTVMFFISEqHashKindUnsupported, creator=False)
    _field(VISIT_ERROR_CONTEXT, "reverse_visit_pattern", 24, OBJECT, list_of_objects,
           TI.kTVMFFIList)
    _field(VISIT_ERROR_CONTEXT, "prev_error_context", 32, OBJECT, optional_object, -1)
    _metadata(VISIT_ERROR_CONTEXT, 40, SEQ.kTVMFFISEqHashKindUnsupported, creator=True)
    _metadata(STRUCTURAL_MUTATOR, 40, SEQ.kTVMFFISEqHashKindUnsupported, creator=False)

    _field(STRUCTURAL_KEY, "key", 24, ANY, _schema("Any"), -1)
    _field(STRUCTURAL_KEY, "hash_i64", 40, I64, _schema("int"), TI.kTVMFFIInt)
    _typed_method(STRUCTURAL_KEY, "__ffi_init__", ["Any"], "ffi.Object",
                  _structural_key_init, static,
                  doc="Constructor that takes any key and computes its structural hash")
    _metadata(STRUCTURAL_KEY, 48, SEQ.kTVMFFISEqHashKindUnsupported, creator=True)

    # type attributes present at load
    for type_index in (TI.kTVMFFIModule, TI.kTVMFFIVisitInterrupt, TI.kTVMFFIBigInt,
                       *range(ENUM_STATE, STRUCTURAL_KEY + 1)):
        _set_true_attr(type_index, b"__ffi_type_final__")
    TYPES.register_attr(TI.kTVMFFINone, b"__ffi_enum__", abi.TVMFFIAny())  # the column only
    # the records made here are copyable (DeepCopy copies through this column), as upstream's
    for type_index in (TI.kTVMFFIVisitInterrupt, ENUM_STATE, ENUM, INT_ENUM, STR_ENUM,
                       ACCESS_STEP, ACCESS_PATH, VISIT_ERROR_CONTEXT, STRUCTURAL_KEY):
        copier = typed_function(["ffi.Object"], "ffi.Object", _shallow_copy)
        TYPES.register_attr(type_index, b"__ffi_shallow_copy__",
                            abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=copier))
        memory.dec_ref(copier)
    # the constructors are also the __ffi_init__ column's entries, as upstream's refl::init
    for type_index, params, impl in ((ENUM_STATE, [], _enum_state_init),
                                     (STRUCTURAL_KEY, ["Any"], _structural_key_init)):
        init = typed_function(params, "ffi.Object", impl,
                              name=f"{TYPES.type_key(type_index)}.__ffi_init__")
        TYPES.register_attr(type_index, b"__ffi_init__",
                            abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=init))
        memory.dec_ref(init)


_register_preloaded_records()
