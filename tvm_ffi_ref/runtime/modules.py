"""Modules: a shared library (or the process's "system library") seen as functions.

Loading a library module means ``dlopen`` plus three conventions:

* each exported ``__tvm_ffi_<name>`` symbol is a safe-call function; the
  module hands it out as a Function that calls it with a NULL ``handle`` and
  keeps the module alive;
* if the library defines ``__tvm_ffi__library_ctx`` (a ``void*``), the loader
  stores the module's handle there, so generated code can find functions of
  the modules this one imports (``TVMFFIEnvModLookupFromImports``);
* optional ``__tvm_ffi__metadata_<name>`` and ``__tvm_ffi__doc_<name>`` are
  safe-call functions returning a str: the function's JSON metadata and doc.

Context symbols registered with ``TVMFFIEnvModRegisterContextSymbol`` are
written into every library loaded afterwards that defines them. A library
that neither exports a TVM FFI function nor uses the C API is refused: it
cannot be what the caller meant to load.

A Module object is the header followed by one reflected field, ``imports_``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .. import abi
from ..elf_symbols import read_dynamic_symbols
from . import env, functions, memory, strings
from .functions import def_global, set_bool, set_object
from .registry import TYPES
from .._lib import LIB
from .slots import FFIError, implements

TI = abi.TVMFFITypeIndex
EXPORT_PREFIX = "__tvm_ffi_"
LIBRARY_CTX_SYMBOL = "__tvm_ffi__library_ctx"
METADATA_PREFIX = "__tvm_ffi__metadata_"
DOC_PREFIX = "__tvm_ffi__doc_"

#: ``ModuleObj`` property bits.
BINARY_SERIALIZABLE, RUNNABLE, COMPILATION_EXPORTABLE = 0b001, 0b010, 0b100

_IMPORTS_OFFSET = memory.HEADER_SIZE
_MODULE_SIZE = memory.HEADER_SIZE + ctypes.sizeof(abi.TVMFFIAny)


@dataclass
class ModuleRecord:
    """What the runtime knows about one Module object."""

    kind: str
    library: Optional[ctypes.CDLL] = None  # None for the system library
    symbol_prefix: str = ""  # system library only
    imports: List[int] = field(default_factory=list)  # owned Module references
    lookup_cache: Dict[bytes, int] = field(default_factory=dict)  # owned Function references


_records: Dict[int, ModuleRecord] = {}
_lock = threading.RLock()


def _destroy_module(address: int) -> None:
    record = _records.pop(address, None)
    if record is not None:
        for handle in record.imports + list(record.lookup_cache.values()):
            memory.dec_ref(handle)


def new_module(record: ModuleRecord) -> int:
    """A Module object for ``record``."""
    address = memory.new_object(TI.kTVMFFIModule, _MODULE_SIZE, _destroy_module)
    with _lock:
        _records[address] = record
    return address


def record_of(address: int) -> ModuleRecord:
    """The record of a Module object made here."""
    record = _records.get(address)
    if record is None:
        raise FFIError("TypeError", "expected a Module made by this runtime")
    return record


def _raw_symbol(record: ModuleRecord, name: str) -> Optional[int]:
    """The address of symbol ``name`` (a system library also tries it with its prefix)."""
    if record.library is None:
        table = env.system_lib_symbols()
        return table.get(record.symbol_prefix + name) or table.get(name)
    try:
        return ctypes.cast(getattr(record.library, name), ctypes.c_void_p).value
    except AttributeError:
        return None


def _function_symbol(record: ModuleRecord, name: str) -> Optional[int]:
    """The safe-call entry of function ``name``: ``__tvm_ffi_<prefix><name>``."""
    if record.library is None:
        table = env.system_lib_symbols()
        return (table.get(EXPORT_PREFIX + record.symbol_prefix + name)
                or table.get(EXPORT_PREFIX + name))
    return _raw_symbol(record, EXPORT_PREFIX + name)


# ----------------------------------------------------------- kernel functions


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _nothing_to_release(_self):
    pass


def _kernel_function(entry: int) -> int:
    """A Function calling the safe-call symbol at ``entry`` with a NULL handle.

    A release hook (that does nothing) makes the library's built-in put its C
    trampoline in the cell, which passes ``self`` (NULL) as the kernel's
    handle, as upstream's library modules do. Libraries are never unloaded, so
    the function need not keep its module alive.
    """
    out = ctypes.c_void_p()
    if LIB.TVMFFIFunctionCreate(None, entry, _nothing_to_release, ctypes.byref(out)):
        from . import errors

        error = errors.take_raised()
        raise FFIError("RuntimeError", "could not create a kernel function" if not error else
                       errors.error_parts(error)[1])
    return out.value


def get_function(module: int, name: bytes, query_imports: bool) -> Optional[int]:
    """An owned Function for ``name`` in ``module`` (or its imports), or None."""
    record = record_of(module)
    entry = _function_symbol(record, name.decode())
    if entry:
        return _kernel_function(entry)
    if query_imports:
        for imported in record.imports:
            found = get_function(imported, name, True)
            if found:
                return found
    return None


def _call_string_getter(entry: int) -> bytes:
    getter = abi.TVMFFISafeCallType(entry)
    result = abi.TVMFFIAny()
    if getter(None, None, 0, ctypes.byref(result)) != 0:
        from . import errors

        error = errors.take_raised()
        kind, message, _ = errors.error_parts(error) if error else ("RuntimeError", "failed", "")
        if error:
            memory.dec_ref(error)
        raise FFIError(kind, message)
    try:
        return strings.view_bytes(result)
    finally:
        if result.type_index >= TI.kTVMFFIStaticObjectBegin:
            memory.dec_ref(result.v_ptr)


def _companion(module: int, prefix: str, name: bytes, query_imports: bool) -> Optional[bytes]:
    record = record_of(module)
    entry = _raw_symbol(record, prefix + name.decode())
    if entry:
        return _call_string_getter(entry)
    if query_imports:
        for imported in record.imports:
            found = _companion(imported, prefix, name, True)
            if found is not None:
                return found
    return None


# --------------------------------------------------------------- loading


def load_library_module(path: str) -> int:
    """Loads a shared library as a Module (see the module docstring for the conventions)."""
    if not os.path.exists(path):
        raise FFIError("RuntimeError", f"Failed to load dynamic shared library {path}: "
                                       "no such file")
    try:
        symbols = read_dynamic_symbols(path)
    except (OSError, ValueError) as exc:
        raise FFIError("RuntimeError", f"Failed to load dynamic shared library {path}: {exc}")
    if not symbols.uses_tvm_ffi():
        raise FFIError("RuntimeError", f"{path} is not a TVM FFI library: it neither exports "
                                       "__tvm_ffi_<name> functions nor uses the TVM FFI C API")
    try:
        library = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL | os.RTLD_NOW)
    except OSError as exc:
        raise FFIError("RuntimeError", f"Failed to load dynamic shared library {path}: {exc}")
    for name, value in env.context_symbols():
        if name in symbols.defined:
            ctypes.c_void_p.in_dll(library, name).value = value
    module = new_module(ModuleRecord("library", library))
    if LIBRARY_CTX_SYMBOL in symbols.defined:
        ctypes.c_void_p.in_dll(library, LIBRARY_CTX_SYMBOL).value = module
    return module


def import_module(module: int, other: int) -> None:
    """Adds ``other`` to ``module``'s imports, refusing a cycle."""
    seen, stack = {other}, [other]
    while stack:
        for child in record_of(stack.pop()).imports:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    if module in seen:
        raise FFIError("RuntimeError", "Cyclic dependency detected during import")
    memory.inc_ref(other)
    record_of(module).imports.append(other)


@implements("TVMFFIEnvModLookupFromImports")
def env_mod_lookup_from_imports(library_ctx, func_name, out):
    record = record_of(library_ctx)
    with _lock:
        cached = record.lookup_cache.get(func_name)
        if cached is None:
            for imported in record.imports:
                cached = get_function(imported, func_name, True)
                if cached:
                    break
            if not cached:
                entry = functions.GLOBALS.get(func_name)
                if entry is None:
                    raise FFIError("RuntimeError", f"Cannot find function {func_name.decode()} in "
                                                   "the imported modules or global registry.")
                memory.inc_ref(entry.func)
                cached = entry.func
            record.lookup_cache[func_name] = cached
    out[0] = cached  # borrowed: the module's cache keeps it alive


# ------------------------------------------------------------ ffi.* globals


def _arg_module(name: str, args, i: int) -> int:
    if args[i].type_index != TI.kTVMFFIModule:
        raise FFIError("TypeError", f"{name}: argument {i} must be a Module, got type index "
                                    f"{args[i].type_index}")
    return args[i].v_ptr


def _arg_bool(args, i: int) -> bool:
    return bool(args[i].v_int64) if len(args) > i else False


@def_global("ffi.Module.load_from_file.so")
def _load_so(args, result):
    set_object(result, load_library_module(functions.arg_str("ffi.Module.load_from_file.so",
                                                             args, 0).decode()))


@def_global("ffi.ModuleLoadFromFile")
def _module_load_from_file(args, result):
    functions.expect_args("ffi.ModuleLoadFromFile", args, 1)
    path = functions.arg_str("ffi.ModuleLoadFromFile", args, 0).decode()
    dot = path.rfind(".")
    if dot < 0:
        raise FFIError("RuntimeError", f"Failed to get file format from {path}")
    fmt = path[dot + 1:]
    if fmt in ("dll", "dylib", "dso"):
        fmt = "so"
    loader = functions.GLOBALS.get(f"ffi.Module.load_from_file.{fmt}".encode())
    if loader is None:
        raise FFIError("RuntimeError", f"Loader for `.{fmt}` files is not registered, resolved "
                       f"to (ffi.Module.load_from_file.{fmt}) in the global registry.")
    set_object(result, load_library_module(path))


@def_global("ffi.ModuleGetFunction")
def _module_get_function(args, result):
    name = "ffi.ModuleGetFunction"
    found = get_function(_arg_module(name, args, 0), functions.arg_str(name, args, 1),
                         _arg_bool(args, 2))
    if found:
        set_object(result, found)


def _companion_global(global_name: str, prefix: str):
    @def_global(global_name)
    def lookup(args, result):
        text = _companion(_arg_module(global_name, args, 0),
                          prefix, functions.arg_str(global_name, args, 1), _arg_bool(args, 2))
        if text is not None:
            strings.store_str_or_bytes(result, text, is_str=True)

    return lookup


_companion_global("ffi.ModuleGetFunctionMetadata", METADATA_PREFIX)
_companion_global("ffi.ModuleGetFunctionDoc", DOC_PREFIX)


@def_global("ffi.ModuleImplementsFunction")
def _module_implements_function(args, result):
    name = "ffi.ModuleImplementsFunction"
    found = get_function(_arg_module(name, args, 0), functions.arg_str(name, args, 1),
                         _arg_bool(args, 2))
    if found:
        memory.dec_ref(found)
    set_bool(result, bool(found))


@def_global("ffi.ModuleGetKind")
def _module_get_kind(args, result):
    strings.store_str_or_bytes(result, record_of(_arg_module("ffi.ModuleGetKind", args, 0))
                               .kind.encode(), is_str=True)


@def_global("ffi.ModuleGetPropertyMask")
def _module_get_property_mask(args, result):
    record_of(_arg_module("ffi.ModuleGetPropertyMask", args, 0))
    strings.store_int(result, BINARY_SERIALIZABLE | RUNNABLE)


@def_global("ffi.ModuleImportModule")
def _module_import_module(args, result):
    import_module(_arg_module("ffi.ModuleImportModule", args, 0),
                  _arg_module("ffi.ModuleImportModule", args, 1))


@def_global("ffi.ModuleClearImports")
def _module_clear_imports(args, result):
    record = record_of(_arg_module("ffi.ModuleClearImports", args, 0))
    imports, record.imports = record.imports, []
    for handle in imports:
        memory.dec_ref(handle)


_kept_alive: List[int] = []


@def_global("ffi.ModuleGlobalsAdd")
def _module_globals_add(args, result):
    module = _arg_module("ffi.ModuleGlobalsAdd", args, 0)
    if module not in _kept_alive:
        memory.inc_ref(module)
        _kept_alive.append(module)


@def_global("ffi.ModuleGlobalsRemove")
def _module_globals_remove(args, result):
    module = _arg_module("ffi.ModuleGlobalsRemove", args, 0)
    if module in _kept_alive:
        _kept_alive.remove(module)
        memory.dec_ref(module)


_system_libs: Dict[str, int] = {}


@def_global("ffi.SystemLib")
def _system_lib(args, result):
    prefix = strings.view_bytes(args[0]).decode() if args else ""
    with _lock:
        module = _system_libs.get(prefix)
        if module is None:
            module = _system_libs[prefix] = new_module(ModuleRecord("library",
                                                                     symbol_prefix=prefix))
    memory.inc_ref(module)
    set_object(result, module)


# ------------------------------------------------------ the imports_ field


@abi.TVMFFIFieldGetter
def _imports_getter(field_address, result):
    module = field_address - _IMPORTS_OFFSET
    try:
        from . import containers

        imports = [abi.TVMFFIAny(type_index=TI.kTVMFFIModule) for _ in record_of(module).imports]
        for view, handle in zip(imports, record_of(module).imports):
            view.v_ptr = handle
        set_object(result.contents, containers.array_from_anys(imports))
        return 0
    except Exception as error:  # noqa: BLE001 - never let it reach C
        from . import errors

        errors.raise_error(type(error).__name__, str(error))
        return -1


def _register_imports_field() -> None:
    info = abi.TVMFFIFieldInfo()
    name = b"imports_"
    buffer = ctypes.create_string_buffer(name)
    info.name = abi.TVMFFIByteArray(ctypes.addressof(buffer), len(name))
    info.size = ctypes.sizeof(abi.TVMFFIAny)
    info.alignment = 8
    info.offset = _IMPORTS_OFFSET
    info.getter = _imports_getter
    info.field_static_type_index = TI.kTVMFFIArray
    TYPES.register_field(TI.kTVMFFIModule, info)


_register_imports_field()
