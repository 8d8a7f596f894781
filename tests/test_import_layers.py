"""How the modules of ``tvm_ffi_api`` import each other, read from their source (no import).

The graph's nodes are the shared modules and the four core modules (``object``,
``convert``, ``function``, ``shortcuts``: each core's files, all three cores
together, since any of them may stand behind the name). An import inside a
function is an edge too: it runs later, but it is a dependency all the same,
and it hides a cycle from the import system, not from the reader.

What holds, and fails on a change:

* module-level imports form no cycle, except :data:`MODULE_LEVEL_CYCLES`
  (checked with each core in turn);
* every import of a module of this package inside a function is in
  :data:`DEFERRED` (module, target: why it cannot be at the top); an import of
  another package inside a function is of an optional dependency
  (:data:`OPTIONAL_PACKAGES`) or of a standard module slow to import
  (:data:`DEFERRED_STANDARD`);
* the strongly connected groups of the whole graph (in-function edges
  included) are exactly :data:`KNOWN_CYCLES`: a new cycle, or a module joining
  one, fails; breaking one fails too, until it is taken off the list.

``python tests/test_import_layers.py`` prints the counts.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = os.path.join(ROOT, "tvm_ffi_api")
CORES = ("object", "convert", "function", "shortcuts")
CORE_FOLDERS = ("tvm_ffi_ref", "tvm_ffi_fast/compiled_core", "tvm_ffi_fast/cffi_core")

#: Packages a module may import inside a function: optional dependencies, imported only when
#: a value of theirs is met (the runtime needs cffi alone).
OPTIONAL_PACKAGES = {"torch", "numpy", "ml_dtypes", "torch_c_dlpack_ext", "pytest", "annotationlib"}

#: Standard modules imported inside a function, because importing them costs at start-up what
#: only a build or a lookup needs: (module, imported) -> why.
DEFERRED_STANDARD = {
    ("cpp.build_cache", "hashlib"): "OpenSSL's start-up, paid at the first build",
    ("cpp.toolchain", "importlib"): "importlib.metadata, slow to import: when nvcc is looked for",
    ("libinfo", "importlib.metadata"): "slow to import: when a library is looked for",
}

#: Module-level cycles, by core: the cffi core's own three modules import each other (each
#: binds the others' functions at import, for speed on PyPy).
MODULE_LEVEL_CYCLES = {
    "tvm_ffi_ref": [],
    "tvm_ffi_fast/compiled_core": [],
    "tvm_ffi_fast/cffi_core": [{"convert", "function", "shortcuts"}],
}

_UP = "a lower module reaching up at call time"
#: In-function imports of this package's modules: (module, target) -> why. Those marked
#: ``_UP`` are the back edges of the cycles below, left for the regrouping of issue 35;
#: the others load a module only when its feature is used.
DEFERRED: Dict[Tuple[str, str], str] = {
    ("arg_setters", "convert"): _UP,
    ("arg_setters", "dtype"): _UP,
    ("arg_setters", "tensor"): _UP,
    ("arg_setters", "_optional_torch_c_dlpack"): "torch's C exchange module, when torch is met",
    ("class_attrs", "_dunder"): _UP,
    ("cpp.extension", "cpp.build_plan"): "the C++ build, when something is compiled",
    ("cpp.extension", "cpp.builder"): "the C++ build, when something is compiled",
    ("cpp.build_cache", "utils.lockfile"): "the file lock, when a build is cached",
    ("cpp.headers", "cpp.build_cache"): _UP,
    ("dataclasses._resolve_fields", "dataclasses.py_class"): _UP,
    ("dataclasses.c_class", "dataclasses.py_methods"): _UP,
    ("dataclasses.py_methods", "dataclasses._resolve_fields"): _UP,
    ("device", "convert"): _UP,
    ("dlpack", "function"): _UP,
    ("dlpack", "shortcuts"): _UP,
    ("dlpack_exchange", "function"): _UP,
    ("dlpack_exchange", "shortcuts"): _UP,
    ("error", "shortcuts"): _UP,
    ("extern_c", "function"): _UP,
    ("module", "elf_symbols"): "the ELF reader, when a library is refused",
    ("object_methods", "function"): _UP,
    ("object_wrapper", "object"): _UP,
    ("pyclass_fields", "type_converter"): "the type converters, when a Python class has fields",
    ("pyobject", "function"): _UP,
    ("type_info", "type_registry"): _UP,
    ("type_records", "pyclass_fields"): _UP,
    ("type_records", "type_registry"): _UP,
    ("type_schema", "annotation_schema"): "annotations read, when a schema is made from one",
    ("type_schema", "type_converter"): "the type converters, when a schema converts a value",
    ("type_schema", "type_registry"): _UP,
    ("utils.kwargs_wrapper", "utils.unpack_dataclass"): _UP,
}

#: The strongly connected groups of the whole graph (in-function imports included), by core:
#: the type system and the value conversions, tied to the core through the back edges in
#: :data:`DEFERRED`; the dataclass decorators and their helpers.
_TYPE_SYSTEM = {
    "annotation_schema", "arg_setters", "cany", "container", "convert", "converter_base",
    "device", "dlpack", "dlpack_exchange", "dtype", "error", "extern_c", "function", "object",
    "object_methods", "object_wrapper", "pyclass_fields", "pyobject", "scalar_converters",
    "sentinels", "shortcuts", "string", "tensor", "type_converter", "type_info", "type_records",
    "type_registry", "type_schema"}
_DATACLASSES = [{"_dunder", "class_attrs"},
                {"dataclasses._resolve_fields", "dataclasses.py_class", "dataclasses.py_methods"}]
KNOWN_CYCLES = {
    "tvm_ffi_ref": [_TYPE_SYSTEM] + _DATACLASSES,
    # the compiled core's modules take less from the shared ones (the C does the work)
    "tvm_ffi_fast/compiled_core": [
        _TYPE_SYSTEM - {"dlpack", "dtype", "object_wrapper", "shortcuts"}] + _DATACLASSES,
    "tvm_ffi_fast/cffi_core": [_TYPE_SYSTEM] + _DATACLASSES,
}


class Import:
    """One import statement's edge: where, to which module, and whether inside a function."""

    def __init__(self, module: str, line: int, target: str, deferred: bool, relative: bool):
        self.module, self.line, self.target = module, line, target
        self.deferred, self.relative = deferred, relative


def _module_name(path: str, top: str) -> Tuple[str, bool]:
    rel = os.path.relpath(path, top)[:-3].replace(os.sep, ".")
    if rel == "__init__":
        return "", True
    if rel.endswith(".__init__"):
        return rel[: -len(".__init__")], True
    return rel, False


def _imports_of(path: str, module: str, is_package: bool) -> List[Import]:
    with open(path) as f:
        tree = ast.parse(f.read())
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    package = module.split(".") if is_package else module.split(".")[:-1]
    package = [p for p in package if p]
    found = []
    for node in ast.walk(tree):
        deferred = id(node) in inside
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, node.lineno, alias.name, deferred, False))
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.append(Import(module, node.lineno, node.module or "", deferred, False))
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            if node.module:
                targets = [".".join(base + node.module.split("."))]
            else:
                targets = [".".join(base + [alias.name]) for alias in node.names]
            found.extend(Import(module, node.lineno, t, deferred, True) for t in targets)
    return found


@functools.lru_cache(maxsize=None)
def graph(core_folder: str = CORE_FOLDERS[0]) -> Tuple[Set[str], List[Import]]:
    """The modules (shared, and one core's) and every import among them and out of them."""
    nodes: Set[str] = set()
    imports: List[Import] = []
    for folder, _, files in os.walk(API):
        for name in sorted(files):
            if name.endswith(".py"):
                module, is_package = _module_name(os.path.join(folder, name), API)
                if module:
                    nodes.add(module)
                    imports += _imports_of(os.path.join(folder, name), module, is_package)
    for core in CORES:
        nodes.add(core)
        imports += _imports_of(os.path.join(ROOT, core_folder, core + ".py"), core, False)
    for imp in imports:  # ``from .a import b`` of a name b, not a module: the edge is to a
        if imp.relative:
            while imp.target and imp.target not in nodes and "." in imp.target:
                imp.target = imp.target.rsplit(".", 1)[0]
    return nodes, imports


def _edges(nodes: Set[str], imports: List[Import], deferred_too: bool) -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = defaultdict(set)
    for imp in imports:
        if imp.relative and imp.target in nodes and imp.target != imp.module:
            if deferred_too or not imp.deferred:
                edges[imp.module].add(imp.target)
    return edges


def cycles(nodes: Set[str], edges: Dict[str, Set[str]]) -> List[Set[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    groups: List[Set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return groups


def _shared_in_function(imports: List[Import], nodes: Set[str]) -> List[Import]:
    return [i for i in imports if i.deferred and i.relative and i.module not in CORES]


@pytest.mark.parametrize("core", CORE_FOLDERS)
def test_module_level_imports_form_no_new_cycle(core):
    nodes, imports = graph(core)
    found = cycles(nodes, _edges(nodes, imports, deferred_too=False))
    assert sorted(map(sorted, found)) == sorted(map(sorted, MODULE_LEVEL_CYCLES[core]))


def test_every_import_inside_a_function_is_allowed_and_says_why():
    nodes, imports = graph()
    shared = _shared_in_function(imports, nodes)
    assert len(shared) > 10  # the scan sees them
    unlisted = sorted({f"{i.module}:{i.line} -> {i.target}" for i in shared
                       if (i.module, i.target) not in DEFERRED})
    assert not unlisted, "move these to the module's top, or list them in DEFERRED: " + str(unlisted)
    stale = sorted(set(DEFERRED) - {(i.module, i.target) for i in shared})
    assert not stale, f"no longer imported inside a function; take them off DEFERRED: {stale}"
    others = sorted({f"{i.module}:{i.line} imports {i.target}" for i in imports
                     if i.deferred and not i.relative and i.module not in CORES
                     and i.target.split(".")[0] not in OPTIONAL_PACKAGES
                     and (i.module, i.target) not in DEFERRED_STANDARD})
    assert not others, "import these at the module's top: " + str(others)


@pytest.mark.parametrize("core", CORE_FOLDERS)
def test_the_cycles_are_the_known_ones(core):
    nodes, imports = graph(core)
    found = cycles(nodes, _edges(nodes, imports, deferred_too=True))
    assert sorted(map(sorted, found)) == sorted(map(sorted, KNOWN_CYCLES[core]))


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a", "b", "c"}, {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [{"a", "b", "c"}]
    assert cycles({"a", "b"}, {"a": {"b"}}) == []


if __name__ == "__main__":
  for folder in CORE_FOLDERS:
    print("with the core of", folder)
    all_nodes, all_imports = graph(folder)
    in_function = [i for i in all_imports if i.deferred and i.module not in CORES]
    print("  modules:", len(all_nodes))
    print("  imports inside functions:", len(in_function),
          "(of this package's modules:", len(_shared_in_function(all_imports, all_nodes)), ")")
    for label, deferred_too in (("module level", False), ("all", True)):
        groups = cycles(all_nodes, _edges(all_nodes, all_imports, deferred_too))
        print(f"  cycles ({label}):", len(groups), [sorted(g) for g in groups])
