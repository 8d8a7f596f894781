"""Value-level repr, comparison and hashing of any value, walking its object graph.

Three questions a Python user asks of every value have one answer in the
runtime, so that ``repr(x)``, ``x == y`` and ``hash(x)`` agree in every
language binding:

``ffi.ReprPrint(value) -> str``
    Readable text for a value. Scalars print as Python would mostly print
    them (``None``, ``True``, ``3``), floats as C++'s ``ostream`` prints a
    double (six significant digits: ``0.1``, ``1.23457e+08``, ``-0``,
    ``nan``), strings quoted and escaped (``"a\\n"``), bytes as ``b"..."``,
    an Array as a tuple ``(1,)``, a List as a list ``[1]``, a Map or Dict as
    ``{k: v}``, a reflected object as ``Type(field=value, ...)``.
``ffi.RecursiveEq/Lt/Le/Gt/Ge(lhs, rhs) -> bool``
    One three-way comparison, ``compare(lhs, rhs)`` in ``{-1, 0, 1}``, under
    two modes: *equality* (Eq) never fails, every mismatch is "unequal";
    *ordering* (Lt/Le/Gt/Ge) raises ``TypeError`` where no order exists
    (different types, NaN, maps).
``ffi.RecursiveHash(value) -> int``
    A deterministic 64-bit hash (returned as int64) that agrees with
    RecursiveEq: equal values hash alike. It is not the AnyHash of map keys
    (:mod:`.anyhash`), which hashes objects by address.

The object graph
----------------
All three walk the value depth first. A *leaf* is answered on the spot: a
scalar, a string, bytes, a BigInt, a Shape, a Tensor (repr only), or a value
whose type registered a custom hook. Anything else gets a *frame* whose
children are visited in order:

* Array and List: the elements;
* Map and Dict: key, value, key, value, ... in iteration order;
* any other object (reflected or not): the values of its reflected fields,
  read through each field's getter, ancestors' fields first (from depth 1,
  since ``ffi.Object`` has none), skipping fields whose flags carry the
  operation's "off" bit: ``kTVMFFIFieldFlagBitMaskReprOff`` for repr,
  ``CompareOff`` for comparison, ``HashOff | CompareOff`` for hashing (so
  that equal values still hash alike). A Function, Error, Module or opaque
  object has no fields: it prints as its type key, all of one type compare
  equal and hash alike.

Graphs may share objects and have cycles. Repr remembers each finished
object's text (a shared object prints the same twice) and prints an object
met again while still being printed as ``...``. Hash memoizes finished
objects and hashes an object met again on the way down as its type's
``type_key_hash``. Comparison tracks the (lhs, rhs) object pairs being
compared: meeting one again counts as equal in equality mode and raises
``ValueError("RecursiveCompare: cyclic reference detected in ordering")``
otherwise.

The walk is iterative (:func:`run_frames`): each frame is a generator that
yields the frame of a child it cannot answer on the spot and receives the
child's result back, so deep graphs never exhaust Python's stack. Like
upstream, more than 2**20 frames at once raise ``ValueError``.

Custom hooks
------------
Types customize the walk through type attribute columns; each entry is a
Function (these columns exist from the start, as upstream makes them at load):

* ``__ffi_repr__(obj, fn_repr) -> str``
* ``__ffi_hash__(obj, fn_hash) -> int``
* ``__ffi_eq__(lhs, rhs, fn_eq) -> bool`` (equality mode only)
* ``__ffi_compare__(lhs, rhs, fn_cmp) -> int`` (ordering, and equality when
  there is no ``__ffi_eq__``)

``fn_*`` is a callback that runs the same operation on a nested value with the
walk's state (the repr cache, the hash memo, the pairs on the stack), so a
hook can recurse without looping forever. A hook applies to any object type
for repr and hash, and to types from index 79 (after the static ones) for
comparison. A type with ``__ffi_eq__`` or ``__ffi_compare__`` but no
``__ffi_hash__`` cannot be hashed (``ValueError``). BigInt registers all
three, as upstream's library does: ``RecursiveHash`` of a BigInt is the
StableHashBytes of its words. ``ffi.reflection.AccessStep`` and
``AccessPath`` register ``__ffi_repr__`` (``<root>.field[3]["key"]``).

Hooks and callbacks are typed as upstream's: a callback called with the
wrong number of arguments names its signature (``(0: AnyView) -> str``), a
hook result of the wrong type is ``Cannot convert from type `float` to
`int```, and a column entry that is no Function is ``Cannot treat type
`int` as type `...```. ``ffi.ReprPrint`` returns a small str only for the
text of a leaf of at most 7 bytes; a container's or object's text is always
a String object (upstream moves its ``std::string`` into the String).

Leaves, in detail
-----------------
============  =======================  ======================================
value         repr                     hash (``combine`` = StableHashCombine)
============  =======================  ======================================
None          ``None``                 ``combine(0, 0)``
bool          ``True`` / ``False``     ``combine(2, 0 or 1)``
int           decimal                  ``combine(1, value as uint64)``
float         ``ostream`` (``%g``)     ``combine(3, bits)``, NaN canonical
                                       (``0x7ff8...``), -0.0 as 0.0
dtype         ``float32``              ``combine(combine(combine(5, code),
                                       bits), lanes)``
device        ``cuda:1``               ``combine(combine(6, type), id)``
str           ``"..."`` escaped        ``combine(65, StableHashBytes)``
                                       whether small or boxed
bytes         ``b"..."``               ``combine(67, StableHashBytes)``
other POD     its type key (``void*``) ``combine(type index, payload)``
BigInt        decimal                  its ``__ffi_hash__``
Shape         ``Shape(2, 3)``          ``combine(type_key_hash, ndim)`` then
                                       each dim combined in
Tensor        ``float32[2, 3]@cpu:0``  a frame without fields
============  =======================  ======================================

A frame's hash starts at ``type_key_hash`` (objects) or
``combine(type_key_hash, size)`` (containers); a sequence folds in
``combine(child, position)`` per element, an object ``child`` per field, and
a map the sorted ``combine(key hash, value hash)`` of its entries (so
iteration order does not matter).

Comparison, in detail
---------------------
* None sorts before everything. A str equals a str by content whatever the
  encoding (small or boxed), bytes likewise; their bytes compare as C
  ``char``, which is signed on x86-64, so ``"\\xe9"`` sorts before ``"a"``.
* Otherwise different type indices are unequal; ordering them raises
  ``TypeError("Cannot compare values of different types: int vs float")``,
  except int vs BigInt, which compare by value.
* bool, int, float, dtype (code, bits, lanes) and device (type, id) compare
  by value; NaN equals NaN in equality mode and cannot be ordered; other POD
  kinds compare their payload for equality only.
* The same object is equal to itself without looking inside (even a list
  holding NaN). Shapes compare lexicographically, then by length; so do
  Arrays and Lists, element by element. Maps and Dicts are equal when they
  have the same size and every key of the left one maps to an equal value in
  the right one; they have no order (``TypeError("Cannot order Map/Dict
  values")``, also when the difference lies inside a value). Objects compare
  field by field, in field order.

Both runtimes must give the same text, the same truth values, the same
errors and the same hash numbers as upstream: Python's ``repr``, ``==`` and
``hash`` of containers are these functions.
"""

from __future__ import annotations

import ctypes
import math
import struct
from typing import Callable, Dict, Generator, List, Optional, Sequence, Set, Tuple

from tvm_ffi_common import abi
from . import anyvalue, errors, functions, memory, strings, tensors
from .anyhash import custom_entry
from .global_functions import kwargs_object
from .strings import bigint_words
from .containers import seq_items, shape_dims
from .dtype import format_dtype
from .hashing import MASK64, stable_hash_bytes, stable_hash_combine
from .maps import map_find, map_items, missing_object
from .maps import map_size as map_size_of
from .registry import TYPES
from .signatures import typed_function, typed_global
from .slots import FFIError

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask

#: The hook columns of the walk, and the other columns upstream creates with them.
REPR_ATTR = b"__ffi_repr__"
HASH_ATTR = b"__ffi_hash__"
EQ_ATTR = b"__ffi_eq__"
COMPARE_ATTR = b"__ffi_compare__"
_OTHER_DATACLASS_ATTRS = (b"__ffi_shallow_copy__", b"__ffi_new__", b"__ffi_init__")

#: Frames allowed on the stack at once (upstream's ``kMaxTraversalStackDepth``).
MAX_STACK_DEPTH = 1 << 20

#: Environment variable that adds ``@0x<address>`` to the repr of objects.
REPR_WITH_ADDR_ENV = b"TVM_FFI_REPR_WITH_ADDR"

_SEQUENCES = (TI.kTVMFFIArray, TI.kTVMFFIList)
_MAPS = (TI.kTVMFFIMap, TI.kTVMFFIDict)
_CONTAINERS = _SEQUENCES + _MAPS
_STRS = (TI.kTVMFFIStr, TI.kTVMFFISmallStr)
_BYTES = (TI.kTVMFFIBytes, TI.kTVMFFISmallBytes)
_INTS = (TI.kTVMFFIInt, TI.kTVMFFIBigInt)

_libc = ctypes.CDLL(None)
_libc.getenv.restype = ctypes.c_char_p
_libc.getenv.argtypes = [ctypes.c_char_p]


# ----------------------------------------------------------------- the walk

#: A frame: a generator that yields child frames and returns its result.
Frame = Generator["Frame", object, object]


def run_frames(first: Frame, limit_message: str) -> object:
    """Runs ``first`` to completion; a frame yields a child frame to get its result.

    This is a recursive walk without Python recursion: the stack holds the
    suspended frames. If a frame raises, the frames below it are closed (their
    ``finally`` blocks release what they hold) and the error propagates.
    """
    stack: List[Frame] = [first]
    value: object = None
    try:
        while stack:
            try:
                child = stack[-1].send(value)
            except StopIteration as done:
                stack.pop()
                value = done.value
                continue
            if len(stack) >= MAX_STACK_DEPTH:
                raise FFIError("ValueError", f"{limit_message}: maximum stack depth "
                                             f"({MAX_STACK_DEPTH}) exceeded")
            stack.append(child)
            value = None
    except BaseException:
        for frame in reversed(stack):
            frame.close()
        raise
    return value


# ------------------------------------------------------- values and objects


def _object_view(address: int) -> abi.TVMFFIAny:
    """A borrowed value holding the object at ``address`` (how C++ passes ``const Object*``)."""
    value = abi.TVMFFIAny()
    value.type_index = memory.type_index_of(address)
    value.v_ptr = address
    return value


def _owned(view: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """An owned copy of a value (a raw C string becomes a str, as C++'s ``Any(view)``)."""
    owned = abi.TVMFFIAny()
    anyvalue.view_to_owned(view, owned)
    return owned


def _release_all(values: Sequence[abi.TVMFFIAny]) -> None:
    for value in values:
        anyvalue.dec_ref_any(value)


def _reraise_raised() -> None:
    """Turns the error a failed C call left in the raised slot into an :class:`FFIError`."""
    raised = errors.take_raised()
    if not raised:
        raise FFIError("RuntimeError", "a call failed without raising an error")
    kind, message, _ = errors.error_parts(raised)
    memory.dec_ref(raised)
    raise FFIError(kind, message)


def reflected_fields(type_index: int, skip: int) -> List[abi.TVMFFIFieldInfo]:
    """The fields of a type, ancestors' first (from depth 1), without those flagged ``skip``."""
    info = TYPES.entry(type_index).info
    records = [info.type_ancestors[d].contents for d in range(1, info.type_depth)] + [info]
    return [record.fields[i] for record in records for i in range(record.num_fields)
            if not record.fields[i].flags & skip]


def read_field(address: int, field: abi.TVMFFIFieldInfo) -> abi.TVMFFIAny:
    """The value of one reflected field of the object at ``address``, owned."""
    result = abi.TVMFFIAny()
    if field.getter(address + field.offset, ctypes.byref(result)) != 0:
        _reraise_raised()
    return result


class Children:
    """What a frame visits: owned copies of the children, released when the frame ends.

    ``kind`` is ``"sequence"``, ``"map"`` (keys and values interleaved) or
    ``"object"`` (with ``fields``, the field records in the same order).
    """

    def __init__(self, value: abi.TVMFFIAny, skip: int):
        index = value.type_index
        self.fields: List[abi.TVMFFIFieldInfo] = []
        self.values: List[abi.TVMFFIAny] = []
        if index in _SEQUENCES:
            self.kind = "sequence"
            borrowed = seq_items(value.v_ptr)
        elif index in _MAPS:
            self.kind = "map"
            borrowed = [v for pair in map_items(value.v_ptr) for v in pair]
        else:
            self.kind = "object"
            self.fields = reflected_fields(index, skip)
            borrowed = []
            try:
                for field in self.fields:
                    self.values.append(read_field(value.v_ptr, field))
            except BaseException:
                self.release()
                raise
        for item in borrowed:
            anyvalue.inc_ref_any(item)
            self.values.append(item)

    @property
    def size(self) -> int:
        """Elements, entries, or fields visited."""
        return len(self.values) // 2 if self.kind == "map" else len(self.values)

    def release(self) -> None:
        _release_all(self.values)
        self.values = []


#: The C++ type upstream converts each hook column's entry to (named when it is no Function).
HOOK_SIGNATURES = {
    REPR_ATTR: "(0: ffi.Object, 1: (0: AnyView) -> str) -> str",
    HASH_ATTR: "(0: ffi.Object, 1: (0: AnyView) -> int) -> int",
    EQ_ATTR: "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> bool) -> bool",
    COMPARE_ATTR: "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> int) -> int",
}

#: The typed ``fn_*`` callbacks as upstream spells them in an argument-count error.
CALLBACK_SIGNATURES = {
    REPR_ATTR: "(0: AnyView) -> str",
    HASH_ATTR: "(0: AnyView) -> int",
    EQ_ATTR: "(0: AnyView, 1: AnyView) -> bool",
    COMPARE_ATTR: "(0: AnyView, 1: AnyView) -> int",
}


def _hook(attr: bytes, type_index: int) -> Optional[int]:
    """The Function registered for ``type_index`` in column ``attr``, or None."""
    entry = custom_entry(attr, type_index)
    if entry is None:
        return None
    if entry.type_index != TI.kTVMFFIFunction:
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(entry.type_index)}` "
                                    f"as type `{HOOK_SIGNATURES[attr]}`")
    return entry.v_ptr


def call_hook(func: int, args: Sequence[abi.TVMFFIAny]) -> abi.TVMFFIAny:
    """Calls a Function with borrowed ``args``; returns its owned result or raises its error."""
    packed = (abi.TVMFFIAny * max(1, len(args)))(*args)
    result = abi.TVMFFIAny()
    if functions.call_function(func, packed, len(args), ctypes.byref(result)) != 0:
        _reraise_raised()
    return result


def _hook_int(result: abi.TVMFFIAny, target: str) -> int:
    """The int (or bool) a hook returned, converted to ``target`` ("int" or "bool") as
    upstream's typed call converts it; its result is consumed."""
    if result.type_index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        return result.v_int64
    anyvalue.dec_ref_any(result)
    raise FFIError("TypeError", f"Cannot convert from type `{TYPES.type_key(result.type_index)}` "
                                f"to `{target}`")


def make_callback(impl: Callable[..., object], store, attr: bytes) -> int:
    """The ``fn_*`` handed to the hook of column ``attr``: a typed Function of one or two
    values that runs ``impl`` on owned copies of them (as C++ turns each AnyView into
    an Any) and writes ``impl``'s result with ``store(result, value)``. Returns an owned
    address."""
    signature = CALLBACK_SIGNATURES[attr]
    arity = signature.count("AnyView")

    def callback(args, result):
        functions.expect_args(signature, args, arity)
        values = [_owned(arg) for arg in args]
        try:
            store(result, impl(*values))
        finally:
            _release_all(values)

    return functions.new_python_function(callback)


def _store_str(result: abi.TVMFFIAny, text: str) -> None:
    strings.store_str_or_bytes(result, text.encode("utf-8", "surrogateescape"), is_str=True)


def _text(data: bytes) -> str:
    """Bytes of a name or hook result as text (invalid UTF-8 survives the round trip)."""
    return data.decode("utf-8", "surrogateescape")


def _signed64(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def type_key_hash(type_index: int) -> int:
    """``TVMFFITypeInfo.type_key_hash`` of a registered type."""
    return TYPES.entry(type_index).info.type_key_hash


def _is_enum(type_index: int) -> bool:
    enum_index = TYPES.by_key.get(b"ffi.Enum")
    return enum_index is not None and TYPES.is_instance(type_index, enum_index)


#: Where ``EnumObj::_str_index`` (a String, i.e. a TVMFFIAny) sits in an enum object.
ENUM_STR_INDEX_OFFSET = memory.HEADER_SIZE + 8


# -------------------------------------------------------------------- repr

#: Short names of DLPack device types, as upstream prints devices.
DEVICE_NAMES: Dict[int, str] = {
    abi.DLDeviceType.kDLCPU: "cpu",
    abi.DLDeviceType.kDLCUDA: "cuda",
    abi.DLDeviceType.kDLCUDAHost: "cuda_host",
    abi.DLDeviceType.kDLOpenCL: "opencl",
    abi.DLDeviceType.kDLVulkan: "vulkan",
    abi.DLDeviceType.kDLMetal: "metal",
    abi.DLDeviceType.kDLVPI: "vpi",
    abi.DLDeviceType.kDLROCM: "rocm",
    abi.DLDeviceType.kDLROCMHost: "rocm_host",
    abi.DLDeviceType.kDLExtDev: "ext_dev",
    abi.DLDeviceType.kDLCUDAManaged: "cuda_managed",
    abi.DLDeviceType.kDLOneAPI: "oneapi",
    abi.DLDeviceType.kDLWebGPU: "webgpu",
    abi.DLDeviceType.kDLHexagon: "hexagon",
    abi.DLDeviceType.kDLMAIA: "maia",
    abi.DLDeviceType.kDLTrn: "trn",
}


def format_device(device_type: int, device_id: int) -> str:
    """``cpu:0``, ``cuda:1``; an unknown type is ``unknown``."""
    return f"{DEVICE_NAMES.get(device_type, 'unknown')}:{device_id}"


def format_float(value: float) -> str:
    """A double as ``std::ostream << double`` prints it: ``%g``, NaN and infinities as glibc.

    Six significant digits, trailing zeros dropped, exponent form below 1e-4
    or from 1e6 (``1.23457e+08``); ``-0``, ``inf``, ``-inf``, ``nan``, and
    ``-nan`` for a NaN with its sign bit set.
    """
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "%g" % value


_STR_ESCAPES = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r", 0x5C: "\\\\", 0x22: '\\"'}
_ANSI_PARAM_BYTES = b"0123456789;"


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def escape_str(data: bytes) -> str:
    """A str's bytes as a double-quoted, Python-style escaped literal (upstream's
    ``EscapedStringPy``).

    * ``\\n \\t \\r \\\\ \\"`` escaped; other control bytes and DEL as ``\\xNN``,
      except an ANSI sequence ``ESC [ digits/; m|K``, kept readable as
      ``\\x1b[...m``;
    * well-formed UTF-8 sequences as ``\\uXXXX`` (2 and 3 bytes) or
      ``\\UXXXXXXXX`` (4 bytes), never as the characters themselves;
    * any other byte >= 0x80 as ``\\xNN``.
    """
    out = ['"']
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        d = data[i + 1] if i + 1 < n else 0
        if c == 0x1B and d == ord("["):
            j = i + 2
            while j < n and data[j] in _ANSI_PARAM_BYTES:
                j += 1
            if j < n and data[j] in b"mK":
                out.append("\\x1b[" + data[i + 2:j + 1].decode("ascii"))
                i = j + 1
                continue
        if c in _STR_ESCAPES:
            out.append(_STR_ESCAPES[c])
            i += 1
        elif c < 0x80:
            out.append(f"\\x{c:02x}" if c < 0x20 or c == 0x7F else chr(c))
            i += 1
        elif c & 0xE0 == 0xC0 and i + 1 < n and _continuation(d):
            out.append(f"\\u{((c & 0x1F) << 6) | (d & 0x3F):04x}")
            i += 2
        elif c & 0xF0 == 0xE0 and i + 2 < n and _continuation(d) and _continuation(data[i + 2]):
            point = ((c & 0x0F) << 12) | ((d & 0x3F) << 6) | (data[i + 2] & 0x3F)
            out.append(f"\\u{point:04x}")
            i += 3
        elif (c & 0xF8 == 0xF0 and i + 3 < n and _continuation(d)
              and _continuation(data[i + 2]) and _continuation(data[i + 3])):
            point = (((c & 0x07) << 18) | ((d & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6)
                     | (data[i + 3] & 0x3F))
            out.append(f"\\U{point:08x}")
            i += 4
        else:
            out.append(f"\\x{c:02x}")
            i += 1
    out.append('"')
    return "".join(out)


def format_bytes(data: bytes) -> str:
    """Bytes as ``b"..."``: printable ASCII as is, except ``"`` and ``\\``; others ``\\xNN``."""
    return 'b"' + "".join(
        chr(c) if 32 <= c < 127 and c not in (0x22, 0x5C) else f"\\x{c:02x}" for c in data
    ) + '"'


def _address_text(address: int) -> str:
    return f"0x{address:x}"


_IN_PROGRESS, _DONE = 1, 2


class ReprPrinter:
    """One ``ffi.ReprPrint`` call: the state shared by its frames and hook callbacks."""

    def __init__(self) -> None:
        self.show_address = _libc.getenv(REPR_WITH_ADDR_ENV) == b"1"
        self.state: Dict[int, int] = {}
        self.cache: Dict[int, str] = {}

    def repr_value(self, value: abi.TVMFFIAny) -> str:
        """The text of an owned value (one run of the walk)."""
        text = self.immediate(value)
        if text is None:
            text = run_frames(self.frame(value), "ObjectGraphDFS")
        return text

    def _suffix(self, address: int) -> str:
        return "@" + _address_text(address) if self.show_address else ""

    def immediate(self, value: abi.TVMFFIAny) -> Optional[str]:
        """The text of a value that needs no frame, or None."""
        index = value.type_index
        if index == TI.kTVMFFINone:
            return "None"
        if index == TI.kTVMFFIBool:
            return "True" if value.v_int64 else "False"
        if index == TI.kTVMFFIInt:
            return str(value.v_int64)
        if index == TI.kTVMFFIFloat:
            return format_float(value.v_float64)
        if index == TI.kTVMFFIDataType:
            dtype = value.v_dtype
            return format_dtype(dtype.code, dtype.bits, dtype.lanes)
        if index == TI.kTVMFFIDevice:
            return format_device(value.v_device.device_type, value.v_device.device_id)
        if index == TI.kTVMFFISmallStr:
            return escape_str(strings.small_bytes(value))
        if index == TI.kTVMFFISmallBytes:
            return format_bytes(strings.small_bytes(value))
        if index < TI.kTVMFFIStaticObjectBegin:
            return TYPES.type_key(index)
        address = value.v_ptr
        if not address:
            return "None"
        state = self.state.get(address)
        if state == _DONE:
            return self.cache[address]
        if state == _IN_PROGRESS:
            return "..." + self._suffix(address)
        if address == missing_object():
            return "<MISSING>"
        if address == kwargs_object():
            return "<KWARGS>"
        if index == TI.kTVMFFIBigInt:
            return str(strings.words_to_int(bigint_words(value)))
        if index == TI.kTVMFFIStr:
            return escape_str(strings.object_bytes(address))
        if index == TI.kTVMFFIBytes:
            return format_bytes(strings.object_bytes(address))
        if index == TI.kTVMFFITensor:
            return self._tensor(address)
        if index == TI.kTVMFFIShape:
            return "Shape(" + ", ".join(str(d) for d in shape_dims(address)) + ")"
        hook = _hook(REPR_ATTR, index)
        if hook is not None:
            self.state[address] = _IN_PROGRESS
            text = self._call_hook(hook, address)
            if index in _CONTAINERS:
                text += self._suffix(address)
            return self._finish(address, text)
        if _is_enum(index):
            name = strings.view_bytes(abi.TVMFFIAny.from_address(address + ENUM_STR_INDEX_OFFSET))
            text = TYPES.type_key(index) + "." + _text(name) + self._suffix(address)
            return self._finish(address, text)
        return None

    def _tensor(self, address: int) -> str:
        tensor = tensors.tensor_dltensor(address)
        dtype = tensor.dtype
        shape = ", ".join(str(tensor.shape[i]) for i in range(tensor.ndim))
        device = format_device(tensor.device.device_type, tensor.device.device_id)
        return (f"{format_dtype(dtype.code, dtype.bits, dtype.lanes)}[{shape}]@{device}"
                + self._suffix(address))

    def _call_hook(self, hook: int, address: int) -> str:
        callback = make_callback(self.repr_value, _store_str, REPR_ATTR)
        try:
            result = call_hook(hook, [_object_view(address), _object_view(callback)])
        finally:
            memory.dec_ref(callback)
        try:
            if result.type_index not in _STRS + (TI.kTVMFFIRawStr,):
                raise FFIError("TypeError", "Cannot convert from type "
                                            f"`{TYPES.type_key(result.type_index)}` to `str`")
            return _text(strings.view_bytes(result))
        finally:
            anyvalue.dec_ref_any(result)

    def _finish(self, address: int, text: str) -> str:
        self.state[address] = _DONE
        self.cache[address] = text
        return text

    def frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame of a container or object: its children's texts, joined."""
        address, index = value.v_ptr, value.type_index
        self.state[address] = _IN_PROGRESS
        children = Children(value, FLAGS.kTVMFFIFieldFlagBitMaskReprOff)
        header = TYPES.type_key(index) + self._suffix(address)
        texts: List[str] = []
        try:
            for child in children.values:
                text = self.immediate(child)
                if text is None:
                    text = yield self.frame(child)
                texts.append(text)
        finally:
            children.release()
        if children.kind == "sequence":
            if index == TI.kTVMFFIArray:
                text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
            else:
                text = "[" + ", ".join(texts) + "]"
        elif children.kind == "map":
            text = "{" + ", ".join(f"{texts[i]}: {texts[i + 1]}"
                                   for i in range(0, len(texts), 2)) + "}"
        elif not texts:
            text = header
        else:
            seen: Set[bytes] = set()
            parts = []
            for field, field_text in zip(children.fields, texts):
                name = ctypes.string_at(field.name.data, field.name.size)
                if name in seen:  # a field shadowing an ancestor's prints once, first
                    continue
                seen.add(name)
                parts.append(f"{_text(name)}={field_text}")
            text = header + "(" + ", ".join(parts) + ")"
        if index in _CONTAINERS:
            text += self._suffix(address)
        return self._finish(address, text)


def repr_print(value: abi.TVMFFIAny) -> str:
    """``ffi.ReprPrint`` of an owned value."""
    return ReprPrinter().repr_value(value)


# -------------------------------------------------------------------- hash

_CANONICAL_NAN_BITS = 0x7FF8000000000000


def _float_bits(value: float) -> int:
    if math.isnan(value):
        return _CANONICAL_NAN_BITS
    if value == 0.0:
        return 0
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def hash_pod(value: abi.TVMFFIAny) -> int:
    """The hash of an inline (non-string) value."""
    index = value.type_index
    if index == TI.kTVMFFIBool:
        return stable_hash_combine(index, 1 if value.v_int64 else 0)
    if index == TI.kTVMFFIInt:
        return stable_hash_combine(index, value.v_int64 & MASK64)
    if index == TI.kTVMFFIFloat:
        return stable_hash_combine(index, _float_bits(value.v_float64))
    if index == TI.kTVMFFIDataType:
        dtype = value.v_dtype
        result = stable_hash_combine(index, dtype.code)
        result = stable_hash_combine(result, dtype.bits)
        return stable_hash_combine(result, dtype.lanes)
    if index == TI.kTVMFFIDevice:
        device = value.v_device
        result = stable_hash_combine(index, device.device_type & MASK64)
        return stable_hash_combine(result, device.device_id & MASK64)
    return stable_hash_combine(index & MASK64, value.v_uint64)


class RecursiveHasher:
    """One ``ffi.RecursiveHash`` call: the memo and the objects on the way down."""

    def __init__(self) -> None:
        self.memo: Dict[int, int] = {}
        self.on_stack: Set[int] = set()

    def hash_value(self, value: abi.TVMFFIAny) -> int:
        """The uint64 hash of an owned value (one run of the walk)."""
        result = self.immediate(value)
        if result is None:
            result = run_frames(self.frame(value), "ObjectGraphDFS")
        return result

    def immediate(self, value: abi.TVMFFIAny) -> Optional[int]:
        """The hash of a value that needs no frame, or None."""
        index = value.type_index
        if index == TI.kTVMFFINone:
            return stable_hash_combine(0, 0)
        if index in _STRS:
            return stable_hash_combine(TI.kTVMFFIStr, stable_hash_bytes(strings.view_bytes(value)))
        if index in _BYTES:
            return stable_hash_combine(TI.kTVMFFIBytes,
                                       stable_hash_bytes(strings.view_bytes(value)))
        if index < TI.kTVMFFIStaticObjectBegin:
            return hash_pod(value)
        address = value.v_ptr
        if not address:
            return stable_hash_combine(0, 0)
        if address in self.memo:
            return self.memo[address]
        if address in self.on_stack:  # a cycle: stand in with the type's hash
            return type_key_hash(index)
        if index == TI.kTVMFFIShape:
            dims = shape_dims(address)
            result = stable_hash_combine(type_key_hash(index), len(dims))
            for dim in dims:
                result = stable_hash_combine(result, dim & MASK64)
            self.memo[address] = result
            return result
        hook = _hook(HASH_ATTR, index)
        if hook is not None:
            self.on_stack.add(address)
            callback = make_callback(lambda v: _signed64(self.hash_value(v)), strings.store_int,
                                     HASH_ATTR)
            try:
                result = call_hook(hook, [_object_view(address), _object_view(callback)])
            finally:
                memory.dec_ref(callback)
            result = _hook_int(result, "int") & MASK64
            self.memo[address] = result
            self.on_stack.discard(address)
            return result
        defines_equality = any(custom_entry(attr, index) is not None
                               for attr in (EQ_ATTR, COMPARE_ATTR))
        if index >= TI.kTVMFFIStaticObjectEnd and defines_equality:
            raise FFIError("ValueError", f"RecursiveHash: type '{TYPES.type_key(index)}' defines "
                           "__ffi_eq__ or __ffi_compare__ but not __ffi_hash__. Add a "
                           "__ffi_hash__ hook to maintain the invariant "
                           "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).")
        return None

    def frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame of a container or object: its children's hashes, folded."""
        address, index = value.v_ptr, value.type_index
        self.on_stack.add(address)
        children = Children(value, FLAGS.kTVMFFIFieldFlagBitMaskHashOff
                            | FLAGS.kTVMFFIFieldFlagBitMaskCompareOff)
        if children.kind == "object":
            result = type_key_hash(index)
        else:
            result = stable_hash_combine(type_key_hash(index), children.size)
        hashes: List[int] = []
        try:
            for child in children.values:
                child_hash = self.immediate(child)
                if child_hash is None:
                    child_hash = yield self.frame(child)
                hashes.append(child_hash)
        finally:
            children.release()
        if children.kind == "sequence":
            for position, child_hash in enumerate(hashes):
                result = stable_hash_combine(result, stable_hash_combine(child_hash, position))
        elif children.kind == "map":
            entries = sorted(stable_hash_combine(hashes[i], hashes[i + 1])
                             for i in range(0, len(hashes), 2))
            for entry in entries:
                result = stable_hash_combine(result, entry)
        else:
            for child_hash in hashes:
                result = stable_hash_combine(result, child_hash)
        self.memo[address] = result
        self.on_stack.discard(address)
        return result


def recursive_hash(value: abi.TVMFFIAny) -> int:
    """``ffi.RecursiveHash`` of an owned value, as the int64 upstream returns."""
    return _signed64(RecursiveHasher().hash_value(value))


# ------------------------------------------------------------------ compare


def _sign(difference: int) -> int:
    return (difference > 0) - (difference < 0)


def compare_chars(lhs: bytes, rhs: bytes) -> int:
    """Upstream's ``memncmp``: bytes as signed ``char`` (x86-64), then the shorter first."""
    for a, b in zip(lhs, rhs):
        if a != b:
            return _sign((a ^ 0x80) - (b ^ 0x80))  # bias turns signed order into unsigned
    return _sign(len(lhs) - len(rhs))


def compare_ints(lhs: int, rhs: int) -> int:
    """Three-way comparison of Python ints."""
    return _sign(lhs - rhs)


def compare_tuples(lhs: tuple, rhs: tuple) -> int:
    """Three-way comparison of tuples of numbers, field by field."""
    return (lhs > rhs) - (lhs < rhs)


class RecursiveComparer:
    """One comparison call: the mode and the (lhs, rhs) object pairs being compared."""

    def __init__(self, eq_only: bool) -> None:
        self.eq_only = eq_only
        self.on_stack: Set[Tuple[int, int]] = set()

    def compare(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> int:
        """-1, 0 or 1 for two owned values (one run of the walk)."""
        result = self.immediate(lhs, rhs)
        if result is None:
            result = run_frames(self.frame(lhs, rhs), "RecursiveCompare")
        return result

    def _cannot_order(self, message: str) -> int:
        """In equality mode, "unequal"; in ordering mode, a TypeError with ``message``."""
        if self.eq_only:
            return 1
        raise FFIError("TypeError", message)

    def immediate(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Optional[int]:
        """The comparison of two values that needs no frame, or None."""
        left, right = lhs.type_index, rhs.type_index
        if left == TI.kTVMFFINone or right == TI.kTVMFFINone:  # None sorts first
            return compare_ints(left != TI.kTVMFFINone, right != TI.kTVMFFINone)
        if (left in _STRS and right in _STRS) or (left in _BYTES and right in _BYTES):
            return compare_chars(strings.view_bytes(lhs), strings.view_bytes(rhs))
        if left != right:
            if self.eq_only:
                return 1
            if left in _INTS and right in _INTS:
                return compare_ints(strings.words_to_int(bigint_words(lhs)),
                                    strings.words_to_int(bigint_words(rhs)))
            raise FFIError("TypeError", "Cannot compare values of different types: "
                                        f"{TYPES.type_key(left)} vs {TYPES.type_key(right)}")
        if left < TI.kTVMFFIStaticObjectBegin:
            return self._compare_pod(lhs, rhs)
        if left == TI.kTVMFFIBigInt:
            return compare_ints(strings.words_to_int(bigint_words(lhs)),
                                strings.words_to_int(bigint_words(rhs)))
        if lhs.v_ptr == rhs.v_ptr:
            return 0
        if not lhs.v_ptr or not rhs.v_ptr:
            return -1 if not lhs.v_ptr else 1
        if left == TI.kTVMFFIShape:
            lhs_dims, rhs_dims = shape_dims(lhs.v_ptr), shape_dims(rhs.v_ptr)
            for a, b in zip(lhs_dims, rhs_dims):
                if a != b:
                    return compare_ints(a, b)
            return compare_ints(len(lhs_dims), len(rhs_dims))
        if (lhs.v_ptr, rhs.v_ptr) in self.on_stack:
            if self.eq_only:
                return 0
            raise FFIError("ValueError", "RecursiveCompare: cyclic reference detected in ordering")
        if left >= TI.kTVMFFIStaticObjectEnd:
            return self._custom(lhs.v_ptr, rhs.v_ptr, left)
        return None

    def _compare_pod(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> int:
        index = lhs.type_index
        if index == TI.kTVMFFIBool:
            return compare_ints(bool(lhs.v_int64), bool(rhs.v_int64))
        if index == TI.kTVMFFIInt:
            return compare_ints(lhs.v_int64, rhs.v_int64)
        if index == TI.kTVMFFIFloat:
            a, b = lhs.v_float64, rhs.v_float64
            if math.isnan(a) or math.isnan(b):
                if self.eq_only:
                    return 0 if math.isnan(a) and math.isnan(b) else 1
                raise FFIError("TypeError", "Cannot order NaN values")
            return (a > b) - (a < b)
        if index == TI.kTVMFFIDataType:
            a, b = lhs.v_dtype, rhs.v_dtype
            return compare_tuples((a.code, a.bits, a.lanes), (b.code, b.bits, b.lanes))
        if index == TI.kTVMFFIDevice:
            a, b = lhs.v_device, rhs.v_device
            return compare_tuples((a.device_type, a.device_id), (b.device_type, b.device_id))
        if lhs.zero_padding == rhs.zero_padding and lhs.v_int64 == rhs.v_int64:
            return 0
        return self._cannot_order(f"Cannot order values of type {TYPES.type_key(index)}")

    def _custom(self, lhs: int, rhs: int, index: int) -> Optional[int]:
        """The result of the type's ``__ffi_eq__``/``__ffi_compare__`` hook, or None."""
        eq_hook = _hook(EQ_ATTR, index) if self.eq_only else None
        compare_hook = _hook(COMPARE_ATTR, index) if eq_hook is None else None
        hook = eq_hook or compare_hook
        if hook is None:
            return None
        if eq_hook is not None:
            callback = make_callback(lambda a, b: self.compare(a, b) == 0, functions.set_bool,
                                     EQ_ATTR)
        else:
            callback = make_callback(self.compare, strings.store_int, COMPARE_ATTR)
        pair = (lhs, rhs)
        self.on_stack.add(pair)
        try:
            result = call_hook(hook, [_object_view(lhs), _object_view(rhs),
                                      _object_view(callback)])
        finally:
            memory.dec_ref(callback)
        value = _hook_int(result, "bool" if eq_hook is not None else "int")
        self.on_stack.discard(pair)
        if eq_hook is not None:
            return 0 if value else 1
        return _int32(value)

    def _children(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny, owned: List[abi.TVMFFIAny]):
        """``(kind, child pairs, result if all pairs are equal)``; ``kind`` is None when the
        pair is decided before any child is compared (maps that cannot match).

        Every child value is appended to ``owned``, holding a reference for the frame's life.
        """
        index = lhs.type_index
        if index in _SEQUENCES:
            left, right = seq_items(lhs.v_ptr), seq_items(rhs.v_ptr)
            pairs = list(zip(left, right))
            tail = compare_ints(len(left), len(right))
            kind = "sequence"
        elif index in _MAPS:
            left = map_items(lhs.v_ptr)
            if len(left) != map_size_of(rhs.v_ptr):
                return None, [], self._cannot_order("Cannot order Map/Dict values")
            pairs = []
            for key, value in left:
                other = map_find(rhs.v_ptr, key)
                if other is None:
                    return None, [], self._cannot_order("Cannot order Map/Dict values")
                pairs.append((value, other))
            tail, kind = 0, "map"
        else:
            for field in reflected_fields(index, FLAGS.kTVMFFIFieldFlagBitMaskCompareOff):
                owned.append(read_field(lhs.v_ptr, field))
                owned.append(read_field(rhs.v_ptr, field))
            return "object", list(zip(owned[::2], owned[1::2])), 0
        for a, b in pairs:
            anyvalue.inc_ref_any(a)
            anyvalue.inc_ref_any(b)
            owned.extend((a, b))
        return kind, pairs, tail

    def frame(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Frame:
        """The frame of two containers or objects of one type: children pairwise, in order.

        The first unequal pair decides; in ordering mode a difference found under
        a map (at any depth) is a TypeError, since maps have no order.
        """
        pair = (lhs.v_ptr, rhs.v_ptr)
        self.on_stack.add(pair)
        owned: List[abi.TVMFFIAny] = []
        try:
            kind, pairs, tail = self._children(lhs, rhs, owned)
            if kind is None:
                return tail
            for a, b in pairs:
                result = self.immediate(a, b)
                if result is None:
                    result = yield self.frame(a, b)
                if result != 0:
                    if kind == "map" and not self.eq_only:
                        raise FFIError("TypeError", "Cannot order Map/Dict values")
                    return result
            return tail
        finally:
            _release_all(owned)
            self.on_stack.discard(pair)


def recursive_compare(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny, eq_only: bool) -> int:
    """-1, 0 or 1: the walk's three-way comparison of two owned values."""
    return RecursiveComparer(eq_only).compare(lhs, rhs)


# ---------------------------------------------------------- the KWARGS sentinel



# -------------------------------------------------- columns, hooks, globals


def _bigint_words_of(address: int) -> bytes:
    """The words of the BigInt object at ``address`` (upstream's ``as_or_throw<BigInt>``)."""
    index = memory.type_index_of(address)
    if index != TI.kTVMFFIBigInt:
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(index)}` as type `BigInt`")
    return bigint_words(_object_view(address))


def _bigint_hash_hook(result, value, fn):
    strings.store_int(result, _signed64(stable_hash_bytes(_bigint_words_of(value))))


# eq and compare read rhs first: upstream's two reads are the arguments of one C++ call


def _bigint_eq_hook(result, lhs, rhs, fn):
    right = _bigint_words_of(rhs)
    functions.set_bool(result, _bigint_words_of(lhs) == right)


def _bigint_compare_hook(result, lhs, rhs, fn):
    right = strings.words_to_int(_bigint_words_of(rhs))
    strings.store_int(result, compare_ints(strings.words_to_int(_bigint_words_of(lhs)), right))


#: BigInt's hooks: typed functions, named as upstream names them in argument errors.
_BIGINT_HOOKS = (
    (EQ_ATTR, ["ffi.Object", "ffi.Object", "ffi.Function"], "bool", _bigint_eq_hook),
    (COMPARE_ATTR, ["ffi.Object", "ffi.Object", "ffi.Function"], "int", _bigint_compare_hook),
    (HASH_ATTR, ["ffi.Object", "ffi.Function"], "int", _bigint_hash_hook),
)


# The __ffi_repr__ hooks upstream registers for its access paths: a step prints as
# ".name", "[3]", "[<repr of key>]" or "[<missing:...>]"; a path as "<root>" and its
# steps from the root down, each printed through fn_repr. Both return a String object
# (upstream returns the std::string it built).

#: AccessStepObj: int32 kind, then the Any key; AccessPathObj: parent, step, int32 depth.
_STEP_KIND_OFFSET, _STEP_KEY_OFFSET = memory.HEADER_SIZE, memory.HEADER_SIZE + 8
_PATH_PARENT_OFFSET, _PATH_STEP_OFFSET = memory.HEADER_SIZE, memory.HEADER_SIZE + 8
_PATH_DEPTH_OFFSET = memory.HEADER_SIZE + 16


def _expect_type(address: int, type_key: str) -> None:
    index = memory.type_index_of(address)
    if index != TYPES.key_to_index(type_key.encode()):
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(index)}` as type "
                                    f"`{type_key}`")


def _fn_repr_text(fn: int, value: abi.TVMFFIAny) -> str:
    result = call_hook(fn, [value])
    try:
        if result.type_index not in _STRS + (TI.kTVMFFIRawStr,):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(result.type_index)}` to `str`")
        return _text(strings.view_bytes(result))
    finally:
        anyvalue.dec_ref_any(result)


def _store_string_object(result: abi.TVMFFIAny, text: str) -> None:
    result.type_index = TI.kTVMFFIStr
    result.zero_padding = 0
    result.v_ptr = strings.new_bytes_object(TI.kTVMFFIStr, text.encode("utf-8", "surrogateescape"))


def _access_step_repr(result, step, fn):
    _expect_type(step, "ffi.reflection.AccessStep")
    kind = ctypes.c_int32.from_address(step + _STEP_KIND_OFFSET).value
    key = abi.TVMFFIAny.from_address(step + _STEP_KEY_OFFSET)
    if kind == 0:  # kAttr: the name as is
        if key.type_index not in _STRS + (TI.kTVMFFIRawStr,):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(key.type_index)}` to `str`")
        text = "." + _text(strings.view_bytes(key))
    elif kind in (1, 4):  # kArrayItem, kArrayItemMissing: the index
        if key.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(key.type_index)}` to `int`")
        text = f"[{key.v_int64}]" if kind == 1 else f"[<missing:{key.v_int64}>]"
    elif kind == 2:  # kMapItem
        text = f"[{_fn_repr_text(fn, key)}]"
    elif kind in (3, 5):  # kAttrMissing, kMapItemMissing
        text = f"[<missing:{_fn_repr_text(fn, key)}>]"
    else:
        raise FFIError("InternalError", f"unknown access step kind {kind}")
    _store_string_object(result, text)


def _access_path_repr(result, path, fn):
    _expect_type(path, "ffi.reflection.AccessPath")
    steps = []
    while path and ctypes.c_int32.from_address(path + _PATH_DEPTH_OFFSET).value > 0:
        steps.append(ctypes.c_void_p.from_address(path + _PATH_STEP_OFFSET).value)
        path = ctypes.c_void_p.from_address(path + _PATH_PARENT_OFFSET).value
    texts = [_fn_repr_text(fn, _object_view(step) if step else abi.TVMFFIAny())
             for step in reversed(steps)]
    _store_string_object(result, "<root>" + "".join(texts))


def _register_columns() -> None:
    """Creates the walk's hook columns (and the other dataclass columns) and BigInt's hooks."""
    for attr in (REPR_ATTR, HASH_ATTR, EQ_ATTR, COMPARE_ATTR) + _OTHER_DATACLASS_ATTRS:
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())
    for attr, params, returns, impl in _BIGINT_HOOKS:
        func = typed_function(params, returns, impl, name=f"ffi.BigInt.{attr.decode()}")
        TYPES.register_attr(TI.kTVMFFIBigInt, attr, _object_view(func))
        memory.dec_ref(func)  # the column keeps its own reference
    for type_key, impl in (("ffi.reflection.AccessStep", _access_step_repr),
                           ("ffi.reflection.AccessPath", _access_path_repr)):
        func = typed_function(["ffi.Object", "ffi.Function"], "str", impl,
                              name=f"{type_key}.__ffi_repr__")
        TYPES.register_attr(TYPES.key_to_index(type_key.encode()), REPR_ATTR, _object_view(func))
        memory.dec_ref(func)


_register_columns()


@typed_global("ffi.ReprPrint", ["Any"], "str")
def _repr_print(result, value):
    printer = ReprPrinter()
    text = printer.immediate(value)
    if text is not None:  # upstream copies this text into a String: small when it fits
        _store_str(result, text)
        return
    # ... and moves a frame's text into one, which makes a String object whatever its size
    data = run_frames(printer.frame(value), "ObjectGraphDFS").encode("utf-8", "surrogateescape")
    result.type_index = TI.kTVMFFIStr
    result.zero_padding = 0
    result.v_ptr = strings.new_bytes_object(TI.kTVMFFIStr, data)


@typed_global("ffi.RecursiveHash", ["Any"], "int")
def _recursive_hash(result, value):
    strings.store_int(result, recursive_hash(value))


def _define_comparison(name: str, eq_only: bool, holds: Callable[[int], bool]) -> None:
    @typed_global(name, ["Any", "Any"], "bool")
    def _compare(result, lhs, rhs):
        functions.set_bool(result, holds(recursive_compare(lhs, rhs, eq_only)))


_define_comparison("ffi.RecursiveEq", True, lambda c: c == 0)
_define_comparison("ffi.RecursiveLt", False, lambda c: c < 0)
_define_comparison("ffi.RecursiveLe", False, lambda c: c <= 0)
_define_comparison("ffi.RecursiveGt", False, lambda c: c > 0)
_define_comparison("ffi.RecursiveGe", False, lambda c: c >= 0)
