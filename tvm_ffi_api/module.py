"""``Module`` and ``load_module``: a kernel library's functions as Python attributes.

``load_module(path)`` asks the runtime to load the library
(``ffi.ModuleLoadFromFile``); ``module.name`` or ``module["name"]`` then
returns the Function behind the library's ``__tvm_ffi_name`` symbol.
"""

from __future__ import annotations

import enum
import json
import os
from typing import Any, List, Optional, Union

from tvm_ffi_common import abi

from .elf_symbols import read_dynamic_symbols
from .function import Function, get_global_func
from .object import Object, register_class
from .reflection import install_reflection

TI = abi.TVMFFITypeIndex


class ModulePropertyMask(enum.IntEnum):
    """What a module can do (``ffi.ModuleGetPropertyMask`` bits)."""

    BINARY_SERIALIZABLE = 0b001
    RUNNABLE = 0b010
    COMPILATION_EXPORTABLE = 0b100


def _api(name: str) -> Function:
    return get_global_func("ffi." + name)


class Module(Object):
    """A loaded module: attribute access finds its functions.

    As upstream's, a function found as an attribute is kept as one (its
    ``__slots__`` asks for an instance ``__dict__``), so ``module.f`` is looked
    up once and ``module.f is module.f``.
    """

    __slots__ = ("__dict__",)

    @property
    def kind(self) -> str:
        """The module kind, e.g. ``"library"``."""
        return str(_api("ModuleGetKind")(self))

    @property
    def imports(self) -> List["Module"]:
        """The modules this one imports."""
        return list(self.imports_)

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether the module (or, with ``query_imports``, an import) defines ``name``."""
        return bool(_api("ModuleImplementsFunction")(self, name, query_imports))

    def __getattr__(self, name: str) -> Function:
        if name.startswith("__") or name in ("_handle",):
            raise AttributeError(name)
        try:
            func = self.get_function(name)
        except AttributeError as exc:
            raise AttributeError(f"Module has no function '{name}'") from exc
        setattr(self, name, func)
        return func

    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """The function ``name``; ``AttributeError`` when the module has none."""
        if not isinstance(name, str):
            raise TypeError(f"function name must be a str, got {type(name).__name__}")
        func = _api("ModuleGetFunction")(self, name, query_imports)
        if func is None:
            raise AttributeError(f"Module has no function '{name}'")
        return func

    def __getitem__(self, name: str) -> Function:
        if not isinstance(name, str):
            raise ValueError("Can only take string as function name")
        return self.get_function(name)

    def __call__(self, *args: Any) -> Any:
        return self.main(*args)

    def get_function_metadata(self, name: str, query_imports: bool = False) -> Optional[dict]:
        """The parsed ``__tvm_ffi__metadata_<name>`` JSON, or None."""
        text = _api("ModuleGetFunctionMetadata")(self, name, query_imports)
        return None if text is None else json.loads(str(text))

    def get_function_doc(self, name: str, query_imports: bool = False) -> Optional[str]:
        """The ``__tvm_ffi__doc_<name>`` text as the runtime returns it (a ``String`` when
        long), or None."""
        text = _api("ModuleGetFunctionDoc")(self, name, query_imports)
        return text if text else None

    def import_module(self, module: "Module") -> None:
        """Makes ``module``'s functions reachable through this one's imports."""
        _api("ModuleImportModule")(self, module)

    def clear_imports(self) -> None:
        """Forgets every import."""
        _api("ModuleClearImports")(self)

    def inspect_source(self, fmt: str = "") -> str:
        """The module's source in format ``fmt``, or ``""`` when it has none."""
        return _api("ModuleInspectSource")(self, fmt)

    def get_write_formats(self) -> List[str]:
        """The formats :meth:`write_to_file` accepts (none for a loaded library)."""
        return _api("ModuleGetWriteFormats")(self)

    def write_to_file(self, file_name: str, fmt: str = "") -> None:
        """Writes the module to ``file_name`` in format ``fmt`` (``RuntimeError`` when the
        module cannot be written, as a loaded library cannot)."""
        _api("ModuleWriteToFile")(self, file_name, fmt)

    def get_property_mask(self) -> int:
        """The :class:`ModulePropertyMask` bits of this module."""
        return int(_api("ModuleGetPropertyMask")(self))

    def is_binary_serializable(self) -> bool:
        """Whether the module can be saved as bytes."""
        return bool(self.get_property_mask() & ModulePropertyMask.BINARY_SERIALIZABLE)

    def is_runnable(self) -> bool:
        """Whether the module's functions can be called."""
        return bool(self.get_property_mask() & ModulePropertyMask.RUNNABLE)

    def is_compilation_exportable(self) -> bool:
        """Whether the module can be exported for compilation."""
        return bool(self.get_property_mask() & ModulePropertyMask.COMPILATION_EXPORTABLE)


register_class(TI.kTVMFFIModule, Module)
install_reflection(Module, TI.kTVMFFIModule)


def load_module(path: Union[str, "os.PathLike[str]"], keep_module_alive: bool = True) -> Module:
    """Loads a kernel library; raises ``RuntimeError`` naming the path when it cannot be used.

    With ``keep_module_alive`` (the default) the library stays loaded for the
    life of the process, even if the Module object is dropped.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"load_module: path must be a str or os.PathLike, got "
                        f"{type(path).__name__}")
    path = os.fsdecode(path)
    _refuse_non_tvm_ffi_library(path)
    return load_built_library(path, keep_module_alive)


def load_built_library(path: str, keep_module_alive: bool = True) -> Module:
    """Loads a library ``tvm_ffi.cpp`` has just built, without :func:`load_module`'s symbol
    check: built from sources meant for TVM FFI, it is one even when it exports nothing (empty
    sources give upstream an empty Module too, not an error)."""
    module = _api("ModuleLoadFromFile")(path)
    if keep_module_alive:
        _api("ModuleGlobalsAdd")(module)
    return module


def _refuse_non_tvm_ffi_library(path: str) -> None:
    # Loading a shared library that is no kernel library (libm, say) would
    # succeed and then find no function at all: say so at once, with the path.
    # Deliberately stricter than upstream (an empty Module): see docs/runtimes.md.

    try:
        symbols = read_dynamic_symbols(path)
    except (OSError, ValueError):
        return  # not readable as ELF: the loader's own error names the problem
    if not symbols.uses_tvm_ffi():
        raise RuntimeError(f"{path} is not a TVM FFI library: it neither exports "
                           "__tvm_ffi_<name> functions nor uses the TVM FFI C API")


def system_lib(symbol_prefix: str = "") -> Module:
    """The module of symbols registered with ``TVMFFIEnvModRegisterSystemLibSymbol``."""
    return _api("SystemLib")(symbol_prefix)
