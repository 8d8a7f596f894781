"""Modules: a shared library (or the process's "system library") seen as functions.

Its twin in C: ``tvm_ffi_fast/src/module.c``.

Loading a library module means ``dlopen`` (lazy binding, local symbols, as
upstream) plus these conventions:

* each exported ``__tvm_ffi_<name>`` symbol is a safe-call function; the
  module hands it out as a Function that calls it with a NULL ``handle`` and
  keeps the module (so the library) alive;
* optional ``__tvm_ffi__metadata_<name>`` and ``__tvm_ffi__doc_<name>`` are
  safe-call functions returning a str: the function's JSON metadata and doc;
* every context symbol registered with ``TVMFFIEnvModRegisterContextSymbol``
  that the library defines (a ``void*``) is set to the registered value;
* if the library defines ``__tvm_ffi__library_ctx`` (a ``void*``), the loader
  stores the module's handle there, so generated code can find functions of
  the modules this one imports (``TVMFFIEnvModLookupFromImports``);
* if it defines ``__tvm_ffi__library_bin``, that blob describes a tree of
  modules to build, and loading returns the tree's root (below).

Looking a function up with ``query_imports`` tries the module itself, then
each import, depth first. ``TVMFFIEnvModLookupFromImports`` tries only the
imports, then the global table, and caches what it finds in the module for
good: the Function it hands out is borrowed from that cache.

The **system library** (``ffi.SystemLib(prefix)``, one module per prefix)
finds symbols in the table ``TVMFFIEnvModRegisterSystemLibSymbol`` fills,
first as ``prefix + name``, then as ``name``.

**``__tvm_ffi__library_bin``** is a little-endian ``uint64`` byte count, then
that many bytes: the import tree in CSR form (``vector<uint64>`` child
offsets per module, ``vector<uint64>`` child indices; a vector is its
``uint64`` length and then its items), then for each module its kind (a
string: ``uint64`` length and bytes). Kind ``"_lib"`` is the library itself
(and receives ``__tvm_ffi__library_ctx``); any other kind is followed by the
module's bytes, loaded by the global ``ffi.Module.load_from_bytes.<kind>``.
Module 0 is the root.

A Module object is the header followed by one reflected field, ``imports_``:
a pointer to an Array of the imported modules, at offset 24, which C++ code
reads through the field's getter. Adding an import is ``Array::push_back``
(copy-on-write, see ``sequence_edits.array_push_back``).

8 bytes before the header sits upstream's ``ModuleObj`` vtable pointer, and a
module C++ made is served through its virtual functions (``module_cxx``).
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import env, errors, functions, memory, module_cxx, sequence_edits, sequences, strings
from .functions import def_global, set_bool, set_object
from .module_cxx import call_foreign, foreign_lookup, is_foreign
from .signatures import typed_global
from .slots import ErrorAlreadyRaised, FFIError, implements

TI = abi.TVMFFITypeIndex
EXPORT_PREFIX = "__tvm_ffi_"
LIBRARY_CTX_SYMBOL = "__tvm_ffi__library_ctx"
LIBRARY_BIN_SYMBOL = "__tvm_ffi__library_bin"
METADATA_PREFIX = "__tvm_ffi__metadata_"
DOC_PREFIX = "__tvm_ffi__doc_"

#: ``ModuleObj`` property bits.
BINARY_SERIALIZABLE, RUNNABLE, COMPILATION_EXPORTABLE = 0b001, 0b010, 0b100

#: Where a Module keeps its imports Array (the reflected ``imports_`` field).
IMPORTS_AT = memory.HEADER_SIZE
_MODULE_SIZE = IMPORTS_AT + ctypes.sizeof(ctypes.c_void_p)

_libc = ctypes.CDLL(None)
_libc.dlopen.restype = ctypes.c_void_p
_libc.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.dlsym.restype = ctypes.c_void_p
_libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_libc.dlclose.argtypes = [ctypes.c_void_p]
_libc.dlerror.restype = ctypes.c_char_p


@dataclass
class ModuleRecord:
    """What the runtime knows about one Module object."""

    kind: str
    dl_handle: Optional[int] = None  # None for the system library
    symbol_prefix: str = ""  # system library only
    lookup_cache: Dict[bytes, int] = field(default_factory=dict)  # owned Function references


_records: Dict[int, ModuleRecord] = {}
_lock = threading.RLock()


def _imports_array(module: int) -> int:
    return ctypes.c_void_p.from_address(module + IMPORTS_AT).value


def imports_of(module: int) -> List[int]:
    """The modules ``module`` imports, in order (borrowed addresses)."""
    return [value.v_ptr for value in sequences.seq_items(_imports_array(module))]


def _destroy_module(address: int) -> None:
    record = _records.pop(address, None)
    memory.dec_ref(_imports_array(address))
    if record is not None:
        for handle in record.lookup_cache.values():
            memory.dec_ref(handle)
        if record.dl_handle:
            _libc.dlclose(record.dl_handle)


def new_module(record: ModuleRecord) -> int:
    """A Module object for ``record``, importing nothing yet (owned address)."""
    address = memory.new_object(TI.kTVMFFIModule, _MODULE_SIZE, _destroy_module,
                                prefix=module_cxx.VTABLE_SIZE)
    ctypes.c_void_p.from_address(address - module_cxx.VTABLE_SIZE).value = module_cxx.vtable()
    ctypes.c_void_p.from_address(address + IMPORTS_AT).value = \
        sequences.new_array(sequences.ARRAY_INIT_CAPACITY)
    with _lock:
        _records[address] = record
    return address


def record_of(address: int) -> ModuleRecord:
    """The record of a Module object made here."""
    record = _records.get(address)
    if record is None:
        raise FFIError("TypeError", "expected a Module made by this runtime")
    return record


# ---------------------------------------------------------------- symbols


def _dlsym(handle: int, name: str) -> Optional[int]:
    return _libc.dlsym(handle, name.encode()) or None


def module_symbol(record: ModuleRecord, name: str) -> Optional[int]:
    """The address of symbol ``name`` (the system library tries ``prefix + name``, then ``name``)."""
    if record.dl_handle is not None:
        return _dlsym(record.dl_handle, name)
    return env.system_lib_symbol(record.symbol_prefix + name) or env.system_lib_symbol(name)


def _function_symbol(record: ModuleRecord, name: str) -> Optional[int]:
    """The safe-call entry of function ``name``: ``__tvm_ffi_<prefix><name>``, then without prefix."""
    if record.dl_handle is not None:
        return _dlsym(record.dl_handle, EXPORT_PREFIX + name)
    return (env.system_lib_symbol(EXPORT_PREFIX + record.symbol_prefix + name)
            or env.system_lib_symbol(EXPORT_PREFIX + name))


def _raise_taken_error(fallback: str) -> None:
    """Passes on the error a callee left in the raised slot (or ``fallback`` if it left none)."""
    if not errors.raised():
        raise FFIError("RuntimeError", fallback)
    raise ErrorAlreadyRaised()


def _own_function(module: int, name: str) -> Optional[int]:
    """The module's own function ``name`` (a new Function keeping the module alive), or None."""
    entry = _function_symbol(record_of(module), name)
    if not entry:
        return None
    out = ctypes.c_void_p()
    # Built in C: calling a kernel function never passes through Python.
    if LIB.tvm_ffi_runtime_function_with_owner(entry, module, ctypes.byref(out)) != 0:
        _raise_taken_error("could not create a kernel function")
    return out.value


def get_function(module: int, name: bytes, query_imports: bool) -> Optional[int]:
    """An owned Function for ``name`` in ``module`` (then its imports, depth first), or None."""
    if is_foreign(module):
        result = abi.TVMFFIAny()
        foreign_lookup("GetFunction", module, name, query_imports, result)
        return result.v_ptr if result.type_index != TI.kTVMFFINone else None
    found = _own_function(module, name.decode())
    if found or not query_imports:
        return found
    for imported in imports_of(module):
        found = get_function(imported, name, True)
        if found:
            return found
    return None


def _call_string_getter(entry: int, result: abi.TVMFFIAny) -> None:
    """Calls an exported ``__tvm_ffi__metadata_/doc_`` getter; its str goes into ``result``."""
    getter = abi.TVMFFISafeCallType(entry)
    value = abi.TVMFFIAny()
    if getter(None, None, 0, ctypes.byref(value)) != 0:
        _raise_taken_error("a metadata getter failed")
    if value.type_index == TI.kTVMFFIRawStr:
        strings.store_str_or_bytes(result, ctypes.string_at(value.v_ptr), is_str=True)
    elif value.type_index in (TI.kTVMFFISmallStr, TI.kTVMFFIStr):
        ctypes.memmove(ctypes.addressof(result), ctypes.addressof(value), ctypes.sizeof(value))
    else:
        from .signatures import type_key_of

        if value.type_index >= TI.kTVMFFIStaticObjectBegin:
            memory.dec_ref(value.v_ptr)
        raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(value)}` to `str`")


def _companion(module: int, prefix: str, name: bytes, query_imports: bool,
               result: abi.TVMFFIAny) -> bool:
    """Finds ``prefix + name`` in ``module`` (then its imports) and calls it into ``result``."""
    if is_foreign(module):
        method = "GetFunctionMetadata" if prefix == METADATA_PREFIX else "GetFunctionDoc"
        foreign_lookup(method, module, name, query_imports, result)
        return result.type_index != TI.kTVMFFINone
    entry = module_symbol(record_of(module), prefix + name.decode())
    if entry:
        _call_string_getter(entry, result)
        return True
    if query_imports:
        return any(_companion(imported, prefix, name, True, result)
                   for imported in imports_of(module))
    return False


# ---------------------------------------------------------------- imports


def _reaches(start: int, target: int) -> bool:
    return start == target or any(_reaches(child, target) for child in imports_of(start))


def push_import(module: int, other: int) -> None:
    """Adds ``other`` to ``module``'s imports (``imports_.push_back``), no questions asked."""
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIModule)
    value.v_ptr = other
    with _lock:
        slot = ctypes.c_void_p.from_address(module + IMPORTS_AT)
        slot.value = sequence_edits.array_push_back(slot.value, value)


def import_module(module: int, other: int) -> None:
    """Adds ``other`` to ``module``'s imports, refusing a cycle."""
    if _reaches(other, module):
        raise FFIError("RuntimeError", "Cyclic dependency detected during import")
    push_import(module, other)


def clear_imports(module: int) -> None:
    """Empties ``module``'s imports (in place unless the Array is shared)."""
    with _lock:
        slot = ctypes.c_void_p.from_address(module + IMPORTS_AT)
        if memory.strong_count(slot.value) == 1:
            sequence_edits.seq_clear(slot.value)
        else:
            fresh = sequences.new_array(sequences.seq_cell(slot.value).capacity)
            memory.dec_ref(slot.value)
            slot.value = fresh


@implements("TVMFFIEnvModLookupFromImports")
def env_mod_lookup_from_imports(library_ctx, func_name, out):
    if memory.type_index_of(library_ctx) != TI.kTVMFFIModule:
        raise FFIError("TypeError", "TVMFFIEnvModLookupFromImports: library_ctx is not a module")
    record = record_of(library_ctx)
    with _lock:
        cached = record.lookup_cache.get(func_name)
        if cached is None:
            for imported in imports_of(library_ctx):
                cached = get_function(imported, func_name, True)
                if cached:
                    break
            if not cached:
                cached = functions.GLOBALS.new_ref(func_name)
                if cached is None:
                    raise FFIError("RuntimeError", f"Cannot find function {func_name.decode()} in "
                                                   "the imported modules or global registry.")
            record.lookup_cache[func_name] = cached
    out[0] = cached  # borrowed: the module's cache keeps it alive


# --------------------------------------------------------------- loading


def _set_context_symbols(record: ModuleRecord) -> None:
    for name, value in env.context_symbols():
        address = module_symbol(record, name)
        if address:
            ctypes.c_void_p.from_address(address).value = value or None


class _Reader:
    """Reads the ``__tvm_ffi__library_bin`` stream; a short read is upstream's failed check."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def u64(self, what: str) -> int:
        if len(self.data) - self.pos < 8:
            raise FFIError("InternalError", f"Check failed: stream.Read(&{what}): malformed "
                                            "library binary")
        (value,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return value

    def u64_vector(self, what: str) -> List[int]:
        return [self.u64(what) for _ in range(self.u64(what))]

    def string(self, what: str) -> bytes:
        size = self.u64(what)
        if size > len(self.data) - self.pos:
            raise FFIError("InternalError", f"Check failed: stream.Read(&{what}): malformed "
                                            "library binary")
        self.pos += size
        return self.data[self.pos - size:self.pos]


def _load_from_bytes(kind: bytes, data: bytes) -> int:
    """A module of ``kind`` built by the global ``ffi.Module.load_from_bytes.<kind>`` (owned)."""
    loader_name = b"ffi.Module.load_from_bytes." + kind
    entry = functions.GLOBALS.get(loader_name)
    if entry is None:
        raise FFIError("RuntimeError", f"Library binary was created using {{{kind.decode()}}} but "
                                       "a loader of that name is not registered. Make sure to "
                                       f"have runtime that registers {loader_name.decode()}")
    return _call_module_loader(entry.func, [(data, False)])


def _call_module_loader(loader: int, texts) -> int:
    """Calls ``loader`` with str/bytes arguments (``(data, is_str)``); its Module (owned)."""
    args = (abi.TVMFFIAny * max(1, len(texts)))()
    for i, (data, is_str) in enumerate(texts):
        strings.store_str_or_bytes(args[i], data, is_str=is_str)
    result = abi.TVMFFIAny()
    try:
        if functions.call_function(loader, args, len(texts), ctypes.byref(result)) != 0:
            _raise_taken_error("a module loader failed")
    finally:
        for i in range(len(texts)):
            if args[i].type_index >= TI.kTVMFFIStaticObjectBegin:
                memory.dec_ref(args[i].v_ptr)
    if result.type_index != TI.kTVMFFIModule:
        from .signatures import type_key_of

        if result.type_index >= TI.kTVMFFIStaticObjectBegin:
            memory.dec_ref(result.v_ptr)
        raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(result)}` to "
                                    "`ffi.Module`")
    return result.v_ptr


def _process_library_bin(library: int, blob_address: int, ctx_address: Optional[int]) -> int:
    """Builds the import tree of ``__tvm_ffi__library_bin``; returns its root (owned)."""
    (size,) = struct.unpack("<Q", ctypes.string_at(blob_address, 8))
    reader = _Reader(ctypes.string_at(blob_address + 8, size))
    offsets = reader.u64_vector("import_tree")
    children = reader.u64_vector("import_tree")
    if not offsets:
        raise FFIError("InternalError", "Check failed: stream.Read(&import_tree): malformed "
                                        "library binary")
    modules: List[int] = []
    try:
        for _ in range(len(offsets) - 1):
            kind = reader.string("kind")
            if kind == b"_lib":
                memory.inc_ref(library)
                modules.append(library)
                if ctx_address:
                    ctypes.c_void_p.from_address(ctx_address).value = library
            else:
                modules.append(_load_from_bytes(kind, reader.string("module_bytes")))
        for i, module in enumerate(modules):
            for j in range(offsets[i], offsets[i + 1]):
                if j >= len(children) or children[j] >= len(modules):
                    raise FFIError("InternalError", "Check failed: child_index < modules.size()")
                push_import(module, modules[children[j]])
        memory.inc_ref(modules[0])
        return modules[0]
    finally:
        for module in modules:
            memory.dec_ref(module)


def _finish_library(module: int) -> int:
    """What every loaded library goes through; returns the module to hand out (owned).

    Consumes the caller's reference to ``module``.
    """
    record = record_of(module)
    blob = module_symbol(record, LIBRARY_BIN_SYMBOL)
    ctx = module_symbol(record, LIBRARY_CTX_SYMBOL)
    _set_context_symbols(record)
    if blob:
        try:
            return _process_library_bin(module, blob, ctx)
        finally:
            memory.dec_ref(module)
    if ctx:
        ctypes.c_void_p.from_address(ctx).value = module
    return module


def load_library_module(path: str) -> int:
    """Loads a shared library as a Module (see the module docstring for the conventions)."""
    handle = _libc.dlopen(path.encode(), os.RTLD_LAZY | os.RTLD_LOCAL)
    if not handle:
        why = _libc.dlerror()
        raise FFIError("InternalError", "Check failed: (lib_handle_ != nullptr) is false: Failed "
                                        f"to load dynamic shared library {path} "
                                        f"{why.decode() if why else ''}")
    return _finish_library(new_module(ModuleRecord("library", dl_handle=handle)))


_system_libs: Dict[str, int] = {}


def system_lib(prefix: str) -> int:
    """The system library module of ``prefix`` (one per prefix, made on first use); owned."""
    with _lock:
        module = _system_libs.get(prefix)
        if module is None:
            module = _system_libs[prefix] = _finish_library(
                new_module(ModuleRecord("library", symbol_prefix=prefix)))
        memory.inc_ref(module)
        return module


# ------------------------------------------------------------ ffi.* globals


@typed_global("ffi.ModuleLoadFromFile", ["str"], "ffi.Module")
def _module_load_from_file(result, path):
    text = strings.view_bytes(path)
    dot = text.rfind(b".")
    if dot < 0:
        raise FFIError("RuntimeError", f"Failed to get file format from {text.decode()}")
    fmt = text[dot + 1:]
    if fmt in (b"dll", b"dylib", b"dso"):
        fmt = b"so"
    loader_name = b"ffi.Module.load_from_file." + fmt
    entry = functions.GLOBALS.get(loader_name)
    if entry is None:
        raise FFIError("RuntimeError", f"Loader for `.{fmt.decode()}` files is not registered, "
                       f"resolved to ({loader_name.decode()}) in the global registry.Ensure that "
                       "you have loaded the correct runtime code, andthat you are on the correct "
                       "hardware architecture.")
    set_object(result, _call_module_loader(entry.func, [(text, True), (fmt, True)]))


@typed_global("ffi.Module.load_from_file.so", ["str", "str"], "ffi.Module")
def _load_so(result, path, _format):
    set_object(result, load_library_module(strings.view_bytes(path).decode()))


@typed_global("ffi.ModuleImplementsFunction", ["ffi.Module", "str", "bool"], "bool")
def _module_implements_function(result, module, name, query_imports):
    if is_foreign(module):
        return call_foreign("ImplementsFunction", result, module, name, query_imports)
    found = get_function(module, strings.view_bytes(name), query_imports)
    if found:
        memory.dec_ref(found)
    set_bool(result, bool(found))


@typed_global("ffi.ModuleGetFunctionMetadata", ["ffi.Module", "str", "bool"], "Optional<str>")
def _module_get_function_metadata(result, module, name, query_imports):
    if is_foreign(module):
        return call_foreign("GetFunctionMetadata", result, module, name, query_imports)
    _companion(module, METADATA_PREFIX, strings.view_bytes(name), query_imports, result)


@typed_global("ffi.ModuleGetFunctionDoc", ["ffi.Module", "str", "bool"], "Optional<str>")
def _module_get_function_doc(result, module, name, query_imports):
    if is_foreign(module):
        return call_foreign("GetFunctionDoc", result, module, name, query_imports)
    _companion(module, DOC_PREFIX, strings.view_bytes(name), query_imports, result)


@typed_global("ffi.ModuleGetFunction", ["ffi.Module", "str", "bool"], "Optional<ffi.Function>")
def _module_get_function(result, module, name, query_imports):
    if is_foreign(module):
        return call_foreign("GetFunction", result, module, name, query_imports)
    found = get_function(module, strings.view_bytes(name), query_imports)
    if found:
        set_object(result, found)


@typed_global("ffi.ModuleGetPropertyMask", ["ffi.Module"], "int")
def _module_get_property_mask(result, module):
    if is_foreign(module):
        return call_foreign("GetPropertyMask", result, module)
    strings.store_int(result, BINARY_SERIALIZABLE | RUNNABLE)


@typed_global("ffi.ModuleInspectSource", ["ffi.Module", "str"], "str")
def _module_inspect_source(result, module, fmt):
    if is_foreign(module):
        return call_foreign("InspectSource", result, module, fmt)
    strings.store_str_or_bytes(result, b"", is_str=True)  # a library has no source to show


@typed_global("ffi.ModuleGetKind", ["ffi.Module"], "str")
def _module_get_kind(result, module):
    if is_foreign(module):
        return call_foreign("GetKind", result, module)
    strings.store_str_or_bytes(result, record_of(module).kind.encode(), is_str=True)


@typed_global("ffi.ModuleGetWriteFormats", ["ffi.Module"], "Array<str>")
def _module_get_write_formats(result, module):
    if is_foreign(module):
        return call_foreign("GetWriteFormats", result, module)
    set_object(result, sequences.new_array(0))  # a library cannot be written out


@typed_global("ffi.ModuleWriteToFile", ["ffi.Module", "str", "str"], "void")
def _module_write_to_file(result, module, path, fmt):
    if is_foreign(module):
        return call_foreign("WriteToFile", result, module, path, fmt)
    raise FFIError("RuntimeError", f"Module[{record_of(module).kind}] does not support WriteToFile")


@typed_global("ffi.ModuleImportModule", ["ffi.Module", "ffi.Module"], "void")
def _module_import_module(result, module, other):
    if is_foreign(module):
        return call_foreign("ImportModule", result, module, other)
    import_module(module, other)


@typed_global("ffi.ModuleClearImports", ["ffi.Module"], "void")
def _module_clear_imports(result, module):
    if is_foreign(module):
        return call_foreign("ClearImports", result, module)
    clear_imports(module)


_kept_alive: List[int] = []


@typed_global("ffi.ModuleGlobalsAdd", ["ffi.Module"], "void")
def _module_globals_add(result, module):
    with _lock:
        if module not in _kept_alive:
            memory.inc_ref(module)
            _kept_alive.append(module)


@typed_global("ffi.ModuleGlobalsRemove", ["ffi.Module"], "void")
def _module_globals_remove(result, module):
    with _lock:
        if module not in _kept_alive:
            return
        _kept_alive.remove(module)
    memory.dec_ref(module)


@def_global("ffi.SystemLib")
def _system_lib(args, result):
    prefix = b""
    if args:
        if args[0].type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr, TI.kTVMFFIRawStr):
            from .signatures import type_key_of

            raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(args[0])}` to "
                                        "`str`")
        prefix = strings.view_bytes(args[0])
    set_object(result, system_lib(prefix.decode()))
