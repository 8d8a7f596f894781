"""cffi build script of ``tvm_ffi_fast._core``: the fast runtime, compiled in C.

Run by ``setup.py`` (``cffi_modules``); paths are relative to the project root.
The extension links against ``libtvm_ffi.so`` (``setup.py`` adds its build
directory) and finds it at run time through an rpath into ``tvm_ffi_common/lib``.

Besides the runtime it holds what each core of the Python API needs
(``tvm_ffi_fast/__init__.py`` picks the core at import): on CPython, the
compiled core (``src/frontend``, CPython API); on every interpreter, the C
API declarations, helpers and ``extern "Python"`` callbacks of the cffi core
(``cffi_core/``, the one PyPy runs, whose C API emulation is slow and partial).
"""

import os
import platform

from cffi import FFI

#: Whether this interpreter can run the compiled core (it needs the real CPython API).
COMPILED_CORE = platform.python_implementation() == "CPython"

#: What Python calls directly. Structs are declared with ``...`` where cffi
#: may take the layout from the real headers instead of from this text.
CDEF = """
typedef struct { uint32_t major; uint32_t minor; uint32_t patch; } TVMFFIVersion;
void TVMFFIGetVersion(TVMFFIVersion* out_version);
const char* tvm_ffi_runtime_name(void);
int tvm_ffi_fast_install(void);
"""

#: The runtime, one concept per file (tvm_ffi_fast/src/<name>.c).
SOURCES = [
    "slots",  # the table installed behind libtvm_ffi.so
    "objects",  # allocation, opaque objects, errors, buffers, type key hash
    "strmap",  # private string-keyed hash tables
    "strings",  # String, Bytes, BigInt, AnyView -> Any
    "registry",  # the type table: indices, keys, ancestors, TVMFFITypeInfo
    "type_reflection",  # a type's fields, methods and metadata
    "type_attrs",  # type attribute columns
    "reflection",  # the reflected types upstream registers at load
    "reflection_access_path",  # ffi.reflection.AccessStep / AccessPath and their methods
    "reflection_make_object",  # field setters, empty objects, ffi.MakeObjectFromPackedArgs
    "convert_attrs",  # __ffi_convert__ of the built-in types
    "functions",  # Function objects, typed built-ins
    "global_functions",  # the global function table and its ffi.* functions
    "containers",  # Array, List, Shape objects; ffi.Shape and the container ffi.* functions' order
    "sequence_globals",  # ffi.Array* and ffi.List*
    "any_hash",  # AnyHash / AnyEqual: how Map and Dict hash and compare keys
    "maps",  # Map and Dict: the small layout and the map interface
    "map_dense",  # Map and Dict: the dense layout (blocks, probe chains, insertion list)
    "map_globals",  # ffi.Map* and ffi.Dict*, the forward-iteration functor
    "walk",  # what the object-graph walks share: address tables, fields, hooks
    "dataclass_ops",  # the dataclass walks' shared part: hook columns, frame children, load
    "dataclass_repr",  # ffi.ReprPrint
    "dataclass_hash",  # ffi.RecursiveHash
    "dataclass_compare",  # ffi.RecursiveEq/Lt/Le/Gt/Ge
    "dataclass_hooks",  # the hooks registered at load: BigInt's, the access paths' repr
    "structural_rules",  # kinds, regions, depth limit; the structural ops' setup
    "structural_equal",  # ffi.StructuralEqual, ffi.GetFirstStructuralMismatch: set up, run, result
    "structural_equal_walk",  # the comparison: each kind of value, bindings, the work list
    "structural_equal_trail",  # the mismatch trail: the access steps of the first mismatch
    "structural_hash",  # ffi.StructuralHash
    "structural_key",  # ffi.StructuralKey, its __any_hash__ / __any_equal__
    "json_text",  # ffi.json.Parse / Stringify
    "json_graph",  # ffi.ToJSONGraph / FromJSONGraph (+ String forms), BigInt's JSON hooks
    "json_graph_save",  # the ToJSONGraph walk: one node per distinct value
    "json_graph_load",  # the FromJSONGraph walk: nodes decoded on demand
    "deep_copy",  # ffi.DeepCopy
    "structural_traversal",  # callback entries, error contexts of visits and mutations
    "structural_visit",  # ffi.StructuralWalk / Visit, the visitor, container __s_visit__
    "structural_mutate",  # ffi.StructuralMap / Mutate, the mutator object and its methods
    "structural_mutate_engine",  # the mutation engine (explicit stack), the variable remap
    "structural_mutate_default",  # a value's default mutation (StructuralMutatorDefaultMutate)
    "structural_mutate_hooks",  # the built-in types' native __s_mutate__ hooks
    "visit_error_context",  # ffi.VisitErrorContext.FindAccessPaths
    "pyclass",  # types a front end lays out: field accessors, generated __ffi_init__
    "pyclass_schema",  # the values a py_class setter stores without its converter
    "tensor",  # Tensor objects and DLPack
    "env",  # streams, DLPack allocator, signal checks
    "module",  # Module objects: symbols, exported functions, imports
    "module_load",  # making modules: dlopen, the system library, library_bin import trees
    "module_globals",  # the ffi.Module* globals
    "module_cxx",  # modules and C++: the vtable prefix, modules C++ made
    "dtype",  # DLDataType <-> string
]

#: The Python API's compiled core (tvm_ffi_fast/src/frontend/<name>.c): CPython-facing C,
#: exposed as the module tvm_ffi_fast._frontend by tvm_ffi_fast_frontend_init().
FRONTEND_SOURCES = [
    "module",  # creates tvm_ffi_fast._frontend; hooks into the Python modules
    "object",  # the Object and Function extension types
    "function",  # the packed call (vectorcall) and global lookups
    "scope",  # what outlives a call: references made for it, its framework context
    "encode",  # Python values -> TVMFFIAny, in tvm_ffi_ref.convert's order
    "nested",  # lists, tuples and dicts as Arrays and Maps, walked without recursion
    "decode",  # TVMFFIAny -> Python values; the type index -> class table
    "rules",  # the calling-convention checks on every result
    "errors",  # raised errors <-> Python exceptions
    "callback",  # Python callables as Function objects
    "dlpack",  # Tensors and DLPack: from_dlpack, capsules in and out, DLTensor fields
    "tensortype",  # TensorBase: the Tensor accessors in C
    "exchange",  # framework tensors through DLPack's C exchange API
    "dtypes",  # DLDataType <-> spelling, dtype instances
    "globals",  # the ffi.* functions the core calls
    "pyapi",  # the module's functions, called by tvm_ffi_fast's Python modules
    "fields",  # reflected fields read and written, the field converter callback
    "holds",  # the container locks: calls holding their List/Dict arguments, hold/release
]

#: The cffi core's declarations and C helpers (tvm_ffi_fast/cffi_core/).
CFFI_FRONT = os.path.join("tvm_ffi_fast", "cffi_core")

with open(os.path.join(CFFI_FRONT, "core.cdef")) as _f:
    CFFI_CORE_CDEF = _f.read()

ffibuilder = FFI()
ffibuilder.cdef(CDEF + ("int tvm_ffi_fast_frontend_init(void);\n" if COMPILED_CORE else ""))
ffibuilder.cdef(CFFI_CORE_CDEF)
ffibuilder.set_source(
    "tvm_ffi_fast._core",
    '#include "slots.h"\n#include "cffi_helpers.h"\n'
    + ("int tvm_ffi_fast_frontend_init(void);\n" if COMPILED_CORE else ""),
    sources=[f"tvm_ffi_fast/src/{name}.c" for name in SOURCES]
    + [os.path.join(CFFI_FRONT, "cffi_helpers.c")]
    + ([f"tvm_ffi_fast/src/frontend/{name}.c" for name in FRONTEND_SOURCES] if COMPILED_CORE
       else []),
    include_dirs=["c_api/include", "tvm_ffi_fast/src", CFFI_FRONT],
    # The compiled core uses the full CPython API (vectorcall, heap types with slots).
    py_limited_api=False,
    libraries=["tvm_ffi", "dl", "pthread", "stdc++"],
    # A call to an undeclared function is an error, not a warning that loads as a missing
    # symbol (PyPy lacks part of the CPython API).
    extra_compile_args=["-std=gnu11", "-O2", "-Wall", "-Wextra",
                        "-Werror=implicit-function-declaration"],
    extra_link_args=["-Wl,-rpath,$ORIGIN/../tvm_ffi_common/lib"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
