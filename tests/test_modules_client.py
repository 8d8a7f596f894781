"""Modules under each runtime: shared libraries with `__tvm_ffi_<name>` symbols,
the library context, metadata and doc symbols, imports and lookups from them,
context symbols, the system library and a `__tvm_ffi__library_bin` import tree.
"""

from __future__ import annotations

import struct

import pytest

from runtime_client import OURS, RUNTIMES, run_all, tagged

MAIN = r"""
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

namespace ffi = tvm::ffi;

extern "C" {
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = nullptr;
TVM_FFI_DLL_EXPORT void* test_context_value = nullptr;
}

int64_t add_one(int64_t x) { return x + 1; }

int64_t call_import(ffi::String name, int64_t x) {
  TVMFFIObjectHandle f = nullptr;
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name.c_str(), &f));
  TVMFFIAny arg, result;
  arg.type_index = kTVMFFIInt;
  arg.zero_padding = 0;
  arg.v_int64 = x;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIFunctionCall(f, &arg, 1, &result));
  return result.v_int64;  // f is borrowed from the module's cache: no release
}

void* get_ctx() { return __tvm_ffi__library_ctx; }
void* context_value() { return test_context_value; }

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, add_one);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_import, call_import);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(get_ctx, get_ctx);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(context_value, context_value);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add_one, "Adds one.");
"""

IMPORTED = r"""
#include <tvm/ffi/function.h>
int64_t times_ten(int64_t x) { return x * 10; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(times_ten, times_ten);
"""

BIN = r"""
#include <tvm/ffi/function.h>
extern "C" {
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = nullptr;
TVM_FFI_DLL_EXPORT unsigned char __tvm_ffi__library_bin[] = {%s};
}
int64_t hello() { return 7; }
void* get_ctx() { return __tvm_ffi__library_ctx; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(hello, hello);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(get_ctx, get_ctx);
"""


def library_bin() -> bytes:
    """An import tree of two modules: the library itself, importing a "testkind" module."""
    def u64(v):
        return struct.pack("<Q", v)

    def vec(values):
        return u64(len(values)) + b"".join(u64(v) for v in values)

    def string(data):
        return u64(len(data)) + data

    stream = vec([0, 1, 1]) + vec([1]) + string(b"_lib") + string(b"testkind") + string(b"payload!")
    return u64(len(stream)) + stream


SNIPPET = r"""
SAFE_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny), ctypes.c_int32,
                             ctypes.POINTER(abi.TVMFFIAny))
def register(name, pyfn):
    @SAFE_CALL
    def safe_call(handle, args, n, result):
        value = pyfn([show_any(args[i]) for i in range(n)])
        if isinstance(value, Obj):
            lib.TVMFFIObjectIncRef(ctypes.c_void_p(value.handle))
            result[0].type_index = value.type_index; result[0].v_ptr = value.handle
        else:
            result[0].type_index = 1; result[0].v_int64 = value
        return 0
    _keep.append(safe_call)
    f = ctypes.c_void_p()
    lib.TVMFFIFunctionCreate(None, safe_call, None, ctypes.byref(f))
    lib.TVMFFIFunctionSetGlobal(ctypes.byref(byte_array(name)), f, 0)
    lib.TVMFFIObjectDecRef(f)

print("context symbol: %r" % (lib.TVMFFIEnvModRegisterContextSymbol(b"test_context_value", ctypes.c_void_p(0x5678)),))
main = call("ffi.ModuleLoadFromFile", MAIN)
def m(name, *args, mod=None):
    return callf(call("ffi.ModuleGetFunction", mod or main, name, True), *args)
print("kind: %r" % ((show(call("ffi.ModuleGetKind", main)), call("ffi.ModuleGetPropertyMask", main),
                     show(call("ffi.ModuleGetWriteFormats", main)), show(call("ffi.ModuleInspectSource", main, "c")),
                     err(call, "ffi.ModuleWriteToFile", main, "x.so", "so")),))
print("call: %r" % (m("add_one", 41),))
# upstream stores its C++ ModuleObj* (8 bytes before the object header, past the vtable
# pointer); the fast runtime stores the object handle; kernels only hand it back
ctx_offset = show(m("get_ctx"))[1] - main.handle
print("ctx: %r" % ((ctx_offset in (0, -8), show(m("context_value"))),))
print("ctx offset: %r" % (ctx_offset,))
print("lookup: %r" % ((show(call("ffi.ModuleGetFunction", main, "nope", True)), call("ffi.ModuleImplementsFunction", main, "add_one", False),
                       call("ffi.ModuleImplementsFunction", main, "nope", True)),))
print("doc: %r" % ((show(call("ffi.ModuleGetFunctionDoc", main, "add_one", False)),
                    show(call("ffi.ModuleGetFunctionDoc", main, "call_import", True))),))
print("metadata: %r" % (show(call("ffi.ModuleGetFunctionMetadata", main, "add_one", False)),))

imported = call("ffi.ModuleLoadFromFile", IMPORTED)
print("before import: %r" % ((show(call("ffi.ModuleGetFunction", main, "times_ten", True)), err(m, "call_import", "times_ten", 1)),))
call("ffi.ModuleImportModule", main, imported)
print("import: %r" % ((show(call("ffi.ModuleGetFunction", main, "times_ten", True)),
                       show(call("ffi.ModuleGetFunction", main, "times_ten", False)),
                       call("ffi.ModuleImplementsFunction", main, "times_ten", True),
                       call("ffi.ModuleImplementsFunction", main, "times_ten", False)),))
print("call import: %r" % (m("call_import", "times_ten", 4),))
register("test.double", lambda args: args[0] * 2)
print("call global: %r" % (m("call_import", "test.double", 21),))
print("call missing: %r" % (err(m, "call_import", "no_such_function", 1),))
print("cyclic: %r" % ((err(call, "ffi.ModuleImportModule", imported, main), err(call, "ffi.ModuleImportModule", main, main)),))
info = lib.TVMFFIGetTypeInfo(73).contents
field = info.fields[0]
out = abi.TVMFFIAny()
field.getter(main.handle + field.offset, ctypes.byref(out))
print("imports field: %r" % (show(from_any(out)),))
call("ffi.ModuleClearImports", main)
print("cleared: %r" % ((show(call("ffi.ModuleGetFunction", main, "times_ten", True)), m("call_import", "times_ten", 5)),))
f = call("ffi.ModuleGetFunction", imported, "times_ten", False)
del imported
print("function keeps module: %r" % (callf(f, 6),))
call("ffi.ModuleGlobalsAdd", main)
call("ffi.ModuleGlobalsRemove", main)

print("load errors: %r" % ([err(call, "ffi.ModuleLoadFromFile", p) for p in
                            ("/nonexistent/lib.so", "/nonexistent/lib.dso", "noext", "archive.foo")],))

# the system library: symbols registered by name, looked up with and without a prefix
helper = ctypes.CDLL(IMPORTED, mode=os.RTLD_LOCAL)
addr = ctypes.cast(helper.__tvm_ffi_times_ten, ctypes.c_void_p)
print("sys register: %r" % ((lib.TVMFFIEnvModRegisterSystemLibSymbol(b"__tvm_ffi_sys_times_ten", addr),
                             lib.TVMFFIEnvModRegisterSystemLibSymbol(b"__tvm_ffi_pre_fn", addr)),))
sys_lib = call("ffi.SystemLib")
pre_lib = call("ffi.SystemLib", "pre_")
print("sys lib: %r" % ((m("sys_times_ten", 5, mod=sys_lib), m("fn", 6, mod=pre_lib), m("sys_times_ten", 7, mod=pre_lib),
                        show(call("ffi.ModuleGetFunction", sys_lib, "fn", True)),
                        call("ffi.SystemLib").handle == sys_lib.handle, show(call("ffi.ModuleGetKind", sys_lib))),))
print("sys lib bad: %r" % (err(call, "ffi.SystemLib", 1),))

# an import tree stored in __tvm_ffi__library_bin
loaded = []
register("ffi.Module.load_from_bytes.testkind", lambda args: (loaded.append(args[0]), call("ffi.SystemLib", "bin_"))[1])
root = call("ffi.ModuleLoadFromFile", BIN)
out = abi.TVMFFIAny()
field.getter(root.handle + field.offset, ctypes.byref(out))
imports = from_any(out)
print("library bin: %r" % ((loaded, m("hello", mod=root), show(imports),
                            show(m("get_ctx", mod=root))[1] - root.handle in (0, -8),
                            show(call("ffi.ModuleGetKind", callf(gfunc("ffi.ArrayGetItem"), imports, 0)))),))
"""


@pytest.fixture(scope="module")
def module_outputs(kernels):
    flags = ("-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1",)
    blob = ", ".join(str(b) for b in library_bin())
    paths = dict(
        MAIN=kernels.build("module_main", MAIN, extra_flags=flags),
        IMPORTED=kernels.build("module_imported", IMPORTED),
        BIN=kernels.build("module_bin", BIN % blob),
    )
    return run_all("import os\n" + SNIPPET, **paths)


@pytest.mark.parametrize("runtime", OURS)
def test_modules_agree_with_upstream(runtime, module_outputs):
    ours, upstream = tagged(module_outputs[runtime]), tagged(module_outputs["upstream"])
    assert ours.pop("ctx offset") == "0" and upstream.pop("ctx offset") == "-8"
    assert ours == upstream


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_modules(runtime, module_outputs):
    out = tagged(module_outputs[runtime])
    assert out["context symbol"] == "0"
    assert out["kind"] == (
        "('library', 3, [], '', ('ERR', 'RuntimeError', 'Module[library] does not support "
        "WriteToFile'))")
    assert out["call"] == "42"
    assert out["ctx"] == "(True, ('ptr', 22136))"
    assert out["lookup"] == "(None, True, False)"
    assert out["doc"] == "('Adds one.', None)"
    assert out["metadata"].startswith("'{\"type_schema\":")
    assert out["before import"] == (
        "(None, ('ERR', 'RuntimeError', 'Cannot find function times_ten in the imported modules "
        "or global registry.'))")
    assert out["import"] == "('Function', None, True, False)"
    assert out["call import"] == "40"
    assert out["call global"] == "42"
    assert out["cyclic"] == (
        "(('ERR', 'RuntimeError', 'Cyclic dependency detected during import'), ('ERR', "
        "'RuntimeError', 'Cyclic dependency detected during import'))")
    assert out["imports field"] == "['Module']"
    # lookups from imports stay cached after the imports are cleared, as upstream's do
    assert out["cleared"] == "(None, 50)"
    assert out["function keeps module"] == "60"
    assert "Loader for `.foo` files is not registered" in out["load errors"]
    assert "Failed to get file format from noext" in out["load errors"]
    assert out["sys register"] == "(0, 0)"
    assert out["sys lib"] == "(50, 60, 70, None, True, 'library')"
    assert out["sys lib bad"] == "('ERR', 'TypeError', 'Cannot convert from type `int` to `str`')"
    assert out["library bin"] == "([b'payload!'], 7, ['Module'], True, 'library')"
