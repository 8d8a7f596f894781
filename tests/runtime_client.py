"""A tiny C API client for the runtime tests: Python values in, Python values out.

``run(runtime, body)`` runs ``body`` with ``capi_harness.run_capi`` after
``CLIENT``, which adds to the harness names (``abi``, ``lib``, ``TI``,
``byte_array``, ``take_error``):

* ``call(name, *args)``   -- calls a global function; returns a Python value or
  an ``Obj`` (an owned object reference); raises ``FFIError(kind, message)``;
* ``callf(func, *args)``  -- the same for a Function handle or ``Obj``;
* ``show(value)``         -- a comparable Python picture of any value, read from
  the object layouts directly (a Map's entries in its own iteration order);
* ``err(fn, *args)``      -- ``fn(*args)`` or ``('ERR', kind, first line)``;
* ``layout(map_obj)``     -- the raw layout of a Map/Dict (small or dense:
  slots, shift, metadata bytes, list links), to compare hashing bit for bit;
* ``rc(obj)``             -- the strong reference count;
* ``type_key(index)``     -- a type index's key.

Arguments convert as upstream's Python front end converts them: None, bool,
int (BigInt beyond int64), float, str, bytes, ``Obj``; plus the wrappers
``RawStr``, ``ByteArr``, ``Ptr``, ``DType``, ``Dev`` for the view-only kinds.

Every runtime runs the same snippet in its own process, so comparing outputs
(and asserting explicit values) is the conformance check. ``RUNTIMES`` lists the
runtimes the tests run under (``OURS`` those of them that are this project's).
"""

from __future__ import annotations

import textwrap
from typing import Dict

from capi_harness import each_runtime, run_capi

#: The runtimes every runtime test runs under, compared with "upstream".
RUNTIMES = ["fast", "ref", "upstream"]
#: Ours: each is held to upstream's output.
OURS = [runtime for runtime in RUNTIMES if runtime != "upstream"]

CLIENT = r'''
import struct

class FFIError(Exception):
    def __init__(self, kind, message):
        super().__init__(kind, message)
        self.kind, self.message = kind, message

class RawStr:
    def __init__(self, data): self.data = data if isinstance(data, bytes) else data.encode()
class ByteArr:
    def __init__(self, data): self.data = data
class Ptr:
    def __init__(self, value): self.value = value
class DType:
    def __init__(self, code, bits, lanes): self.t = (code, bits, lanes)
class Dev:
    def __init__(self, kind, index): self.t = (kind, index)

lib.TVMFFIGetTypeInfo.restype = ctypes.POINTER(abi.TVMFFITypeInfo)
lib.TVMFFIGetTypeAttrColumn.restype = ctypes.POINTER(abi.TVMFFITypeAttrColumn)

def raise_error():
    e = take_error()
    raise FFIError(*(e if e else ("<none>", "<no error raised>")))

def type_key(index):
    info = lib.TVMFFIGetTypeInfo(index)
    if not info:
        take_error()
        return "<unknown:%d>" % index
    key = info.contents.type_key
    return ctypes.string_at(key.data, key.size).decode()

class Obj:
    """One owned reference to an object."""
    def __init__(self, handle):
        self.handle = handle
        self.type_index = abi.TVMFFIObject.from_address(handle).type_index
    def any(self):
        a = abi.TVMFFIAny()
        a.type_index = self.type_index
        a.v_ptr = self.handle
        return a
    def __del__(self):
        try:
            lib.TVMFFIObjectDecRef(ctypes.c_void_p(self.handle))
        except Exception:
            pass
    def __repr__(self):
        return "Obj(%s)" % type_key(self.type_index)

def rc(obj):
    return abi.TVMFFIObject.from_address(obj.handle).combined_ref_count & 0xFFFFFFFF

_keep = []

def to_any(value, owned):
    a = abi.TVMFFIAny()
    if value is None:
        a.type_index = 0
    elif isinstance(value, bool):
        a.type_index = 2; a.v_int64 = int(value)
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            a.type_index = 1; a.v_int64 = value
        else:
            n = (value.bit_length() + 1 + 63) // 64
            data = value.to_bytes(n * 8, "little", signed=True)
            if lib.TVMFFIBigIntFromByteArray(ctypes.byref(byte_array(data)), ctypes.byref(a)) != 0:
                raise_error()
            owned.append(a)
    elif isinstance(value, float):
        a.type_index = 3; a.v_float64 = value
    elif isinstance(value, str):
        if lib.TVMFFIStringFromByteArray(ctypes.byref(byte_array(value)), ctypes.byref(a)) != 0:
            raise_error()
        owned.append(a)
    elif isinstance(value, bytes):
        if lib.TVMFFIBytesFromByteArray(ctypes.byref(byte_array(value)), ctypes.byref(a)) != 0:
            raise_error()
        owned.append(a)
    elif isinstance(value, Obj):
        a = value.any()
    elif isinstance(value, abi.TVMFFIAny):
        a = value
    elif isinstance(value, RawStr):
        buf = ctypes.create_string_buffer(value.data)
        _keep.append(buf)
        a.type_index = 8; a.v_ptr = ctypes.addressof(buf)
    elif isinstance(value, ByteArr):
        ba = byte_array(value.data)
        _keep.append(ba)
        a.type_index = 9; a.v_ptr = ctypes.addressof(ba)
    elif isinstance(value, Ptr):
        a.type_index = 4; a.v_ptr = value.value
    elif isinstance(value, DType):
        a.type_index = 5; a.v_dtype = abi.DLDataType(*value.t)
    elif isinstance(value, Dev):
        a.type_index = 6; a.v_device = abi.DLDevice(*value.t)
    else:
        raise TypeError("cannot pass %r" % (value,))
    return a

def from_any(a):
    """Takes ownership of an owned Any: a Python value, or an Obj for objects."""
    ti = a.type_index
    if ti >= 64:
        return Obj(a.v_ptr)
    if ti == 0: return None
    if ti == 1: return a.v_int64
    if ti == 2: return bool(a.v_int64)
    if ti == 3: return a.v_float64
    if ti == 4: return Ptr(a.v_ptr)
    if ti == 5: return ("dtype", a.v_dtype.code, a.v_dtype.bits, a.v_dtype.lanes)
    if ti == 6: return ("device", a.v_device.device_type, a.v_device.device_id)
    if ti == 11: return bytes(a)[8:8 + a.small_str_len].decode()
    if ti == 12: return bytes(a)[8:8 + a.small_str_len]
    return ("any", ti, a.v_int64)

def callf(func, *args):
    handle = func.handle if isinstance(func, Obj) else func
    owned = []
    try:
        arr = (abi.TVMFFIAny * max(1, len(args)))()
        for i, v in enumerate(args):
            arr[i] = to_any(v, owned)
        result = abi.TVMFFIAny()
        if lib.TVMFFIFunctionCall(ctypes.c_void_p(handle), arr, len(args), ctypes.byref(result)) != 0:
            raise_error()
        return from_any(result)
    finally:
        for a in owned:
            decref_any(a)

_functions = {}

def gfunc(name):
    if name not in _functions:
        h = ctypes.c_void_p()
        if lib.TVMFFIFunctionGetGlobal(ctypes.byref(byte_array(name)), ctypes.byref(h)) != 0:
            raise_error()
        if not h.value:
            raise FFIError("LookupError", "no global " + name)
        _functions[name] = Obj(h.value)
    return _functions[name]

def call(name, *args):
    return callf(gfunc(name), *args)

def err(fn, *args):
    try:
        return fn(*args)
    except FFIError as e:
        return ("ERR", e.kind, e.message.splitlines()[0] if e.message else "")

def bytes_cell(handle):
    b = abi.TVMFFIByteArray.from_address(handle + 24)
    return ctypes.string_at(b.data, b.size)

def any_at(address):
    return abi.TVMFFIAny.from_address(address)

def show_any(a):
    """A picture of a borrowed Any (no ownership taken)."""
    ti = a.type_index
    if ti < 64:
        if ti == 11: return bytes(a)[8:8 + a.small_str_len].decode()
        if ti == 12: return bytes(a)[8:8 + a.small_str_len]
        if ti == 0: return None
        if ti == 1: return a.v_int64
        if ti == 2: return bool(a.v_int64)
        if ti == 3: return a.v_float64
        if ti == 4: return ("ptr", a.v_ptr or 0)
        if ti == 5: return ("dtype", a.v_dtype.code, a.v_dtype.bits, a.v_dtype.lanes)
        if ti == 6: return ("device", a.v_device.device_type, a.v_device.device_id)
        return ("pod", ti)
    return show_handle(a.v_ptr)

def map_entries(handle):
    base = handle + 24
    data, size, slots = struct.unpack_from("<QQQ", ctypes.string_at(base, 24))
    out = []
    if slots & (1 << 63):
        for i in range(size):
            out.append((data + 32 * i, data + 32 * i + 16))
    else:
        head = struct.unpack("<Q", ctypes.string_at(handle + 64, 8))[0]
        index = head
        while index != 0xFFFFFFFFFFFFFFFF:
            item = data + (index // 16) * 784 + 16 + (index % 16) * 48
            out.append((item, item + 16))
            index = struct.unpack("<Q", ctypes.string_at(item + 40, 8))[0]
    return out

def show_handle(h):
    ti = abi.TVMFFIObject.from_address(h).type_index
    if ti == 65: return bytes_cell(h).decode()
    if ti == 66: return bytes_cell(h)
    if ti == 67:
        cell = abi.TVMFFIErrorCell.from_address(h + 24)
        return ("Error", ctypes.string_at(cell.kind.data, cell.kind.size).decode(),
                ctypes.string_at(cell.message.data, cell.message.size).decode())
    if ti == 68: return "Function"
    if ti == 69:
        cell = abi.TVMFFIShapeCell.from_address(h + 24)
        return ("Shape", tuple(ctypes.cast(cell.data, ctypes.POINTER(ctypes.c_int64))[i] for i in range(cell.size)))
    if ti == 70:
        t = abi.DLTensor.from_address(h + 24)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        return ("Tensor", shape, strides, (t.dtype.code, t.dtype.bits, t.dtype.lanes),
                (t.device.device_type, t.device.device_id), t.byte_offset)
    if ti in (71, 75):
        cell = abi.TVMFFISeqCell.from_address(h + 24)
        items = [show_any(any_at(cell.data + 16 * i)) for i in range(cell.size)]
        return items if ti == 71 else ("List", items)
    if ti in (72, 76):
        entries = [(show_any(any_at(k)), show_any(any_at(v))) for k, v in map_entries(h)]
        return ("Map" if ti == 72 else "Dict", entries)
    if ti == 73: return "Module"
    if ti == 78:
        a = abi.TVMFFIAny(); a.type_index = 78; a.v_ptr = h
        content = lib.TVMFFIBigIntGetContentByteArray(ctypes.byref(a))
        return ("BigInt", int.from_bytes(ctypes.string_at(content.data, content.size), "little", signed=True))
    return ("Obj", type_key(ti))

def show(value):
    if isinstance(value, Obj):
        return show_handle(value.handle)
    if isinstance(value, Ptr):
        return ("ptr", value.value or 0)
    return value

def layout(obj):
    """The raw layout of a Map/Dict: everything hashing decides."""
    h = obj.handle
    data, size, slots, deleter = struct.unpack_from("<QQQQ", ctypes.string_at(h + 24, 32))
    if slots & (1 << 63):
        return ("small", size, slots & ~(1 << 63), [show_any(any_at(k)) for k, _ in map_entries(h)])
    shift, head, tail = struct.unpack_from("<I4xQQ", ctypes.string_at(h + 56, 24))
    blocks = (slots + 15) // 16
    metas, links = [], []
    for b in range(blocks):
        block = data + b * 784
        metas.append(ctypes.string_at(block, 16).hex())
        for j in range(16):
            if b * 16 + j >= slots:
                break
            meta = ctypes.string_at(block + j, 1)[0]
            if meta not in (0xFF, 0xFE):
                item = block + 16 + 48 * j
                prev, nxt = struct.unpack_from("<QQ", ctypes.string_at(item + 32, 16))
                links.append((b * 16 + j, show_any(any_at(item)), prev, nxt))
    return ("dense", size, slots, shift, head, tail, metas, links)
'''


def run(runtime: str, body: str, **variables) -> str:
    """Runs ``body`` under ``runtime`` with the client loaded; returns its stdout."""
    return run_capi(runtime, CLIENT + "\n" + textwrap.dedent(body), **variables)


def run_all(body: str, runtimes=None, **variables) -> Dict[str, str]:
    """Runs ``body`` under every runtime (two processes at a time); stdout by runtime."""
    return each_runtime(runtimes or RUNTIMES, lambda rt: run(rt, body, **variables))


def tagged(output: str) -> Dict[str, str]:
    """The ``tag: value`` lines of an output, by tag (later lines win)."""
    result = {}
    for line in output.splitlines():
        tag, sep, value = line.partition(": ")
        if sep:
            result[tag] = value
    return result
