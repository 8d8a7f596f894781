"""dtype strings and the environment API, driven through the C API and compared with upstream.

Every snippet runs under upstream and each runtime in ``RUNTIMES`` with the
same output required, and the output is pinned to the explicit tables below,
written out by hand from upstream's rules (``src/ffi/dtype.cc``,
``src/ffi/extra/env_context.cc``, ``env_c_api.cc``).
"""

from __future__ import annotations

import textwrap

import pytest

from capi_harness import each_runtime, run_capi

#: Our runtimes held to upstream here.
RUNTIMES = ["ref", "fast"]


def same_everywhere(*parts: str, **variables) -> str:
    """Runs ``parts`` (each dedented) under upstream and each runtime; asserts equal output."""
    snippet = "".join(textwrap.dedent(part) for part in parts)
    outputs = each_runtime(["upstream", *RUNTIMES], lambda rt: run_capi(rt, snippet, **variables))
    expected = outputs["upstream"]
    for runtime in RUNTIMES:
        actual = outputs[runtime]
        assert actual == expected, f"{runtime} differs from upstream:\n{actual}\nvs\n{expected}"
    return expected


DTYPE_HELPERS = """
def error():
    # The raised error as (kind, message), the message's bytes shown as they are.
    handle = ctypes.c_void_p()
    lib.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    cell = abi.TVMFFIErrorCell.from_address(handle.value + 24)
    text = (ctypes.string_at(cell.kind.data, cell.kind.size).decode(),
            ctypes.string_at(cell.message.data, cell.message.size).decode("utf-8", "backslashreplace"))
    lib.TVMFFIObjectDecRef(handle)
    return text

def parse(text):
    out = abi.DLDataType()
    if lib.TVMFFIDataTypeFromString(byte_array(text), ctypes.byref(out)) != 0:
        return error()
    return (out.code, out.bits, out.lanes)

def fmt(code, bits, lanes):
    dtype = abi.DLDataType(code, bits, lanes)
    out = abi.TVMFFIAny()
    if lib.TVMFFIDataTypeToString(ctypes.byref(dtype), ctypes.byref(out)) != 0:
        return error()
    assert out.type_index == TI.kTVMFFIStr, out.type_index  # always a String object
    cell = abi.TVMFFIByteArray.from_address(out.v_ptr + 24)
    text = ctypes.string_at(cell.data, cell.size).decode()
    decref_any(out)
    return text
"""

_FLOAT8 = {"e3m4": 7, "e4m3": 8, "e4m3b11fnuz": 9, "e4m3fn": 10, "e4m3fnuz": 11, "e5m2": 12,
           "e5m2fnuz": 13, "e8m0fnu": 14}


def _accepted():
    """name -> ((code, bits, lanes), printed name), every form upstream accepts."""
    table = {
        "": ((3, 0, 0), ""), "void": ((3, 0, 0), ""),
        "int": ((0, 32, 1), "int32"), "uint": ((1, 32, 1), "uint32"),
        "float": ((2, 32, 1), "float32"), "bfloat": ((4, 16, 1), "bfloat16"),
        "bool": ((6, 8, 1), "bool"), "handle": ((3, 64, 1), "handle"),
        "handle32": ((3, 32, 1), "handle"), "handlex2": ((3, 64, 2), "handle"),
        "bool16": ((6, 16, 1), "bool16"), "boolx4": ((6, 8, 4), "boolx4"),
        "bool1x2": ((6, 1, 2), "bool1x2"),
        "int0": ((0, 32, 1), "int32"), "float0x2": ((2, 32, 2), "float32x2"),
        "intx4": ((0, 32, 4), "int32x4"),
        "int255": ((0, 255, 1), "int255"),
        "int32x1": ((0, 32, 1), "int32"), "int8x65535": ((0, 8, 65535), "int8"),
        "int8x32767": ((0, 8, 32767), "int8x32767"),
        "int32xvscale": ((0, 32, 1), "int32"),
        "int32xvscalex4": ((0, 32, 65532), "int32xvscalex4"),
        "float16xvscalex8": ((2, 16, 65528), "float16xvscalex8"),
        "float16xvscalex65535": ((2, 16, 1), "float16"),
        "bf16xvscalex2": ((4, 16, 65534), "bfloat16xvscalex2"),
        "int008": ((0, 8, 1), "int8"), "int8x004": ((0, 8, 4), "int8x4"),
        "int18446744073709551616": ((0, 32, 1), "int32"),  # digits wrap as a uint64
        "int18446744073709551624": ((0, 8, 1), "int8"),
        "float4_e2m1fn_": ((17, 4, 1), "float4_e2m1fn"),
        "float4_e2m1fn_x2": ((17, 4, 2), "float4_e2m1fnx2"),
        "f4_e2m1fn_x8": ((17, 4, 8), "float4_e2m1fnx8"),
    }
    for bits in (1, 4, 8, 16, 32, 64):
        for base, short, code in (("int", "i", 0), ("uint", "u", 1), ("float", "f", 2)):
            table[f"{base}{bits}"] = ((code, bits, 1), f"{base}{bits}")
            table[f"{short}{bits}"] = ((code, bits, 1), f"{base}{bits}")
            for lanes in (2, 4, 16):
                table[f"{base}{bits}x{lanes}"] = ((code, bits, lanes), f"{base}{bits}x{lanes}")
                table[f"{short}{bits}x{lanes}"] = ((code, bits, lanes), f"{base}{bits}x{lanes}")
    for lanes in (1, 2, 4):
        suffix = f"x{lanes}" if lanes > 1 else ""
        table[f"bfloat16{suffix}"] = ((4, 16, lanes), f"bfloat16{suffix}")
        table[f"bf16{suffix}"] = ((4, 16, lanes), f"bfloat16{suffix}")
        for family, bits, variants in (("8", 8, _FLOAT8),
                                       ("6", 6, {"e2m3fn": 15, "e3m2fn": 16}),
                                       ("4", 4, {"e2m1fn": 17})):
            for variant, code in variants.items():
                printed = f"float{family}_{variant}{suffix}"
                for prefix in ("float", "fp", "f"):
                    table[f"{prefix}{family}_{variant}{suffix}"] = ((code, bits, lanes), printed)
    return table


ACCEPTED = _accepted()

_V = "ValueError"


def _lanes_error(text):
    return (_V, f"Invalid lanes specification in dtype '{text}'. Lanes must be a positive integer.")


#: name -> (error kind, message), as upstream rejects them.
REJECTED = {
    "f": (_V, "unknown dtype `f`"),
    "i": (_V, "unknown dtype `i`"),
    "x": (_V, "unknown dtype `x`"),
    "Int32": (_V, "unknown dtype `Int32`"),
    "integer": (_V, "unknown dtype `integer`"),
    "complex64": (_V, "unknown dtype `complex64`"),
    "float32 ": (_V, "unknown dtype `float32 `"),
    " float32": (_V, "unknown dtype ` float32`"),
    "int8x4y": (_V, "unknown dtype `int8x4y`"),
    "i8z": (_V, "unknown dtype `int8z`"),  # messages quote the rewritten alias
    "u8_": (_V, "unknown dtype `uint8_`"),
    "f8zzz": (_V, "unknown dtype `float8zzz`"),
    "void8": (_V, "unknown dtype `void8`"),
    "int32x": _lanes_error("int32x"),
    "int32x0": _lanes_error("int32x0"),
    "int32xvscalex": _lanes_error("int32xvscalex"),
    "int32xvscalexq": _lanes_error("int32xvscalexq"),
    "i32x0": _lanes_error("int32x0"),
    "int256": (_V, "Bits value 256 is out of range for uint8_t in dtype 'int256'"),
    "int32x65536": (_V, "Lanes value 65536 is out of range for uint16_t in dtype 'int32x65536'"),
    "int32xvscalex65536": (_V, "Lanes value 65536 is out of range for uint16_t in dtype "
                               "'int32xvscalex65536'"),
    "int99999999999": (_V, "Integer value in dtype string '99999999999' is out of range for "
                           "uint32_t"),
    "int8x4294967296": (_V, "Integer value in dtype string '4294967296' is out of range for "
                            "uint32_t"),
    "float8_e4m3fn8": (_V, "unknown float8 type `float8_e4m3fn8`"),
    "float8_e4m3fnx": (_V, "Invalid lanes specification in dtype 'float8_e4m3fnx'. Lanes must "
                           "be a positive integer."),
    "float8_e4m3fn_x2": (_V, "unknown float8 type `float8_e4m3fn_x2`"),
    "fp8_zzz": (_V, "unknown float8 type `float8_zzz`"),
    "float8_": (_V, "unknown float8 type `float8_`"),
    "float8_e4m3fnxvscalex2": (_V, "Invalid lanes specification in dtype "
                                   "'float8_e4m3fnxvscalex2'. Lanes must be a positive integer."),
    "float6_e2m3": (_V, "unknown float6 type `float6_e2m3`"),
    "fp6_e3m2fnx2y": (_V, "unknown dtype `float6_e3m2fnx2y`"),
    "float4_e2m1": (_V, "unknown float4 type `float4_e2m1`"),
    "float4_e2m1fn__x2": (_V, "unknown dtype `float4_e2m1fn__x2`"),
    "float4_e2m1fnx2_": (_V, "unknown dtype `float4_e2m1fnx2_`"),
    "custom": (_V, "expected opening brace after 'custom' type incustom"),
    "customx": (_V, "expected opening brace after 'custom' type incustomx"),
    "custom[foo": (_V, "expected closing brace after 'custom' type incustom[foo"),
    "custom[foo]": (_V, "Function dtype.get_custom_type_code not found"),
}

#: (code, bits, lanes) -> printed name, or (kind, message) for those upstream refuses.
PRINTED = {
    (0, 32, 1): "int32", (0, 32, 0): "int32", (0, 32, 65535): "int32",
    (0, 0, 1): "int0", (1, 1, 1): "uint1", (2, 16, 32767): "float16x32767",
    (2, 16, 32768): "float16xvscalex32768", (0, 32, 65532): "int32xvscalex4",
    (3, 0, 0): "", (3, 0, 1): "handle", (3, 64, 4): "handle",
    (6, 8, 1): "bool", (6, 8, 4): "boolx4", (6, 16, 1): "bool16", (6, 8, 0): "bool",
    (7, 8, 1): "float8_e3m4", (7, 16, 1): "float8_e3m4", (17, 4, 2): "float4_e2m1fnx2",
    (5, 64, 1): (_V, "DLDataType contains unknown type_code=5"),
    (18, 8, 1): (_V, "DLDataType contains unknown type_code=18"),
    (128, 8, 1): (_V, "DLDataType contains unknown type_code=128"),
    (129, 8, 1): (_V, "Function dtype.get_custom_type_name not found"),
}


def test_every_accepted_dtype_name_parses_and_prints_as_upstream():
    out = same_everywhere(DTYPE_HELPERS, """
    for name in NAMES:
        dtype = parse(name)
        print(repr(name), dtype, repr(fmt(*dtype)))
    """, NAMES=list(ACCEPTED))
    expected = [f"{name!r} {dtype} {printed!r}" for name, (dtype, printed) in ACCEPTED.items()]
    assert out.splitlines() == expected


def test_rejected_dtype_names_raise_upstream_errors():
    out = same_everywhere(DTYPE_HELPERS, """
    for name in NAMES:
        print(repr(name), parse(name))
    print(parse(b"int8\\0"), parse(b"\\xff"))
    """, NAMES=list(REJECTED))
    expected = [f"{name!r} {error}" for name, error in REJECTED.items()]
    assert out.splitlines() == expected + [
        "('ValueError', 'unknown dtype `int8\\x00`') ('ValueError', 'unknown dtype `\\\\xff`')"]


def test_printing_dtypes_as_upstream():
    out = same_everywhere(DTYPE_HELPERS, """
    for dtype in DTYPES:
        print(dtype, repr(fmt(*dtype)))
    """, DTYPES=list(PRINTED))
    assert out.splitlines() == [f"{dtype} {printed!r}" for dtype, printed in PRINTED.items()]


def test_custom_dtypes_go_through_the_registered_globals():
    out = same_everywhere(DTYPE_HELPERS, """
    calls = []
    @abi.TVMFFISafeCallType
    def code_of(handle, args, num_args, result):
        arg = args[0]
        name = ctypes.string_at(arg.v_ptr).decode()
        calls.append(("code", int(arg.type_index), name))
        if name == "bad":
            lib.TVMFFIErrorSetRaisedFromCStr(b"KeyError", b"no such custom type")
            return -1
        kinds = {"text": (TI.kTVMFFIRawStr, 0), "float": (TI.kTVMFFIFloat, 0),
                 "wide": (TI.kTVMFFIInt, 300), "flag": (TI.kTVMFFIBool, 1)}
        index, value = kinds.get(name, (TI.kTVMFFIInt, 130 + len(name)))
        result[0].type_index = index
        result[0].v_int64 = value
        return 0
    @abi.TVMFFISafeCallType
    def name_of(handle, args, num_args, result):
        code = args[0].v_int64
        calls.append(("name", int(args[0].type_index), code))
        if code == 200:
            lib.TVMFFIErrorSetRaisedFromCStr(b"KeyError", b"no name for 200")
            return -1
        if code == 201:
            result[0].type_index = TI.kTVMFFIInt
            return 0
        return lib.TVMFFIStringFromByteArray(byte_array("my_type_%d" % code), result)
    print(parse("custom[ab]"), fmt(129, 8, 1))
    for name, fn in (("dtype.get_custom_type_code", code_of), ("dtype.get_custom_type_name", name_of)):
        f = ctypes.c_void_p()
        lib.TVMFFIFunctionCreate(None, fn, None, ctypes.byref(f))
        lib.TVMFFIFunctionSetGlobal(byte_array(name), f, 0)
        lib.TVMFFIObjectDecRef(f)
    for name in ("custom[ab]", "custom[ab]16", "custom[ab]x4", "custom[abc]8x2", "custom[]",
                 "custom[bad]", "custom[text]", "custom[float]", "custom[wide]", "custom[flag]",
                 "custom[ab]16x4z", "custom[a]b]"):
        print(repr(name), parse(name))
    for dtype in ((129, 8, 1), (132, 16, 4), (255, 32, 65534), (200, 8, 1), (201, 8, 1)):
        print(dtype, fmt(*dtype))
    print(calls[:2], len(calls))
    """)
    assert out.splitlines() == [
        "('ValueError', 'Function dtype.get_custom_type_code not found') "
        "('ValueError', 'Function dtype.get_custom_type_name not found')",
        "'custom[ab]' (132, 32, 1)",
        "'custom[ab]16' (132, 16, 1)",
        "'custom[ab]x4' (132, 32, 4)",
        "'custom[abc]8x2' (133, 8, 2)",
        "'custom[]' (130, 32, 1)",
        "'custom[bad]' ('KeyError', 'no such custom type')",
        "'custom[text]' ('TypeError', 'Cannot convert from type `const char*` to `int`')",
        "'custom[float]' ('TypeError', 'Cannot convert from type `float` to `int`')",
        "'custom[wide]' (44, 32, 1)",  # the code is a uint8
        "'custom[flag]' (1, 32, 1)",
        "'custom[ab]16x4z' ('ValueError', 'unknown dtype `custom[ab]16x4z`')",
        "'custom[a]b]' ('ValueError', 'unknown dtype `custom[a]b]`')",
        "(129, 8, 1) custom[my_type_129]",  # custom types print without bits
        "(132, 16, 4) custom[my_type_132]x4",
        "(255, 32, 65534) custom[my_type_255]xvscalex2",
        "(200, 8, 1) ('KeyError', 'no name for 200')",
        "(201, 8, 1) ('TypeError', 'Cannot convert from type `int` to `str`')",
        "[('code', 8, 'ab'), ('code', 8, 'ab')] 17",
    ]


def test_streams_are_per_thread_and_per_device():
    out = same_everywhere("""
    import threading
    previous = ctypes.c_void_p(5)
    print(lib.TVMFFIEnvGetStream(2, 0), lib.TVMFFIEnvGetStream(2, 1000))
    print(lib.TVMFFIEnvSetStream(2, 1, 1234, ctypes.byref(previous)), previous.value)
    print(lib.TVMFFIEnvSetStream(2, 1, 5678, ctypes.byref(previous)), previous.value)
    print(lib.TVMFFIEnvGetStream(2, 1), lib.TVMFFIEnvGetStream(2, 0), lib.TVMFFIEnvGetStream(1, 1),
          lib.TVMFFIEnvGetStream(-1, 1), lib.TVMFFIEnvGetStream(2, -1))
    print(lib.TVMFFIEnvSetStream(10, 3, 77, None), lib.TVMFFIEnvGetStream(10, 3),
          lib.TVMFFIEnvGetStream(10, 2), lib.TVMFFIEnvGetStream(9, 3))
    seen = []
    def other():
        seen.append(lib.TVMFFIEnvGetStream(2, 1))
        lib.TVMFFIEnvSetStream(2, 1, 7, None)
        seen.append(lib.TVMFFIEnvGetStream(2, 1))
    worker = threading.Thread(target=other)
    worker.start(); worker.join()
    print(seen, lib.TVMFFIEnvGetStream(2, 1))
    print(lib.TVMFFIEnvSetStream(2, 1, None, ctypes.byref(previous)), previous.value,
          lib.TVMFFIEnvGetStream(2, 1))
    """)
    assert out.splitlines() == [
        "None None",
        "0 None",
        "0 1234",
        "5678 None None None None",
        "0 77 None None",
        "[None, 7] 5678",
        "0 5678 None",
    ]


C_THREAD_KERNEL_C = r"""
#include <pthread.h>
#include <stdint.h>
#include <tvm/ffi/extra/c_env_api.h>

/* A C thread (no Python thread state of its own) sets and reads back its environment. */
static void* worker(void* arg) {
  intptr_t* out = (intptr_t*)arg;
  out[0] = (intptr_t)TVMFFIEnvGetStream(2, 0);
  TVMFFIEnvSetStream(2, 0, (void*)0x1234, NULL);
  out[1] = (intptr_t)TVMFFIEnvGetStream(2, 0);
  out[2] = (intptr_t)TVMFFIEnvGetDLPackManagedTensorAllocator();
  TVMFFIEnvSetDLPackManagedTensorAllocator((DLPackManagedTensorAllocator)0x777, 0, NULL);
  out[3] = (intptr_t)TVMFFIEnvGetDLPackManagedTensorAllocator();
  return NULL;
}

int env_in_new_thread(intptr_t* out) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, out) != 0) return -1;
  return pthread_join(thread, NULL);
}
"""


def test_c_threads_keep_their_environment_between_calls(kernels):
    path = kernels.build("env_threads", C_THREAD_KERNEL_C, language="c", extra_flags=("-lpthread",))
    out = same_everywhere("""
    kernel = ctypes.CDLL(PATH)
    lib.TVMFFIEnvSetDLPackManagedTensorAllocator(0x555, 1, None)
    for _ in range(3):  # each a new thread: nothing carries over from the last one
        values = (ctypes.c_ssize_t * 4)()
        print(kernel.env_in_new_thread(values), [hex(v) for v in values])
    print(lib.TVMFFIEnvGetStream(2, 0), hex(lib.TVMFFIEnvGetDLPackManagedTensorAllocator()))
    """, PATH=path)
    assert out.splitlines() == ["0 ['0x0', '0x1234', '0x555', '0x777']"] * 3 + ["None 0x555"]


def test_dlpack_allocator_is_thread_local_with_a_global_fallback():
    out = same_everywhere("""
    import threading
    get, set_ = lib.TVMFFIEnvGetDLPackManagedTensorAllocator, lib.TVMFFIEnvSetDLPackManagedTensorAllocator
    previous = ctypes.c_void_p(3)
    print(get(), set_(1000, 0, ctypes.byref(previous)), previous.value, get())
    seen = []
    def other():
        seen.append(get())  # the other thread's allocator is not ours
        o = ctypes.c_void_p(3)
        seen.append((set_(2000, 1, ctypes.byref(o)), o.value, get()))
        set_(None, 0, None)
        seen.append(get())  # falls back to the global one
    worker = threading.Thread(target=other)
    worker.start(); worker.join()
    print(seen, get())
    print(set_(None, 0, ctypes.byref(previous)), previous.value, get())
    worker = threading.Thread(target=lambda: seen.append(("new thread", get())))
    worker.start(); worker.join()
    print(seen[-1])
    print(set_(3000, 0, ctypes.byref(previous)), previous.value, get())
    print(set_(None, 1, ctypes.byref(previous)), previous.value, get())
    """)
    assert out.splitlines() == [
        "None 0 None 1000",
        "[None, (0, None, 2000), 2000] 1000",
        "0 1000 2000",  # setting reports the thread's own previous one, not the global
        "('new thread', 2000)",
        "0 None 3000",
        "0 3000 None",
    ]


def test_check_signals_and_register_capi():
    out = same_everywhere("""
    calls = []
    status = [0]
    @ctypes.CFUNCTYPE(ctypes.c_int)
    def check():
        calls.append("check")
        return status[0]
    state = [99]
    @ctypes.CFUNCTYPE(ctypes.c_void_p)
    def ensure():
        calls.append("ensure")
        return state[0]
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def release(s):
        calls.append(("release", s))
    def register(name, fn):
        return lib.TVMFFIEnvRegisterCAPI(name, ctypes.cast(fn, ctypes.c_void_p) if fn else None)
    print(lib.TVMFFIEnvCheckSignals())
    print(register(b"Foo", check), take_error())
    print(register(b"PyGILState_Ensure", ensure), register(b"PyGILState_Release", release))
    print(lib.TVMFFIEnvCheckSignals(), calls)
    print(register(b"PyErr_CheckSignals", check))
    print(lib.TVMFFIEnvCheckSignals(), calls, take_error())
    calls.clear(); status[0] = -1
    print(lib.TVMFFIEnvCheckSignals(), calls, take_error())
    calls.clear(); status[0] = 5; state[0] = None
    print(lib.TVMFFIEnvCheckSignals(), calls)
    calls.clear()
    print(register(b"PyErr_CheckSignals", None), lib.TVMFFIEnvCheckSignals(), calls)
    """)
    assert out.splitlines() == [
        "0",
        "-1 ('ValueError', 'Unknown env API Foo')",
        "0 0",
        "0 []",
        "0",
        "0 ['ensure', 'check', ('release', 99)] None",
        "-1 ['ensure', 'check', ('release', 99)] None",
        "-1 ['ensure', 'check']",  # a NULL GIL state is not released
        "0 0 []",
    ]


def test_module_symbol_registration_returns_success():
    out = same_everywhere("""
    print(lib.TVMFFIEnvModRegisterContextSymbol(b"__tvm_ffi__test_ctx", 1234),
          lib.TVMFFIEnvModRegisterContextSymbol(b"__tvm_ffi__test_ctx", 1234),
          lib.TVMFFIEnvModRegisterSystemLibSymbol(b"__tvm_ffi_test.f", 1234),
          lib.TVMFFIEnvModRegisterSystemLibSymbol(b"__tvm_ffi_test.f", 1234))
    """)
    assert out.splitlines() == ["0 0 0 0"]


SIGNAL_KERNEL_C = r"""
/* Trips SIGINT the way a signal would, then checks: the Python handler raises. */
void PyErr_SetInterrupt(void);
int PyErr_CheckSignals(void);
int trip_and_check_signals(void) {
  PyErr_SetInterrupt();
  return PyErr_CheckSignals();
}
"""


def test_system_lib_symbol_overrides_warn_on_stderr():
    out = same_everywhere("""
    import os, tempfile
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        os.dup2(captured.fileno(), 2)
        try:
            for name, symbol in ((b"__sys_f", 16), (b"__sys_g", 32), (b"__sys_f", 16),
                                 (b"__sys_f", 48)):
                print(lib.TVMFFIEnvModRegisterSystemLibSymbol(name, symbol))
            sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
        captured.seek(0)
        print(captured.read().decode().strip())
    """)
    assert out.splitlines() == [
        "0", "0", "0", "0",
        "Warning:SystemLib symbol __sys_f get overriden to a different address 0x30->0x10",
    ]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_env_calls_upstream_crashes_on_raise_errors(runtime):
    # Upstream dereferences NULL (a NULL context symbol name), indexes with a negative
    # device, or throws out of a C function (signal checks without the GIL functions);
    # each of ours reports the same error instead.
    out = run_capi(runtime, """
    print(lib.TVMFFIEnvModRegisterContextSymbol(None, 1), take_error())
    print(lib.TVMFFIEnvModRegisterSystemLibSymbol(None, 1), take_error())
    print(lib.TVMFFIEnvRegisterCAPI(None, 1), take_error())
    print(lib.TVMFFIEnvSetStream(-1, 0, 5, None), take_error())
    print(lib.TVMFFIEnvSetStream(2, -3, 5, None), take_error())
    check = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 0)
    lib.TVMFFIEnvRegisterCAPI(b"PyErr_CheckSignals", ctypes.cast(check, ctypes.c_void_p))
    print(lib.TVMFFIEnvCheckSignals(), take_error())
    """)
    assert out.splitlines() == [
        "-1 ('ValueError', 'TVMFFIEnvModRegisterContextSymbol: name must not be NULL')",
        "-1 ('ValueError', 'TVMFFIEnvModRegisterSystemLibSymbol: name must not be NULL')",
        "-1 ('ValueError', 'TVMFFIEnvRegisterCAPI: name must not be NULL')",
        "-1 ('ValueError', 'TVMFFIEnvSetStream: device_type and device_id must be non-negative, "
        "got (-1, 0)')",
        "-1 ('ValueError', 'TVMFFIEnvSetStream: device_type and device_id must be non-negative, "
        "got (2, -3)')",
        "-1 ('InternalError', 'TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered but "
        "PyGILState_Ensure/PyGILState_Release are not')",
    ]


@pytest.mark.parametrize("runtime", ["ref"])  # tvm_ffi_ref's own Python accessors
def test_ref_runtime_env_details(runtime, kernels):
    # What only the reference runtime shows: its accessors for the module loader,
    # its warnings through Python's sys.stderr, and the pending Python exception
    # of a failed signal check.
    path = kernels.build("signals", SIGNAL_KERNEL_C, language="c")
    out = run_capi(runtime, """
    import contextlib, io, signal
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as test_signals says why
    from tvm_ffi_ref.runtime import env
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        for name, symbol in ((b"__ctx_a", 1), (b"__ctx_b", 2), (b"__ctx_a", 3)):
            lib.TVMFFIEnvModRegisterContextSymbol(name, symbol)
        for name, symbol in ((b"__sys_f", 16), (b"__sys_g", 32), (b"__sys_f", 16), (b"__sys_f", 48)):
            lib.TVMFFIEnvModRegisterSystemLibSymbol(name, symbol)
    print(env.context_symbols())
    print(env.system_lib_symbols(), env.system_lib_symbol("__sys_g"), env.system_lib_symbol("nope"))
    print(stderr.getvalue().strip())

    check = ctypes.CDLL(PATH).trip_and_check_signals
    lib.TVMFFIEnvRegisterCAPI(b"PyErr_CheckSignals", ctypes.cast(check, ctypes.c_void_p))
    print(lib.TVMFFIEnvCheckSignals(), take_error())
    for name in (b"PyGILState_Ensure", b"PyGILState_Release"):
        lib.TVMFFIEnvRegisterCAPI(name, ctypes.cast(getattr(ctypes.pythonapi, name.decode()), ctypes.c_void_p))
    print(lib.TVMFFIEnvCheckSignals(), take_error(), repr(env.take_pending_signal_error()),
          env.take_pending_signal_error())
    lib.TVMFFIEnvRegisterCAPI(b"PyErr_CheckSignals", ctypes.cast(ctypes.pythonapi.PyErr_CheckSignals, ctypes.c_void_p))
    print(lib.TVMFFIEnvCheckSignals(), env.take_pending_signal_error())
    """, PATH=path)
    assert out.splitlines() == [
        "[('__ctx_a', 1), ('__ctx_b', 2), ('__ctx_a', 3)]",
        "{'__sys_f': 48, '__sys_g': 32} 32 None",
        "Warning:SystemLib symbol __sys_f get overriden to a different address 0x30->0x10",
        "-1 ('InternalError', 'TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered but "
        "PyGILState_Ensure/PyGILState_Release are not')",
        "-1 None KeyboardInterrupt() None",
        "0 None",
    ]


@pytest.mark.parametrize("runtime", ["ref"])  # tvm_ffi_ref's own Python helpers
def test_dtype_helpers_for_the_front_end(runtime):
    # parse_dtype/format_dtype are the slots' rules on Python values: same tables.
    out = run_capi(runtime, """
    from tvm_ffi_ref.runtime import dtype
    for name, (parsed, printed) in ACCEPTED.items():
        assert dtype.parse_dtype(name) == parsed, name
        assert dtype.format_dtype(*parsed) == printed, name
    for name, (kind, message) in REJECTED.items():
        try:
            dtype.parse_dtype(name)
        except dtype.DTypeError as error:
            assert (error.kind, error.message) == (kind, message), (name, error)
    for value, printed in PRINTED.items():
        try:
            assert dtype.format_dtype(*value) == printed, value
        except dtype.DTypeError as error:
            assert (error.kind, error.message) == printed, value
    print(dtype.parse_dtype(b"fp8_e4m3fn"), type(dtype.parse_dtype("int8")[0]).__name__)
    """, ACCEPTED=ACCEPTED, REJECTED=REJECTED, PRINTED=PRINTED)
    assert out.splitlines() == ["(10, 8, 1) int"]
