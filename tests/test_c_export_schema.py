"""tvm_ffi_abi/export.h: a C library exports its type schemas as upstream's C++ macro does.

The header builds as strict C99 and as C++17, against this project's headers
and against upstream's; the text it exports is byte for byte what upstream's
``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` exports for a C++ function of the same
signature; and with it, ``tvm-ffi-check`` reaches a C kernel that takes a
tensor and finds its bug (without it the kernel is never reached, and the
checker names the macro as the fix).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from subprocess_utils import run_python
from test_check import run_check
from tvm_ffi_check import hints

#: A C library whose sum reads one element past the end of its tensor.
SUM_BUG = r"""
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/export.h>

TVM_FFI_DLL_EXPORT int __tvm_ffi_add(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add(a: int, b: int)");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  /* wraps on overflow (the checker tries extreme ints; signed overflow would be UB) */
  result->v_int64 = (int64_t)((uint64_t)args[0].v_int64 + (uint64_t)args[1].v_int64);
  return 0;
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  const DLTensor* x;
  const float* data;
  double total = 0;
  int64_t i, n = 1;
  int32_t d;
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIDLTensorPtr) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum(x: DLTensor*)");
    return -1;
  }
  x = (const DLTensor*)args[0].v_ptr;
  if (x->dtype.code != kDLFloat || x->dtype.bits != 32) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "sum: x must be float32");
    return -1;
  }
  for (d = 0; d < x->ndim; ++d) n *= x->shape[d];
  data = (const float*)((const char*)x->data + x->byte_offset);
  for (i = 0; i <= n; ++i) total += data[i]; /* the bug: one past the end */
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = total;
  return 0;
}

#ifdef WITH_SCHEMA
TVM_FFI_ABI_EXPORT_SCHEMA(add, "int", "int", "int");
TVM_FFI_ABI_EXPORT_SCHEMA(sum, "float", "DLTensor*");
TVM_FFI_ABI_EXPORT_DOC(sum, "sum(x): the sum of a float32 tensor's elements");
#endif
"""

#: The same signatures declared from C (the macro) and from C++ (upstream's macro).
SIGNATURES_C = r"""
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/export.h>
#define STUB(name)                                                                        \
  TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* s, const TVMFFIAny* a, int32_t n,        \
                                          TVMFFIAny* r) {                                  \
    (void)s, (void)a, (void)n, (void)r;                                                   \
    return 0;                                                                             \
  }
STUB(add)
STUB(scale_into)
STUB(make)
STUB(total)
STUB(where)
STUB(nothing)
TVM_FFI_ABI_EXPORT_SCHEMA(add, "int", "int", "int");
TVM_FFI_ABI_EXPORT_SCHEMA(scale_into, "None", "DLTensor*", "DLTensor*", "float");
TVM_FFI_ABI_EXPORT_SCHEMA(make, "ffi.Tensor", "ffi.Tensor", "ffi.String", "bool", "Any");
TVM_FFI_ABI_EXPORT_SCHEMA(total, "int",
                          TVM_FFI_ABI_TYPE_ARGS("ffi.Array", TVM_FFI_ABI_TYPE("int")),
                          TVM_FFI_ABI_TYPE_ARGS("ffi.Map", TVM_FFI_ABI_TYPE("ffi.String") ","
                                                           TVM_FFI_ABI_TYPE("float")));
TVM_FFI_ABI_EXPORT_SCHEMA(where, "Device", "Device", "DataType");
TVM_FFI_ABI_EXPORT_SCHEMA(nothing, "None");
"""

SIGNATURES_CXX = r"""
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>
using namespace tvm::ffi;
int64_t Add(int64_t a, int64_t b) { return a + b; }
void ScaleInto(TensorView x, TensorView out, double factor) {}
Tensor Make(Tensor t, String name, bool flag, Any extra) { return t; }
int64_t Total(Array<int64_t> values, Map<String, double> weights) { return 0; }
DLDevice Where(DLDevice device, DLDataType dtype) { return device; }
void Nothing() {}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_into, ScaleInto);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make, Make);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(total, Total);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(where, Where);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(nothing, Nothing);
"""

_NAMES = ["add", "scale_into", "make", "total", "where", "nothing"]
_STRICT = ["-Wall", "-Wextra", "-Werror", "-Werror=implicit-function-declaration"]


def _metadata_texts(path):
    """The raw text of each function's __tvm_ffi__metadata_<name>, read under our runtime."""
    out = run_python(f"""
    import json, tvm_ffi_ref as api
    module = api.load_module({path!r})
    read = api.get_global_func("ffi.ModuleGetFunctionMetadata")
    print(json.dumps({{name: str(read(module, name, False)) for name in {_NAMES!r}}}))
    """)
    return json.loads(out)


def test_the_header_is_strict_c99_and_cxx17(kernels):
    c = kernels.build("export_c99", SUM_BUG, language="c",
                      extra_flags=["-DWITH_SCHEMA", "-pedantic-errors", *_STRICT])
    assert os.path.exists(c)
    from tvm_ffi_common import libinfo

    target = c.replace(".so", "_cxx.so")
    done = subprocess.run(["c++", "-x", "c++", "-std=c++17", "-pedantic-errors", *_STRICT[:3],
                           "-shared", "-fPIC", "-DWITH_SCHEMA", f"-I{libinfo.include_paths()[0]}",
                           "-", "-o", target], input=SUM_BUG, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

    defined = read_dynamic_symbols(target).defined
    assert {"__tvm_ffi__metadata_add", "__tvm_ffi__metadata_sum", "__tvm_ffi__doc_sum"} <= defined


def test_the_header_builds_against_upstreams_c_api_and_exports_upstreams_text(
        kernels, upstream_dir, tmp_path):
    from tvm_ffi_common import libinfo

    # Upstream's include directory first: tvm/ffi/c_api.h is theirs, the macro ours.
    ours = tmp_path / "libsignatures_c.so"
    command = ["cc", "-std=c99", *_STRICT, "-shared", "-fPIC",
               f"-I{os.path.join(upstream_dir, 'include')}", f"-I{libinfo.include_paths()[0]}",
               "-x", "c", "-", "-o", str(ours), "-H"]
    done = subprocess.run(command, input=SIGNATURES_C, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    included = [line for line in done.stderr.splitlines() if line.endswith("tvm/ffi/c_api.h")]
    assert included and included[0].startswith(". " + os.path.join(upstream_dir, "include"))
    theirs = kernels.build("signatures_cxx", SIGNATURES_CXX, language="c++",
                           extra_flags=["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"])
    expected = _metadata_texts(theirs)
    assert _metadata_texts(str(ours)) == expected
    assert json.loads(json.loads(expected["total"])["type_schema"])["named_args"]["params"][0] \
        == {"type": "ffi.Array", "args": [{"type": "int"}]}


def test_the_doc_macro_exports_a_docstring(kernels):
    path = kernels.build("export_doc", SUM_BUG, language="c", extra_flags=["-DWITH_SCHEMA"])
    out = run_python(f"""
    import tvm_ffi_ref as api
    module = api.load_module({path!r})
    print(module.get_function_doc("sum"))
    print(module.get_function_metadata("sum"))
    """)
    assert out.splitlines() == [
        "sum(x): the sum of a float32 tensor's elements",
        "{'type_schema': '{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[{\"type\":"
        "\"float\"}],\"params\":[{\"type\":\"DLTensor*\"}]}}'}"]


def test_with_the_macro_the_checker_reaches_a_c_tensor_kernel_and_finds_its_bug(kernels):
    plain = kernels.build("sum_bug_plain", SUM_BUG, language="c")
    before = json.loads(run_check(plain, "--json", "-", "--examples", "10").stdout)
    statuses = {f["name"]: f["status"] for f in before["functions"]}
    assert statuses == {"add": "unverified", "sum": "unverified"}
    for function in before["functions"]:  # the fix it names is the C one
        assert "TVM_FFI_ABI_EXPORT_SCHEMA" in function["unverified"]
        assert "tvm_ffi_abi/export.h" in function["unverified"]

    exported = kernels.build("sum_bug_schema", SUM_BUG, language="c",
                             extra_flags=["-DWITH_SCHEMA"])
    done = run_check(exported, "--json", "-", "--examples", "20")
    assert done.returncode == 1, done.stderr
    after = {f["name"]: f for f in json.loads(done.stdout)["functions"]}
    assert after["add"]["status"] == "pass" and after["add"]["signature"] == "(int, int) -> int"
    assert after["sum"]["status"] == "fail"
    (finding,) = after["sum"]["findings"]
    assert finding["rule"] == "memory-safety" and "past its end" in finding["message"]


@pytest.mark.parametrize("language", ["c", "c++"])
def test_the_hint_names_the_fix_for_the_librarys_language(kernels, language):
    if language == "c":
        path = kernels.build("sum_bug_plain", SUM_BUG, language="c")
    else:
        path = kernels.build("signatures_cxx_plain", SIGNATURES_CXX, language="c++")
    from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

    symbols = read_dynamic_symbols(path)
    found = hints.language_of(symbols.defined | symbols.undefined)
    assert found == {"c": hints.C, "c++": hints.CXX}[language]
    hint = hints.metadata_hint(found)
    assert ("TVM_FFI_ABI_EXPORT_SCHEMA" in hint) == (language == "c")
    assert ("-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1" in hint) == (language == "c++")
    unknown = hints.metadata_hint(None)
    assert "TVM_FFI_ABI_EXPORT_SCHEMA" in unknown and "INCLUDE_METADATA=1" in unknown


def test_the_package_installs_the_header_for_kernel_authors():
    from tvm_ffi_common import libinfo

    assert os.path.isfile(os.path.join(libinfo.include_paths()[0], "tvm_ffi_abi", "export.h"))
