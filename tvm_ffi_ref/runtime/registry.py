"""The type registry: type keys, indices, ancestry and reflection records.

Its twin in C: ``tvm_ffi_fast/src/registry.c``.

Every type has a ``TVMFFITypeInfo`` record at a fixed address (kernels cache
the pointer). Indices below 128 are static; dynamic ones are handed out at
run time. A parent may reserve a run of indices for its descendants
(``num_child_slots``): a child takes the next free slot of that run, or, when
the run is full and overflow is allowed, the next index after everything
allocated so far. That rule decides which index a type gets, so it is ABI.

The registry starts with exactly the types upstream's library registers at
load, in the same order, so the same registration sequence yields the same
indices under either library (their reflection records are added by
``reflection.py``).

Upstream guards registration with internal checks; a failed check throws,
and where the C function does not catch (``TVMFFITypeGetOrAllocIndex``,
``TVMFFIGetTypeInfo``) the process ends. This registry makes the same checks
in the same order and raises what they throw -- kind ``InternalError``, the
check's own text -- before changing anything; the call then fails cleanly.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Dict, List, Optional

from tvm_ffi_common import abi

from . import anyvalue
from .hashing import std_hash_bytes
from .slots import FFIError, implements

TI = abi.TVMFFITypeIndex
FIELD_FLAGS = abi.TVMFFIFieldFlagBitMask

#: Keys of the inline (POD) type indices 0..13, as upstream names them.
POD_TYPE_KEYS = {
    TI.kTVMFFINone: "None",
    TI.kTVMFFIInt: "int",
    TI.kTVMFFIBool: "bool",
    TI.kTVMFFIFloat: "float",
    TI.kTVMFFIOpaquePtr: "void*",
    TI.kTVMFFIDataType: "DataType",
    TI.kTVMFFIDevice: "Device",
    TI.kTVMFFIDLTensorPtr: "DLTensor*",
    TI.kTVMFFIRawStr: "const char*",
    TI.kTVMFFIByteArrayPtr: "TVMFFIByteArray*",
    TI.kTVMFFIObjectRValueRef: "ObjectRValueRef",
    TI.kTVMFFISmallStr: "ffi.SmallStr",
    TI.kTVMFFISmallBytes: "ffi.SmallBytes",
    TI.kTVMFFIUnchanged: "ffi.Unchanged",
}

#: Keys of the static object types (children of ffi.Object), in upstream's registration order.
STATIC_OBJECT_TYPE_KEYS = {
    TI.kTVMFFIStr: "ffi.String",
    TI.kTVMFFIBigInt: "ffi.BigInt",
    TI.kTVMFFIBytes: "ffi.Bytes",
    TI.kTVMFFIError: "ffi.Error",
    TI.kTVMFFIFunction: "ffi.Function",
    TI.kTVMFFIShape: "ffi.Shape",
    TI.kTVMFFITensor: "ffi.Tensor",
    TI.kTVMFFIArray: "ffi.Array",
    TI.kTVMFFIList: "ffi.List",
    TI.kTVMFFIMap: "ffi.Map",
    TI.kTVMFFIDict: "ffi.Dict",
    TI.kTVMFFIModule: "ffi.Module",
    TI.kTVMFFIOpaquePyObject: "ffi.OpaquePyObject",
    TI.kTVMFFIVisitInterrupt: "ffi.VisitInterrupt",
}

#: Dynamic types upstream's library registers while it loads, as (key, parent key).
PRELOADED_DYNAMIC_TYPES = [
    ("ffi.EnumState", "ffi.Object"),
    ("ffi.Enum", "ffi.Object"),
    ("ffi.IntEnum", "ffi.Enum"),
    ("ffi.StrEnum", "ffi.Enum"),
    ("ffi.reflection.AccessStep", "ffi.Object"),
    ("ffi.reflection.AccessPath", "ffi.Object"),
    ("ffi.StructuralVisitor", "ffi.Object"),
    ("ffi.VisitErrorContext", "ffi.Object"),
    ("ffi.StructuralMutator", "ffi.Object"),
    ("ffi.StructuralKey", "ffi.Object"),
]


class _Pool:
    """Keeps alive the C copies of strings and values that records point to."""

    def __init__(self) -> None:
        self._items: List[object] = []

    def bytes(self, data: bytes) -> abi.TVMFFIByteArray:
        """A byte array viewing a NUL-terminated copy of ``data`` that never moves."""
        if not data:
            return abi.TVMFFIByteArray(None, 0)
        buffer = ctypes.create_string_buffer(data, len(data) + 1)
        self._items.append(buffer)
        return abi.TVMFFIByteArray(ctypes.addressof(buffer), len(data))

    def owned_any(self, view: abi.TVMFFIAny) -> abi.TVMFFIAny:
        """An owned copy of ``view`` kept for the life of the process."""
        owned = abi.TVMFFIAny()
        anyvalue.view_to_owned(view, owned)
        self._items.append(owned)
        return owned


def _view_text(array: abi.TVMFFIByteArray) -> bytes:
    return ctypes.string_at(array.data, array.size) if array.size else b""


def check_failed(condition: str, message: str = "") -> FFIError:
    """The error upstream's ``TVM_FFI_ICHECK(condition) << message`` throws."""
    return FFIError("InternalError", f"Check failed: ({condition}) is false: {message}")


def check_op_failed(expression: str, lhs: int, rhs: int, message: str = "") -> FFIError:
    """The error upstream's ``TVM_FFI_ICHECK_LT(lhs, rhs) << message`` (and _EQ, _GT...) throws."""
    return FFIError("InternalError", f"Check failed: {expression} ({lhs} vs. {rhs}) : {message}")


def check_not_null(expression: str) -> FFIError:
    """The error upstream's ``TVM_FFI_ICHECK_NOTNULL(expression)`` throws."""
    return FFIError("InternalError", f"Check not null: {expression} ")


class TypeEntry:
    """One registered type: its record plus the bookkeeping of its index range."""

    def __init__(self, index: int, depth: int, key: bytes, num_slots: int, can_overflow: bool,
                 parent: Optional["TypeEntry"], pool: _Pool):
        self.key = key
        self.num_slots = num_slots  # this type's own index plus its children's reserved run
        self.allocated_slots = 1
        self.child_slots_can_overflow = can_overflow
        self.info = abi.TVMFFITypeInfo()
        self.fields: List[abi.TVMFFIFieldInfo] = []
        self.methods: List[abi.TVMFFIMethodInfo] = []
        self._arrays: List[object] = []
        self._metadata: Optional[abi.TVMFFITypeMetadata] = None
        ancestors = (ctypes.POINTER(abi.TVMFFITypeInfo) * max(depth, 1))()
        if depth:  # checked by the caller: the parent exists at depth - 1
            for d in range(parent.info.type_depth):
                ancestors[d] = parent.info.type_ancestors[d]
            ancestors[depth - 1] = ctypes.pointer(parent.info)
        self._ancestors = ancestors
        self.info.type_index = index
        self.info.type_depth = depth
        self.info.type_key = pool.bytes(key)
        self.info.type_ancestors = ctypes.cast(ancestors, type(self.info.type_ancestors))
        self.info.type_key_hash = std_hash_bytes(key)

    @property
    def address(self) -> int:
        """Where the record lives."""
        return ctypes.addressof(self.info)

    def publish_fields(self) -> None:
        array = (abi.TVMFFIFieldInfo * len(self.fields))(*self.fields)
        self._arrays.append(array)  # the old array may still be read by a kernel
        self.info.fields = ctypes.cast(array, ctypes.POINTER(abi.TVMFFIFieldInfo))
        self.info.num_fields = len(self.fields)

    def publish_methods(self) -> None:
        array = (abi.TVMFFIMethodInfo * len(self.methods))(*self.methods)
        self._arrays.append(array)
        self.info.methods = ctypes.cast(array, ctypes.POINTER(abi.TVMFFIMethodInfo))
        self.info.num_methods = len(self.methods)

    def set_metadata(self, metadata: abi.TVMFFITypeMetadata) -> None:
        self._metadata = metadata
        self.info.metadata = ctypes.pointer(metadata)

    @property
    def has_metadata(self) -> bool:
        """Whether metadata was registered (at most once per type)."""
        return self._metadata is not None


class AttrColumn:
    """A type attribute column: one owned value per type index, from index 0."""

    def __init__(self) -> None:
        self.column = abi.TVMFFITypeAttrColumn()
        self.values: List[abi.TVMFFIAny] = []
        self._arrays: List[object] = []

    def publish(self) -> None:
        if not self.values:  # an empty column has no storage: data is NULL, as upstream's
            self.column.data = None
            self.column.size = self.column.begin_index = 0
            return
        array = (abi.TVMFFIAny * len(self.values))(*self.values)
        self._arrays.append(array)
        self.column.data = ctypes.cast(array, ctypes.POINTER(abi.TVMFFIAny))
        self.column.size = len(self.values)
        self.column.begin_index = 0


class TypeTable:
    """All registered types, by index and by key."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.pool = _Pool()
        self.entries: List[Optional[TypeEntry]] = [None] * TI.kTVMFFIDynObjectBegin
        self.by_key: Dict[bytes, int] = {}
        self.next_dynamic = TI.kTVMFFIDynObjectBegin
        self.attr_columns: Dict[bytes, AttrColumn] = {}
        self._register_builtin_types()

    def _register_builtin_types(self) -> None:
        self.get_or_alloc(b"ffi.Object", TI.kTVMFFIObject, 0, 0, True, -1)
        metadata = abi.TVMFFITypeMetadata(total_size=ctypes.sizeof(abi.TVMFFIObject))
        self.entries[TI.kTVMFFIObject].set_metadata(metadata)
        for index, key in POD_TYPE_KEYS.items():
            self.get_or_alloc(key.encode(), index, 0, 0, False, -1)
        for index, key in STATIC_OBJECT_TYPE_KEYS.items():
            self.get_or_alloc(key.encode(), index, 1, 0, False, TI.kTVMFFIObject)
        for key, parent in PRELOADED_DYNAMIC_TYPES:
            parent_entry = self.entries[self.by_key[parent.encode()]]
            self.get_or_alloc(key.encode(), -1, parent_entry.info.type_depth + 1, 0, True,
                              parent_entry.info.type_index)

    def get_or_alloc(self, key: bytes, static_index: int, depth: int, num_child_slots: int,
                     can_overflow: bool, parent_index: int) -> int:
        """``TVMFFITypeGetOrAllocIndex``: the index of ``key``, allocating one if new.

        The index is the static one if given, else the next free slot of the
        parent's reserved run, else (if the parent allows overflow) the next
        index after everything allocated so far. The checks are upstream's,
        in its order; the table is only changed once they all pass.
        """
        with self.lock:
            if key in self.by_key:
                return self.by_key[key]
            if parent_index == -2:  # query only
                return -2
            size = len(self.entries)  # upstream's type_table_.size()
            parent = None
            if parent_index >= 0:
                if parent_index >= size:
                    raise check_op_failed("parent_type_index < type_table_.size()", parent_index,
                                          size, f" type_key={key.decode()}, "
                                                f"static_index={static_index}")
                parent = self.entries[parent_index]
            num_slots = num_child_slots + 1
            from_parent_run = from_counter = False
            if static_index >= 0:
                if static_index >= size:
                    raise check_op_failed("static_type_index < type_table_.size()",
                                          static_index, size)
                if self.entries[static_index] is not None:
                    raise check_failed("type_table_[static_type_index] == nullptr",
                                       f"Conflicting static index {static_index} between "
                                       f"{self.entries[static_index].key.decode()} and "
                                       f"{key.decode()}")
                index = static_index
            elif parent is None:
                raise check_not_null("parent")
            elif parent.allocated_slots + num_slots <= parent.num_slots:
                index = parent.info.type_index + parent.allocated_slots
                from_parent_run = True
            elif parent.child_slots_can_overflow:
                index = self.next_dynamic
                from_counter = True
            else:
                raise check_failed("parent->child_slots_can_overflow",
                                   f"Reach maximum number of sub-classes for "
                                   f"{parent.key.decode()}")
            if parent is not None and index <= parent.info.type_index:
                raise check_op_failed("allocated_tindex > parent->type_index", index,
                                      parent.info.type_index)
            if depth != 0:
                if parent is None:
                    raise check_not_null("parent")
                if depth != parent.info.type_depth + 1:
                    raise check_op_failed("type_depth == parent->type_depth + 1", depth,
                                          parent.info.type_depth + 1)
            # Every check passed: take the index.
            if from_parent_run:
                parent.allocated_slots += num_slots
            elif from_counter:
                self.next_dynamic += num_slots
                while len(self.entries) < self.next_dynamic:
                    self.entries.append(None)
            if parent is not None and not parent.child_slots_can_overflow:
                can_overflow = False
            self.entries[index] = TypeEntry(index, depth, key, num_slots, can_overflow, parent,
                                            self.pool)
            self.by_key[key] = index
            return index

    def entry(self, index: int) -> TypeEntry:
        """The entry of a registered index; raises upstream's failed check for an unknown one."""
        if 0 <= index < len(self.entries) and self.entries[index] is not None:
            return self.entries[index]
        raise check_failed("entry != nullptr", f"Cannot find type info for type_index={index}")

    def key_to_index(self, key: bytes) -> int:
        """The index of a registered key; raises for an unknown one."""
        if key not in self.by_key:
            # Upstream reports this through a failed internal check; same kind and text.
            raise check_failed("it != type_key2index_.end()", f"Cannot find type `{key.decode()}`")
        return self.by_key[key]

    def type_key(self, index: int) -> str:
        """The key of a registered index."""
        return self.entry(index).key.decode()

    def is_instance(self, index: int, ancestor: int) -> bool:
        """Whether type ``index`` is ``ancestor`` or derives from it."""
        if index == ancestor:
            return True
        if index < TI.kTVMFFIStaticObjectBegin:
            return False
        info = self.entry(index).info
        return any(info.type_ancestors[d].contents.type_index == ancestor
                   for d in range(info.type_depth))

    def register_field(self, index: int, field: abi.TVMFFIFieldInfo) -> None:
        with self.lock:
            entry = self.entry(index)
            name = _view_text(field.name)
            if any(_view_text(existing.name) == name for existing in entry.fields):
                raise check_failed("std::string_view(existing.name.data, existing.name.size) != "
                                   "new_name", f'Duplicate field name "{name.decode()}" in type '
                                               f'"{entry.key.decode()}"')
            for d in range(entry.info.type_depth):
                ancestor = entry.info.type_ancestors[d].contents
                if any(_view_text(ancestor.fields[i].name) == name
                       for i in range(ancestor.num_fields)):
                    # Upstream only warns: a child should not re-register an inherited field.
                    print(f'[WARNING] Field "{name.decode()}" in type "{entry.key.decode()}" '
                          f'duplicates an ancestor field in '
                          f'"{_view_text(ancestor.type_key).decode()}". Child types should not '
                          "re-register inherited fields.", file=sys.stderr)
            copy = abi.TVMFFIFieldInfo()
            ctypes.pointer(copy)[0] = field
            copy.name = self.pool.bytes(name)
            copy.doc = self.pool.bytes(_view_text(field.doc))
            copy.metadata = self.pool.bytes(_view_text(field.metadata))
            if field.flags & FIELD_FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj and field.setter:
                keep = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction)
                keep.v_ptr = field.setter
                self.pool.owned_any(keep)
            if field.flags & FIELD_FLAGS.kTVMFFIFieldFlagBitMaskHasDefault:
                copy.default_value_or_factory = self.pool.owned_any(field.default_value_or_factory)
            else:
                copy.default_value_or_factory = abi.TVMFFIAny()
            entry.fields.append(copy)
            entry.publish_fields()

    def register_method(self, index: int, method: abi.TVMFFIMethodInfo) -> None:
        with self.lock:
            entry = self.entry(index)
            copy = abi.TVMFFIMethodInfo()
            copy.name = self.pool.bytes(_view_text(method.name))
            copy.doc = self.pool.bytes(_view_text(method.doc))
            copy.metadata = self.pool.bytes(_view_text(method.metadata))
            copy.flags = method.flags
            copy.method = self.pool.owned_any(method.method)
            entry.methods.append(copy)
            entry.publish_methods()

    def register_metadata(self, index: int, metadata: abi.TVMFFITypeMetadata) -> None:
        with self.lock:
            entry = self.entry(index)
            if entry.has_metadata:
                raise FFIError("RuntimeError", f"Overriding {entry.key.decode()}, possible "
                               "causes:\n"
                               "- two ObjectDef<T>() calls for the same T \n"
                               "- when we forget to assign _type_key to ObjectRef<Y> that "
                               "inherits from T\n"
                               "- another type with the same key is already registered\n"
                               "Cross check the reflection registration.")
            copy = abi.TVMFFITypeMetadata()
            ctypes.pointer(copy)[0] = metadata
            copy.doc = self.pool.bytes(_view_text(metadata.doc))
            entry.set_metadata(copy)

    def register_attr(self, index: int, name: bytes, value: abi.TVMFFIAny) -> None:
        with self.lock:
            column = self.attr_columns.get(name)
            if column is None:
                column = self.attr_columns[name] = AttrColumn()
                column.publish()
            if index == TI.kTVMFFINone:  # only make sure the column exists
                return
            if index < 0:
                # Upstream resizes the column to index + 1 entries: std::vector refuses a
                # negative size with length_error (at -1 it writes out of bounds instead).
                raise FFIError("InternalError", "vector::_M_fill_insert")
            while len(column.values) <= index:
                column.values.append(abi.TVMFFIAny())
            if column.values[index].type_index != TI.kTVMFFINone:
                raise FFIError("RuntimeError", f"TypeAttr `{name.decode()}` is already "
                               f"registered for type index {index}. To update the stored "
                               "value, register a mutable container (e.g., Dict/List) once and "
                               "mutate it in place on subsequent calls.")
            column.values[index] = self.pool.owned_any(value)
            column.publish()

    def attr_column(self, name: bytes) -> Optional[AttrColumn]:
        """The column of an attribute, or None if never registered."""
        return self.attr_columns.get(name)

    def registered_keys(self) -> List[str]:
        """Every registered key, in index order."""
        return [e.key.decode() for e in self.entries if e is not None]


#: The process's one registry.
TYPES = TypeTable()


def _text(array) -> bytes:
    return _view_text(array.contents)


@implements("TVMFFITypeGetOrAllocIndex")
def type_get_or_alloc_index(key, static_index, depth, num_child_slots, can_overflow, parent):
    return TYPES.get_or_alloc(_text(key), static_index, depth, num_child_slots,
                              bool(can_overflow), parent)


@implements("TVMFFITypeKeyToIndex")
def type_key_to_index(key, out):
    out[0] = TYPES.key_to_index(_text(key))


@implements("TVMFFIGetTypeInfo")
def get_type_info(index):
    return TYPES.entry(index).address


@implements("TVMFFITypeRegisterField")
def type_register_field(index, info):
    TYPES.register_field(index, info.contents)


@implements("TVMFFITypeRegisterMethod")
def type_register_method(index, info):
    TYPES.register_method(index, info.contents)


@implements("TVMFFITypeRegisterMetadata")
def type_register_metadata(index, metadata):
    TYPES.register_metadata(index, metadata.contents)


@implements("TVMFFITypeRegisterAttr")
def type_register_attr(index, name, value):
    if not value:  # tolerated for the sentinel index 0, which only makes sure the column exists
        if index != TI.kTVMFFINone:
            raise FFIError("ValueError", "TVMFFITypeRegisterAttr: attr_value must not be NULL")
        value = ctypes.pointer(abi.TVMFFIAny())
    TYPES.register_attr(index, _text(name), value.contents)


@implements("TVMFFIGetTypeAttrColumn")
def get_type_attr_column(name):
    column = TYPES.attr_column(_text(name))
    return None if column is None else ctypes.addressof(column.column)
