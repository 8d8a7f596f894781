"""A runtime's types, values, functions and errors through the C API, compared with upstream.

Each test runs one snippet under every runtime in ``RUNTIMES`` and under
upstream, and asserts that all print the same lines, which are also pinned to
explicit expectations so that a test means something even if every runtime
were wrong the same way.
"""

from __future__ import annotations

import pytest

from capi_harness import each_runtime, run_capi

#: Our runtimes held to upstream here.
RUNTIMES = ["ref", "fast"]


def same_everywhere(snippet: str, **variables) -> str:
    """Runs ``snippet`` under upstream and each runtime; asserts equal output; returns it."""
    outputs = each_runtime(["upstream", *RUNTIMES], lambda rt: run_capi(rt, snippet, **variables))
    expected = outputs["upstream"]
    for runtime in RUNTIMES:
        actual = outputs[runtime]
        assert actual == expected, f"{runtime} differs from upstream:\n{actual}\nvs\n{expected}"
    return expected


def test_static_and_preloaded_types():
    out = same_everywhere("""
    def key_of(index):
        info = lib.TVMFFIGetTypeInfo(index).contents
        return ctypes.string_at(info.type_key.data, info.type_key.size).decode()
    for index in list(range(14)) + list(range(64, 79)) + list(range(128, 138)):
        info = lib.TVMFFIGetTypeInfo(index).contents
        ancestors = [info.type_ancestors[d].contents.type_index for d in range(info.type_depth)]
        print(index, key_of(index), info.type_depth, ancestors, hex(info.type_key_hash))
    """)
    lines = out.splitlines()
    assert len(lines) == 14 + 15 + 10
    assert lines[0] == "0 None 0 [] 0xfb6ac968ce0ca5aa"
    assert lines[14] == "64 ffi.Object 0 [] 0x33a211b274fa0106"
    assert lines[15].startswith("65 ffi.String 1 [64] ")
    assert lines[-8].startswith("130 ffi.IntEnum 2 [64, 129] ")


def test_dynamic_index_allocation_follows_child_slots():
    out = same_everywhere("""
    def alloc(key, parent, slots=0, overflow=1, depth=None):
        if depth is None:
            depth = lib.TVMFFIGetTypeInfo(parent).contents.type_depth + 1
        return lib.TVMFFITypeGetOrAllocIndex(byte_array(key), -1, depth, slots, overflow, parent)
    a = alloc("test.A", 64, slots=3)
    b = alloc("test.B", a)           # from A's reserved run
    c = alloc("test.C", a, slots=1)  # the rest of the run
    d = alloc("test.D", a)           # run exhausted: overflow to the end
    e = alloc("test.E", 64)
    print(a - 128, b - a, c - a, d - a, e - a)
    print(alloc("test.A", 64) == a, lib.TVMFFITypeGetOrAllocIndex(byte_array("nope"), -1, 1, 0, 1, -2))
    out = ctypes.c_int32()
    print(lib.TVMFFITypeKeyToIndex(byte_array("test.C"), ctypes.byref(out)), out.value == c)
    print(lib.TVMFFITypeKeyToIndex(byte_array("no.such.Type"), ctypes.byref(out)), take_error())
    """)
    assert out.splitlines() == [
        "10 1 2 4 5",
        "True -2",
        "0 True",
        "-1 ('InternalError', 'Check failed: (it != type_key2index_.end()) is false: "
        "Cannot find type `no.such.Type`')",
    ]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_exhausted_child_slots_raise_instead_of_aborting(runtime):
    # Upstream aborts the process here (its allocator's check throws out of a C
    # function); ours report the error that check throws, kind and text, and carry on.
    out = run_capi(runtime, """
    strict = lib.TVMFFITypeGetOrAllocIndex(byte_array("test.Strict"), -1, 1, 1, 0, 64)
    lib.TVMFFITypeGetOrAllocIndex(byte_array("test.S1"), -1, 2, 0, 1, strict)
    print(lib.TVMFFITypeGetOrAllocIndex(byte_array("test.S2"), -1, 2, 0, 1, strict), take_error())
    """)
    assert out.splitlines() == [
        "-1 ('InternalError', 'Check failed: (parent->child_slots_can_overflow) is false: "
        "Reach maximum number of sub-classes for test.Strict')"]


def test_a_dynamic_type_of_depth_zero_may_name_a_parent():
    # Upstream takes the parent's slots and records no ancestors.
    out = same_everywhere("""
    index = lib.TVMFFITypeGetOrAllocIndex(byte_array("test.Flat"), -1, 0, 0, 1, 64)
    info = lib.TVMFFIGetTypeInfo(index).contents
    print(index, info.type_depth, take_error())
    """)
    assert out.splitlines() == ["138 0 None"]


def test_strings_bytes_and_bigints_from_byte_arrays():
    out = same_everywhere("""
    def show(value):
        if value.type_index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
            return (int(value.type_index), value.small_str_len, bytes(value.v_bytes)[:value.small_str_len])
        if value.type_index in (TI.kTVMFFIStr, TI.kTVMFFIBytes):
            cell = abi.TVMFFIByteArray.from_address(value.v_ptr + 24)
            nul = ctypes.string_at(cell.data + cell.size, 1)
            return (int(value.type_index), value.zero_padding, ctypes.string_at(cell.data, cell.size), nul)
        return (int(value.type_index), value.v_int64)
    for data in (b"", b"abc", b"1234567", b"12345678", b"with\\0nul inside"):
        for fn in (lib.TVMFFIStringFromByteArray, lib.TVMFFIBytesFromByteArray):
            out = abi.TVMFFIAny()
            assert fn(byte_array(data), ctypes.byref(out)) == 0
            print(show(out)); decref_any(out)
    for value in (0, -1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**64, 2**200 + 5, -2**130):
        n = max(1, (value.bit_length() + 64) // 64)
        words = value.to_bytes(8 * (n + 1), "little", signed=True)  # one redundant sign word
        out = abi.TVMFFIAny()
        assert lib.TVMFFIBigIntFromByteArray(byte_array(words), ctypes.byref(out)) == 0
        content = lib.TVMFFIBigIntGetContentByteArray(ctypes.byref(out))
        back = int.from_bytes(ctypes.string_at(content.data, content.size), "little", signed=True)
        print(int(out.type_index), content.size, back == value)
        decref_any(out)
    out = abi.TVMFFIAny()
    print(lib.TVMFFIBigIntFromByteArray(byte_array(b"123"), ctypes.byref(out)), take_error())
    """)
    lines = out.splitlines()
    assert lines[0] == "(11, 0, b'')" and lines[1] == "(12, 0, b'')"
    assert lines[6] == "(65, 0, b'12345678', b'\\x00')"
    assert lines[10:19] == ["1 8 True"] * 4 + ["78 16 True"] * 3 + ["78 32 True", "78 24 True"]
    assert lines[19] == "-1 ('ValueError', 'BigInt content must contain whole 64-bit words')"


def test_any_view_to_owned_any():
    out = same_everywhere("""
    def owned(view):
        out = abi.TVMFFIAny()
        assert lib.TVMFFIAnyViewToOwnedAny(ctypes.byref(view), ctypes.byref(out)) == 0
        return out
    short, long = ctypes.c_char_p(b"hi"), ctypes.c_char_p(b"a longer raw string")
    for text in (short, long):
        view = abi.TVMFFIAny(type_index=TI.kTVMFFIRawStr); view.v_ptr = ctypes.cast(text, ctypes.c_void_p).value
        o = owned(view); print(int(o.type_index), o.small_str_len); decref_any(o)
    arr = byte_array(b"\\0\\1\\2")
    view = abi.TVMFFIAny(type_index=TI.kTVMFFIByteArrayPtr); view.v_ptr = ctypes.addressof(arr)
    o = owned(view); print(int(o.type_index), ctypes.string_at(ctypes.addressof(o) + 8, o.small_str_len))
    decref_any(o)
    pod = abi.TVMFFIAny(type_index=TI.kTVMFFIFloat); pod.v_float64 = 2.5
    o = owned(pod); print(int(o.type_index), o.v_float64)
    s = abi.TVMFFIAny(); lib.TVMFFIStringFromByteArray(byte_array("a boxed string"), ctypes.byref(s))
    header = abi.TVMFFIObject.from_address(s.v_ptr)
    o = owned(s); print(o.v_ptr == s.v_ptr, header.combined_ref_count & 0xffffffff)
    decref_any(o)
    slot = ctypes.c_void_p(s.v_ptr)
    rv = abi.TVMFFIAny(type_index=TI.kTVMFFIObjectRValueRef); rv.v_ptr = ctypes.addressof(slot)
    o = owned(rv); print(int(o.type_index), o.v_ptr == s.v_ptr, slot.value, header.combined_ref_count & 0xffffffff)
    decref_any(o)
    """)
    assert out.splitlines() == ["11 2", "65 0", "12 b'\\x00\\x01\\x02'", "3 2.5", "True 2",
                                "65 True None 1"]


def test_functions_and_the_global_table():
    out = same_everywhere("""
    events = []
    @abi.TVMFFISafeCallType
    def add(handle, args, num_args, result):
        events.append(("call", handle))
        result[0].type_index = TI.kTVMFFIInt
        result[0].v_int64 = args[0].v_int64 + args[1].v_int64
        return 0
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def deleter(handle):
        events.append(("deleted", handle))
    f = ctypes.c_void_p()
    assert lib.TVMFFIFunctionCreate(1234, add, deleter, ctypes.byref(f)) == 0
    args = (abi.TVMFFIAny * 2)()
    for i, v in enumerate((40, 2)):
        args[i].type_index = TI.kTVMFFIInt; args[i].v_int64 = v
    result = abi.TVMFFIAny()
    print(lib.TVMFFIFunctionCall(f, args, 2, ctypes.byref(result)), result.v_int64, events)
    print(abi.TVMFFIObject.from_address(f.value).type_index)
    name = byte_array("test.add")
    print(lib.TVMFFIFunctionSetGlobal(name, f, 0), lib.TVMFFIFunctionSetGlobal(name, f, 0), take_error())
    print(lib.TVMFFIFunctionSetGlobal(name, f, 1))
    g = ctypes.c_void_p()
    print(lib.TVMFFIFunctionGetGlobal(name, ctypes.byref(g)), g.value == f.value)
    lib.TVMFFIObjectDecRef(g)
    missing = ctypes.c_void_p(1)
    print(lib.TVMFFIFunctionGetGlobal(byte_array("test.missing"), ctypes.byref(missing)), missing.value)
    def call_global(fname, *pod_args):
        h = ctypes.c_void_p(); lib.TVMFFIFunctionGetGlobal(byte_array(fname), ctypes.byref(h))
        packed = (abi.TVMFFIAny * max(1, len(pod_args)))()
        for i, a in enumerate(pod_args):
            if isinstance(a, str):
                packed[i].type_index = TI.kTVMFFIRawStr
                packed[i].v_ptr = byte_array(a).data
            else:
                packed[i].type_index = TI.kTVMFFIInt; packed[i].v_int64 = a
        res = abi.TVMFFIAny()
        rc = lib.TVMFFIFunctionCall(h, packed, len(pod_args), ctypes.byref(res))
        lib.TVMFFIObjectDecRef(h)
        return rc, res
    rc, functor = call_global("ffi.FunctionListGlobalNamesFunctor")
    n_args = (abi.TVMFFIAny * 1)(); n_args[0].type_index = TI.kTVMFFIInt; n_args[0].v_int64 = -1
    count = abi.TVMFFIAny()
    lib.TVMFFIFunctionCall(functor.v_ptr, n_args, 1, ctypes.byref(count))
    names = []
    for i in range(count.v_int64):
        n_args[0].v_int64 = i
        item = abi.TVMFFIAny(); lib.TVMFFIFunctionCall(functor.v_ptr, n_args, 1, ctypes.byref(item))
        if item.type_index == TI.kTVMFFISmallStr:
            names.append(bytes(item.v_bytes)[:item.small_str_len].decode())
        else:
            cell = abi.TVMFFIByteArray.from_address(item.v_ptr + 24)
            names.append(ctypes.string_at(cell.data, cell.size).decode())
        decref_any(item)
    decref_any(functor)
    print(rc, "test.add" in names, "ffi.FunctionRemoveGlobal" in names)
    rc, removed = call_global("ffi.FunctionRemoveGlobal", "test.add")
    print(rc, int(removed.type_index), removed.v_int64)
    rc, removed = call_global("ffi.FunctionRemoveGlobal", "test.add")
    print(rc, removed.v_int64)
    events.clear(); lib.TVMFFIObjectDecRef(f); print(events)
    """)
    assert out.splitlines() == [
        "0 42 [('call', 1234)]",
        "68",
        "0 -1 ('RuntimeError', 'Global Function `test.add` is already registered')",
        "0",
        "0 True",
        "0 None",
        "0 True True",
        "0 2 1",
        "0 0",
        "[('deleted', 1234)]",
    ]


def test_opaque_objects():
    out = same_everywhere("""
    freed = []
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def deleter(handle):
        freed.append(handle)
    h = ctypes.c_void_p()
    print(lib.TVMFFIObjectCreateOpaque(77, TI.kTVMFFIOpaquePyObject, deleter, ctypes.byref(h)))
    header = abi.TVMFFIObject.from_address(h.value)
    cell = abi.TVMFFIOpaqueObjectCell.from_address(h.value + 24)
    print(header.type_index, cell.handle, header.combined_ref_count == (1 << 32) | 1)
    lib.TVMFFIObjectDecRef(h); print(freed)
    print(lib.TVMFFIObjectCreateOpaque(77, 200, deleter, ctypes.byref(h)), take_error())
    """)
    assert out.splitlines() == [
        "0", "74 77 True", "[77]",
        "-1 ('RuntimeError', 'Only kTVMFFIOpaquePyObject is supported for now')",
    ]


RAISE_IN_C_THREAD = r"""
#include <pthread.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
static void* worker(void* out) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "from a C thread");
  TVMFFIErrorMoveFromRaised(&error);
  if (error != NULL) {
    TVMFFIByteArray* kind = &((TVMFFIErrorCell*)((char*)error + sizeof(TVMFFIObject)))->kind;
    memcpy(out, kind->data, kind->size);
    TVMFFIObjectDecRef(error);
  }
  return NULL;
}
int raise_and_move_in_new_thread(char* out) {
  pthread_t thread;
  pthread_create(&thread, NULL, worker, out);
  return pthread_join(thread, NULL);
}
"""


def test_the_raised_slot_belongs_to_the_os_thread(kernels):
    # A thread Python never started gets a fresh Python thread state on every
    # call into a ctypes callback; the slot must survive between its calls.
    path = kernels.build("raise_in_c_thread", RAISE_IN_C_THREAD, language="c",
                         extra_flags=("-lpthread",))
    out = same_everywhere("""
    kernel = ctypes.CDLL(PATH)
    for _ in range(3):
        kind = ctypes.create_string_buffer(32)
        print(kernel.raise_and_move_in_new_thread(kind), kind.value)
    """, PATH=path)
    assert out.splitlines() == ["0 b'ValueError'"] * 3


#: The first pointer parameter each function must not be given as NULL. Upstream
#: dereferences it (a crash); ours raise ValueError "<function>: <parameter> must
#: not be NULL". Functions that accept NULL everywhere are not listed.
FIRST_REQUIRED_POINTER = {
    "TVMFFIObjectCreateOpaque": "out", "TVMFFITypeKeyToIndex": "type_key",
    "TVMFFIFunctionCreate": "out", "TVMFFIFunctionGetGlobal": "name",
    "TVMFFIAnyViewToOwnedAny": "any_view", "TVMFFIFunctionCall": "func",
    "TVMFFIErrorCreate": "out", "TVMFFIErrorCreateWithCauseAndExtraContext": "out",
    "TVMFFITensorFromDLPack": "from", "TVMFFITensorToDLPack": "from",
    "TVMFFITensorFromDLPackVersioned": "from", "TVMFFITensorToDLPackVersioned": "from",
    "TVMFFITensorCreateUnsafeView": "source", "TVMFFIStringFromByteArray": "input",
    "TVMFFIBytesFromByteArray": "input", "TVMFFIBigIntFromByteArray": "input",
    "TVMFFIBigIntGetContentByteArray": "value", "TVMFFIDataTypeFromString": "str",
    "TVMFFIDataTypeToString": "dtype", "TVMFFIFunctionSetGlobal": "name",
    "TVMFFIFunctionSetGlobalFromMethodInfo": "method_info", "TVMFFITypeRegisterField": "info",
    "TVMFFITypeRegisterMethod": "info", "TVMFFITypeRegisterMetadata": "metadata",
    "TVMFFITypeRegisterAttr": "attr_name", "TVMFFIGetTypeAttrColumn": "attr_name",
    "TVMFFITypeGetOrAllocIndex": "type_key", "TVMFFIEnvTensorAlloc": "prototype",
    "TVMFFIEnvRegisterCAPI": "name", "TVMFFIEnvModLookupFromImports": "library_ctx",
    "TVMFFIEnvModRegisterContextSymbol": "name", "TVMFFIEnvModRegisterSystemLibSymbol": "name",
}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_null_pointers_upstream_crashes_on_raise_the_same_error(runtime):
    out = run_capi(runtime, """
    for name in NAMES:
        fn = getattr(lib, name)
        fn(*[t() if t is not None else None for t in fn.argtypes])
        print(name, take_error())
    # a later parameter is named when the earlier ones are given
    key, value, dtype = byte_array("int32"), abi.TVMFFIAny(), abi.DLDataType(0, 32, 1)
    prototype = abi.DLTensor()
    for call in (lambda: lib.TVMFFITypeKeyToIndex(ctypes.byref(key), None),
                 lambda: lib.TVMFFIFunctionGetGlobal(ctypes.byref(key), None),
                 lambda: lib.TVMFFIAnyViewToOwnedAny(ctypes.byref(value), None),
                 lambda: lib.TVMFFIStringFromByteArray(ctypes.byref(key), None),
                 lambda: lib.TVMFFIDataTypeFromString(ctypes.byref(key), None),
                 lambda: lib.TVMFFIDataTypeToString(ctypes.byref(dtype), None),
                 lambda: lib.TVMFFIFunctionSetGlobal(ctypes.byref(key), None, 0),
                 lambda: lib.TVMFFITypeRegisterAttr(64, ctypes.byref(key), None),
                 lambda: lib.TVMFFIEnvTensorAlloc(ctypes.byref(prototype), None)):
        print(call(), take_error())
    # the sentinel registration (index 0) only makes the column: no value needed
    print(lib.TVMFFITypeRegisterAttr(0, ctypes.byref(key), None), take_error())
    # a NULL safe_call is accepted, as upstream does; calling it is the error (upstream: a crash)
    for self_, deleter in ((None, None), (1, None)):
        f = ctypes.c_void_p()
        print(lib.TVMFFIFunctionCreate(self_, None, deleter, ctypes.byref(f)), take_error(),
              lib.TVMFFIFunctionCall(f, None, 0, ctypes.byref(abi.TVMFFIAny())), take_error())
        lib.TVMFFIObjectDecRef(f)
    # views that point, pointing nowhere
    for kind in (TI.kTVMFFIRawStr, TI.kTVMFFIByteArrayPtr, TI.kTVMFFIObjectRValueRef):
        view, out = abi.TVMFFIAny(), abi.TVMFFIAny()
        view.type_index = kind
        print(lib.TVMFFIAnyViewToOwnedAny(ctypes.byref(view), ctypes.byref(out)), take_error())
    """, NAMES=list(FIRST_REQUIRED_POINTER))
    lines = out.splitlines()
    assert lines[:len(FIRST_REQUIRED_POINTER)] == [
        f"{name} ('ValueError', '{name}: {param} must not be NULL')"
        for name, param in FIRST_REQUIRED_POINTER.items()]
    assert lines[len(FIRST_REQUIRED_POINTER):] == [
        f"-1 ('ValueError', '{name}: {param} must not be NULL')" for name, param in (
            ("TVMFFITypeKeyToIndex", "out_tindex"), ("TVMFFIFunctionGetGlobal", "out"),
            ("TVMFFIAnyViewToOwnedAny", "out"), ("TVMFFIStringFromByteArray", "out"),
            ("TVMFFIDataTypeFromString", "out"), ("TVMFFIDataTypeToString", "out"),
            ("TVMFFIFunctionSetGlobal", "f"), ("TVMFFITypeRegisterAttr", "attr_value"),
            ("TVMFFIEnvTensorAlloc", "out"))] + ["0 None"] + [
        "0 None -1 ('ValueError', 'TVMFFIFunctionCall: the function was created with a NULL "
        "safe_call')"] * 2 + [
        "-1 ('ValueError', 'a const char* value is NULL')",
        "-1 ('ValueError', 'a TVMFFIByteArray* value is NULL')",
        "-1 ('InternalError', 'Check failed: (obj_addr[0] != nullptr) is false: RValueRef "
        "already moved')"]


def test_a_negative_type_attribute_index_is_refused_as_upstream_refuses_it():
    # upstream resizes the column to index + 1 entries and std::vector refuses (at -1
    # it writes out of bounds instead, so -1 is only asked of ours, below)
    out = same_everywhere("""
    seven = abi.TVMFFIAny(); seven.type_index = TI.kTVMFFIInt; seven.v_int64 = 7
    print(lib.TVMFFITypeRegisterAttr(-5, byte_array("test_neg"), ctypes.byref(seven)), take_error())
    print(bool(lib.TVMFFIGetTypeAttrColumn(byte_array("test_neg"))))
    """)
    assert out.splitlines() == ["-1 ('InternalError', 'vector::_M_fill_insert')", "True"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_calls_that_plant_an_upstream_crash_are_refused(runtime):
    out = run_capi(runtime, """
    seven = abi.TVMFFIAny(); seven.type_index = TI.kTVMFFIInt; seven.v_int64 = 7
    print(lib.TVMFFITypeRegisterAttr(-1, byte_array("test_neg"), ctypes.byref(seven)), take_error())
    # a global that is not a Function: upstream stores it, then crashes calling it
    text = abi.TVMFFIAny()
    lib.TVMFFIStringFromByteArray(byte_array("a string object, not a function"), ctypes.byref(text))
    print(lib.TVMFFIFunctionSetGlobal(byte_array("test.not_a_function"), ctypes.c_void_p(text.v_ptr),
                                      0), take_error())
    decref_any(text)
    """)
    assert out.splitlines() == [
        "-1 ('InternalError', 'vector::_M_fill_insert')",
        "-1 ('TypeError', 'TVMFFIFunctionSetGlobal: expected a ffi.Function, got ffi.String')",
    ]
