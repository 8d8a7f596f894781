"""cffi build script of ``tvm_ffi_fast._core``: the fast runtime, compiled in C.

Run by ``setup.py`` (``cffi_modules``); paths are relative to the project root.
The extension links against ``libtvm_ffi.so`` (``setup.py`` adds its build
directory) and finds it at run time through an rpath into ``tvm_ffi_common/lib``.
"""

from cffi import FFI

#: What Python calls directly. Structs are declared with ``...`` where cffi
#: may take the layout from the real headers instead of from this text.
CDEF = """
typedef struct { uint32_t major; uint32_t minor; uint32_t patch; } TVMFFIVersion;
void TVMFFIGetVersion(TVMFFIVersion* out_version);
const char* tvm_ffi_runtime_name(void);
int tvm_ffi_fast_install(void);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "tvm_ffi_fast._core",
    '#include "fast_runtime.h"\n',
    sources=["tvm_ffi_fast/src/fast_runtime.c"],
    include_dirs=["c_api/include", "tvm_ffi_fast/src"],
    libraries=["tvm_ffi"],
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wextra"],
    extra_link_args=["-Wl,-rpath,$ORIGIN/../tvm_ffi_common/lib"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
