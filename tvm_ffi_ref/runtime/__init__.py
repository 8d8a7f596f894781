"""The reference runtime: the C API of TVM FFI implemented in Python.

Its twin in C: ``tvm_ffi_fast/src/slots.c`` (its ``init_runtime``: the order the runtime is
set up in).

Each module implements one concept and marks its C API functions with
``@implements``; importing this package registers them all, and
:func:`install` puts them behind ``libtvm_ffi.so``. Slots no module
implements are served by the library's built-ins (reference counting is one:
it must be atomic, because C++ kernels do it inline).
"""

from __future__ import annotations

import importlib

#: The runtime's modules, each imported for its @implements and ffi.* registrations.
#: The order they import in does not show: GLOBAL_ORDER below fixes how globals list.
RUNTIME_MODULES = (
    "any_hash",
    "anyvalue",
    "container_common",
    "sequences",
    "sequence_edits",
    "sequence_globals",
    "shapes",
    "global_functions",
    "maps",
    "convert_attrs",
    "pyclass",
    "dataclass_ops",
    "dtype",
    "env",
    "errors",
    "functions",
    "module",
    "objects",
    "reflection",
    "reflection_make_object",
    "registry",
    "strings",
    "tensor",
    "structural_equal",
    "structural_hash",
    "structural_key",
    "json_text",
    "json_graph",
    "json_graph_load",
    "deep_copy",
    "structural_visit",
    "structural_mutate",
    "visit_error_context",
)
for _name in RUNTIME_MODULES:
    importlib.import_module(f".{_name}", __name__)
del _name

#: The ffi.* globals in the order the runtime lists them (``ffi.FunctionListGlobalNamesFunctor``
#: walks the table in registration order): the order the fast runtime registers them in
#: (``tvm_ffi_fast/src/slots.c``'s ``init_runtime``, then each file's own order).
#: Stated here rather than left to import order, so that sorting imports cannot change
#: it; ``tests/test_paired_runtimes.py`` checks that both runtimes list the same names
#: in the same order.
GLOBAL_ORDER = (
    "ffi.GetRegisteredTypeKeys",
    "ffi.GetInvalidObject",
    "ffi.GetKwargsObject",
    "ffi.FunctionRemoveGlobal",
    "ffi.FunctionListGlobalNamesFunctor",
    "ffi.String",
    "ffi.Bytes",
    "ffi.GetGlobalFuncMetadata",
    "ffi.FunctionFromExternC",
    "ffi.Shape",
    "ffi.Array",
    "ffi.ArrayGetItem",
    "ffi.ArraySize",
    "ffi.ArrayContains",
    "ffi.List",
    "ffi.ListGetItem",
    "ffi.ListSetItem",
    "ffi.ListSize",
    "ffi.ListContains",
    "ffi.ListAppend",
    "ffi.ListInsert",
    "ffi.ListPop",
    "ffi.ListErase",
    "ffi.ListEraseRange",
    "ffi.ListReplaceSlice",
    "ffi.ListReverse",
    "ffi.ListClear",
    "ffi.ListReserve",
    "ffi.Map",
    "ffi.MapSize",
    "ffi.MapGetItem",
    "ffi.MapCount",
    "ffi.MapForwardIterFunctor",
    "ffi.MapGetItemOrMissing",
    "ffi.Dict",
    "ffi.DictSize",
    "ffi.DictGetItem",
    "ffi.DictSetItem",
    "ffi.DictCount",
    "ffi.DictErase",
    "ffi.DictClear",
    "ffi.DictForwardIterFunctor",
    "ffi.DictGetItemOrMissing",
    "ffi.ContainerFindFirstNonCPUDevice",
    "ffi._RegisterFFIInit",
    "ffi.MakeFieldSetter",
    "ffi._PyClassRegisterTypeAttrColumns",
    "ffi.MakeFieldGetter",
    "ffi.ReprPrint",
    "ffi.RecursiveHash",
    "ffi.RecursiveEq",
    "ffi.RecursiveLt",
    "ffi.RecursiveLe",
    "ffi.RecursiveGt",
    "ffi.RecursiveGe",
    "ffi.MakeObjectFromPackedArgs",
    "ffi.StructuralEqual",
    "ffi.GetFirstStructuralMismatch",
    "ffi.StructuralHash",
    "ffi.StructuralKey",
    "ffi.StructuralKeyEqual",
    "ffi.json.Parse",
    "ffi.json.Stringify",
    "ffi.ToJSONGraph",
    "ffi.ToJSONGraphString",
    "ffi.FromJSONGraph",
    "ffi.FromJSONGraphString",
    "ffi.DeepCopy",
    "ffi.VisitInterrupt",
    "ffi.StructuralVisitorVisit",
    "ffi.StructuralVisitorDefaultVisit",
    "ffi.StructuralVisitorDefRegionKind",
    "ffi.StructuralVisitorWithDefRegionKind",
    "ffi.StructuralWalk",
    "ffi.StructuralVisit",
    "ffi.StructuralMutatorMutate",
    "ffi.StructuralMutatorDefaultMutate",
    "ffi.StructuralMutatorVarRemapGet",
    "ffi.StructuralMutatorVarRemapSet",
    "ffi.StructuralMutatorDefRegionKind",
    "ffi.StructuralMutatorWithDefRegionKind",
    "ffi.StructuralMap",
    "ffi.StructuralMutate",
    "ffi.VisitErrorContext.FindAccessPaths",
    "ffi.ModuleLoadFromFile",
    "ffi.ModuleImplementsFunction",
    "ffi.ModuleGetFunctionMetadata",
    "ffi.ModuleGetFunctionDoc",
    "ffi.ModuleGetFunction",
    "ffi.ModuleGetPropertyMask",
    "ffi.ModuleInspectSource",
    "ffi.ModuleGetKind",
    "ffi.ModuleGetWriteFormats",
    "ffi.ModuleWriteToFile",
    "ffi.ModuleImportModule",
    "ffi.ModuleClearImports",
    "ffi.ModuleGlobalsAdd",
    "ffi.ModuleGlobalsRemove",
    "ffi.SystemLib",
    "ffi.Module.load_from_file.so",
)
_globals = importlib.import_module(".functions", __name__).GLOBALS
_globals.reorder([name.encode() for name in GLOBAL_ORDER])
del _globals

from .slots import RUNTIME_NAME, install, installed, observers, uninstall  # noqa: E402

__all__ = ["GLOBAL_ORDER", "RUNTIME_MODULES", "RUNTIME_NAME", "install", "installed", "observers",
           "uninstall"]
