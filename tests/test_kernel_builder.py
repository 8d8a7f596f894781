"""The kernel builder produces libraries that load under both our library and upstream's."""

import pytest

from capi_harness import run_capi

ADD_CC = r"""
#include <tvm/ffi/function.h>
int64_t add(int64_t a, int64_t b) { return a + b; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, add);
"""


@pytest.mark.parametrize("runtime", ["bare", "ref", "fast", "upstream"])
def test_cpp_kernel_built_against_upstream_headers_adds(kernels, runtime):
    path = kernels.build("add", ADD_CC)
    out = run_capi(runtime, """
    kernel = ctypes.CDLL(PATH)
    f = abi.TVMFFISafeCallType(("__tvm_ffi_add", kernel))
    args = (abi.TVMFFIAny * 2)()
    for i, v in enumerate((40, 2)):
        args[i].type_index = TI.kTVMFFIInt; args[i].v_int64 = v
    result = abi.TVMFFIAny()
    print(f(None, args, 2, ctypes.byref(result)), result.type_index, result.v_int64)
    """, PATH=path)
    assert out.split() == ["0", "1", "42"]
