"""Array, List, Shape, Map and Dict, driven through the C API and compared with upstream.

As in ``test_types_values_capi.py``, each snippet runs under upstream and under every
runtime in ``RUNTIMES``; all must print the same lines, and the lines are also
pinned to explicit expectations. Maps are compared by their raw layout (form,
slots, metadata bytes, chain and iteration links), read from memory the way
C++ code reads it, so "same output" means "same bytes where C++ looks".

The kernel tests run C++ compiled against upstream's headers, which reads and
mutates containers in place with inline code.
"""

from __future__ import annotations

import os
import re

import pytest

from capi_harness import each_runtime, run_capi

#: Our runtimes held to upstream here.
RUNTIMES = ["ref", "fast"]

#: Helpers every snippet gets (on top of the harness prelude).
HELPERS = r'''
import struct

def mk_int(v):
    a = abi.TVMFFIAny(type_index=TI.kTVMFFIInt); a.v_int64 = v; return a
def mk_bool(v):
    a = abi.TVMFFIAny(type_index=TI.kTVMFFIBool); a.v_int64 = int(v); return a
def mk_float(v):
    a = abi.TVMFFIAny(type_index=TI.kTVMFFIFloat); a.v_float64 = v; return a
def mk_str(s):
    """An owned str value: small when at most 7 bytes, else a String object."""
    out = abi.TVMFFIAny(); assert lib.TVMFFIStringFromByteArray(byte_array(s), ctypes.byref(out)) == 0
    return out
def mk_bytes(b):
    out = abi.TVMFFIAny(); assert lib.TVMFFIBytesFromByteArray(byte_array(b), ctypes.byref(out)) == 0
    return out
def mk_raw(s):
    a = abi.TVMFFIAny(type_index=TI.kTVMFFIRawStr); a.v_ptr = byte_array(s).data; return a
def mk_bigint(value):
    words = value.to_bytes(8 * ((value.bit_length() + 64) // 64), "little", signed=True)
    out = abi.TVMFFIAny(); assert lib.TVMFFIBigIntFromByteArray(byte_array(words), ctypes.byref(out)) == 0
    return out

_keep_objects = []
@ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)
def _static_deleter(obj, flags):
    pass
def static_object(type_index, cell=b""):
    """An object in Python-owned memory (never freed): header, then ``cell`` bytes."""
    buf = ctypes.create_string_buffer(24 + len(cell) + 8)
    struct.pack_into("<QiI", buf, 0, (1 << 32) | 1, type_index, 0)
    ctypes.c_void_p.from_address(ctypes.addressof(buf) + 16).value = ctypes.cast(_static_deleter, ctypes.c_void_p).value
    ctypes.memmove(ctypes.addressof(buf) + 24, cell, len(cell))
    _keep_objects.append(buf)
    return ctypes.addressof(buf)
def boxed_short_str(text):
    """A String object holding at most 7 bytes (our helpers would make a small str)."""
    data = text.encode()
    payload = ctypes.create_string_buffer(data, len(data) + 1); _keep_objects.append(payload)
    address = static_object(TI.kTVMFFIStr, struct.pack("<QQ", ctypes.addressof(payload), len(data)))
    return mk_obj(address)
def mk_obj(address):
    a = abi.TVMFFIAny(); a.type_index = abi.TVMFFIObject.from_address(address).type_index; a.v_ptr = address
    return a

def call_handle(handle, args):
    packed = (abi.TVMFFIAny * max(1, len(args)))()
    for i, a in enumerate(args):
        packed[i] = a
    res = abi.TVMFFIAny()
    if lib.TVMFFIFunctionCall(handle, packed, len(args), ctypes.byref(res)) != 0:
        return ("err",) + take_error()
    return res
def call(name, *args):
    """Calls global ``name``; an owned result, or ('err', kind, message)."""
    h = ctypes.c_void_p(); lib.TVMFFIFunctionGetGlobal(byte_array(name), ctypes.byref(h))
    assert h.value, name
    try:
        return call_handle(h, args)
    finally:
        lib.TVMFFIObjectDecRef(h)
def ok(name, *args):
    res = call(name, *args)
    assert not isinstance(res, tuple), (name, res)
    return res
def refs(value):
    return abi.TVMFFIObject.from_address(value.v_ptr).combined_ref_count & 0xffffffff

def text_of(v):
    if v.type_index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
        return bytes(v.v_bytes)[:v.small_str_len]
    cell = abi.TVMFFIByteArray.from_address(v.v_ptr + 24)
    return ctypes.string_at(cell.data, cell.size)
def show(v):
    """A value as text that is the same under every runtime (objects by kind, not address)."""
    if isinstance(v, tuple):
        return v
    t = int(v.type_index)
    if t == TI.kTVMFFINone: return None
    if t == TI.kTVMFFIInt: return v.v_int64
    if t == TI.kTVMFFIBool: return bool(v.v_int64)
    if t == TI.kTVMFFIFloat: return v.v_float64
    if t in (TI.kTVMFFISmallStr, TI.kTVMFFIStr): return ("s" if t == TI.kTVMFFISmallStr else "S") + ":" + text_of(v).decode()
    if t in (TI.kTVMFFISmallBytes, TI.kTVMFFIBytes): return text_of(v)
    if t in (TI.kTVMFFIArray, TI.kTVMFFIList): return ("A" if t == TI.kTVMFFIArray else "L", [show(e) for e in seq(v.v_ptr)])
    if t in (TI.kTVMFFIMap, TI.kTVMFFIDict): return ("M" if t == TI.kTVMFFIMap else "D", [(show(k), show(x)) for k, x in entries(v.v_ptr)])
    if t == TI.kTVMFFIShape:
        cell = abi.TVMFFIShapeCell.from_address(v.v_ptr + 24)
        return ("Shape", [cell.data[i] for i in range(cell.size)])
    return ("obj", t)

def any_at(address):
    return abi.TVMFFIAny.from_address(address)
def seq(address):
    """Elements of an Array/List, read from its TVMFFISeqCell as C++ reads them."""
    cell = abi.TVMFFISeqCell.from_address(address + 24)
    return [any_at(cell.data + 16 * i) for i in range(cell.size)]
def seq_layout(address):
    cell = abi.TVMFFISeqCell.from_address(address + 24)
    inline = cell.data == address + 56
    return (cell.size, cell.capacity, "inline" if inline else ("NULL" if not cell.data else "buffer"),
            bool(cell.data_deleter))

def map_fields(address):
    return struct.unpack_from("<QQQQIxxxxQQ", ctypes.string_at(address + 24, 56))
def dense_slot(data, i):
    block = data + (i // 16) * 784
    return block + i % 16, block + 16 + (i % 16) * 48
def entries(address):
    """(key, value) views in iteration order, walking the layout as C++ does."""
    data, size, slots, _, _, head, _ = map_fields(address)
    if slots >> 63:
        return [(any_at(data + 32 * i), any_at(data + 32 * i + 16)) for i in range(size)]
    out, i = [], head
    while i != 2**64 - 1:
        _, item = dense_slot(data, i)
        out.append((any_at(item), any_at(item + 16)))
        i = ctypes.c_uint64.from_address(item + 40).value
    return out
def map_layout(value):
    """Everything C++ relies on in a map: form, sizes, metadata, links, entries."""
    address = value.v_ptr
    data, size, slots, deleter, fib_shift, head, tail = map_fields(address)
    if slots >> 63:
        return ("small", size, slots & ~(1 << 63), data == address + 56, [(show(k), show(v)) for k, v in entries(address)])
    metas, links = [], []
    for i in range(slots):
        meta_at, item = dense_slot(data, i)
        meta = ctypes.c_uint8.from_address(meta_at).value
        metas.append(meta)
        if meta not in (0xFF, 0xFE):
            prev, nxt = struct.unpack_from("<QQ", ctypes.string_at(item + 32, 16))
            links.append((i, show(any_at(item)), show(any_at(item + 16)), prev % (2**64 - 1), nxt % (2**64 - 1)))
    return ("dense", size, slots, fib_shift, head % (2**64 - 1), tail % (2**64 - 1), bytes(metas).hex(), links)
def keys_of(value):
    return [show(k) for k, _ in entries(value.v_ptr)]

def key_of(i):
    """Mixed keys: ints, small strs and boxed strs."""
    return [mk_int(i), mk_str("k%d" % i), mk_str("a-longer-key-%d" % i)][i % 3]
def boxed_key_of(i):
    """The keys C++ ``KeyOf`` makes: the same, except every str is a String object."""
    return [mk_int(i), boxed_short_str("k%d" % i), mk_str("a-longer-key-%d" % i)][i % 3]

kernel = None
def load_kernel(path):
    global kernel
    kernel = ctypes.CDLL(path)
def kcall(name, *args):
    f = abi.TVMFFISafeCallType(("__tvm_ffi_" + name, kernel))
    packed = (abi.TVMFFIAny * max(1, len(args)))(*args)
    res = abi.TVMFFIAny()
    if f(None, packed, len(args), ctypes.byref(res)) != 0:
        return ("err",) + take_error()
    return res
def kshow(name, *args):
    res = kcall(name, *args)
    if isinstance(res, tuple):
        return res
    out = show(res); decref_any(res); return out
'''


def run(runtime: str, snippet: str, **variables) -> str:
    """Runs ``snippet`` (with :data:`HELPERS`) under ``runtime``."""
    import textwrap

    return run_capi(runtime, HELPERS + textwrap.dedent(snippet), **variables)


def same_everywhere(snippet: str, **variables) -> str:
    """Runs ``snippet`` under upstream and each runtime; asserts equal output; returns it."""
    outputs = each_runtime(["upstream", *RUNTIMES], lambda rt: run(rt, snippet, **variables))
    expected = outputs["upstream"]
    for runtime in RUNTIMES:
        actual = outputs[runtime]
        if actual != expected:
            diff = [f"line {i}:\n  {runtime}: {a}\n  upstream: {e}"
                    for i, (a, e) in enumerate(zip(actual.splitlines(), expected.splitlines()))
                    if a != e][:5]
            raise AssertionError(f"{runtime} differs from upstream:\n" + "\n".join(diff)
                                 + f"\n(lines: {len(actual.splitlines())} vs "
                                 f"{len(expected.splitlines())})")
    return expected


# --------------------------------------------------------------------- sequences


def test_array_list_and_shape_globals():
    out = same_everywhere("""
    s = mk_str("a string too long to be small")
    arr = ok("ffi.Array", mk_int(1), mk_raw("raw"), s, mk_float(2.5), abi.TVMFFIAny())
    print(show(arr), seq_layout(arr.v_ptr), refs(s))
    print(show(ok("ffi.ArraySize", arr)), show(ok("ffi.ArrayGetItem", arr, mk_int(1))),
          show(ok("ffi.ArrayContains", arr, mk_raw("raw"))), show(ok("ffi.ArrayContains", arr, mk_bool(1))))
    print(call("ffi.ArrayGetItem", arr, mk_int(5)))
    print(call("ffi.ArrayGetItem", arr, mk_int(-1)))
    print(call("ffi.ArrayGetItem", arr))
    print(call("ffi.ArrayGetItem", arr, mk_float(0.0)))
    print(call("ffi.ArraySize", mk_raw("x")))
    empty = ok("ffi.Array"); print(show(empty), seq_layout(empty.v_ptr))

    lst = ok("ffi.List", mk_int(0), s)
    print(show(lst), seq_layout(lst.v_ptr), refs(s))
    for i in range(1, 4):
        ok("ffi.ListAppend", lst, key_of(i))
    print(show(lst), seq_layout(lst.v_ptr))
    ok("ffi.ListInsert", lst, mk_int(0), mk_str("front"))
    ok("ffi.ListInsert", lst, mk_int(6), mk_str("back"))
    print(show(lst), seq_layout(lst.v_ptr))
    print(call("ffi.ListInsert", lst, mk_int(9), mk_int(0)), seq_layout(lst.v_ptr))
    popped = ok("ffi.ListPop", lst, mk_int(2)); print(show(popped), show(lst)); decref_any(popped)
    print(call("ffi.ListPop", lst, mk_int(6)))
    ok("ffi.ListErase", lst, mk_int(0)); print(show(lst))
    ok("ffi.ListEraseRange", lst, mk_int(1), mk_int(3)); print(show(lst))
    print(show(ok("ffi.ListEraseRange", lst, mk_int(9), mk_int(9))), call("ffi.ListEraseRange", lst, mk_int(2), mk_int(1)))
    ok("ffi.ListReplaceSlice", lst, mk_int(0), mk_int(1), ok("ffi.List", mk_int(7), mk_int(8), mk_int(9)))
    print(show(lst))
    ok("ffi.ListReplaceSlice", lst, mk_int(1), mk_int(1), lst); print(show(lst), seq_layout(lst.v_ptr))
    ok("ffi.ListReplaceSlice", lst, mk_int(0), mk_int(2), ok("ffi.Array", mk_int(5))); print(show(lst))
    ok("ffi.ListReverse", lst); print(show(lst))
    ok("ffi.ListSetItem", lst, mk_int(0), mk_str("set")); print(show(ok("ffi.ListGetItem", lst, mk_int(0))))
    print(call("ffi.ListSetItem", lst, mk_int(99), mk_int(0)))
    print(show(ok("ffi.ListSize", lst)), show(ok("ffi.ListContains", lst, mk_str("set"))), show(ok("ffi.ListContains", lst, mk_int(42))))
    ok("ffi.ListReserve", lst, mk_int(3)); print(seq_layout(lst.v_ptr))
    ok("ffi.ListReserve", lst, mk_int(40)); print(seq_layout(lst.v_ptr))
    ok("ffi.ListClear", lst); print(show(lst), seq_layout(lst.v_ptr))
    print(call("ffi.ListGetItem", arr, mk_int(0)))
    ok("ffi.ListAppend", arr, mk_int(1)); print(show(arr))   # an Array is copied into a temporary List
    print(call("ffi.ListReplaceSlice", lst, mk_int(0), mk_int(0), mk_int(1)))
    print(call("ffi.ListPop", ok("ffi.List"), mk_int(0)), call("ffi.ListReserve", lst))

    shape = ok("ffi.Shape", mk_int(2), mk_bool(1), mk_int(-3))
    print(show(shape), int(shape.type_index))
    print(call("ffi.Shape", mk_int(1), mk_float(2.0)), show(ok("ffi.Shape")))
    decref_any(arr); decref_any(lst); print(refs(s))
    """)
    lines = out.splitlines()
    big = "'S:a string too long to be small'"
    assert lines[:12] == [
        f"('A', [1, 's:raw', {big}, 2.5, None]) (5, 5, 'inline', False) 2",
        "5 s:raw True False",
        "('err', 'IndexError', 'Index 5 out of bounds 5')",
        "('err', 'IndexError', 'Index -1 out of bounds 5')",
        "('err', 'TypeError', 'Mismatched number of arguments when calling: "
        "`ffi.ArrayGetItem(0: ffi.Array, 1: int) -> Any`. Expected 2 but got 1 arguments')",
        "('err', 'TypeError', 'Mismatched type on argument #1 when calling: "
        "`ffi.ArrayGetItem(0: ffi.Array, 1: int) -> Any`. Expected `int` but got `float`')",
        "('err', 'TypeError', 'Mismatched type on argument #0 when calling: "
        "`ffi.ArraySize(0: ffi.Array) -> int`. Expected `ffi.Array` but got `const char*`')",
        "('A', []) (0, 0, 'inline', False)",
        f"('L', [0, {big}]) (2, 4, 'buffer', True) 3",
        f"('L', [0, {big}, 's:k1', 'S:a-longer-key-2', 3]) (5, 8, 'buffer', True)",
        f"('L', ['s:front', 0, {big}, 's:k1', 'S:a-longer-key-2', 3, 's:back']) "
        "(7, 8, 'buffer', True)",
        "('err', 'IndexError', 'Index 9 out of bounds [0, 7]') (7, 8, 'buffer', True)",
    ]
    assert lines[12:27] == [
        "S:a string too long to be small ('L', ['s:front', 0, 's:k1', 'S:a-longer-key-2', 3, "
        "'s:back'])",
        "('err', 'IndexError', 'Index 6 out of bounds 6')",
        "('L', [0, 's:k1', 'S:a-longer-key-2', 3, 's:back'])",
        "('L', [0, 3, 's:back'])",
        "None ('err', 'IndexError', 'Erase range [2, 1) out of bounds 3')",
        "('L', [7, 8, 9, 3, 's:back'])",
        "('L', [7, 7, 8, 9, 3, 's:back', 8, 9, 3, 's:back']) (10, 16, 'buffer', True)",
        "('L', [5, 8, 9, 3, 's:back', 8, 9, 3, 's:back'])",
        "('L', ['s:back', 3, 9, 8, 's:back', 3, 9, 8, 5])",
        "s:set",
        "('err', 'IndexError', 'Index 99 out of bounds 9')",
        "9 True False",
        "(9, 16, 'buffer', True)",
        "(9, 40, 'buffer', True)",
        "('L', []) (0, 40, 'buffer', True)",
    ]
    assert lines[27].endswith("`ffi.ListGetItem(0: ffi.List, 1: int) -> Any`. Expected `ffi.List` "
                              "but got `ffi.Array`')")
    assert lines[28] == f"('A', [1, 's:raw', {big}, 2.5, None])"  # unchanged by ListAppend
    assert lines[29].endswith("Expected `List<Any>` but got `int`')")
    assert lines[30].startswith("('err', 'IndexError', 'Index 0 out of bounds 0') ")
    assert lines[31:] == [
        "('Shape', [2, 1, -3]) 69",
        "('err', 'ValueError', 'Expect shape to take list of int arguments') ('Shape', [])",
        "1",
    ]


# -------------------------------------------------------------------------- maps


def test_map_and_dict_globals_and_small_forms():
    out = same_everywhere("""
    big = mk_str("a value string that is boxed")
    for n in range(7):
        args = []
        for i in range(n):
            args += [key_of(i), mk_int(10 * i)]
        m, d = ok("ffi.Map", *args), ok("ffi.Dict", *args)
        print(n, int(m.type_index), int(d.type_index), map_layout(m) == map_layout(d) or map_layout(d))
        print(" ", map_layout(m))
        decref_any(m); decref_any(d)
    m = ok("ffi.Map", mk_int(1), big, mk_raw("x"), mk_int(2), mk_int(1), mk_int(3), mk_str("x"), mk_int(4))
    print(map_layout(m), refs(big))
    for k in (mk_int(1), mk_raw("x"), mk_str("x"), mk_int(5), mk_bool(1), mk_float(1.0)):
        r = call("ffi.MapGetItemOrMissing", m, k)
        print(show(ok("ffi.MapCount", m, k)), show(call("ffi.MapGetItem", m, k)),
              int(r.type_index), r.v_ptr == ok("ffi.GetInvalidObject").v_ptr)
    print(show(ok("ffi.MapSize", m)), call("ffi.MapSize", mk_int(3)), call("ffi.Map", mk_int(1)))
    print(call("ffi.DictGetItem", m, mk_int(1)))
    f = ok("ffi.MapForwardIterFunctor", m)
    steps = []
    for _ in range(2):
        steps.append((show(call_handle(f.v_ptr, [mk_int(0)])), show(call_handle(f.v_ptr, [mk_int(1)])),
                      show(call_handle(f.v_ptr, [mk_int(2)]))))
    print(steps, call_handle(f.v_ptr, [mk_float(0.5)]))
    decref_any(f)

    d = ok("ffi.Dict")
    for i in range(5):
        ok("ffi.DictSetItem", d, key_of(i), mk_int(i))
        print(i, map_layout(d))
    ok("ffi.DictSetItem", d, mk_str("k1"), mk_str("replaced")); print(keys_of(d))
    ok("ffi.DictErase", d, mk_int(0)); ok("ffi.DictErase", d, mk_int(77)); print(map_layout(d))
    print(show(ok("ffi.DictGetItem", d, mk_str("k4"))), show(ok("ffi.DictCount", d, mk_str("k4"))),
          show(ok("ffi.DictSize", d)), call("ffi.DictGetItem", d, mk_int(0)))
    f = ok("ffi.DictForwardIterFunctor", d)
    print(show(call_handle(f.v_ptr, [mk_int(0)])), show(call_handle(f.v_ptr, [mk_int(2)])))
    decref_any(f)
    ok("ffi.DictSetItem", m, mk_int(100), mk_int(0)); ok("ffi.DictErase", m, mk_int(1)); ok("ffi.DictClear", m)
    print(show(ok("ffi.MapSize", m)), call("ffi.DictSetItem", ok("ffi.Array"), mk_int(0), mk_int(0)))
    ok("ffi.DictClear", d); print(map_layout(d))
    small = ok("ffi.Dict", mk_int(1), mk_int(2)); ok("ffi.DictClear", small); print(map_layout(small))
    decref_any(m); print(refs(big))
    """)
    lines = out.splitlines()
    three = "(0, 0), ('s:k1', 10), ('S:a-longer-key-2', 20)"
    assert lines[:12] == [
        "0 72 76 True", "  ('small', 0, 2, True, [])",
        "1 72 76 True", "  ('small', 1, 2, True, [(0, 0)])",
        "2 72 76 True", "  ('small', 2, 2, True, [(0, 0), ('s:k1', 10)])",
        # a Dict that outgrew 2 pairs adopts the pairs of a new small map (not inline)
        f"3 72 76 ('small', 3, 4, False, [{three}])", f"  ('small', 3, 4, True, [{three}])",
        f"4 72 76 ('small', 4, 4, False, [{three}, (3, 30)])",
        f"  ('small', 4, 4, True, [{three}, (3, 30)])",
        "5 72 76 True",
        # 4 entries rehashed into 8 slots, then the 5th: chains, jumps and list links
        "  ('dense', 5, 8, 61, 1, 4, 'ff0180ff0000ff00', [(1, 0, 0, 0, 7), (2, 3, 30, 5, 4), "
        "(4, 's:k4', 40, 2, 0), (5, 'S:a-longer-key-2', 20, 7, 2), (7, 's:k1', 10, 1, 5)])",
    ]
    assert lines[14] == "('small', 2, 2, True, [(1, 3), ('s:x', 4)]) 1"
    assert lines[15:21] == ["1 3 1 False", "1 4 1 False", "1 4 1 False"] + [
        "0 ('err', 'KeyError', 'key is not in Map') 64 True"] * 3
    assert lines[21] == ("2 ('err', 'TypeError', 'Mismatched type on argument #0 when calling: "
                         "`ffi.MapSize(0: ffi.Map) -> int`. Expected `ffi.Map` but got `int`') "
                         "('err', 'InternalError', 'Check failed: args.size() % 2 == 0 (1 vs. 0) : ')")
    assert lines[23] == ("[(1, 3, True), ('s:x', 4, False)] ('err', 'TypeError', 'Mismatched type "
                         "on argument #0 when calling: `(0: int) -> Any`. Expected `int` but got "
                         "`float`')")
    # setting a present key: the dense form moves it to the end of the iteration order
    assert lines[29] == "[0, 'S:a-longer-key-2', 3, 's:k4', 's:k1']"
    assert lines[31:] == [
        "4 1 4 ('err', 'KeyError', 'key is not in Map')",
        "S:a-longer-key-2 True",
        "2 ('err', 'TypeError', 'Mismatched type on argument #0 when calling: `ffi.DictSetItem(0: "
        "Dict<Any, Any>, 1: Any, 2: Any) -> void`. Expected `Dict<Any, Any>` but got `ffi.Array`')",
        "('dense', 0, 8, 61, 0, 0, 'ffffffffffffffff', [])",
        "('small', 0, 2, True, [])",
        "1",
    ]


def test_map_layout_and_order_after_many_inserts_and_erases():
    out = same_everywhere("""
    # 3 entries, then 300 with mixed int/str keys, erasing and re-setting as we go.
    d = ok("ffi.Dict", mk_int(1), mk_int(1), mk_str("two"), mk_int(2), mk_str("a long third key"), mk_int(3))
    print(map_layout(d))
    ok("ffi.DictErase", d, mk_str("two")); ok("ffi.DictSetItem", d, mk_str("two"), mk_int(22))
    print(map_layout(d))
    for i in range(300):
        ok("ffi.DictSetItem", d, key_of(i), mk_int(i))
        if i % 7 == 3:
            ok("ffi.DictErase", d, key_of(i // 2))
        if i % 11 == 5:
            ok("ffi.DictSetItem", d, key_of(i // 3), mk_str("again"))
        if i in (4, 5, 17, 40, 130, 299):
            print(i, map_layout(d))
    args = []
    for i in range(300):
        args += [key_of(i * 7 % 300), mk_int(i)]
    m = ok("ffi.Map", *args)
    print(map_layout(m))
    # small str and a boxed String with the same bytes are one key; so are bytes
    short = boxed_short_str("abc")
    e = ok("ffi.Dict", short, mk_int(1), mk_bytes(b"xyz"), mk_int(2))
    print(map_layout(e))
    ok("ffi.DictSetItem", e, mk_str("abc"), mk_int(3)); ok("ffi.DictSetItem", e, mk_bytes(b"xyz"), mk_int(4))
    print(map_layout(e), show(ok("ffi.DictGetItem", e, mk_raw("abc"))))
    for i in range(20):
        ok("ffi.DictSetItem", e, mk_str("s%d" % i), mk_int(i))
    print(show(ok("ffi.DictGetItem", e, mk_str("abc"))), show(ok("ffi.DictGetItem", e, boxed_short_str("s7"))),
          show(ok("ffi.DictCount", e, mk_str("xyz"))))
    print(map_layout(e))
    # big integers are keys by value; floats by bit pattern; bool is not int
    b = ok("ffi.Map", mk_bigint(2**70), mk_int(1), mk_float(-0.0), mk_int(2), mk_bool(1), mk_int(3),
           mk_int(1), mk_int(4), mk_float(float("nan")), mk_int(5))
    print(map_layout(b))
    print([show(call("ffi.MapGetItem", b, k)) for k in (mk_bigint(2**70), mk_float(0.0), mk_float(-0.0),
                                                         mk_bool(1), mk_int(1), mk_float(float("nan")))])
    """)
    lines = out.splitlines()
    assert lines[:3] == [
        "('small', 3, 4, False, [(1, 1), ('s:two', 2), ('S:a long third key', 3)])",
        "('small', 3, 4, False, [(1, 1), ('S:a long third key', 3), ('s:two', 22)])",
        "4 ('dense', 7, 8, 61, 7, 4, 'ff01818000018000', [(1, 's:two', 22, 5, 2), (2, 0, 0, 1, 6), "
        "(3, 3, 3, 6, 4), (4, 's:k4', 4, 3, 0), (5, 'S:a long third key', 3, 7, 1), "
        "(6, 'S:a-longer-key-2', 2, 2, 3), (7, 1, 1, 0, 5)])",
    ]
    assert [line.split(", '")[0] for line in lines[3:9]] == [
        "5 ('dense', 9, 16, 60, 15, 14", "17 ('dense', 20, 32, 59, 31, 16",
        "40 ('dense', 41, 64, 58, 63, 25", "130 ('dense', 118, 128, 57, 126, 4",
        "299 ('dense', 269, 512, 55, 504, 232", "('dense', 300, 512, 55, 67, 391"]
    # a boxed 3-byte String and the small str "abc" are one key
    assert lines[9:12] == [
        "('small', 2, 2, True, [('S:abc', 1), (b'xyz', 2)])",
        "('small', 2, 2, True, [('S:abc', 3), (b'xyz', 4)]) 3",
        "3 7 0",
    ]
    assert lines[13] == ("('dense', 5, 8, 61, 0, 2, '028080ffff00ff02', [(0, ('obj', 78), 1, 0, 7), "
                         "(1, 1, 4, 5, 2), (2, nan, 5, 1, 0), (5, True, 3, 7, 1), "
                         "(7, -0.0, 2, 0, 5)])")
    assert lines[14] == "[1, ('err', 'KeyError', 'key is not in Map'), 2, 3, 4, 5]"


def test_custom_any_hash_and_equal_columns():
    # A type whose keys compare by a field: registered through the C API as
    # kernels do, with Function objects in __any_hash__ / __any_equal__.
    out = same_everywhere("""
    index = lib.TVMFFITypeGetOrAllocIndex(byte_array("test.Key"), -1, 1, 0, 1, 64)
    @abi.TVMFFISafeCallType
    def key_hash(handle, args, num_args, result):
        result[0].type_index = TI.kTVMFFIInt
        result[0].v_int64 = ctypes.c_int64.from_address(args[0].v_ptr + 24).value % 5
        return 0
    @abi.TVMFFISafeCallType
    def key_equal(handle, args, num_args, result):
        result[0].type_index = TI.kTVMFFIBool
        field = lambda a: ctypes.c_int64.from_address(a.v_ptr + 24).value
        result[0].v_int64 = int(field(args[0]) == field(args[1]))
        return 0
    for name, fn in (("__any_hash__", key_hash), ("__any_equal__", key_equal)):
        h = ctypes.c_void_p(); assert lib.TVMFFIFunctionCreate(None, fn, None, ctypes.byref(h)) == 0
        value = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction); value.v_ptr = h.value
        assert lib.TVMFFITypeRegisterAttr(index, byte_array(name), ctypes.byref(value)) == 0
    def key(n):
        return mk_obj(static_object(index, struct.pack("<q", n)))
    args = []
    for i in range(12):
        args += [key(i), mk_int(i)]
    m = ok("ffi.Map", *args)
    lay = map_layout(m)
    print(lay[:6], [entry[2] for entry in lay[7]])
    print([show(ok("ffi.MapGetItem", m, key(i))) for i in (3, 11)], show(ok("ffi.MapCount", m, key(12))))
    d = ok("ffi.Dict", key(1), mk_int(1), key(1), mk_int(2), key(6), mk_int(3))
    print(map_layout(d)[4])
    """)
    assert out.splitlines() == [
        "('dense', 12, 16, 60, 9, 14) [4, 9, 2, 7, 3, 8, 0, 5, 1, 6, 10, 11]",
        "[3, 11] 0",
        # key(1) twice is one key (equal by field); key(6) collides by hash but differs
        "[(('obj', 138), 2), (('obj', 138), 3)]",
    ]


RANDOM_OPS = """
import random
rng = random.Random(SEED)
load_kernel(PATH)
d, lst = ok("ffi.Dict"), ok("ffi.List")
def rkey():
    i = rng.randrange(KEYS)
    return [mk_int(i), mk_str("k%d" % i), mk_str("a-longer-key-%d" % i), boxed_short_str("b%d" % i),
            mk_bytes(b"y%d" % i), mk_float(i / 2)][rng.randrange(6)]
for step in range(STEPS):
    op = rng.random()
    if op < 0.35:
        ok("ffi.DictSetItem", d, rkey(), mk_int(step))
    elif op < 0.55:
        kcall("dict_set", d, rkey(), mk_int(-step))
    elif op < 0.75:
        ok("ffi.DictErase", d, rkey())
    elif op < 0.85:
        kcall("dict_erase", d, rkey())
    elif op < 0.86:
        ok("ffi.DictClear", d)
    elif op < 0.93:
        ok("ffi.ListInsert", lst, mk_int(rng.randrange(0, 1 + len(seq(lst.v_ptr)))), rkey())
    elif op < 0.97:
        kcall("list_push", lst, mk_int(rng.randrange(3)))
    elif seq(lst.v_ptr):
        a = rng.randrange(len(seq(lst.v_ptr)))
        ok("ffi.ListEraseRange", lst, mk_int(a), mk_int(min(len(seq(lst.v_ptr)), a + rng.randrange(4))))
    if step % 100 == 0:
        print(step, map_layout(d))
print(map_layout(d))
print(show(lst), seq_layout(lst.v_ptr))
"""


@pytest.mark.parametrize("seed,keys", [(1, 6), (2, 60), (3, 400)])
def test_random_interleaved_mutations_match_upstream(container_kernel, seed, keys):
    # Random sets/erases/clears by C++ and by the runtime on one Dict and one List,
    # keys of every encoding; the whole layout must match upstream's at every checkpoint.
    out = same_everywhere(RANDOM_OPS, PATH=container_kernel, SEED=seed, KEYS=keys, STEPS=1500)
    assert len(out.splitlines()) == 17


def test_container_find_first_non_cpu_device():
    out = same_everywhere("""
    def tensor(device_type, device_id):
        # a Tensor object is TVMFFIObject + DLTensor; only its device matters here
        return mk_obj(static_object(TI.kTVMFFITensor, struct.pack("<Qii", 0, device_type, device_id) + bytes(40)))
    def find(value):
        d = ok("ffi.ContainerFindFirstNonCPUDevice", value)
        return (int(d.type_index), d.v_device.device_type, d.v_device.device_id)
    cpu, cuda, rocm = tensor(1, 0), tensor(2, 3), tensor(10, 1)
    inner = ok("ffi.Map", mk_str("a"), cpu, mk_str("b"), ok("ffi.List", mk_int(1), rocm))
    print(find(mk_int(1)), find(cpu), find(cuda), find(ok("ffi.Array", cpu, mk_str("x"))))
    print(find(ok("ffi.List", cpu, inner, cuda)), find(ok("ffi.Dict", cuda, cpu, mk_int(0), rocm)))
    """)
    assert out.splitlines() == ["(6, 1, 0) (6, 1, 0) (6, 2, 3) (6, 1, 0)", "(6, 10, 1) (6, 10, 1)"]


@pytest.mark.parametrize("runtime", ["ref"])  # tvm_ffi_ref's own Python helpers
def test_front_end_helpers(runtime):
    # The Python-side helpers a front end uses instead of packed calls.
    out = run(runtime, """
    from tvm_ffi_ref.runtime import maps, memory, sequence_edits, sequences, shapes
    s = mk_str("a boxed string element")
    arr = sequences.array_from_anys([mk_int(1), mk_raw("raw"), s])
    print([show(v) for v in sequences.seq_items(arr)], sequences.seq_size(arr), refs(s))
    lst = sequences.list_from_anys([mk_int(i) for i in range(6)])
    sequence_edits.list_append(lst, s); sequence_edits.list_insert(lst, 0, mk_str("front"))
    print(show(mk_obj(lst)), sequences.seq_capacity(lst), show(sequences.seq_get(lst, 0)))
    m = maps.map_from_pairs([(mk_str("k%d" % i), mk_int(i)) for i in range(6)])
    print(int(memory.type_index_of(m)), [(show(k), show(v)) for k, v in maps.map_items(m)][:3])
    print(show(maps.map_lookup(m, mk_raw("k4"))), maps.map_lookup(m, mk_int(4)), maps.map_size(m))
    d = maps.dict_from_pairs([])
    for i in range(6):
        maps.dict_set(d, mk_int(i), s)
    maps.dict_erase(d, mk_int(2)); maps.dict_erase(d, mk_int(99))
    print([show(k) for k, _ in maps.map_items(d)], refs(s))
    maps.dict_clear(d); print(maps.map_size(d), refs(s))
    shape = shapes.shape_from_ints([4, -1, 0]); print(shapes.shape_dims(shape))
    for bad in (lambda: sequences.seq_items(m), lambda: maps.dict_set(m, mk_int(0), mk_int(0)),
                lambda: sequence_edits.list_append(arr, mk_int(0))):
        try:
            bad()
        except TypeError as error:
            print(error)
    print(int(abi.TVMFFIObject.from_address(maps.missing_object()).type_index))
    for address in (arr, lst, m, d, shape):
        memory.dec_ref(address)
    print(refs(s))
    """)
    assert out.splitlines() == [
        "[1, 's:raw', 'S:a boxed string element'] 3 2",
        "('L', ['s:front', 0, 1, 2, 3, 4, 5, 'S:a boxed string element']) 12 s:front",
        "72 [('s:k0', 0), ('s:k1', 1), ('s:k2', 2)]",
        "4 None 6",
        "[0, 1, 3, 4, 5] 8",
        "0 3",
        "[4, -1, 0]",
        "seq_items: argument 'address' must be an ffi.Array or ffi.List object, got ffi.Map",
        "dict_set: argument 'address' must be an ffi.Dict object, got ffi.Map",
        "list_append: argument 'address' must be an ffi.List object, got ffi.Array",
        "64",
        "1",
    ]


def test_probe_distances_match_upstream_header(upstream_include):
    from tvm_ffi_ref.runtime import map_dense, map_layout

    header = os.path.join(upstream_include, "tvm", "ffi", "container", "map_base.h")
    with open(header) as f:
        source = f.read()
    table = source[source.index("kNextProbeLocation[kNumJumpDists]"):]
    table = re.sub(r"//[^\n]*", "", table[table.index("{") + 1:table.index("};")])
    assert map_layout.PROBE_DISTANCES == tuple(int(x) for x in re.findall(r"\d+", table))
    assert map_dense.calc_table_size(4) == (61, 8)
    assert map_dense.calc_table_size(300) == (54, 1024)


# ----------------------------------------------------------------- C++ kernels

KERNEL_CC = r"""
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <string>
#include <vector>

using namespace tvm::ffi;

// A canonical text for a value, walking containers the way C++ code iterates them.
static std::string Repr(const Any& v) {
  switch (v.type_index()) {
    case TypeIndex::kTVMFFINone: return "None";
    case TypeIndex::kTVMFFIInt: return std::to_string(v.cast<int64_t>());
    case TypeIndex::kTVMFFIBool: return v.cast<bool>() ? "True" : "False";
    case TypeIndex::kTVMFFISmallStr:
    case TypeIndex::kTVMFFIStr: return "'" + std::string(v.cast<String>()) + "'";
    case TypeIndex::kTVMFFIArray:
    case TypeIndex::kTVMFFIList: {
      std::string out = v.type_index() == TypeIndex::kTVMFFIArray ? "A[" : "L[";
      for (const Any& e : *v.as<SeqBaseObj>()) out += Repr(e) + ",";
      return out + "]";
    }
    case TypeIndex::kTVMFFIMap:
    case TypeIndex::kTVMFFIDict: {
      std::string out = v.type_index() == TypeIndex::kTVMFFIMap ? "M{" : "D{";
      for (const auto& kv : *v.as<MapBaseObj>()) out += Repr(kv.first) + ":" + Repr(kv.second) + ",";
      return out + "}";
    }
    case TypeIndex::kTVMFFIShape: {
      std::string out = "S(";
      for (int64_t d : v.cast<Shape>()) out += std::to_string(d) + ",";
      return out + ")";
    }
    default: return "obj" + std::to_string(v.type_index());
  }
}

static Any KeyOf(int64_t i) {
  if (i % 3 == 0) return i;
  if (i % 3 == 1) return String("k" + std::to_string(i));
  return String("a-longer-key-" + std::to_string(i));
}

String repr(Any v) { return String(Repr(v)); }
int64_t array_sum(Array<int64_t> a) {
  int64_t s = 0;
  for (int64_t x : a) s += x;
  return s;
}
Array<Any> array_push(Array<Any> a, Any v) {
  a.push_back(v);
  return a;
}
void list_push(List<Any> l, int64_t n) {
  for (int64_t i = 0; i < n; ++i) l.push_back(KeyOf(i));
}
void list_edit(List<Any> l, Any v) {
  l.insert(l.begin(), v);
  l.pop_back();
  l.erase(l.begin() + 1);
  l.Set(0, String("first-element-set-in-cpp"));
}
Array<int64_t> seq_info(Any v) {
  const SeqBaseObj* s = v.as<SeqBaseObj>();
  return Array<int64_t>{static_cast<int64_t>(s->size()), static_cast<int64_t>(s->capacity())};
}
void dict_set(Dict<Any, Any> d, Any k, Any v) { d.Set(k, v); }
void dict_erase(Dict<Any, Any> d, Any k) { d.erase(k); }
void dict_fill(Dict<Any, Any> d, int64_t start, int64_t stop) {
  for (int64_t i = start; i < stop; ++i) d.Set(KeyOf(i), i);
}
String lookup(Any m, Array<Any> keys) {
  const MapBaseObj* n = m.as<MapBaseObj>();
  std::string out;
  for (const Any& k : keys) {
    auto it = n->find(k);
    out += n->count(k) ? Repr(k) + "=" + Repr(it->second) : Repr(k) + "=missing";
    out += ";";
  }
  return String(out);
}
Array<Any> make_array(int64_t n) {
  Array<Any> a;
  for (int64_t i = 0; i < n; ++i) a.push_back(KeyOf(i));
  return a;
}
List<Any> make_list(int64_t n) {
  List<Any> l;
  for (int64_t i = 0; i < n; ++i) l.push_back(KeyOf(i));
  return l;
}
Map<Any, Any> make_map(int64_t n) {
  Map<Any, Any> m;
  for (int64_t i = 0; i < n; ++i) m.Set(KeyOf(i), i * 10);
  return m;
}
Dict<Any, Any> make_dict(int64_t n) {
  Dict<Any, Any> d;
  for (int64_t i = 0; i < n; ++i) d.Set(KeyOf(i), i * 10);
  return d;
}
Shape make_shape(int64_t n) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < n; ++i) dims.push_back(i + 2);
  return Shape(dims);
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(repr, repr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_sum, array_sum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_push, array_push);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_push, list_push);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_edit, list_edit);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(seq_info, seq_info);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_set, dict_set);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_erase, dict_erase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_fill, dict_fill);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(lookup, lookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array, make_array);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_list, make_list);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_map, make_map);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_dict, make_dict);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_shape, make_shape);
"""


@pytest.fixture(scope="module")
def container_kernel(kernels):
    """The C++ kernel library that reads, iterates and mutates containers."""
    return kernels.build("containers", KERNEL_CC)


def test_cpp_reads_and_mutates_runtime_containers(container_kernel):
    out = same_everywhere("""
    load_kernel(PATH)
    s = mk_str("an element shared by everything")
    arr = ok("ffi.Array", mk_int(1), mk_int(2), mk_int(39))
    print(kshow("array_sum", arr), kshow("repr", arr), kshow("seq_info", arr))
    pushed = kcall("array_push", arr, s)
    print(show(pushed), show(arr), refs(s))
    decref_any(pushed)

    lst = ok("ffi.List", mk_int(0), s)
    print(kshow("list_push", lst, mk_int(7)), show(lst), seq_layout(lst.v_ptr), kshow("seq_info", lst))
    print(kshow("list_edit", lst, mk_str("inserted")), kshow("repr", lst), seq_layout(lst.v_ptr))
    ok("ffi.ListAppend", lst, mk_int(99)); ok("ffi.ListInsert", lst, mk_int(1), s)
    print(kshow("repr", lst), refs(s))
    empty = ok("ffi.List"); ok("ffi.ListClear", empty)
    print(kshow("list_push", empty, mk_int(1)), seq_layout(empty.v_ptr), kshow("seq_info", empty))

    d = ok("ffi.Dict", mk_str("k1"), mk_int(-1))
    for i in range(40):          # alternate: C++ inline code, then the runtime's globals
        if i % 2:
            kcall("dict_set", d, key_of(i), mk_int(i))
        else:
            ok("ffi.DictSetItem", d, key_of(i), mk_int(i))
        if i % 5 == 4:
            kcall("dict_erase", d, key_of(i - 2))
        if i % 6 == 5:
            ok("ffi.DictErase", d, key_of(i - 1))
        if i in (0, 2, 3, 4, 9):
            print(i, map_layout(d))
    print(kshow("dict_fill", d, mk_int(30), mk_int(80)), map_layout(d))
    print(kshow("repr", d))
    keys = ok("ffi.Array", mk_int(0), mk_str("k1"), mk_str("k31"), mk_str("a-longer-key-50"), mk_int(3), mk_raw("k79"))
    print(kshow("lookup", d, keys))
    m = ok("ffi.Map", mk_int(1), s, mk_str("x"), mk_int(2), mk_str("long string key"), mk_int(3))
    print(kshow("lookup", m, keys), kshow("repr", m))
    print(kshow("repr", ok("ffi.Shape", mk_int(3), mk_int(4))))
    decref_any(lst); decref_any(d); decref_any(m); decref_any(arr)
    print(refs(s))
    """, PATH=container_kernel)
    lines = out.splitlines()
    e = "an element shared by everything"
    assert lines[:6] == [
        "42 S:A[1,2,39,] ('A', [3, 3])",
        # C++ copies a shared Array before pushing; ours is unchanged
        f"('A', [1, 2, 39, 'S:{e}']) ('A', [1, 2, 39]) 2",
        # C++ pushed 7 onto our List (capacity 4 -> 8 -> 16, through our data_deleter)
        f"None ('L', [0, 'S:{e}', 0, 'S:k1', 'S:a-longer-key-2', 3, 'S:k4', 'S:a-longer-key-5', 6]) "
        "(9, 16, 'buffer', True) ('A', [9, 16])",
        f"None S:L['first-element-set-in-cpp','{e}',0,'k1','a-longer-key-2',3,'k4','a-longer-key-5',] "
        "(8, 16, 'buffer', True)",
        f"S:L['first-element-set-in-cpp','{e}','{e}',0,'k1','a-longer-key-2',3,'k4',"
        "'a-longer-key-5',99,] 3",
        "None (1, 4, 'buffer', True) ('A', [1, 4])",
    ]
    # C++ (boxed "k1") and the runtime (small "k1") update the same entry in place
    assert lines[6:10] == [
        "0 ('small', 2, 2, True, [('s:k1', -1), (0, 0)])",
        "2 ('small', 3, 4, False, [('s:k1', 1), (0, 0), ('S:a-longer-key-2', 2)])",
        "3 ('small', 4, 4, False, [('s:k1', 1), (0, 0), ('S:a-longer-key-2', 2), (3, 3)])",
        "4 ('dense', 4, 8, 61, 7, 4, 'ff0180ff00ffff00', [(1, 0, 0, 7, 2), (2, 3, 3, 1, 4), "
        "(4, 's:k4', 4, 2, 0), (7, 's:k1', 1, 0, 1)])",
    ]
    assert lines[11].startswith("None ('dense', 70, 128, 57, 117, 40, ")
    assert lines[12].startswith("S:D{'k1':1,0:0,3:3,'a-longer-key-5':5,6:6,")
    assert lines[13:] == [
        "S:0=0;'k1'=1;'k31'=31;'a-longer-key-50'=50;3=3;'k79'=79;",
        "S:0=missing;'k1'=missing;'k31'=missing;'a-longer-key-50'=missing;3=missing;'k79'=missing; "
        f"S:M{{1:'{e}','x':2,'long string key':3,}}",
        "S:S(3,4,)",
        "1",
    ]


def test_runtime_reads_and_mutates_cpp_containers(container_kernel):
    out = same_everywhere("""
    load_kernel(PATH)
    arr = kcall("make_array", mk_int(5))
    print(show(arr), seq_layout(arr.v_ptr), show(ok("ffi.ArrayGetItem", arr, mk_int(2))),
          show(ok("ffi.ArraySize", arr)), show(ok("ffi.ArrayContains", arr, mk_raw("k4"))))
    lst = kcall("make_list", mk_int(5))
    print(show(lst), seq_layout(lst.v_ptr))
    for i in range(5):
        ok("ffi.ListAppend", lst, mk_int(100 + i))
    ok("ffi.ListInsert", lst, mk_int(0), mk_str("front")); ok("ffi.ListPop", lst, mk_int(3))
    ok("ffi.ListReserve", lst, mk_int(64))
    print(kshow("repr", lst), seq_layout(lst.v_ptr), kshow("seq_info", lst))
    kcall("list_push", lst, mk_int(70))
    print(show(ok("ffi.ListSize", lst)), kshow("seq_info", lst))
    for n in (3, 4, 5, 20):
        m, d = kcall("make_map", mk_int(n)), kcall("make_dict", mk_int(n))
        ours = ok("ffi.Map", *[x for i in range(n) for x in (boxed_key_of(i), mk_int(10 * i))])
        print(n, map_layout(m) == map_layout(ours), map_layout(m))
        decref_any(ours)
        print(" ", map_layout(d))
        print(" ", show(ok("ffi.MapGetItem", m, key_of(n - 1))), show(ok("ffi.MapCount", m, mk_raw("k1"))),
              show(ok("ffi.DictGetItem", d, key_of(n - 1))))
        f = ok("ffi.MapForwardIterFunctor", m)
        walked = []
        for _ in range(n):
            walked.append(show(call_handle(f.v_ptr, [mk_int(0)])))
            call_handle(f.v_ptr, [mk_int(2)])
        print(" ", walked == keys_of(m))
        for i in range(n, n + 30):
            ok("ffi.DictSetItem", d, key_of(i), mk_str("from python %d" % i))
            if i % 4 == 0:
                ok("ffi.DictErase", d, key_of(i - n))
        print(" ", map_layout(d))
        print(" ", kshow("repr", d))
        decref_any(m); decref_any(d)
    shape = kcall("make_shape", mk_int(3))
    print(show(shape), kshow("repr", shape))
    """, PATH=container_kernel)
    lines = out.splitlines()
    assert lines[:4] == [
        "('A', [0, 'S:k1', 'S:a-longer-key-2', 3, 'S:k4']) (5, 8, 'inline', False) "
        "S:a-longer-key-2 5 True",
        "('L', [0, 'S:k1', 'S:a-longer-key-2', 3, 'S:k4']) (5, 8, 'buffer', True)",
        # the runtime grew and reserved C++'s List (freeing C++'s buffer with C++'s deleter)
        "S:L['front',0,'k1',3,'k4',100,101,102,103,104,] (10, 64, 'buffer', True) ('A', [10, 64])",
        "80 ('A', [80, 128])",
    ]
    # C++'s maps are laid out exactly as the runtime lays out the same insertions
    assert [line.split(" ('")[0] for line in lines[4::6][:4]] == [
        "3 True", "4 True", "5 True", "20 True"]
    assert lines[6::6][:4] == ["  20 1 20", "  30 1 30", "  40 1 40", "  190 1 190"]
    assert lines[7::6][:4] == ["  True"] * 4
    assert lines[8].startswith("  ('dense', 25, 32, 59, 4, 3, ")
    assert lines[26].startswith("  ('dense', 42, 64, 58, 58, 46, ")
    assert lines[27].startswith("  S:D{'k1':10,'a-longer-key-2':20,3:30,'a-longer-key-5':50,")
    assert lines[-1] == "('Shape', [2, 3, 4]) S:S(2,3,4,)"


def test_reference_counts_balance_when_containers_die(container_kernel):
    out = same_everywhere("""
    load_kernel(PATH)
    s = mk_str("the one element we count references of")
    counts = [refs(s)]
    arr = ok("ffi.Array", s, s, s); lst = ok("ffi.List", s); counts.append(refs(s))
    for _ in range(9):
        ok("ffi.ListAppend", lst, s)
    kcall("list_edit", lst, s)
    counts.append(refs(s))
    d = ok("ffi.Dict", s, s)
    for i in range(30):
        ok("ffi.DictSetItem", d, mk_int(i), s)
        kcall("dict_set", d, mk_str("key %d of some length" % i), s)
    counts.append(refs(s))
    ok("ffi.DictErase", d, s); kcall("dict_erase", d, mk_int(3)); counts.append(refs(s))
    m = ok("ffi.Map", *[x for i in range(20) for x in (mk_int(i), s)]); counts.append(refs(s))
    cpp_list = kcall("make_list", mk_int(2)); ok("ffi.ListAppend", cpp_list, s); ok("ffi.ListReserve", cpp_list, mk_int(33))
    cpp_dict = kcall("make_dict", mk_int(4))
    for i in range(10):
        ok("ffi.DictSetItem", cpp_dict, mk_int(100 + i), s)
    counts.append(refs(s))
    ok("ffi.DictClear", d); counts.append(refs(s))
    # the runtime grows a Dict (adopting a small map's pairs), then C++ makes it dense,
    # releasing the adopted storage through the runtime's deleter
    grown = ok("ffi.Dict", mk_int(1), s, mk_int(2), s)
    ok("ffi.DictSetItem", grown, mk_int(3), s); kcall("dict_set", grown, mk_int(4), s)
    kcall("dict_set", grown, mk_int(5), s); counts.append(refs(s))
    for v in (arr, lst, d, m, cpp_list, cpp_dict, grown):
        decref_any(v)
    counts.append(refs(s))
    print(counts)
    """, PATH=container_kernel)
    # 1, +3 +1 (Array, List); +9 appends, C++ edits +1 -3; Dict of 1 + 60 entries valued s;
    # erase the key s (-2) and int 3 (-1); a Map of 20; C++'s List +1 and Dict +10;
    # clearing the Dict drops its 59 values; another Dict of 5; every container gone: 1.
    assert out.splitlines() == ["[1, 5, 12, 74, 71, 91, 102, 43, 48, 1]"]
