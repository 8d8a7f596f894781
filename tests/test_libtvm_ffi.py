"""libtvm_ffi.so on its own: the dispatch table, the built-ins and clean failure.

Each test runs in a fresh interpreter with no runtime installed unless the test
installs one (``capi_harness``, runtime "bare").
"""

from __future__ import annotations

import os
import subprocess

import pytest

from capi_harness import run_capi
from subprocess_utils import run_python
from tvm_ffi_common import libinfo


def run_bare(body: str) -> str:
    """Runs ``body`` against our library with no runtime installed."""
    return run_capi("bare", body)


BUILTIN_SLOTS = {
    "TVMFFIObjectIncRef", "TVMFFIObjectDecRef", "TVMFFIGetCustomAllocator",
    "TVMFFISetCustomAllocator", "TVMFFIErrorMoveFromRaised", "TVMFFIErrorSetRaised",
    "TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts", "TVMFFIErrorCreate",
    "TVMFFIErrorCreateWithCauseAndExtraContext", "TVMFFIBacktrace", "TVMFFIHandleInitOnce",
    "TVMFFIHandleDeinitOnce", "TVMFFIFunctionCreate", "TVMFFIFunctionCall",
}


def test_every_other_function_fails_cleanly_without_a_runtime():
    out = run_bare(f"""
    builtin = {sorted(BUILTIN_SLOTS)!r}
    for slot in abi.RUNTIME_SLOTS:
        if slot.name in builtin:
            continue
        fn = getattr(lib, slot.name)
        args = [t() if t is not None else None for t in fn.argtypes]
        result = fn(*args)
        error = take_error()
        assert error is not None, slot.name
        kind, message = error
        assert kind == "RuntimeError", (slot.name, kind)
        assert message.startswith(slot.name + ": no TVM FFI runtime is installed"), message
        if fn.restype in (ctypes.c_int, ctypes.c_int32):
            assert result == -1, (slot.name, result)
        elif fn.restype is abi.TVMFFIByteArray:
            assert result.data is None and result.size == 0
        else:
            assert not result, (slot.name, result)
        print(slot.name)
    """)
    assert len(out.split()) == 50 - 1 - len(BUILTIN_SLOTS)


def test_version_is_answered_without_a_runtime():
    out = run_bare("""
    v = abi.TVMFFIVersion(); lib.TVMFFIGetVersion(ctypes.byref(v))
    print(v.major, v.minor, v.patch)
    """)
    assert out.split() == ["0", "1", "16"]


@pytest.mark.parametrize("runtime", ["bare", "ref", "fast", "upstream"])
def test_reference_count_protocol(runtime):
    out = run_capi(runtime, """
    calls = []
    @abi.TVMFFIObjectDeleter
    def deleter(self, flags):
        calls.append(flags)
    def make(strong, weak):
        obj = abi.TVMFFIObject(combined_ref_count=(weak << 32) | strong, type_index=200)
        obj.deleter = deleter
        return obj
    # The last strong reference with no weak holder: one deleter call, both flags.
    a = make(1, 1); lib.TVMFFIObjectDecRef(ctypes.addressof(a)); print(calls)
    # Not the last strong reference: no call.
    calls.clear(); b = make(1, 1); lib.TVMFFIObjectIncRef(ctypes.addressof(b))
    print(b.combined_ref_count == (1 << 32) | 2)
    lib.TVMFFIObjectDecRef(ctypes.addressof(b)); print(calls, b.combined_ref_count == (1 << 32) | 1)
    # A weak reference outstanding: destroy only, memory kept for the weak holder.
    calls.clear(); c = make(1, 2); lib.TVMFFIObjectDecRef(ctypes.addressof(c))
    print(calls, c.combined_ref_count == 1 << 32)
    """)
    lines = out.splitlines()
    assert lines == ["[3]", "True", "[] True", "[1] True"]


@pytest.mark.parametrize("runtime", ["bare", "ref", "fast", "upstream"])
def test_raised_error_slot_and_error_objects(runtime):
    out = run_capi(runtime, """
    print(take_error())
    lib.TVMFFIErrorSetRaisedFromCStr(b"ValueError", b"bad")
    print(take_error(), take_error())
    parts = (ctypes.c_char_p * 4)(b"a", None, b"b", b"c")
    lib.TVMFFIErrorSetRaisedFromCStrParts(b"TypeError", parts, 4)
    print(take_error())
    kind, msg, bt = (abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(s), ctypes.c_void_p), len(s))
                     for s in (b"KeyError", b"k", b"frame1\\n"))
    cause = ctypes.c_void_p(); err = ctypes.c_void_p()
    assert lib.TVMFFIErrorCreate(kind, msg, bt, ctypes.byref(cause)) == 0
    assert lib.TVMFFIErrorCreateWithCauseAndExtraContext(kind, msg, bt, cause, None, ctypes.byref(err)) == 0
    header = abi.TVMFFIObject.from_address(cause.value)
    print(header.type_index == TI.kTVMFFIError, header.combined_ref_count == (1 << 32) | 2)
    cell = abi.TVMFFIErrorCell.from_address(err.value + 24)
    print(cell.cause_chain == cause.value, ctypes.string_at(cell.backtrace.data, cell.backtrace.size))
    more = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(b"frame2\\n"), ctypes.c_void_p), 7)
    cell.update_backtrace(err, ctypes.byref(more), abi.TVMFFIBacktraceUpdateMode.kTVMFFIBacktraceUpdateModeAppend)
    print(ctypes.string_at(cell.backtrace.data, cell.backtrace.size))
    lib.TVMFFIErrorSetRaised(err)
    print(abi.TVMFFIObject.from_address(err.value).combined_ref_count == (1 << 32) | 2)
    lib.TVMFFIObjectDecRef(err)
    lib.TVMFFIObjectDecRef(cause)
    print(take_error())
    """)
    assert out.splitlines() == [
        "None",
        "('ValueError', 'bad') None",
        "('TypeError', 'abc')",
        "True True",
        "True b'frame1\\n'",
        "b'frame1\\nframe2\\n'",
        "True",
        "('KeyError', 'k')",
    ]


def test_install_rules_and_routing():
    out = run_bare("""
    S = abi.TVMFFIRuntimeInstallStatus
    def table(name=b"test-runtime", **slots):
        t = abi.TVMFFIRuntimeTable(struct_size=ctypes.sizeof(abi.TVMFFIRuntimeTable), name=name)
        for key, fn in slots.items():
            setattr(t, key, fn)
        return t
    bad_size = table(); bad_size.struct_size -= 8
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(bad_size))).name)
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(table(name=None)))).name)
    proto = abi.slot_prototype(abi.C_API_BY_NAME["TVMFFIErrorSetRaised"])
    partial = table(TVMFFIErrorSetRaised=proto(lambda e: None))
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(partial))).name)
    seen = []
    proto = abi.slot_prototype(abi.C_API_BY_NAME["TVMFFITypeKeyToIndex"])
    @proto
    def key_to_index(key, out):
        seen.append(ctypes.string_at(key.contents.data, key.contents.size))
        out[0] = 4242
        return 0
    good = table(TVMFFITypeKeyToIndex=key_to_index)
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(good))).name, lib.tvm_ffi_runtime_name())
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(table(name=b"second")))).name)
    out = ctypes.c_int32()
    key = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(b"my.Type"), ctypes.c_void_p), 7)
    print(lib.TVMFFITypeKeyToIndex(ctypes.byref(key), ctypes.byref(out)), out.value, seen)
    print(lib.TVMFFIDataTypeFromString(None, None), take_error())
    print(lib.tvm_ffi_runtime_uninstall(b"second"), lib.tvm_ffi_runtime_uninstall(b"test-runtime"))
    # A runtime that owns the raised-error slot must receive the built-ins' errors too.
    slot = []
    error_slots = {
        "TVMFFIErrorSetRaisedFromCStr": lambda kind, message: slot.append((kind, message)),
        "TVMFFIErrorSetRaisedFromCStrParts": lambda kind, parts, n: None,
        "TVMFFIErrorSetRaised": lambda error: None,
        "TVMFFIErrorMoveFromRaised": lambda out: None,
    }
    with_errors = table(name=b"owns-errors", **{
        name: abi.slot_prototype(abi.C_API_BY_NAME[name])(fn) for name, fn in error_slots.items()})
    print(S(lib.tvm_ffi_runtime_install(ctypes.byref(with_errors))).name)
    print(lib.TVMFFIDataTypeFromString(None, None), slot[0][0], slot[0][1].split(b":")[0])
    lib.tvm_ffi_runtime_uninstall(b"owns-errors")
    print(lib.tvm_ffi_runtime_name(), lib.TVMFFITypeKeyToIndex(ctypes.byref(key), ctypes.byref(out)))
    print(take_error()[1].split(":")[0])
    """)
    assert out.splitlines() == [
        "kTVMFFIRuntimeBadTable",
        "kTVMFFIRuntimeBadTable",
        "kTVMFFIRuntimeBadTable",
        "kTVMFFIRuntimeInstalled b'test-runtime'",
        "kTVMFFIRuntimeAlreadyInstalled",
        "0 4242 [b'my.Type']",
        "-1 ('RuntimeError', \"TVMFFIDataTypeFromString: the installed TVM FFI runtime 'test-runtime' "
        "does not implement this function\")",
        "-1 0",
        "kTVMFFIRuntimeInstalled",
        "-1 b'RuntimeError' b'TVMFFIDataTypeFromString'",
        "None -1",
        "TVMFFITypeKeyToIndex",
    ]


@pytest.mark.parametrize("runtime", ["bare", "ref", "fast", "upstream"])
def test_handle_init_once_and_custom_allocator(runtime):
    out = run_capi(runtime, """
    calls = []
    INIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
    DEINIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    @INIT
    def init(result):
        calls.append("init"); result[0] = 1234; return 0
    @INIT
    def failing_init(result):
        lib.TVMFFIErrorSetRaisedFromCStr(b"RuntimeError", b"init failed"); return -1
    @DEINIT
    def deinit(handle):
        calls.append(("deinit", handle)); return 0
    slot = ctypes.c_void_p()
    print(lib.TVMFFIHandleInitOnce(ctypes.byref(slot), init), lib.TVMFFIHandleInitOnce(ctypes.byref(slot), init), slot.value, calls)
    print(lib.TVMFFIHandleDeinitOnce(ctypes.byref(slot), deinit), slot.value, lib.TVMFFIHandleDeinitOnce(ctypes.byref(slot), deinit), calls[-1])
    print(lib.TVMFFIHandleInitOnce(ctypes.byref(slot), failing_init), slot.value, take_error())
    @INIT
    def null_init(result):
        calls.append("null_init"); result[0] = None; return 0
    @DEINIT
    def failing_deinit(handle):
        calls.append(("failing_deinit", handle)); return 7
    print(lib.TVMFFIHandleInitOnce(ctypes.byref(slot), null_init), slot.value, take_error())
    slot.value = 99
    print(lib.TVMFFIHandleDeinitOnce(ctypes.byref(slot), failing_deinit), slot.value, calls[-1])
    default = lib.TVMFFIGetCustomAllocator().contents
    # Upstream's default allocator places the body 16 bytes into an allocation
    # aligned as asked, so only alignments up to 16 hold there; ours honours all.
    for align in ((8, 16) if RUNTIME == "upstream" else (8, 16, 64, 256)):
        body = default.allocate(40, align, 70, default.context)
        header = abi.TVMFFIObjectAllocHeader.from_address(body - 8)
        assert body % align == 0 and header.delete_space
        header.delete_space(body)
    mine = abi.TVMFFICustomAllocator(default.allocate, 77)
    lib.TVMFFISetCustomAllocator(ctypes.byref(mine))
    print(lib.TVMFFIGetCustomAllocator().contents.context)
    lib.TVMFFISetCustomAllocator(None)
    print(lib.TVMFFIGetCustomAllocator().contents.context)
    """)
    assert out.splitlines() == [
        "0 0 1234 ['init']",
        "0 None 0 ('deinit', 1234)",
        "-1 None ('RuntimeError', 'init failed')",
        # a NULL handle is refused (the next call would initialise again)
        "-1 None ('RuntimeError', 'init_func must return a non-NULL handle')",
        # the handle is swapped for NULL before deinit_func runs, so even a failure clears it
        "7 None ('failing_deinit', 99)",
        "77",
        "None",
    ]


ALL_IMPORTS_CC = r"""
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
// Takes the address of every exported function, so the library has an
// undefined dynamic import of each, as a kernel using all of them would.
extern "C" void* const kAllImports[] = {
%s
};
extern "C" int count_imports() { return sizeof(kAllImports) / sizeof(kAllImports[0]); }
"""


def test_a_library_linked_against_upstream_resolves_every_import_against_ours(
        tmp_path, upstream_include, upstream_library):
    from tvm_ffi_common import abi

    names = ",\n".join(f"  reinterpret_cast<void*>(&{fn.name})" for fn in abi.C_API_FUNCTIONS)
    src = tmp_path / "all_imports.cc"
    src.write_text(ALL_IMPORTS_CC % names)
    target = tmp_path / "liball_imports.so"
    subprocess.run(
        ["c++", "-std=c++17", "-shared", "-fPIC", f"-I{upstream_include}", str(src),
         f"-L{os.path.dirname(upstream_library)}", "-ltvm_ffi", "-o", str(target)],
        check=True,
    )
    undefined = subprocess.run(["nm", "-D", "--undefined-only", str(target)], capture_output=True,
                               text=True, check=True).stdout
    assert sum(1 for line in undefined.splitlines() if " TVMFFI" in line) == 50
    out = run_bare(f"""
    import os
    kernel = ctypes.CDLL({str(target)!r}, mode=os.RTLD_NOW)
    print(kernel.count_imports())
    maps = open("/proc/self/maps").read()
    print({upstream_library!r} in maps, {libinfo.library_path()!r} in maps)
    """)
    assert out.split() == ["50", "False", "True"]


@pytest.mark.parametrize("call, expected", [
    ("m.add_int(40, 2)", "42"),
    ("m.scale(1.5, 4)", "6.0"),
    ("m.string_length('héllo')", "6"),
    ("m.string_length('a string longer than seven bytes')", "32"),
    ("m.echo('a string longer than seven bytes')", "a string longer than seven bytes"),
    ("m.sum_float32(tvm_ffi.from_dlpack(np.arange(6, dtype='float32').reshape(2, 3).T))", "15.0"),
])
def test_the_example_c_kernels_run_under_upstream(call, expected):
    # The example library names libtvm_ffi.so as NEEDED; with upstream's already
    # loaded, the dynamic loader binds it to upstream's, not to ours.
    out = run_python(f"""
    import numpy as np, tvm_ffi
    m = tvm_ffi.load_module({os.path.join(libinfo.library_dir(), "libtvm_ffi_example_kernels.so")!r})
    print({call})
    maps = open("/proc/self/maps").read()
    print({libinfo.library_path()!r} in maps)
    """)
    assert out.splitlines() == [expected, "False"]


def test_example_kernel_errors_cross_into_upstream_as_python_exceptions():
    out = run_python(f"""
    import tvm_ffi
    m = tvm_ffi.load_module({os.path.join(libinfo.library_dir(), "libtvm_ffi_example_kernels.so")!r})
    for call in (lambda: m.add_int(1, "x"), lambda: m.raise_value_error("bad input"),
                 lambda: m.add_int(1)):
        try:
            call()
        except Exception as e:
            print(type(e).__name__, str(e).splitlines()[0])
    """)
    assert out.splitlines() == [
        "TypeError add_int(): argument 1 must be an int, got a value of type index 11",
        "ValueError bad input",
        "TypeError add_int() takes 2 arguments, got 1",
    ]
